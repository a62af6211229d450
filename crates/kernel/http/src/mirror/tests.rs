//! The header rules of `mirror/mod.rs`, each pinned by name.

use super::*;
use mcp_kernel_router::{Extensions, Server};

/// [`check`] with what the core answers the service for `extensions`.
fn check_as(
    h: &HeaderMap,
    m: &Map<String, Value>,
    server: &Server,
    extensions: &Extensions,
) -> Result<(), Refusal> {
    let m = &Envelope::from_object(m.clone());
    check(h, m, &server.admit(m, extensions))
}

/// [`check_sent`] with what the core answers the service for `extensions`.
fn check_sent_as(
    h: &HeaderMap,
    m: &Map<String, Value>,
    server: &Server,
    extensions: &Extensions,
) -> Result<(), Refusal> {
    let m = &Envelope::from_object(m.clone());
    check_sent(h, m, &server.admit(m, extensions))
}

use http::{HeaderName, HeaderValue};
use mcp_kernel_router::{Listing, Mode, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_wire::code;
use mcp_kernel_wire::error::detail::{META_CAPABILITIES_NOT_OBJECT, TOP_LEVEL_META};
use mcp_kernel_wire::version::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// A server whose tool `search` mirrors a string, an integer, a boolean and a nested string.
fn server() -> Server {
    let schema = json!({"type": "object", "properties": {
        "q": {"type": "string", "x-mcp-header": "Query"},
        "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "exact": {"type": "boolean", "x-mcp-header": "Exact"},
        "filter": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
        "note": {"type": "string"}
    }});
    build(vec![ToolSpec::new("search", Mode::ReadOnly).input_schema(schema)], false)
}

/// A server listing `tools`, optionally keeping header-annotation faults for HTTP to refuse.
fn build(tools: Vec<ToolSpec>, defer: bool) -> Server {
    Server::builder(Listing { tools, ..Listing::default() })
        .dispatch(|_: ToolCall| async move { Ok::<_, ToolError>(ToolOutput::text("ok")) })
        .defer_header_annotation_faults(defer)
        .build()
        .expect("a valid catalog")
}

/// [`check`] against [`server`].
fn run(headers: &HeaderMap, message: &Map<String, Value>) -> Result<(), Refusal> {
    check_as(headers, message, &server(), &Extensions::new())
}

/// A modern request (id 7): `params._meta` declares 2026-07-28 and empty client capabilities.
fn request(method: &str, mut params: Value) -> Map<String, Value> {
    params["_meta"] = json!({META_PROTOCOL_VERSION: MODERN, META_CLIENT_CAPABILITIES: {}});
    let message = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    message.as_object().cloned().unwrap()
}

fn list() -> Map<String, Value> {
    request("tools/list", json!({}))
}

fn call(arguments: Value) -> Map<String, Value> {
    request("tools/call", json!({"name": "search", "arguments": arguments}))
}

fn notification(method: &str) -> Map<String, Value> {
    json!({"jsonrpc": "2.0", "method": method}).as_object().cloned().unwrap()
}

/// Headers from (name, raw bytes) pairs; a repeated name is appended.
fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let name = HeaderName::from_bytes(name.as_bytes()).unwrap();
        map.append(name, HeaderValue::from_bytes(value).unwrap());
    }
    map
}

/// The version and method headers for `method`, then `extra`.
fn standard(method: &str, extra: &[(&str, &[u8])]) -> HeaderMap {
    let mut pairs = vec![(PROTOCOL_VERSION, MODERN.as_bytes()), (METHOD, method.as_bytes())];
    pairs.extend_from_slice(extra);
    headers(&pairs)
}

/// The standard headers of a `tools/call` of `search`, then `extra`.
fn call_headers(extra: &[(&str, &[u8])]) -> HeaderMap {
    let mut pairs: Vec<(&str, &[u8])> = vec![(NAME, b"search")];
    pairs.extend_from_slice(extra);
    standard("tools/call", &pairs)
}

/// `"<label> <rule>"`, a header-mismatch detail.
fn detail(label: &str, rule: &str) -> String {
    format!("{label} {rule}")
}

fn assert_mismatch(result: Result<(), Refusal>, detail: &str) {
    let r = result.expect_err("a refusal");
    assert_eq!((r.status, r.error.code), (StatusCode::BAD_REQUEST, code::HEADER_MISMATCH), "{r:?}");
    assert_eq!(r.error.message, format!("Header mismatch: {detail}"));
    assert_eq!(r.id, json!(7));
}

fn assert_invalid_params(result: Result<(), Refusal>, detail: &str) {
    let r = result.expect_err("a refusal");
    assert_eq!((r.status, r.error.code), (StatusCode::BAD_REQUEST, code::INVALID_PARAMS), "{r:?}");
    assert_eq!(r.error.message, format!("Invalid params: {detail}"));
}

#[test]
fn messages_are_the_documented_texts() {
    assert_eq!(detail(METHOD, NOT_UTF8), "mcp-method header value is not valid UTF-8");
    assert_eq!(detail("Missing mcp-method", REQUIRED), "Missing mcp-method header; it is required");
    assert_eq!(detail(NAME, DIFFERS), "mcp-name header does not match the corresponding request body value");
    let p = "Mcp-Param-Limit";
    assert_eq!(
        detail(p, NO_BODY_VALUE),
        "Mcp-Param-Limit header was sent, but the body carries no such value"
    );
    assert_eq!(
        detail(p, VALUE_UNMIRRORED),
        "Mcp-Param-Limit header is required: the body carries a value to mirror"
    );
}

#[test]
fn a_well_formed_call_passes() {
    let sent: [(&str, &[u8]); 3] =
        [("mcp-param-query", b"rust"), ("mcp-param-limit", b"5"), ("mcp-param-exact", b"true")];
    let args = json!({"q": "rust", "limit": 5, "exact": true, "note": "x"});
    assert_eq!(run(&call_headers(&sent), &call(args)), Ok(()));
}

#[test]
fn top_level_meta_is_invalid_params() {
    let mut m = list();
    m.insert("_meta".into(), json!({}));
    assert_invalid_params(run(&standard("tools/list", &[]), &m), TOP_LEVEL_META);
    // First of all the rules, on notifications too.
    let mut n = notification("notifications/cancelled");
    n.insert("_meta".into(), json!({}));
    let r = run(&HeaderMap::new(), &n).expect_err("a refusal");
    assert_eq!((r.error.message, r.id), (format!("Invalid params: {TOP_LEVEL_META}"), Value::Null));
}

#[test]
fn non_utf8_header_is_refused_by_name_without_echo() {
    let h = headers(&[(PROTOCOL_VERSION, b"2026-07-28\xff")]);
    assert_mismatch(run(&h, &list()), "mcp-protocol-version header value is not valid UTF-8");
    // A bad value anywhere in a repeated header is refused.
    let h = standard("tools/list", &[(METHOD, b"tools/list\xfe")]);
    assert_mismatch(run(&h, &list()), &detail(METHOD, NOT_UTF8));
    let h = standard("tools/call", &[(NAME, b"search"), (NAME, b"\xc3\x28")]);
    assert_mismatch(run(&h, &call(json!({}))), &detail(NAME, NOT_UTF8));
    let r = run(&call_headers(&[("mcp-param-query", b"\xffsecret")]), &call(json!({"q": "secret"})));
    assert_mismatch(r.clone(), "Mcp-Param-Query header value is not valid UTF-8");
    assert!(!format!("{r:?}").contains("secret"));
}

#[test]
fn non_ascii_in_a_mirrored_header_must_travel_base64_encoded() {
    let h = call_headers(&[("mcp-param-query", "caf\u{e9}".as_bytes())]);
    assert_mismatch(run(&h, &call(json!({"q": "caf\u{e9}"}))), &detail("Mcp-Param-Query", NOT_PLAIN));
    let h = call_headers(&[("mcp-param-query", b"=?base64?Y2Fmw6k=?=")]);
    assert_eq!(run(&h, &call(json!({"q": "caf\u{e9}"}))), Ok(()));
    let h = call_headers(&[("mcp-param-query", b"=?base64?dGjDqQ==?=")]);
    assert_mismatch(run(&h, &call(json!({"q": "caf\u{e9}"}))), &detail("Mcp-Param-Query", DIFFERS));
}

#[test]
fn a_legacy_initialize_without_the_header_is_told_the_served_revision() {
    let server = server();
    let message =
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}});
    let refusal =
        check_as(&HeaderMap::new(), message.as_object().unwrap(), &server, &Extensions::new()).unwrap_err();
    assert_eq!(refusal.status, StatusCode::BAD_REQUEST);
    assert_eq!(refusal.error.code, -32022);
    assert_eq!(refusal.error.data, Some(json!({"supported":["2026-07-28"],"requested":"2025-11-25"})));
}

#[test]
fn missing_protocol_version_header_is_header_mismatch() {
    let h = headers(&[(METHOD, b"tools/list")]);
    assert_mismatch(run(&h, &list()), "Missing mcp-protocol-version header; it is required on every POST");
}

#[test]
fn non_object_params_meta_is_invalid_params() {
    let mut m = list();
    m["params"]["_meta"] = json!("2026-07-28");
    assert_invalid_params(run(&HeaderMap::new(), &m), "params._meta must be an object");
}

#[test]
fn body_version_disagreeing_with_header_is_mismatch() {
    let mut m = list();
    m["params"]["_meta"][META_PROTOCOL_VERSION] = json!("2025-11-25");
    assert_mismatch(
        run(&standard("tools/list", &[]), &m),
        "mcp-protocol-version header does not match the body value",
    );
    // A non-string body version differs from every header value.
    m["params"]["_meta"][META_PROTOCOL_VERSION] = json!(20_260_728);
    assert_mismatch(run(&standard("tools/list", &[]), &m), VERSION_DIFFERS);
}

#[test]
fn repeated_protocol_version_headers_must_all_match() {
    let h = standard("tools/list", &[(PROTOCOL_VERSION, b"2025-11-25")]);
    assert_mismatch(run(&h, &list()), VERSION_DIFFERS);
    let h = standard("tools/list", &[(PROTOCOL_VERSION, MODERN.as_bytes())]);
    assert_eq!(run(&h, &list()), Ok(()));
}

#[test]
fn header_version_other_than_modern_is_unsupported_version_with_first_value() {
    // A notification names no body version: the header alone decides.
    let v: [(&str, &[u8]); 3] = [
        (PROTOCOL_VERSION, b"2026-07-28"),
        (PROTOCOL_VERSION, b"2025-11-25"),
        (PROTOCOL_VERSION, b"1999-01-01"),
    ];
    let r = run(&headers(&v), &notification("notifications/cancelled")).expect_err("a refusal");
    assert_eq!((r.status, r.error.code), (StatusCode::BAD_REQUEST, code::UNSUPPORTED_PROTOCOL_VERSION));
    assert_eq!(r.error.data, Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})));
    // Never base64-decoded.
    let h = headers(&[(PROTOCOL_VERSION, b"=?base64?MjAyNi0wNy0yOA==?=")]);
    let r = run(&h, &notification("notifications/cancelled")).expect_err("a refusal");
    assert_eq!(r.error.code, code::UNSUPPORTED_PROTOCOL_VERSION);
}

#[test]
fn request_without_meta_version_is_invalid_params() {
    let text = "params._meta with io.modelcontextprotocol/protocolVersion is required on every request";
    let mut m = request("server/discover", json!({}));
    m["params"]["_meta"].as_object_mut().unwrap().remove(META_PROTOCOL_VERSION);
    assert_invalid_params(run(&standard("server/discover", &[]), &m), text);
    m.remove("params");
    assert_invalid_params(run(&standard("server/discover", &[]), &m), text);
    // `id: null` is a request too, and its null id is echoed.
    m.insert("id".into(), Value::Null);
    let r = run(&standard("server/discover", &[]), &m).expect_err("a refusal");
    assert_eq!((r.error.code, r.id), (code::INVALID_PARAMS, Value::Null));
}

#[test]
fn request_without_client_capabilities_is_invalid_params() {
    let mut m = list();
    m["params"]["_meta"].as_object_mut().unwrap().remove(META_CLIENT_CAPABILITIES);
    assert_invalid_params(
        run(&standard("tools/list", &[]), &m),
        "params._meta lacks io.modelcontextprotocol/clientCapabilities, which 2026-07-28 requires on every request",
    );
    m["params"]["_meta"][META_CLIENT_CAPABILITIES] = json!([]);
    assert_invalid_params(run(&standard("tools/list", &[]), &m), META_CAPABILITIES_NOT_OBJECT);
}

#[test]
fn missing_mcp_method_on_a_request_is_mismatch() {
    let h = headers(&[(PROTOCOL_VERSION, MODERN.as_bytes())]);
    assert_mismatch(run(&h, &list()), "Missing mcp-method header; it is required");
}

#[test]
fn mcp_method_must_equal_the_body_method_in_every_value() {
    let differs = detail(METHOD, DIFFERS);
    assert_mismatch(run(&standard("tools/list", &[(METHOD, b"tools/call")]), &list()), &differs);
    let mut m = list();
    m["method"] = json!(["tools/list"]);
    assert_mismatch(run(&standard("tools/list", &[]), &m), &differs);
    // Not base64-decoded: a gateway would otherwise see an opaque token.
    assert_mismatch(run(&standard("=?base64?dG9vbHMvbGlzdA==?=", &[]), &list()), &differs);
}

#[test]
fn notification_needs_the_version_header_but_not_mcp_method() {
    let n = notification("notifications/cancelled");
    assert_eq!(run(&headers(&[(PROTOCOL_VERSION, MODERN.as_bytes())]), &n), Ok(()));
    let r = run(&HeaderMap::new(), &n).expect_err("a refusal");
    assert_eq!((r.error.message, r.id), (format!("Header mismatch: {VERSION_MISSING}"), Value::Null));
}

#[test]
fn notification_with_wrong_mcp_method_is_refused() {
    let r = run(&standard("notifications/progress", &[]), &notification("notifications/cancelled"));
    assert_eq!(r.expect_err("a refusal").error.message, format!("Header mismatch: {METHOD} {DIFFERS}"));
}

#[test]
fn mcp_name_must_mirror_name_or_uri() {
    let differs = detail(NAME, DIFFERS);
    let get = request("prompts/get", json!({"name": "greet"}));
    assert_mismatch(run(&standard("prompts/get", &[]), &get), "Missing mcp-name header; it is required");
    assert_mismatch(run(&standard("prompts/get", &[(NAME, b"other")]), &get), &differs);
    assert_eq!(run(&standard("prompts/get", &[(NAME, b"greet")]), &get), Ok(()));
    let read = request("resources/read", json!({"uri": "file:///a", "name": "greet"}));
    assert_mismatch(run(&standard("resources/read", &[(NAME, b"greet")]), &read), &differs);
    assert_eq!(run(&standard("resources/read", &[(NAME, b"file:///a")]), &read), Ok(()));
    let twice = standard("resources/read", &[(NAME, b"file:///a"), (NAME, b"file:///b")]);
    assert_mismatch(run(&twice, &read), &differs);
}

#[test]
fn mcp_name_must_mirror_the_task_id_of_the_three_task_methods() {
    let differs = detail(NAME, DIFFERS);
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let m = request(method, json!({"taskId": "0123abcd", "name": "other"}));
        assert_mismatch(run(&standard(method, &[]), &m), "Missing mcp-name header; it is required");
        assert_mismatch(run(&standard(method, &[(NAME, b"other")]), &m), &differs);
        assert_eq!(run(&standard(method, &[(NAME, b"0123abcd")]), &m), Ok(()), "{method}");
        // No string taskId: the core refuses the request; a header mirrors nothing.
        let without = request(method, json!({}));
        assert_eq!(run(&standard(method, &[]), &without), Ok(()), "{method}");
        assert_mismatch(run(&standard(method, &[(NAME, b"0123abcd")]), &without), &differs);
    }
}

#[test]
fn mcp_name_without_a_string_body_value_must_be_absent() {
    let m = request("prompts/get", json!({"name": 3}));
    assert_eq!(run(&standard("prompts/get", &[]), &m), Ok(()));
    assert_mismatch(run(&standard("prompts/get", &[(NAME, b"3")]), &m), &detail(NAME, DIFFERS));
    let m = request("resources/read", json!({}));
    assert_mismatch(run(&standard("resources/read", &[(NAME, b"x")]), &m), &detail(NAME, DIFFERS));
}

#[test]
fn mcp_name_is_base64_decoded_canonically_only() {
    let m = request("prompts/get", json!({"name": "Hello, 世界"}));
    let h = standard("prompts/get", &[(NAME, b"=?base64?SGVsbG8sIOS4lueVjA==?=")]);
    assert_eq!(run(&h, &m), Ok(()));
    // A body value that itself looks like the sentinel is sent encoded.
    let m = request("prompts/get", json!({"name": "=?base64?QQ==?="}));
    let h = standard("prompts/get", &[(NAME, b"=?base64?PT9iYXNlNjQ/UVE9PT89?=")]);
    assert_eq!(run(&h, &m), Ok(()));
}

#[test]
fn non_canonical_base64_is_refused_whatever_the_body() {
    // "SGVsbG9=" has non-zero trailing bits (a lenient decoder reads "Hello"): malformed, so a
    // gateway and the server can never read two different values from it.
    let h = standard("prompts/get", &[(NAME, b"=?base64?SGVsbG9=?=")]);
    let m = request("prompts/get", json!({"name": "Hello"}));
    assert_mismatch(run(&h, &m), &detail(NAME, NOT_PLAIN));
    let literal = request("prompts/get", json!({"name": "=?base64?SGVsbG9=?="}));
    assert_mismatch(run(&h, &literal), &detail(NAME, NOT_PLAIN));
    // Uppercase markers are no sentinel either.
    let h = standard("prompts/get", &[(NAME, b"=?BASE64?SGVsbG8=?=")]);
    assert_mismatch(run(&h, &m), &detail(NAME, DIFFERS));
}

#[test]
fn mcp_name_not_needed_for_tools_list() {
    assert_eq!(run(&standard("tools/list", &[]), &list()), Ok(()));
    // Ignored entirely when sent.
    assert_eq!(run(&standard("tools/list", &[(NAME, b"\xff")]), &list()), Ok(()));
}

#[test]
fn param_headers_come_from_the_schema_not_the_request() {
    // Unannotated (`note`) and unknown (`other`) headers are ignored, even when they disagree.
    let h = call_headers(&[("mcp-param-note", b"nope"), ("mcp-param-other", b"\xff")]);
    assert_eq!(run(&h, &call(json!({"note": "x"}))), Ok(()));
    // An annotated value the caller chose not to mirror is still required.
    let unmirrored = detail("Mcp-Param-Query", VALUE_UNMIRRORED);
    assert_mismatch(run(&call_headers(&[]), &call(json!({"q": "rust"}))), &unmirrored);
    // An unknown tool, or a name that is not a string, mirrors nothing.
    let m = request("tools/call", json!({"name": "nope", "arguments": {"q": "x"}}));
    assert_eq!(run(&standard("tools/call", &[(NAME, b"nope"), ("mcp-param-query", b"y")]), &m), Ok(()));
    let m = request("tools/call", json!({"name": 1, "arguments": {"q": "x"}}));
    assert_eq!(run(&standard("tools/call", &[]), &m), Ok(()));
    // Only `tools/call` mirrors parameters.
    let m = request("prompts/get", json!({"name": "search", "arguments": {"q": "x"}}));
    assert_eq!(run(&standard("prompts/get", &[(NAME, b"search")]), &m), Ok(()));
}

#[test]
fn string_param_is_base64_decoded_and_every_value_must_match() {
    let h = call_headers(&[("mcp-param-query", b"=?base64?IGxlYWRpbmcgc3BhY2U=?=")]);
    assert_eq!(run(&h, &call(json!({"q": " leading space"}))), Ok(()));
    let differs = detail("Mcp-Param-Query", DIFFERS);
    let h = call_headers(&[("mcp-param-query", b"rust"), ("mcp-param-query", b"go")]);
    assert_mismatch(run(&h, &call(json!({"q": "rust"}))), &differs);
    // A body value of another type than the parameter's never matches.
    assert_mismatch(run(&call_headers(&[("mcp-param-query", b"5")]), &call(json!({"q": 5}))), &differs);
}

/// A call of `search` with `arguments: {<key>: body}` and the header of parameter `key`.
fn param(key: &str, header: &str, body: Value) -> Result<(), Refusal> {
    let name = format!("mcp-param-{key}");
    run(&call_headers(&[(&name, header.as_bytes())]), &call(json!({key: body})))
}

#[test]
fn integer_param_matches_numerically_and_refuses_floats_and_leading_zeros() {
    let differs = detail("Mcp-Param-Limit", DIFFERS);
    for (header, body) in [("42", json!(42)), ("42.0", json!(42)), ("42", json!(42.0)), ("-0", json!(0))] {
        assert_eq!(param("limit", header, body), Ok(()), "{header}");
    }
    assert_eq!(param("limit", "-3.00", json!(-3)), Ok(()));
    assert_eq!(param("limit", "=?base64?NDI=?=", json!(42)), Ok(()));
    for header in ["042", "+42", "42.5", "4.2e1", "0x2a", "42.", "43", "=?base64?NDI=?=x"] {
        assert_mismatch(param("limit", header, json!(42)), &differs);
    }
    // Surrounding whitespace is not a value HTTP preserves: refused as malformed.
    assert_mismatch(param("limit", " 42", json!(42)), &detail("Mcp-Param-Limit", NOT_PLAIN));
    assert_mismatch(param("limit", "42", json!(42.5)), &differs);
    assert_mismatch(param("limit", "42", json!("42")), &differs);
}

#[test]
fn boolean_param_matches_exactly() {
    assert_eq!(param("exact", "false", json!(false)), Ok(()));
    assert_eq!(param("exact", "true", json!(true)), Ok(()));
    let differs = detail("Mcp-Param-Exact", DIFFERS);
    for (header, body) in [("True", json!(true)), ("1", json!(true)), ("false", json!(true))] {
        assert_mismatch(param("exact", header, body), &differs);
    }
    assert_mismatch(param("exact", "true", json!("true")), &differs);
}

#[test]
fn absent_body_value_with_header_is_mismatch() {
    let sent = detail("Mcp-Param-Limit", NO_BODY_VALUE);
    let h = call_headers(&[("mcp-param-limit", b"5")]);
    assert_mismatch(run(&h, &call(json!({}))), &sent);
    assert_mismatch(run(&h, &call(json!({"limit": null}))), &sent);
    assert_mismatch(run(&h, &request("tools/call", json!({"name": "search"}))), &sent);
    // Null or absent with no header is fine.
    assert_eq!(run(&call_headers(&[]), &call(json!({"limit": null}))), Ok(()));
}

#[test]
fn present_body_value_without_header_is_mismatch() {
    let h = call_headers(&[]);
    assert_mismatch(run(&h, &call(json!({"exact": false}))), &detail("Mcp-Param-Exact", VALUE_UNMIRRORED));
    assert_mismatch(run(&h, &call(json!({"limit": 0}))), &detail("Mcp-Param-Limit", VALUE_UNMIRRORED));
}

#[test]
fn nested_param_path_is_followed() {
    let args = json!({"filter": {"region": "eu"}});
    let h = call_headers(&[("mcp-param-region", b"eu")]);
    assert_eq!(run(&h, &call(args.clone())), Ok(()));
    assert_mismatch(run(&call_headers(&[]), &call(args)), &detail("Mcp-Param-Region", VALUE_UNMIRRORED));
    // A non-object on the way holds no value at the path.
    assert_mismatch(run(&h, &call(json!({"filter": "eu"}))), &detail("Mcp-Param-Region", NO_BODY_VALUE));
    assert_eq!(run(&call_headers(&[]), &call(json!({"filter": ["eu"]}))), Ok(()));
}

/// A log sink for the fault test.
struct Log(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Log {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn header_fault_is_500_with_id() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}});
    let server = build(vec![ToolSpec::new("bad", Mode::ReadOnly).input_schema(schema)], true);
    let m = request("tools/call", json!({"name": "bad", "arguments": {}}));
    let log = Arc::new(Mutex::new(Vec::new()));
    let writer = Arc::clone(&log);
    let subscriber =
        tracing_subscriber::fmt().with_ansi(false).with_writer(move || Log(Arc::clone(&writer))).finish();
    let result = tracing::subscriber::with_default(subscriber, || {
        check_as(&standard("tools/call", &[(NAME, b"bad")]), &m, &server, &Extensions::new())
    });
    let r = result.expect_err("a refusal");
    let log = String::from_utf8(log.lock().unwrap().clone()).unwrap();
    assert!(log.contains("ERROR") && log.contains("tool bad cannot be called over HTTP"), "{log}");
    assert_eq!(
        (r.status, r.error, r.id),
        (StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal(), json!(7))
    );
    // Other methods are unaffected.
    assert_eq!(check_as(&standard("tools/list", &[]), &list(), &server, &Extensions::new()), Ok(()));
}

#[test]
fn a_tool_hidden_from_the_caller_mirrors_nothing_like_an_unknown_tool() {
    #[derive(Clone)]
    struct Admin;
    let schema = json!({"type": "object", "properties": {"q": {"type": "string", "x-mcp-header": "Query"}}});
    let tools = vec![
        ToolSpec::new("search", Mode::ReadOnly).input_schema(schema),
        ToolSpec::new("bad", Mode::ReadOnly).input_schema(
            json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
        ),
    ];
    let server = Server::builder(Listing { tools, ..Listing::default() })
        .dispatch(|_: ToolCall| async move { Ok::<_, ToolError>(ToolOutput::text("ok")) })
        .defer_header_annotation_faults(true)
        .visibility(|_: mcp_kernel_router::visibility::Listed<'_>, cx: &mcp_kernel_router::RequestContext| {
            cx.principal::<Admin>().is_some()
        })
        .build()
        .expect("builds");
    let mut admin = Extensions::new();
    admin.insert(Admin);
    let nobody = Extensions::new();
    // A value the body carries, no header mirroring it; and a header with no body value.
    let unmirrored = request("tools/call", json!({"name": "search", "arguments": {"q": "eu"}}));
    let headers = standard("tools/call", &[(NAME, b"search")]);
    assert!(check_as(&headers, &unmirrored, &server, &admin).is_err(), "visible: refused");
    assert_eq!(check_as(&headers, &unmirrored, &server, &nobody), Ok(()), "hidden: left to the core");
    let unbacked = request("tools/call", json!({"name": "search", "arguments": {}}));
    let headers = standard("tools/call", &[(NAME, b"search"), ("mcp-param-query", b"eu")]);
    assert!(check_as(&headers, &unbacked, &server, &admin).is_err());
    assert_eq!(check_as(&headers, &unbacked, &server, &nobody), Ok(()));
    // A fault in a hidden tool's annotations is not revealed either.
    let bad = request("tools/call", json!({"name": "bad", "arguments": {}}));
    let headers = standard("tools/call", &[(NAME, b"bad")]);
    assert_eq!(
        check_as(&headers, &bad, &server, &admin).map_err(|r| r.status),
        Err(StatusCode::INTERNAL_SERVER_ERROR)
    );
    assert_eq!(check_as(&headers, &bad, &server, &nobody), Ok(()));
    assert_eq!(check_sent_as(&headers, &bad, &server, &nobody), Ok(()));
}
