//! The header rules of `protocol.md` [D-11] to [D-19]: the standard MCP headers must mirror the body.
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
//!
//! This folder is that one concern, step 9 of [`McpService`](crate::McpService)'s table (and the
//! headers a legacy client chooses to send, `legacy.rs`): the rules live here, and `header_value.rs`
//! reads a header's values — all of them, as UTF-8, with the `Mcp-Name` / `Mcp-Param-*` encodings.
//!
//! [D-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
#![allow(
    clippy::result_large_err,
    reason = "a refusal is built at most once per request and returned straight to the caller"
)]

pub(crate) mod header_value;

use http::header::AsHeaderName;
use http::{HeaderMap, HeaderName, StatusCode};
use serde_json::{Map, Value};

use mcp_kernel_router::schema::{HeaderParam, HeaderParamKind};
use mcp_kernel_router::transport::{Admitted, ToolHeaders};
use mcp_kernel_wire::error::UnsupportedVersionData;
use mcp_kernel_wire::message::member;
use mcp_kernel_wire::version::MODERN;
use mcp_kernel_wire::{Envelope, ErrorObject, Method, RequestMeta};

use crate::mirror::header_value::{Values, decoded, integer_matches, is_malformed_sentinel, values};
use crate::response::refusal::Refusal;

/// The protocol-version header (never base64-decoded).
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The method header (never base64-decoded).
const METHOD: &str = "mcp-method";
/// The name header (base64 sentinel honoured).
const NAME: &str = "mcp-name";
/// The three as header names, parsed once (a look-up by text parses the name every time).
static PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static(PROTOCOL_VERSION);
static METHOD_HEADER: HeaderName = HeaderName::from_static(METHOD);
static NAME_HEADER: HeaderName = HeaderName::from_static(NAME);

/// [D-15]: a request without a declared protocol version.
///
/// [D-15]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
const META_VERSION_MISSING: &str =
    "params._meta with io.modelcontextprotocol/protocolVersion is required on every request";

/// [D-14]: no version header.
///
/// [D-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
const VERSION_MISSING: &str = "Missing mcp-protocol-version header; it is required on every POST";
/// [D-14]: a version header value differs from the body's `protocolVersion`.
///
/// [D-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
const VERSION_DIFFERS: &str = "mcp-protocol-version header does not match the body value";
/// [D-12]: follows a header's name when one of its values is not UTF-8.
///
/// [D-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
const NOT_UTF8: &str = "header value is not valid UTF-8";
/// [S-22], [S-23]: follows a mirrored header's name when a raw value holds text that must be base64-encoded.
///
/// [S-22]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
/// [S-23]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
const NOT_PLAIN: &str =
    "header value must be visible ASCII without surrounding whitespace, or canonical =?base64?...?=";
/// [D-16], [D-17]: follows a header's name when it is required and absent.
///
/// [D-16]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
/// [D-17]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
const REQUIRED: &str = "header; it is required";
/// [D-16], [D-17], [D-19]: follows a header's name when a value differs from the body.
///
/// [D-16]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
/// [D-17]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
/// [D-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
const DIFFERS: &str = "header does not match the corresponding request body value";
/// [D-19]: follows the header's name when the body has nothing to mirror.
///
/// [D-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
const NO_BODY_VALUE: &str = "header was sent, but the body carries no such value";
/// [D-19]: follows the header's name when the body has a value and the header is absent.
///
/// [D-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
const VALUE_UNMIRRORED: &str = "header is required: the body carries a value to mirror";

/// Runs the header rules of `protocol.md` [D-13] to [D-19], in order, on a decoded message; `admitted` is
/// what the core answered about it ([`Server::admit`](mcp_kernel_router::Server::admit): a tool hidden
/// from the caller mirrors nothing, exactly like an unknown tool, and the core is handed the same answer).
///
/// [D-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
/// [D-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
pub(crate) fn check(headers: &HeaderMap, message: &Envelope, admitted: &Admitted<'_>) -> Result<(), Refusal> {
    let id = message.echoable_id();
    let is_request = message.has_id();
    let params = message.params_object();
    let method = message.method();

    if let Err(error) = message.top_level_meta() {
        return Err(refused(error, id));
    }
    // A legacy opener names a revision other than the one served; anything else gets the plain rule.
    // An `initialize` is a 2025-11-25 opener: its refusal names what is served (S-7, S-25).
    let legacy_opener = (method == Some(&Method::Initialize)).then(|| message.param_str("protocolVersion"));
    // The body's revision, looked up once for the two rules that read it.
    let body_version = message.meta().protocol_version();
    protocol_version(headers, message.meta(), body_version, legacy_opener, &id)?;
    if is_request {
        meta_fields(message.meta(), body_version, &id)?;
    }
    mcp_method(headers, method, is_request, &id)?;
    let name = mcp_name(headers, method, params, Mirror::Required, &id)?;
    if method == Some(&Method::ToolsCall) {
        param_headers(headers, name, params, admitted, Mirror::Required, &id)?;
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

/// The header rules of a 2025-11-25 message (`LegacyClients::Stateless`, MCP [S-63]): `Mcp-Method`,
/// `Mcp-Name` and `Mcp-Param-*` are never required, but any that is sent must agree with the body,
/// so that a gateway routing on it never sees another request than the one this server runs.
///
/// [S-63]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
pub(crate) fn check_sent(
    headers: &HeaderMap,
    message: &Envelope,
    admitted: &Admitted<'_>,
) -> Result<(), Refusal> {
    let id = message.echoable_id();
    let params = message.params_object();
    let method = message.method();
    mcp_method(headers, method, false, &id)?;
    let name = mcp_name(headers, method, params, Mirror::IfSent, &id)?;
    if method == Some(&Method::ToolsCall) {
        param_headers(headers, name, params, admitted, Mirror::IfSent, &id)?;
    }
    Ok(())
}

/// [D-12]: every value of header `name`, or a -32020 refusal naming `label` if one is not UTF-8.
///
/// [D-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
fn read<'h, K: AsHeaderName>(
    headers: &'h HeaderMap,
    name: K,
    label: &str,
    id: &Value,
) -> Result<Values<'h>, Refusal> {
    values(headers, name).map_err(|_| mismatch(&format!("{label} {NOT_UTF8}"), id))
}

/// Reads a header whose plain values are restricted to visible ASCII, space and tab (MCP [S-22]): any
/// other text must travel `=?base64?…?=`-encoded, so a raw value holding it is refused ([S-23]).
///
/// [S-22]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
/// [S-23]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
fn read_mirrored<'h, K: AsHeaderName>(
    headers: &'h HeaderMap,
    name: K,
    label: &str,
    id: &Value,
) -> Result<Values<'h>, Refusal> {
    let sent = read(headers, name, label, id)?;
    // Visible ASCII inside, no surrounding whitespace (HTTP strips it, so a peer would read another
    // value), and no sentinel that fails to decode canonically: such text must travel encoded.
    let plain = |value: &str| {
        value.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
            && value.trim_matches([' ', '\t']).len() == value.len()
            && !is_malformed_sentinel(value)
    };
    if sent.iter().all(plain) { Ok(sent) } else { Err(mismatch(&format!("{label} {NOT_PLAIN}"), id)) }
}

/// [D-14]: the version header is present, agrees with the body and names the one served revision.
///
/// `params._meta`, when present, is first checked to be an object (the core's rule, [B-3.8]).
///
/// [B-3.8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
/// [D-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
fn protocol_version(
    headers: &HeaderMap,
    meta: &RequestMeta,
    body_version: Option<&Value>,
    legacy_opener: Option<Option<&str>>,
    id: &Value,
) -> Result<(), Refusal> {
    let sent = read(headers, &PROTOCOL_VERSION_HEADER, PROTOCOL_VERSION, id)?;
    meta.object().map_err(|error| refused(error, id.clone()))?;
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
    if let Some(body) = body_version
        && sent.iter().any(|value| body.as_str() != Some(value))
    {
        return Err(mismatch(VERSION_DIFFERS, id));
    }
    if let Some(other) = sent.iter().find(|value| *value != MODERN) {
        let data = UnsupportedVersionData {
            supported: vec![MODERN.to_owned()],
            // Shortened by the constructor, like every echoed value (the one echo bound).
            requested: Value::from(other),
        };
        let error = ErrorObject::unsupported_version(data);
        return Err(Refusal::post_body(StatusCode::BAD_REQUEST, error, id.clone()));
    }
    Ok(())
}

/// [D-15] (requests only): `params._meta` declares the revision and the client's capabilities.
///
/// [D-15]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
fn meta_fields(meta: &RequestMeta, body_version: Option<&Value>, id: &Value) -> Result<(), Refusal> {
    if body_version.is_none() {
        return Err(invalid_params(META_VERSION_MISSING, id.clone()));
    }
    meta.require_capabilities().map_err(|error| refused(error, id.clone()))
}

/// [D-16]: `Mcp-Method` is required on requests and, whenever sent, equals the body `method`.
///
/// [D-16]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
fn mcp_method(
    headers: &HeaderMap,
    method: Option<&Method>,
    is_request: bool,
    id: &Value,
) -> Result<(), Refusal> {
    let sent = read(headers, &METHOD_HEADER, METHOD, id)?;
    if sent.is_empty() {
        return if is_request { Err(mismatch(&format!("Missing {METHOD} {REQUIRED}"), id)) } else { Ok(()) };
    }
    if sent.iter().any(|value| method.map(Method::as_str) != Some(value)) {
        return Err(mismatch(&format!("{METHOD} {DIFFERS}"), id));
    }
    Ok(())
}

/// [D-17]: `Mcp-Name` mirrors `params.name` (`tools/call`, `prompts/get`), `params.uri`
/// (`resources/read`) or `params.taskId` (`tasks/get`, `tasks/update`, `tasks/cancel`, the tasks
/// extension): the field is the one [`Method::name_param`] names, so this folder keeps no method table.
/// Returns the body's value of that field when it is a string (for `tools/call`, the tool's name).
///
/// [D-17]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
fn mcp_name<'m>(
    headers: &HeaderMap,
    method: Option<&Method>,
    params: Option<&'m Map<String, Value>>,
    mirror: Mirror,
    id: &Value,
) -> Result<Option<&'m str>, Refusal> {
    let Some(field) = method.and_then(Method::name_param) else {
        return Ok(None);
    };
    let sent = read_mirrored(headers, &NAME_HEADER, NAME, id)?;
    let body = params.and_then(|p| member(p, field)).and_then(Value::as_str);
    match body {
        Some(_) if sent.is_empty() && mirror == Mirror::Required => {
            Err(mismatch(&format!("Missing {NAME} {REQUIRED}"), id))
        }
        // Absent or not a string: the core refuses the request itself; a header mirrors nothing.
        _ if sent.is_empty() => Ok(body),
        _ if sent.iter().any(|value| body != Some(&*decoded(value))) => {
            Err(mismatch(&format!("{NAME} {DIFFERS}"), id))
        }
        _ => Ok(body),
    }
}

/// [D-19] (`tools/call`): every parameter the tool's schema annotates is mirrored exactly. `tool` is
/// the body's `params.name` when it is a string ([`mcp_name`] read it).
///
/// The annotations are the tool's as this caller may see it: a tool the host's `Visibility` filter
/// hides from them is an unknown tool here too, so nothing about its headers (or a fault in its
/// annotations) can reveal that it exists; the core then answers "Unknown tool".
///
/// [D-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
fn param_headers(
    headers: &HeaderMap,
    tool: Option<&str>,
    params: Option<&Map<String, Value>>,
    admitted: &Admitted<'_>,
    mirror: Mirror,
    id: &Value,
) -> Result<(), Refusal> {
    let Some(tool) = tool else {
        return Ok(());
    };
    // Hidden from this caller (the core asked the filter once, in `admit`): nothing to mirror, exactly
    // as for a tool that is not listed.
    let mirrored = match admitted.tool_headers() {
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
    if mirrored.is_empty() {
        return Ok(());
    }
    let arguments = params.and_then(|p| member(p, "arguments"));
    for param in mirrored {
        one_param(headers, param, arguments, mirror, id)?;
    }
    Ok(())
}

/// [D-19] for one annotated parameter.
///
/// [D-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
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
        .try_fold(arguments?, |value, key| member(value.as_object()?, key))
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
    refused(ErrorObject::invalid_params(detail), id)
}

/// 400 with one of the envelope's `_meta` refusals.
fn refused(error: ErrorObject, id: Value) -> Refusal {
    Refusal::post_body(StatusCode::BAD_REQUEST, error, id)
}

/// 400 -32020 "Header mismatch: …".
fn mismatch(detail: &str, id: &Value) -> Refusal {
    Refusal::header_mismatch(detail, id.clone())
}

#[cfg(test)]
mod tests;
