//! Serialization rules of the wire types that the specification examples do not exercise.

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::types::*;
use serde_json::{Value, json};

#[test]
fn none_fields_are_omitted_not_null() {
    let result = CallToolResult::new(vec![ContentBlock::text("hi")]);
    assert_eq!(serde_json::to_value(&result).unwrap(), json!({"content": [{"type": "text", "text": "hi"}]}));

    let tool = Tool::new("t", json!({"type": "object"}));
    assert_eq!(serde_json::to_value(&tool).unwrap(), json!({"name": "t", "inputSchema": {"type": "object"}}));

    let list = ListToolsResult {
        result_type: None,
        tools: vec![],
        next_cursor: None,
        ttl_ms: None,
        cache_scope: None,
        meta: None,
    };
    assert_eq!(serde_json::to_value(&list).unwrap(), json!({"tools": []}));

    assert_eq!(serde_json::to_value(ServerCapabilities::default()).unwrap(), json!({}));
    assert_eq!(serde_json::to_value(EmptyResult::default()).unwrap(), json!({}));
    assert_eq!(
        serde_json::to_value(Implementation::new("s", "1")).unwrap(),
        json!({"name": "s", "version": "1"})
    );
    let n = JsonRpcNotification::<NotificationParams>::new("notifications/tools/list_changed", None);
    assert_eq!(
        serde_json::to_value(&n).unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
}

#[test]
fn error_response_id_null_is_kept_and_absent_id_is_omitted() {
    let with_null = ErrorResponse::new(Some(Value::Null), ErrorObject::parse_error());
    let v = serde_json::to_value(&with_null).unwrap();
    assert_eq!(v["id"], Value::Null);
    assert!(v.as_object().unwrap().contains_key("id"));
    assert_eq!(serde_json::from_value::<ErrorResponse>(v).unwrap(), with_null);

    let without = ErrorResponse::new(None, ErrorObject::internal());
    let v = serde_json::to_value(&without).unwrap();
    assert!(!v.as_object().unwrap().contains_key("id"));
    assert_eq!(serde_json::from_value::<ErrorResponse>(v).unwrap(), without);
}

#[test]
fn result_type_and_cache_scope_spellings() {
    assert_eq!(serde_json::to_value(ResultType::Complete).unwrap(), json!("complete"));
    assert_eq!(serde_json::to_value(ResultType::InputRequired).unwrap(), json!("input_required"));
    assert_eq!(serde_json::to_value(CacheScope::Public).unwrap(), json!("public"));
    assert_eq!(serde_json::to_value(CacheScope::Private).unwrap(), json!("private"));
    let r = InputRequiredResult::new(None, Some("s".into()));
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"resultType": "input_required", "requestState": "s"})
    );
}

#[test]
fn legacy_shapes_read_and_write() {
    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": true}, "tasks": {"list": {}}},
        "serverInfo": {"name": "s", "version": "1"}
    });
    let typed: InitializeResult = serde_json::from_value(init.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), init);

    let params: InitializeParams = serde_json::from_value(
        json!({"protocolVersion": 7, "capabilities": {}, "clientInfo": {"name": "c", "version": "0"}}),
    )
    .unwrap();
    assert_eq!(params.protocol_version, json!(7));

    let call: CallToolParams =
        serde_json::from_value(json!({"name": "t", "arguments": {"a": 1}, "task": {"ttl": 5}})).unwrap();
    assert_eq!(call.task, Some(json!({"ttl": 5})));
    assert!(call.input_responses.is_none());
}

#[test]
fn input_requests_are_told_apart_by_method_and_mode() {
    let roots: InputRequest = serde_json::from_value(json!({"method": "roots/list"})).unwrap();
    assert_eq!(roots, InputRequest::ListRoots(None));
    assert_eq!(serde_json::to_value(&roots).unwrap(), json!({"method": "roots/list"}));

    let url =
        InputRequest::Elicitation(ElicitRequestParams::Url(ElicitUrlParams::new("m", "https://x.invalid")));
    let v = serde_json::to_value(&url).unwrap();
    assert_eq!(v["params"]["mode"], json!("url"));
    assert_eq!(serde_json::from_value::<InputRequest>(v).unwrap(), url);

    // A url-mode request without a url is neither a form nor a url request.
    assert!(serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "m"})).is_err());
    assert!(serde_json::from_value::<InputRequest>(json!({"method": "tools/call", "params": {}})).is_err());
    assert!(serde_json::from_value::<InputRequest>(json!({"method": "elicitation/create"})).is_err());

    let sampling = InputRequest::Sampling(CreateMessageRequestParams::new(
        vec![SamplingMessage::text(Role::User, "q")],
        10,
    ));
    let v = serde_json::to_value(&sampling).unwrap();
    assert_eq!(
        v,
        json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "q"}}],
            "maxTokens": 10
        }})
    );
}

#[test]
fn floats_round_trip_exactly() {
    let v = json!({"progressToken": 1, "progress": 0.1, "total": 3.0000000000000004});
    let p: ProgressNotificationParams = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&p).unwrap(), v);
    let v = json!({"priority": 0.30000000000000004, "audience": ["assistant"]});
    let a: Annotations = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&a).unwrap(), v);
}
