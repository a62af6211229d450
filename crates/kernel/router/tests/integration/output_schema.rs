//! Output schemas (`ToolSpec::output_schema`): advertised verbatim, and every result checked against
//! them before it is sent. A result that breaks its schema, or has no structured content, is a host
//! fault: logged with the tool and the reason, answered -32603 "Internal error" with nothing more. An
//! error result of such a tool carries no structured content. The schema's root must be an object
//! schema the validator can enforce.

use crate::support;

use crate::support::*;
use mcp_kernel_router::schema::SchemaError;
use mcp_kernel_router::{
    BuildError, Json, Listing, Mode, RequestContext, Server, ToolCall, ToolError, ToolOutput, ToolSpec, Tools,
};
use serde_json::{Value, json};

fn temperature_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"place": {"type": "string"}, "celsius": {"type": "number"}},
        "required": ["place", "celsius"],
        "additionalProperties": false
    })
}

const INTERNAL: &str = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}"#;

/// Every tool declares the temperature schema; each returns something different.
fn catalog() -> Listing {
    let names = [
        "matches",
        "matches_content",
        "breaks",
        "breaks_content",
        "text_only",
        "blocks_only",
        "fails",
        "fails_structured",
        "validated",
    ];
    let tools = names
        .into_iter()
        .map(|name| {
            let spec = ToolSpec::new(name, Mode::ReadOnly).output_schema(temperature_schema());
            if name == "validated" {
                spec.input_schema(
                    json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
                )
            } else {
                spec
            }
        })
        .collect();
    Listing { tools, ..Listing::default() }
}

async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let good = json!({"place": "Oslo", "celsius": 4.5});
    // The secret is in the breaking value, never in any response.
    let bad = json!({"place": "Oslo", "celsius": "secret-reading"});
    match &*call.name {
        "matches" | "validated" => Ok(ToolOutput::Json(good)),
        "matches_content" => Ok(ToolOutput::text("4.5 in Oslo").with_structured(good)),
        "breaks" => Ok(ToolOutput::Json(bad)),
        "breaks_content" => Ok(ToolOutput::text("4.5 in Oslo").with_structured(bad)),
        "text_only" => Ok(ToolOutput::text("no structure")),
        "blocks_only" => Ok(ToolOutput::content(vec![])),
        "fails" => Err(ToolError::new("upstream unavailable")),
        "fails_structured" => Err(ToolError::structured(json!({"kind": "quota", "left": 0}))),
        _ => Err(ToolError::new("not in fixture")),
    }
}

fn server() -> Server {
    Server::builder(catalog()).dispatch(dispatch).build().expect("the output-schema catalog builds")
}

fn call(name: &str) -> Value {
    modern(1, "tools/call", json!({"name": name}))
}

fn bare_call(name: &str) -> Value {
    bare(1, "tools/call", json!({"name": name}))
}

#[tokio::test]
async fn the_output_schema_is_advertised_verbatim() {
    let list = send(&server(), modern(1, "tools/list", json!({}))).await;
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert_eq!(
            serde_json::to_string(&tool["outputSchema"]).unwrap(),
            serde_json::to_string(&temperature_schema()).unwrap(),
            "{tool}"
        );
    }
    let plain = support::server();
    let list = send(&plain, modern(1, "tools/list", json!({}))).await;
    assert!(list["result"]["tools"][0].get("outputSchema").is_none(), "no output schema, none advertised");
}

#[tokio::test]
async fn a_result_matching_the_output_schema_is_sent() {
    let server = server();
    for request in [call("matches"), bare_call("matches")] {
        let r = send(&server, request).await;
        assert_eq!(r["result"]["isError"], false, "{r}");
        assert_eq!(r["result"]["structuredContent"], json!({"place": "Oslo", "celsius": 4.5}));
    }
    let r = send(&server, call("matches_content")).await;
    assert_eq!(first_text(&r), "4.5 in Oslo");
    assert_eq!(r["result"]["structuredContent"], json!({"place": "Oslo", "celsius": 4.5}));
}

#[tokio::test]
async fn a_result_breaking_the_output_schema_is_internal_error_and_nothing_else() {
    let server = server();
    for name in ["breaks", "breaks_content"] {
        for request in [call(name), bare_call(name), legacy(1, "tools/call", json!({"name": name}))] {
            let r = send(&server, request).await;
            assert_eq!(r.to_string(), INTERNAL, "{name}");
        }
    }
}

#[tokio::test]
async fn a_result_breaking_the_output_schema_is_logged_with_the_tool_and_the_reason() {
    let (logs, _guard) = capture_logs();
    let r = send(&server(), call("breaks")).await;
    assert_eq!(r.to_string(), INTERNAL);
    let text = logs.text();
    assert!(text.contains("ERROR"), "{text}");
    assert!(text.contains("breaks its declared output schema"), "{text}");
    assert!(text.contains("tool=breaks"), "{text}");
    assert!(text.contains("celsius"), "the reason names where the result breaks the schema: {text}");
    assert!(text.contains("structuredContent.celsius"), "the path is written from the result: {text}");
    assert!(!text.contains("secret-reading"), "the log names the rule, not the value: {text}");
}

#[tokio::test]
async fn a_result_breaking_the_output_schema_is_observed_as_a_fault_not_a_success() {
    use mcp_kernel_router::observe::{DispatchEvent, DispatchObserver, DispatchOutcome};
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Seen(Arc<Mutex<Vec<(String, DispatchOutcome)>>>);
    impl DispatchObserver for Seen {
        fn dispatched(&self, event: &DispatchEvent<'_>) {
            self.0.lock().unwrap().push((event.tool.to_owned(), event.outcome));
        }
    }
    let seen = Seen::default();
    let server =
        Server::builder(catalog()).dispatch(dispatch).observe_dispatch(seen.clone()).build().unwrap();
    for name in ["matches", "breaks", "text_only"] {
        send(&server, call(name)).await;
    }
    let outcomes = seen.0.lock().unwrap().clone();
    assert_eq!(
        outcomes,
        [
            ("matches".to_owned(), DispatchOutcome::Ok),
            ("breaks".to_owned(), DispatchOutcome::Fault),
            ("text_only".to_owned(), DispatchOutcome::Fault)
        ]
    );
}

#[tokio::test]
async fn a_tool_with_an_output_schema_returning_no_structured_content_is_the_same_fault() {
    let server = server();
    let (logs, _guard) = capture_logs();
    for name in ["text_only", "blocks_only"] {
        for request in [call(name), bare_call(name)] {
            assert_eq!(send(&server, request).await.to_string(), INTERNAL, "{name}");
        }
    }
    assert!(logs.text().contains("it returned no structured content"), "{}", logs.text());
}

#[tokio::test]
async fn an_error_result_of_a_tool_with_an_output_schema_carries_no_structured_content() {
    let server = server();
    for (request, text) in [
        (call("fails"), "upstream unavailable"),
        (bare_call("fails"), "upstream unavailable"),
        (call("fails_structured"), "kind: quota, left: 0"),
        (
            modern(1, "tools/call", json!({"name": "validated", "arguments": {"n": "x"}})),
            "validated: invalid arguments: arguments.n must be of type integer",
        ),
        (
            bare(1, "tools/call", json!({"name": "validated", "arguments": {}})),
            "validated: invalid arguments: arguments.n is required",
        ),
    ] {
        let r = send(&server, request.clone()).await;
        assert_eq!(r["result"]["isError"], true, "{request}: {r}");
        assert_eq!(first_text(&r), text, "{request}");
        assert!(r["result"].get("structuredContent").is_none(), "{request}: {r}");
    }
    // Without an output schema the same failure keeps its structured `{error}`.
    let r = send(&support::server(), call("fail")).await;
    assert_eq!(r["result"]["structuredContent"], json!({"error": "upstream unavailable"}));
}

#[tokio::test]
async fn a_typed_tools_output_schema_is_enforced_and_its_errors_carry_no_structured_content() {
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Place {
        place: u8,
    }
    let spec = |name: &str| {
        ToolSpec::new(name, Mode::ReadOnly)
            .input_schema(json!({"type": "object", "properties": {"place": {}}}))
            .output_schema(temperature_schema())
    };
    let tools = Tools::new()
        .add(spec("good"), |_: Place, _cx: RequestContext| async {
            Ok::<_, ToolError>(Json(json!({"place": "Oslo", "celsius": 1})))
        })
        .add(spec("bad"), |_: Place, _cx: RequestContext| async {
            Ok::<_, ToolError>(Json(json!({"place": "Oslo"})))
        })
        .add(spec("text"), |_: Place, _cx: RequestContext| async { Ok::<_, ToolError>("text") });
    let server = Server::builder(Listing::new()).tools(tools).build().unwrap();
    let typed_call = |name: &str, place: Value| {
        modern(1, "tools/call", json!({"name": name, "arguments": {"place": place}}))
    };
    let r = send(&server, typed_call("good", json!(1))).await;
    assert_eq!(r["result"]["structuredContent"], json!({"place": "Oslo", "celsius": 1}));
    assert_eq!(send(&server, typed_call("bad", json!(1))).await.to_string(), INTERNAL);
    assert_eq!(send(&server, typed_call("text", json!(1))).await.to_string(), INTERNAL);
    // The type refuses what the schema admits: a tool error, with no structured content either.
    let r = send(&server, typed_call("good", json!("not a number"))).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"].get("structuredContent").is_none(), "{r}");
    assert!(first_text(&r).contains("argument place does not have the form the tool reads"), "{r}");
}

fn build_with_output(schema: Value) -> Result<Server, BuildError> {
    let tool = ToolSpec::new("t", Mode::ReadOnly).output_schema(schema);
    Server::builder(Listing { tools: vec![tool], ..Listing::default() }).dispatch(dispatch).build()
}

#[test]
fn an_output_schema_whose_root_is_not_an_object_schema_is_refused() {
    for schema in [
        json!({"type": "array", "items": {"type": "number"}}),
        json!({"type": "string"}),
        json!({"properties": {"a": {"type": "number"}}}),
        json!({"type": ["object", "null"]}),
        json!({"anyOf": [{"type": "object"}]}),
        json!({}),
        json!(true),
    ] {
        assert_eq!(
            build_with_output(schema.clone()).unwrap_err(),
            BuildError::OutputSchemaNotObject("t".into()),
            "{schema}"
        );
    }
    let err = build_with_output(json!({"type": "array"})).unwrap_err();
    assert_eq!(err.to_string(), "tool t: the output schema's root must declare \"type\": \"object\"");
}

#[test]
fn an_output_schema_the_validator_cannot_enforce_is_refused() {
    let remote = json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}});
    let err = build_with_output(remote).unwrap_err();
    assert!(
        matches!(&err, BuildError::OutputSchema { tool, error: SchemaError::RemoteReference { .. } } if tool == "t"),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("tool t: output schema references "), "{err}");
    let lookahead = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(?=a)b"}}});
    assert!(matches!(
        build_with_output(lookahead).unwrap_err(),
        BuildError::OutputSchema { error: SchemaError::UnsupportedPattern { .. }, .. }
    ));
    let dialect = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"});
    assert!(matches!(
        build_with_output(dialect).unwrap_err(),
        BuildError::OutputSchema { error: SchemaError::UnsupportedDialect { .. }, .. }
    ));
    let invalid = json!({"type": "object", "minProperties": "two"});
    assert!(matches!(
        build_with_output(invalid).unwrap_err(),
        BuildError::OutputSchema { error: SchemaError::Invalid { .. }, .. }
    ));
}
