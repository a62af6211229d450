//! Messages and headers: modern, legacy and notification messages, the standard MCP headers a
//! message needs, and header-map edits.

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use super::{LEGACY, META_CAPABILITIES, META_VERSION, MODERN};

/// A modern `params._meta`.
pub fn meta() -> Value {
    json!({META_VERSION: MODERN, META_CAPABILITIES: {}})
}

/// A modern request: `params` (an object) gets the modern `_meta`.
pub fn request(id: impl Into<Value>, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A `2025-11-25` request: no `_meta` unless the params carry one.
pub fn legacy(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A notification (no `_meta`, no id).
pub fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

/// `Content-Type: application/json`, the `Accept` of JSON and SSE, and `MCP-Protocol-Version: version`.
fn versioned_headers(version: &'static str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert("accept", HeaderValue::from_static("application/json, text/event-stream"));
    headers.insert("mcp-protocol-version", HeaderValue::from_static(version));
    headers
}

/// What a `2025-11-25` client sends after `initialize`: `Content-Type`, `Accept` and the version header.
pub fn legacy_headers() -> HeaderMap {
    versioned_headers(LEGACY)
}

/// `MCP-Protocol-Version`, `Mcp-Method` and, when given, `Mcp-Name` (its wire value, as is).
pub fn standard_headers(method: &str, name: Option<&str>) -> HeaderMap {
    let mut headers = versioned_headers(MODERN);
    headers.insert("mcp-method", HeaderValue::from_str(method).expect("a header value"));
    if let Some(name) = name {
        headers.insert("mcp-name", HeaderValue::from_str(name).expect("a header value"));
    }
    headers
}

/// The standard headers a message needs: `Mcp-Name` from the member the method names
/// (`Method::name_param`: `params.name`, `params.uri` or `params.taskId`) where required.
pub fn headers_for(message: &Value) -> HeaderMap {
    let method = message["method"].as_str().expect("a method");
    let field = mcp_kernel_router::wire::Method::parse(method).name_param();
    let name = field.and_then(|field| message["params"][field].as_str());
    standard_headers(method, name)
}

/// Adds (appends) a header given as raw bytes.
pub fn with(mut headers: HeaderMap, name: &str, value: &[u8]) -> HeaderMap {
    let name = HeaderName::from_bytes(name.as_bytes()).expect("a header name");
    headers.append(name, HeaderValue::from_bytes(value).expect("a header value"));
    headers
}

/// Removes a header.
pub fn without(mut headers: HeaderMap, name: &str) -> HeaderMap {
    headers.remove(name);
    headers
}

/// Replaces a header.
pub fn replace(headers: HeaderMap, name: &str, value: &[u8]) -> HeaderMap {
    with(without(headers, name), name, value)
}

/// The bytes of a JSON value.
pub fn bytes(message: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(message).expect("JSON"))
}
