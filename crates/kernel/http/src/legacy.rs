//! MCP `2025-11-25` clients on the same endpoint, without sessions ([`LegacyClients::Stateless`], the
//! default; a host that serves `2026-07-28` only says [`LegacyClients::Refused`]). With sessions
//! ([`LegacyClients::Sessions`]), `session/` serves them instead, with the same header rules.
//!
//! The 2025-11-25 wire opens with `initialize` and no version header, and carries neither `_meta` nor
//! `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*`; on a session-capable server it also carries state
//! (`Mcp-Session-Id`, a GET stream, server-to-client requests). Serving it widens the door in four
//! ways, each closed here:
//!
//! * **Downgrade.** A request takes this path only when nothing in it is modern: its
//!   `MCP-Protocol-Version` names no `2026-07-28` and its `params._meta` has no
//!   `io.modelcontextprotocol/protocolVersion`. A header-less request is legacy only if it is an
//!   `initialize`; any other header-less request keeps today's refusal (400, -32020), since
//!   `2025-03-26`, which [S-24] would let a server assume, is not served. A downgraded request gains
//!   nothing: it declares no client capabilities, and its results are legacy-shaped.
//! * **Smuggling.** 2025-11-25 has no `Mcp-*` headers, so none is required here; one that is sent must
//!   still agree with the body (400, -32020), so a gateway routing on it sees the request that runs.
//! * **Sessions.** None exist: nothing is remembered from `initialize`, every request is served from
//!   its header and body alone, `Mcp-Session-Id` is never minted and a client's is ignored. There is no
//!   session to steal, fix or exhaust.
//! * **Misread statuses.** A 2025-11-25 client reads 404 as "your session ended" ([S-62]) and
//!   re-initializes: every JSON-RPC error of the core is therefore answered 200 (a host fault, 500).
//!
//! Progress is served as on `2026-07-28` (`dispatch/sse.rs`): a request carrying
//! `_meta.progressToken` whose call reports progress is answered as an SSE stream scoped to it,
//! without a priming event or event ids (nothing is resumable without a session). So are log
//! notifications when the host opted in (`ServerBuilder::log_notifications`): a call that logs at or
//! above the host's minimum gets its `notifications/message` on its own stream, before its result.
//!
//! Left out, because they need a delivery stream or a session: server-to-client requests (sampling,
//! elicitation, roots), `resources/subscribe`, log messages outside a request, resumable SSE. Nothing
//! advertises them; `logging/setLevel` is accepted as a no-op ([S-64] item 7) by the core, which is told
//! the transport keeps no session (`Inbound::sessionless`): the level in force stays the host's
//! minimum, and `shutdown` is -32601.
//!
//! [S-24]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-62]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-64]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
#![allow(
    clippy::result_large_err,
    reason = "a refusal is built at most once per request and returned straight to the caller"
)]

use http::{HeaderMap, HeaderName, StatusCode};
use serde_json::Value;

use mcp_kernel_router::{Extensions, Server};
use mcp_kernel_wire::error::UnsupportedVersionData;
use mcp_kernel_wire::version::MODERN;
use mcp_kernel_wire::{Envelope, ErrorObject, Method, ProtocolVersion};

use crate::dispatch::Attached;
use crate::mirror;
use crate::mirror::header_value::values;
use crate::response::body::ResponseBody;
use crate::response::refusal::{Refusal, accepted, jsonrpc_shape};

/// What the endpoint does with MCP `2025-11-25` clients ([`Builder::legacy_clients`]).
///
/// [`Builder::legacy_clients`]: crate::Builder::legacy_clients
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LegacyClients {
    /// Refused as by a `2026-07-28`-only server (MCP [S-25]): `initialize` and the `2025-11-25`
    /// version header are answered 400 -32022 naming `["2026-07-28"]`. A host that serves the new
    /// revision only says so.
    ///
    /// [S-25]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
    Refused,
    /// Also served, statelessly, on the same endpoint (MCP [S-64]): `initialize` answered without a
    /// session, every later request served from its `MCP-Protocol-Version` header and body alone. The
    /// default, since most clients in use still open with `initialize`.
    ///
    /// [S-64]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
    #[default]
    Stateless,
    /// Also served, with sessions (MCP [S-62]): `initialize` mints an `Mcp-Session-Id`, later requests
    /// carry it, GET opens the session's stream of notifications, DELETE ends it, and a request whose
    /// host asks for input asks the client itself. Kept in the store and within the bounds
    /// [`Builder::legacy_sessions`](crate::Builder::legacy_sessions) names (in process, at the
    /// defaults of [`LegacySessions`](crate::LegacySessions), unless it is given).
    ///
    /// [S-62]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
    Sessions,
}

/// The version header (never base64-decoded).
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The same, parsed once.
static PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static(PROTOCOL_VERSION);

/// The session header (`session/`, with [`LegacyClients::Sessions`]).
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// Whether `value` names a legacy revision the router serves.
fn is_legacy_revision(value: &str) -> bool {
    ProtocolVersion::parse(value).is_some_and(|version| !version.is_modern())
}

/// Whether a decoded message belongs to the 2025-11-25 wire: no `2026-07-28` header value, no modern
/// `params._meta`, and either a version header or, without one, the method `initialize` (MCP [S-64]).
///
/// [S-64]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
pub(crate) fn claims(headers: &HeaderMap, message: &Envelope) -> bool {
    claims_in(headers, message, false)
}

/// [`claims`], on a service with sessions (`sessions`): there a header-less message that carries an
/// `Mcp-Session-Id` is legacy too (its session knows its revision: MCP S-63).
pub(crate) fn claims_in(headers: &HeaderMap, message: &Envelope, sessions: bool) -> bool {
    let sent = headers.get_all(&PROTOCOL_VERSION_HEADER);
    // A `2026-07-28` header settles it whatever the body declares (a body that declares a revision is
    // never legacy either): looked at first, since it is cheaper than the body's `_meta`.
    if sent.iter().any(|value| value.as_bytes() == MODERN.as_bytes()) {
        return false;
    }
    if message.meta().protocol_version().is_some() {
        return false;
    }
    if sent.iter().next().is_none() {
        return message.method() == Some(&Method::Initialize)
            || (sessions && headers.contains_key(SESSION_HEADER));
    }
    true
}

/// The header rules of 2025-11-25 for one message [`claims`] took: what the core is to be handed with
/// it (`service.rs` then serves it on the legacy path, the legacy revisions alone, with the request's
/// `extensions`: the caller's principal), or (`Err`) the answer already made — a refusal, or the
/// `202` of a response POSTed back.
#[allow(
    clippy::result_large_err,
    reason = "an answer made here is made once per request and returned straight to the caller"
)]
pub(crate) fn check<'s>(
    server: &'s Server,
    headers: &HeaderMap,
    message: &Envelope,
    version: http::Version,
    extensions: Extensions,
) -> Result<Attached<'s>, http::Response<ResponseBody>> {
    let refuse = |refusal: Refusal| refusal.into_response(version);
    let id = message.echoable_id();
    // A response POSTed back (the server never asks, so it answers nothing): accepted (S-64 item 2).
    if message.is_response() {
        return Err(protocol_version(headers, &id).map_or_else(refuse, |()| accepted()));
    }
    let admitted = server.admit(message, &extensions);
    let checked = jsonrpc_shape(message)
        .and_then(|()| protocol_version(headers, &id))
        .and_then(|()| mirror::check_sent(headers, message, &admitted));
    if let Err(refusal) = checked {
        return Err(refuse(refusal));
    }
    let carrier = crate::trace::carrier(headers);
    Ok(Attached { extensions, carrier, admitted, session: None })
}

/// MCP [S-63]: every value of `MCP-Protocol-Version`, when sent, names a served legacy revision (400:
/// -32020 for a value that is not UTF-8, -32022 naming both served revisions otherwise).
///
/// [S-63]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
pub(crate) fn protocol_version(headers: &HeaderMap, id: &Value) -> Result<(), Refusal> {
    let sent = values(headers, &PROTOCOL_VERSION_HEADER).map_err(|_| {
        Refusal::header_mismatch(&format!("{PROTOCOL_VERSION} header value is not valid UTF-8"), id.clone())
    })?;
    match sent.iter().find(|value| !is_legacy_revision(value)) {
        None => Ok(()),
        Some(other) => {
            let supported = ProtocolVersion::ALL.iter().map(|v| v.as_str().to_owned()).collect();
            let data = UnsupportedVersionData { supported, requested: Value::from(other) };
            let error = ErrorObject::unsupported_version(data);
            Err(Refusal::post_body(StatusCode::BAD_REQUEST, error, id.clone()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use mcp_kernel_wire::code;
    use mcp_kernel_wire::version::META_PROTOCOL_VERSION;
    use serde_json::json;

    use http::HeaderValue;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(PROTOCOL_VERSION, HeaderValue::from_bytes(value).unwrap());
        }
        map
    }

    fn message(value: Value) -> Envelope {
        Envelope::from_value(value).unwrap()
    }

    #[test]
    fn a_headerless_initialize_is_legacy_and_nothing_else_headerless_is() {
        let init = message(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}));
        assert!(claims(&HeaderMap::new(), &init));
        let list = message(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        assert!(!claims(&HeaderMap::new(), &list));
        assert!(claims(&headers(&[b"2025-11-25"]), &list));
        assert!(claims(&headers(&[b"2025-06-18"]), &list), "refused later, on the legacy path");
    }

    #[test]
    fn a_2026_header_value_or_modern_meta_is_never_legacy() {
        let list = message(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        assert!(!claims(&headers(&[b"2026-07-28"]), &list));
        assert!(!claims(&headers(&[b"2025-11-25", b"2026-07-28"]), &list));
        let init = message(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"_meta": {META_PROTOCOL_VERSION: "2025-11-25"}}}));
        assert!(!claims(&HeaderMap::new(), &init));
        assert!(!claims(&headers(&[b"2025-11-25"]), &init));
    }

    #[test]
    fn only_served_legacy_revisions_pass_the_version_header() {
        assert_eq!(protocol_version(&headers(&[b"2025-11-25"]), &json!(1)), Ok(()));
        assert_eq!(protocol_version(&HeaderMap::new(), &json!(1)), Ok(()));
        for bad in [&b"2025-06-18"[..], b"2025-03-26", b"2026-07-28", b"=?base64?MjAyNS0xMS0yNQ==?="] {
            let refusal = protocol_version(&headers(&[b"2025-11-25", bad]), &json!(1)).unwrap_err();
            assert_eq!(
                (refusal.status, refusal.error.code),
                (StatusCode::BAD_REQUEST, code::UNSUPPORTED_PROTOCOL_VERSION)
            );
            assert_eq!(refusal.error.data.unwrap()["supported"], json!(["2026-07-28", "2025-11-25"]));
        }
        let refusal = protocol_version(&headers(&[b"\xff"]), &json!(1)).unwrap_err();
        assert_eq!(refusal.error.code, code::HEADER_MISMATCH);
    }

    #[test]
    fn a_response_is_an_id_with_exactly_one_of_result_or_error() {
        assert!(message(json!({"jsonrpc": "2.0", "id": 1, "result": {}})).is_response());
        assert!(message(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}})).is_response());
        assert!(!message(json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}})).is_response());
        assert!(!message(json!({"jsonrpc": "2.0", "result": {}})).is_response());
        assert!(!message(json!({"jsonrpc": "2.0", "id": 1, "method": "x", "result": {}})).is_response());
    }
}
