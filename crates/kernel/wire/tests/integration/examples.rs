//! Round-trips every example of the 2026-07-28 specification through the typed wire structs.
//!
//! Each directory of `tests/data/mcp-spec/2026-07-28/examples/` is named in [`table`]; a directory the
//! table does not name (or a name with no directory) fails the test. Every `.json` file of a
//! directory is deserialized into its type, serialized back with `serde_json::to_value`, and
//! compared with the original value.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use mcp_kernel_wire::types::*;
use mcp_kernel_wire::{ErrorObject, code};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// One directory's check: it receives the parsed example and reports a failure as text.
type Check = Box<dyn Fn(&Value) -> Result<(), String>>;

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/mcp-spec/2026-07-28/examples")
}

/// Deserializes into `T`, serializes back, and compares; returns the typed value.
fn round_trip<T: DeserializeOwned + Serialize>(original: &Value) -> Result<T, String> {
    let typed: T = serde_json::from_value(original.clone()).map_err(|e| format!("deserialize: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("serialize: {e}"))?;
    if &back != original {
        return Err(format!("round trip differs\n  original: {original}\n  re-serialized: {back}"));
    }
    Ok(typed)
}

/// A plain typed round trip.
fn typed<T: DeserializeOwned + Serialize + 'static>() -> Check {
    Box::new(|v| round_trip::<T>(v).map(drop))
}

/// A typed round trip whose value must also satisfy `pred` (e.g. be a given enum variant).
fn typed_where<T: DeserializeOwned + Serialize + 'static>(what: &'static str, pred: fn(&T) -> bool) -> Check {
    Box::new(move |v| {
        let t = round_trip::<T>(v)?;
        if pred(&t) { Ok(()) } else { Err(format!("not {what}")) }
    })
}

/// A request the server reads: the envelope with typed params, and the method name.
fn request<P: DeserializeOwned + Serialize + 'static>(method: &'static str) -> Check {
    Box::new(move |v| {
        let r = round_trip::<JsonRpcRequest<P>>(v)?;
        if r.jsonrpc != "2.0" || r.method != method || r.params.is_none() {
            return Err(format!("expected a 2.0 `{method}` request with params"));
        }
        Ok(())
    })
}

/// A notification, with typed params, and the method name.
fn notification<P: DeserializeOwned + Serialize + 'static>(method: &'static str) -> Check {
    Box::new(move |v| {
        let n = round_trip::<JsonRpcNotification<P>>(v)?;
        if n.jsonrpc != "2.0" || n.method != method {
            return Err(format!("expected a 2.0 `{method}` notification"));
        }
        Ok(())
    })
}

/// A full result response with a typed result.
fn result_response<T: DeserializeOwned + Serialize + 'static>() -> Check {
    Box::new(|v| round_trip::<ResultResponse<T>>(v).map(drop))
}

/// A bare error object with the given code.
fn error_object(expected: i64) -> Check {
    Box::new(move |v| {
        let e = round_trip::<ErrorObject>(v)?;
        if e.code == expected { Ok(()) } else { Err(format!("code {} != {expected}", e.code)) }
    })
}

/// A full error response with the given code.
fn error_response(expected: i64) -> Check {
    Box::new(move |v| {
        let e = round_trip::<ErrorResponse>(v)?;
        if e.error.code == expected { Ok(()) } else { Err(format!("code {} != {expected}", e.error.code)) }
    })
}

/// An elicitation property schema: carried as JSON inside `requestedSchema`, so it is checked by
/// embedding it in a form-mode `elicitation/create` input request.
fn schema_fragment() -> Check {
    Box::new(|v| {
        let request = json!({
            "method": "elicitation/create",
            "params": {
                "message": "m",
                "requestedSchema": {"type": "object", "properties": {"field": v}}
            }
        });
        let r = round_trip::<InputRequest>(&request)?;
        if matches!(r, InputRequest::Elicitation(ElicitRequestParams::Form(_))) {
            Ok(())
        } else {
            Err("not a form-mode elicitation".into())
        }
    })
}

/// `ListRootsRequest`'s example carries an `id` that the schema's `ListRootsRequest` (an input
/// request: `method` and `params` only) does not have; everything else must round-trip.
fn list_roots_request() -> Check {
    Box::new(|v| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("id");
        }
        let r = round_trip::<InputRequest>(&v)?;
        if matches!(r, InputRequest::ListRoots(_)) { Ok(()) } else { Err("not roots/list".into()) }
    })
}

/// Every example directory and its check.
fn table() -> Vec<(&'static str, Check)> {
    use ContentBlock as C;
    use SamplingContentBlock as S;
    vec![
        // Content blocks the server writes (tool results, prompt messages).
        ("AudioContent", typed_where::<C>("audio", |c| matches!(c, C::Audio(_)))),
        ("EmbeddedResource", typed_where::<C>("resource", |c| matches!(c, C::Resource(_)))),
        ("ImageContent", typed_where::<C>("image", |c| matches!(c, C::Image(_)))),
        ("ResourceLink", typed_where::<C>("resource_link", |c| matches!(c, C::ResourceLink(_)))),
        ("TextContent", typed_where::<C>("text", |c| matches!(c, C::Text(_)))),
        (
            "BlobResourceContents",
            typed_where::<ResourceContents>("blob", |c| matches!(c, ResourceContents::Blob(_))),
        ),
        (
            "TextResourceContents",
            typed_where::<ResourceContents>("text", |c| matches!(c, ResourceContents::Text(_))),
        ),
        // Definitions and capabilities.
        ("Tool", typed::<Tool>()),
        ("Resource", typed::<Resource>()),
        ("ServerCapabilities", typed::<ServerCapabilities>()),
        ("ClientCapabilities", typed::<ClientCapabilities>()),
        // Requests the server reads, and their params.
        ("CallToolRequest", request::<CallToolParams>("tools/call")),
        ("CallToolRequestParams", typed::<CallToolParams>()),
        ("CompleteRequest", request::<CompleteParams>("completion/complete")),
        ("CompleteRequestParams", typed::<CompleteParams>()),
        ("DiscoverRequest", request::<DiscoverParams>("server/discover")),
        ("GetPromptRequest", request::<GetPromptParams>("prompts/get")),
        ("GetPromptRequestParams", typed::<GetPromptParams>()),
        ("ListPromptsRequest", request::<PaginatedParams>("prompts/list")),
        ("ListResourceTemplatesRequest", request::<PaginatedParams>("resources/templates/list")),
        ("ListResourcesRequest", request::<PaginatedParams>("resources/list")),
        ("ListToolsRequest", request::<PaginatedParams>("tools/list")),
        ("PaginatedRequestParams", typed::<PaginatedParams>()),
        ("ReadResourceRequest", request::<ReadResourceParams>("resources/read")),
        ("SubscriptionsListenRequest", request::<SubscriptionsListenParams>("subscriptions/listen")),
        // The one notification the server reads.
        ("CancelledNotification", notification::<CancelledNotificationParams>("notifications/cancelled")),
        ("CancelledNotificationParams", typed::<CancelledNotificationParams>()),
        // Results the server writes, bare and in their response envelopes.
        ("CallToolResult", typed::<CallToolResult>()),
        ("CallToolResultResponse", result_response::<CallToolResult>()),
        ("CompleteResult", typed::<CompleteResult>()),
        ("CompleteResultResponse", result_response::<CompleteResult>()),
        ("DiscoverResult", typed::<DiscoverResult>()),
        ("DiscoverResultResponse", result_response::<DiscoverResult>()),
        ("GetPromptResult", typed::<GetPromptResult>()),
        ("GetPromptResultResponse", result_response::<GetPromptResult>()),
        ("ListPromptsResult", typed::<ListPromptsResult>()),
        ("ListPromptsResultResponse", result_response::<ListPromptsResult>()),
        ("ListResourceTemplatesResult", typed::<ListResourceTemplatesResult>()),
        ("ListResourceTemplatesResultResponse", result_response::<ListResourceTemplatesResult>()),
        ("ListResourcesResult", typed::<ListResourcesResult>()),
        ("ListResourcesResultResponse", result_response::<ListResourcesResult>()),
        ("ListToolsResult", typed::<ListToolsResult>()),
        ("ListToolsResultResponse", result_response::<ListToolsResult>()),
        ("ReadResourceResult", typed::<ReadResourceResult>()),
        ("ReadResourceResultResponse", result_response::<ReadResourceResult>()),
        ("SubscriptionsListenResult", typed::<SubscriptionsListenResult>()),
        ("SubscriptionsListenResultResponse", result_response::<SubscriptionsListenResult>()),
        (
            "InputRequiredResult",
            typed_where::<InputRequiredResult>("input_required", |r| {
                r.result_type == ResultType::InputRequired
            }),
        ),
        // Errors: bare error objects and full envelopes.
        ("HeaderMismatchError", error_response(code::HEADER_MISMATCH)),
        ("InternalError", error_object(code::INTERNAL_ERROR)),
        ("InvalidParamsError", error_object(code::INVALID_PARAMS)),
        ("MethodNotFoundError", error_object(code::METHOD_NOT_FOUND)),
        ("MissingRequiredClientCapabilityError", error_response(code::MISSING_REQUIRED_CLIENT_CAPABILITY)),
        ("ParseError", error_object(code::PARSE_ERROR)),
        ("UnsupportedProtocolVersionError", error_response(code::UNSUPPORTED_PROTOCOL_VERSION)),
        // Notifications the server writes, and their params.
        (
            "LoggingMessageNotification",
            notification::<LoggingMessageNotificationParams>("notifications/message"),
        ),
        ("LoggingMessageNotificationParams", typed::<LoggingMessageNotificationParams>()),
        ("ProgressNotification", notification::<ProgressNotificationParams>("notifications/progress")),
        ("ProgressNotificationParams", typed::<ProgressNotificationParams>()),
        (
            "PromptListChangedNotification",
            notification::<NotificationParams>("notifications/prompts/list_changed"),
        ),
        (
            "ResourceListChangedNotification",
            notification::<NotificationParams>("notifications/resources/list_changed"),
        ),
        (
            "ToolListChangedNotification",
            notification::<NotificationParams>("notifications/tools/list_changed"),
        ),
        (
            "ResourceUpdatedNotification",
            notification::<ResourceUpdatedNotificationParams>("notifications/resources/updated"),
        ),
        ("ResourceUpdatedNotificationParams", typed::<ResourceUpdatedNotificationParams>()),
        (
            "SubscriptionsAcknowledgedNotification",
            notification::<SubscriptionsAcknowledgedParams>("notifications/subscriptions/acknowledged"),
        ),
        // Input requests the server writes inside an InputRequiredResult, and their params.
        ("InputRequests", typed::<InputRequests>()),
        (
            "CreateMessageRequest",
            typed_where::<InputRequest>("sampling", |r| matches!(r, InputRequest::Sampling(_))),
        ),
        ("CreateMessageRequestParams", typed::<CreateMessageRequestParams>()),
        (
            "ElicitRequest",
            typed_where::<InputRequest>("elicitation", |r| matches!(r, InputRequest::Elicitation(_))),
        ),
        (
            "ElicitRequestFormParams",
            typed_where::<ElicitRequestParams>("form", |p| matches!(p, ElicitRequestParams::Form(_))),
        ),
        (
            "ElicitRequestURLParams",
            typed_where::<ElicitRequestParams>("url", |p| matches!(p, ElicitRequestParams::Url(_))),
        ),
        ("ListRootsRequest", list_roots_request()),
        ("ModelPreferences", typed::<ModelPreferences>()),
        ("SamplingMessage", typed::<SamplingMessage>()),
        ("ToolUseContent", typed_where::<S>("tool_use", |c| matches!(c, S::ToolUse(_)))),
        ("ToolResultContent", typed_where::<S>("tool_result", |c| matches!(c, S::ToolResult(_)))),
        // Elicitation property schemas: JSON inside `requestedSchema`, checked embedded in a request.
        ("BooleanSchema", schema_fragment()),
        ("NumberSchema", schema_fragment()),
        ("StringSchema", schema_fragment()),
        ("TitledMultiSelectEnumSchema", schema_fragment()),
        ("TitledSingleSelectEnumSchema", schema_fragment()),
        ("UntitledMultiSelectEnumSchema", schema_fragment()),
        ("UntitledSingleSelectEnumSchema", schema_fragment()),
        // Client results the server reads back in `inputResponses` on retry.
        (
            "InputResponses",
            typed_where::<InputResponses>("elicitation + sampling answers", |r| {
                matches!(r.get("github_login"), Some(InputResponse::Elicitation(_)))
                    && matches!(r.get("capital_of_france"), Some(InputResponse::Sampling(_)))
            }),
        ),
        ("CreateMessageResult", typed::<CreateMessageResult>()),
        ("ElicitResult", typed::<ElicitResult>()),
        ("ListRootsResult", typed::<ListRootsResult>()),
        ("Root", typed::<Root>()),
    ]
}

#[test]
fn every_example_directory_round_trips_through_its_type() {
    let dir = examples_dir();
    let table = table();

    let mut named = BTreeSet::new();
    for (name, _) in &table {
        assert!(named.insert(*name), "directory {name} is named twice in the table");
    }
    let mut present = BTreeSet::new();
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
        let entry = entry.expect("directory entry");
        if entry.file_type().expect("file type").is_dir() {
            present.insert(entry.file_name().into_string().expect("UTF-8 directory name"));
        }
    }
    let unnamed: Vec<_> = present.iter().filter(|d| !named.contains(d.as_str())).collect();
    assert!(unnamed.is_empty(), "example directories missing from the table: {unnamed:?}");
    let stale: Vec<_> = named.iter().filter(|n| !present.contains(**n)).collect();
    assert!(stale.is_empty(), "table names directories that do not exist: {stale:?}");

    let mut failures = Vec::new();
    let mut files = 0;
    for (name, check) in &table {
        let mut paths: Vec<_> = fs::read_dir(dir.join(name))
            .expect("example directory")
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        assert!(!paths.is_empty(), "{name} has no .json example");
        for path in paths {
            files += 1;
            let text = fs::read_to_string(&path).expect("example file");
            let value: Value = serde_json::from_str(&text).expect("example is JSON");
            if let Err(e) = check(&value) {
                failures.push(format!("{}: {e}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {files} examples failed:\n{}", failures.len(), failures.join("\n"));
}
