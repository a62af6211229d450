//! The header rules of `protocol.md` D-11 to D-19: the standard MCP headers must mirror the body.
//!
//! MCP 2026-07-28 copies the routing facts of a request into HTTP headers (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, and `Mcp-Param-*` for annotated tool arguments) so that gateways can
//! route, rate-limit and authorize without parsing JSON. Headers are what those gateways act on; the
//! body is what this server executes. A header that disagrees with the body lets the gateway and the
//! server see two different requests: a policy written for `tools/call` of `read_file` is then
//! applied to a call of `delete_file` (request smuggling). Every rule below therefore refuses a
//! disagreement, checks *every* value of a repeated header, and takes the list of mirrored
//! parameters from the tool's schema, never from the headers the caller chose to send.
//!
//! Every refusal here is issued after the body was read and echoes the request id. No refusal
//! repeats a header value or a body value: only header names and the host's own annotation names.
#![allow(
    clippy::result_large_err,
    reason = "a refusal is built at most once per request and returned straight to the caller"
)]

use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value};

use mcp_kernel_router::schema::{HeaderParam, HeaderParamKind};
use mcp_kernel_router::{Extensions, Server, ToolHeaders};
use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::error::UnsupportedVersionData;
use mcp_kernel_wire::version::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, MODERN};

use crate::header_value::{decoded, integer_matches, is_malformed_sentinel, values};
use crate::refusal::Refusal;

/// The protocol-version header (never base64-decoded).
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The method header (never base64-decoded).
const METHOD: &str = "mcp-method";
/// The name header (base64 sentinel honoured).
const NAME: &str = "mcp-name";

/// D-13: the B-3.2 message for a top-level `_meta`.
const TOP_LEVEL_META: &str =
    "_meta belongs in params._meta (2026-07-28 RequestParams), not at the top level of the request";
/// D-14: `params._meta` is not an object.
const META_NOT_OBJECT: &str = "params._meta must be an object";
/// D-15: a request without a declared protocol version.
const META_VERSION_MISSING: &str =
    "params._meta with io.modelcontextprotocol/protocolVersion is required on every request";
/// D-15: the B-3.6 message for missing client capabilities.
const META_CAPABILITIES_MISSING: &str = "params._meta lacks io.modelcontextprotocol/clientCapabilities, \
                                         which 2026-07-28 requires on every request";
/// D-15: client capabilities that are not an object.
const META_CAPABILITIES_NOT_OBJECT: &str =
    "params._meta io.modelcontextprotocol/clientCapabilities must be an object";

/// D-14: no version header.
const VERSION_MISSING: &str = "Missing mcp-protocol-version header; it is required on every POST";
/// D-14: a version header value differs from the body's `protocolVersion`.
const VERSION_DIFFERS: &str = "mcp-protocol-version header does not match the body value";
/// D-12: follows a header's name when one of its values is not UTF-8.
const NOT_UTF8: &str = "header value is not valid UTF-8";
/// S-22, S-23: follows a mirrored header's name when a raw value holds text that must be base64-encoded.
const NOT_PLAIN: &str =
    "header value must be visible ASCII without surrounding whitespace, or canonical =?base64?...?=";
/// D-16, D-17: follows a header's name when it is required and absent.
const REQUIRED: &str = "header; it is required";
/// D-16, D-17, D-19: follows a header's name when a value differs from the body.
const DIFFERS: &str = "header does not match the corresponding request body value";
/// D-19: follows the header's name when the body has nothing to mirror.
const NO_BODY_VALUE: &str = "header was sent, but the body carries no such value";
/// D-19: follows the header's name when the body has a value and the header is absent.
const VALUE_UNMIRRORED: &str = "header is required: the body carries a value to mirror";

/// The host's visibility filter's answer for a `tools/call`'s tool, asked once per request: `None`
/// without a filter (every listed tool is shown; nothing is built or asked), for any other message, or
/// for a name no tool is listed under. The core is handed the same answer
/// ([`mcp_kernel_router::Inbound::tool_visibility`]), so the headers and the call never disagree.
pub(crate) fn tool_decision(
    message: &Map<String, Value>,
    server: &Server,
    extensions: &Extensions,
) -> Option<(String, bool)> {
    if !server.has_visibility_filter() || message.get("method").and_then(Value::as_str) != Some("tools/call")
    {
        return None;
    }
    let params = message.get("params").and_then(Value::as_object);
    let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str)?;
    let shown = server.tool_shown(tool, &server.context_for(params, extensions))?;
    Some((tool.to_owned(), shown))
}

/// Runs the header rules of `protocol.md` D-13 to D-19, in order, on a decoded message; `decision` is
/// [`tool_decision`]'s (a tool hidden from the caller mirrors nothing, exactly like an unknown tool).
pub(crate) fn check(
    headers: &HeaderMap,
    message: &Map<String, Value>,
    server: &Server,
    decision: Option<&(String, bool)>,
) -> Result<(), Refusal> {
    let id = crate::refusal::echoable_id(message);
    let is_request = message.contains_key("id");
    let params = message.get("params").and_then(Value::as_object);
    let method = message.get("method").and_then(Value::as_str);

    if message.contains_key("_meta") {
        return Err(invalid_params(TOP_LEVEL_META, id));
    }
    // A legacy opener names a revision other than the one served; anything else gets the plain rule.
    // An `initialize` is a 2025-11-25 opener: its refusal names what is served (S-7, S-25).
    let legacy_opener = (method == Some("initialize"))
        .then(|| params.and_then(|p| p.get("protocolVersion")).and_then(Value::as_str));
    let meta = protocol_version(headers, params, legacy_opener, &id)?;
    if is_request {
        meta_fields(meta, &id)?;
    }
    mcp_method(headers, method, is_request, &id)?;
    mcp_name(headers, method, params, Mirror::Required, &id)?;
    if method == Some("tools/call") {
        param_headers(headers, params, server, decision, Mirror::Required, &id)?;
    }
    Ok(())
}

/// Whether `Mcp-Name` and `Mcp-Param-*` must be sent where the body has a value to mirror.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mirror {
    /// 2026-07-28: required wherever the body has a value to mirror.
    Required,
    /// 2025-11-25, which has none of these headers: optional, but a value sent must still agree.
    IfSent,
}

/// The header rules of a 2025-11-25 message (`LegacyClients::Stateless`, MCP S-63): `Mcp-Method`,
/// `Mcp-Name` and `Mcp-Param-*` are never required, but any that is sent must agree with the body,
/// so that a gateway routing on it never sees another request than the one this server runs.
pub(crate) fn check_sent(
    headers: &HeaderMap,
    message: &Map<String, Value>,
    server: &Server,
    decision: Option<&(String, bool)>,
) -> Result<(), Refusal> {
    let id = crate::refusal::echoable_id(message);
    let params = message.get("params").and_then(Value::as_object);
    let method = message.get("method").and_then(Value::as_str);
    mcp_method(headers, method, false, &id)?;
    mcp_name(headers, method, params, Mirror::IfSent, &id)?;
    if method == Some("tools/call") {
        param_headers(headers, params, server, decision, Mirror::IfSent, &id)?;
    }
    Ok(())
}

/// D-12: every value of header `name`, or a -32020 refusal naming `label` if one is not UTF-8.
fn read<'h>(headers: &'h HeaderMap, name: &str, label: &str, id: &Value) -> Result<Vec<&'h str>, Refusal> {
    values(headers, name).map_err(|_| mismatch(&format!("{label} {NOT_UTF8}"), id))
}

/// Reads a header whose plain values are restricted to visible ASCII, space and tab (MCP S-22): any
/// other text must travel `=?base64?…?=`-encoded, so a raw value holding it is refused (S-23).
fn read_mirrored<'h>(
    headers: &'h HeaderMap,
    name: &str,
    label: &str,
    id: &Value,
) -> Result<Vec<&'h str>, Refusal> {
    let sent = read(headers, name, label, id)?;
    // Visible ASCII inside, no surrounding whitespace (HTTP strips it, so a peer would read another
    // value), and no sentinel that fails to decode canonically: such text must travel encoded.
    let plain = |value: &str| {
        value.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
            && value.trim_matches([' ', '\t']).len() == value.len()
            && !is_malformed_sentinel(value)
    };
    if sent.iter().all(|value| plain(value)) {
        Ok(sent)
    } else {
        Err(mismatch(&format!("{label} {NOT_PLAIN}"), id))
    }
}

/// D-14: the version header is present, agrees with the body and names the one served revision.
///
/// Returns `params._meta` (checked to be an object when present) for D-15.
fn protocol_version<'m>(
    headers: &HeaderMap,
    params: Option<&'m Map<String, Value>>,
    legacy_opener: Option<Option<&str>>,
    id: &Value,
) -> Result<Option<&'m Map<String, Value>>, Refusal> {
    let sent = read(headers, PROTOCOL_VERSION, PROTOCOL_VERSION, id)?;
    let meta = match params.and_then(|p| p.get("_meta")) {
        None => None,
        Some(Value::Object(meta)) => Some(meta),
        Some(_) => return Err(invalid_params(META_NOT_OBJECT, id.clone())),
    };
    if sent.is_empty() {
        // A 2025-11-25 client opens with `initialize` and no header: name what is served (S-7, S-25),
        // so that it can tell this is a 2026-07-28 server rather than a broken one.
        let supported = || vec![MODERN.to_owned()];
        match legacy_opener {
            // A revision other than the one served: the unsupported-version error says which is.
            Some(Some(requested)) if requested != MODERN => {
                let data =
                    UnsupportedVersionData { supported: supported(), requested: Value::from(requested) };
                let error = ErrorObject::unsupported_version(data);
                return Err(Refusal::post_body(StatusCode::BAD_REQUEST, error, id.clone()));
            }
            // No revision, or this one through the legacy opener: the header is what is missing.
            Some(_) => {
                let mut refusal = mismatch(VERSION_MISSING, id);
                refusal.error.data = Some(serde_json::json!({ "supported": supported() }));
                return Err(refusal);
            }
            None => {}
        }
        return Err(mismatch(VERSION_MISSING, id));
    }
    if let Some(body) = meta.and_then(|m| m.get(META_PROTOCOL_VERSION))
        && sent.iter().any(|value| body.as_str() != Some(*value))
    {
        return Err(mismatch(VERSION_DIFFERS, id));
    }
    if let Some(other) = sent.iter().find(|value| **value != MODERN) {
        let data = UnsupportedVersionData {
            supported: vec![MODERN.to_owned()],
            // Shortened by the constructor, like every echoed value (the one echo bound).
            requested: Value::from(*other),
        };
        let error = ErrorObject::unsupported_version(data);
        return Err(Refusal::post_body(StatusCode::BAD_REQUEST, error, id.clone()));
    }
    Ok(meta)
}

/// D-15 (requests only): `params._meta` declares the revision and the client's capabilities.
fn meta_fields(meta: Option<&Map<String, Value>>, id: &Value) -> Result<(), Refusal> {
    let Some(meta) = meta.filter(|m| m.contains_key(META_PROTOCOL_VERSION)) else {
        return Err(invalid_params(META_VERSION_MISSING, id.clone()));
    };
    match meta.get(META_CLIENT_CAPABILITIES) {
        None => Err(invalid_params(META_CAPABILITIES_MISSING, id.clone())),
        Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(invalid_params(META_CAPABILITIES_NOT_OBJECT, id.clone())),
    }
}

/// D-16: `Mcp-Method` is required on requests and, whenever sent, equals the body `method`.
fn mcp_method(
    headers: &HeaderMap,
    method: Option<&str>,
    is_request: bool,
    id: &Value,
) -> Result<(), Refusal> {
    let sent = read(headers, METHOD, METHOD, id)?;
    if sent.is_empty() {
        return if is_request { Err(mismatch(&format!("Missing {METHOD} {REQUIRED}"), id)) } else { Ok(()) };
    }
    if sent.iter().any(|value| method != Some(*value)) {
        return Err(mismatch(&format!("{METHOD} {DIFFERS}"), id));
    }
    Ok(())
}

/// D-17: `Mcp-Name` mirrors `params.name` (`tools/call`, `prompts/get`) or `params.uri` (`resources/read`).
fn mcp_name(
    headers: &HeaderMap,
    method: Option<&str>,
    params: Option<&Map<String, Value>>,
    mirror: Mirror,
    id: &Value,
) -> Result<(), Refusal> {
    let field = match method {
        Some("tools/call" | "prompts/get") => "name",
        Some("resources/read") => "uri",
        _ => return Ok(()),
    };
    let sent = read_mirrored(headers, NAME, NAME, id)?;
    let body = params.and_then(|p| p.get(field)).and_then(Value::as_str);
    match body {
        Some(_) if sent.is_empty() && mirror == Mirror::Required => {
            Err(mismatch(&format!("Missing {NAME} {REQUIRED}"), id))
        }
        // Absent or not a string: the core refuses the request itself; a header mirrors nothing.
        _ if sent.is_empty() => Ok(()),
        _ if sent.iter().any(|value| body != Some(&*decoded(value))) => {
            Err(mismatch(&format!("{NAME} {DIFFERS}"), id))
        }
        _ => Ok(()),
    }
}

/// D-19 (`tools/call`): every parameter the tool's schema annotates is mirrored exactly.
///
/// The annotations are the tool's as this caller may see it: a tool the host's `Visibility` filter
/// hides from them is an unknown tool here too, so nothing about its headers (or a fault in its
/// annotations) can reveal that it exists; the core then answers "Unknown tool".
fn param_headers(
    headers: &HeaderMap,
    params: Option<&Map<String, Value>>,
    server: &Server,
    decision: Option<&(String, bool)>,
    mirror: Mirror,
    id: &Value,
) -> Result<(), Refusal> {
    let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
        return Ok(());
    };
    // Hidden from this caller: nothing to mirror, exactly as for a tool that is not listed.
    if decision.is_some_and(|(asked, shown)| asked == tool && !*shown) {
        return Ok(());
    }
    let mirrored = match server.tool_headers(tool) {
        ToolHeaders::UnknownTool => return Ok(()),
        ToolHeaders::Params(mirrored) => mirrored,
        ToolHeaders::Fault(fault) => {
            tracing::error!(
                tool,
                "tool {tool} cannot be called over HTTP: {fault}; every call to this tool is refused \
                 until the schema is corrected"
            );
            return Err(Refusal::post_body(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorObject::internal(),
                id.clone(),
            ));
        }
    };
    let arguments = params.and_then(|p| p.get("arguments"));
    for param in mirrored {
        one_param(headers, param, arguments, mirror, id)?;
    }
    Ok(())
}

/// D-19 for one annotated parameter.
fn one_param(
    headers: &HeaderMap,
    param: &HeaderParam,
    arguments: Option<&Value>,
    mirror: Mirror,
    id: &Value,
) -> Result<(), Refusal> {
    let label = format!("Mcp-Param-{}", param.name);
    let sent = read_mirrored(headers, &param.header, &label, id)?;
    let body = body_value(arguments, param);
    match body {
        _ if sent.is_empty() && mirror == Mirror::IfSent => Ok(()),
        None if sent.is_empty() => Ok(()),
        None => Err(mismatch(&format!("{label} {NO_BODY_VALUE}"), id)),
        Some(_) if sent.is_empty() => Err(mismatch(&format!("{label} {VALUE_UNMIRRORED}"), id)),
        Some(body) if sent.iter().all(|value| param_matches(param.kind, body, &decoded(value))) => Ok(()),
        Some(_) => Err(mismatch(&format!("{label} {DIFFERS}"), id)),
    }
}

/// The body value at the parameter's path in `arguments`; `None` when absent or `null`.
fn body_value<'a>(arguments: Option<&'a Value>, param: &HeaderParam) -> Option<&'a Value> {
    param
        .path
        .iter()
        .try_fold(arguments?, |value, key| value.as_object()?.get(&**key))
        .filter(|value| !value.is_null())
}

/// Whether a (decoded) header value mirrors `body` for a parameter of `kind`.
fn param_matches(kind: HeaderParamKind, body: &Value, header: &str) -> bool {
    match (kind, body) {
        (HeaderParamKind::String, Value::String(text)) => header == text,
        (HeaderParamKind::Boolean, Value::Bool(flag)) => header == if *flag { "true" } else { "false" },
        (HeaderParamKind::Integer, Value::Number(number)) => integer_matches(header, number),
        _ => false,
    }
}

/// 400 -32602 "Invalid params: …".
fn invalid_params(detail: &str, id: Value) -> Refusal {
    Refusal::post_body(StatusCode::BAD_REQUEST, ErrorObject::invalid_params(detail), id)
}

/// 400 -32020 "Header mismatch: …".
fn mismatch(detail: &str, id: &Value) -> Refusal {
    Refusal::header_mismatch(detail, id.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`check`] with the decision the service takes for `extensions`.
    fn check_as(
        h: &HeaderMap,
        m: &Map<String, Value>,
        server: &Server,
        extensions: &Extensions,
    ) -> Result<(), Refusal> {
        check(h, m, server, tool_decision(m, server, extensions).as_ref())
    }

    /// [`check_sent`] with the decision the service takes for `extensions`.
    fn check_sent_as(
        h: &HeaderMap,
        m: &Map<String, Value>,
        server: &Server,
        extensions: &Extensions,
    ) -> Result<(), Refusal> {
        check_sent(h, m, server, tool_decision(m, server, extensions).as_ref())
    }

    use http::{HeaderName, HeaderValue};
    use mcp_kernel_router::{Listing, Mode, ToolCall, ToolError, ToolOutput, ToolSpec};
    use mcp_kernel_wire::code;
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
        assert_eq!(
            detail(NAME, DIFFERS),
            "mcp-name header does not match the corresponding request body value"
        );
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
        let refusal = check_as(&HeaderMap::new(), message.as_object().unwrap(), &server, &Extensions::new())
            .unwrap_err();
        assert_eq!(refusal.status, StatusCode::BAD_REQUEST);
        assert_eq!(refusal.error.code, -32022);
        assert_eq!(refusal.error.data, Some(json!({"supported":["2026-07-28"],"requested":"2025-11-25"})));
    }

    #[test]
    fn missing_protocol_version_header_is_header_mismatch() {
        let h = headers(&[(METHOD, b"tools/list")]);
        assert_mismatch(
            run(&h, &list()),
            "Missing mcp-protocol-version header; it is required on every POST",
        );
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
        for (header, body) in [("42", json!(42)), ("42.0", json!(42)), ("42", json!(42.0)), ("-0", json!(0))]
        {
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
        assert_mismatch(
            run(&h, &call(json!({"exact": false}))),
            &detail("Mcp-Param-Exact", VALUE_UNMIRRORED),
        );
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
        let schema =
            json!({"type": "object", "properties": {"q": {"type": "string", "x-mcp-header": "Query"}}});
        let tools = vec![
            ToolSpec::new("search", Mode::ReadOnly).input_schema(schema),
            ToolSpec::new("bad", Mode::ReadOnly).input_schema(
                json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
            ),
        ];
        let server = Server::builder(Listing { tools, ..Listing::default() })
            .dispatch(|_: ToolCall| async move { Ok::<_, ToolError>(ToolOutput::text("ok")) })
            .defer_header_annotation_faults(true)
            .visibility(|_: mcp_kernel_router::Listed<'_>, cx: &mcp_kernel_router::RequestContext| {
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
}
