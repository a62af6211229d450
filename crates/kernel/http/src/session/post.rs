//! The POSTs of a `2025-11-25` client on a service with sessions (step 8a with
//! `LegacyClients::Sessions`): `initialize` mints the session, every other message must carry it, and
//! a POSTed JSON-RPC response is the client's answer to a server-to-client request.
//!
//! | message | answer |
//! |---|---|
//! | `initialize` | the core's answer, `keeps_session`; a result gets a fresh `Mcp-Session-Id` (429 past the client's sessions, 503 past the store's, no session for an error); 400 (-32602) for capabilities past [`MAX_CAPABILITIES_BYTES`] |
//! | any other, without `Mcp-Session-Id` | 400 |
//! | any other, with an id unknown, expired, ended or another principal's | 404, one body for all |
//! | a request or notification of the session | as on the stateless path (`legacy.rs`), served in the session (`Inbound::stored_session`); a request that may stream gets the session's client channel |
//! | a response (the client's answer) | 413 past the answer bound; 202 once delivered to the request waiting for it; 400 when no request of this session waits for that id (never issued, another session's, already answered) |

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use serde_json::{Value, json};

use mcp_kernel_router::sessions::{SessionError, SessionRecord, StoredSession, new_session_id};
use mcp_kernel_router::tasks::now_ms;
use mcp_kernel_router::transport::{Inbound, Revisions};
use mcp_kernel_router::{Extensions, Server};
use mcp_kernel_wire::{Envelope, ErrorObject, Method, Response as JsonRpcResponse, read_message};

use crate::client::Client;
use crate::dispatch::core::run_core;
use crate::dispatch::{Attached, InSession, MakeChannel, Path, dispatch};
use crate::legacy::protocol_version;
use crate::mirror;
use crate::response::body::ResponseBody;
use crate::response::legacy_answer;
use crate::response::refusal::{Refusal, accepted, jsonrpc_shape};
use crate::session::channel::{SessionChannel, too_large};
use crate::session::{SESSION_HEADER, SessionPolicy, resume, unavailable};

/// The most bytes a session keeps of the capabilities its client declared (as compact JSON): a larger
/// declaration is refused 400 (-32602) and opens no session. A client's usual capabilities take well
/// under 1 KiB.
pub(crate) const MAX_CAPABILITIES_BYTES: usize = 16 * 1024;

/// One POST of a legacy client, as the session path needs it.
pub(crate) struct Post<'a> {
    pub(crate) policy: &'a SessionPolicy,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) version: http::Version,
    /// The caller's principal and whatever the hooks added.
    pub(crate) extensions: Extensions,
    /// The digest of `authorize`'s principal (`None`: nobody): the owner a session is bound to.
    pub(crate) owner: Option<String>,
    /// The client the request is charged to: the one a session it opens is counted against.
    pub(crate) client: Client,
}

/// Serves one message `legacy::claims_in` took, whose body was `bytes`.
pub(crate) async fn serve(
    post: Post<'_>,
    server: &Server,
    message: Envelope,
    bytes: Bytes,
) -> Response<ResponseBody> {
    let version = post.version;
    if message.method() == Some(&Method::Initialize) && message.has_id() {
        drop(bytes);
        return initialize(post, server, message).await;
    }
    let session = match resume(post.policy, post.headers, post.owner.as_deref(), version).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    if message.is_response() {
        return answer(&post, &session, &message, &bytes).await;
    }
    drop(bytes);
    let Post { policy, headers, extensions, .. } = post;
    let id = message.echoable_id();
    let admitted = server.admit(&message, &extensions);
    if let Err(refusal) = checked(headers, &message, &admitted, &id) {
        return refusal.into_response(version);
    }
    let carrier = crate::trace::carrier(headers);
    let wait = policy.answer_wait;
    let stored = session.clone();
    #[cfg(feature = "test-util")]
    let (extensions, slot) = crate::testing::ChannelSlot::attach(extensions);
    let channel: MakeChannel = Box::new(move |outbound| {
        let channel = SessionChannel::new(&stored, wait, outbound).shared();
        #[cfg(feature = "test-util")]
        slot.fill(&channel);
        channel
    });
    let session = Some(InSession { stored: session, channel: Some(channel) });
    dispatch(server, message, version, Attached { extensions, carrier, admitted, session }, Path::Legacy)
        .await
}

/// The checks of the stateless path (`legacy.rs`): a JSON-RPC request or notification, a legacy
/// version header if any, `Mcp-*` headers (none required) agreeing with the body.
#[allow(
    clippy::result_large_err,
    reason = "a refusal is built at most once per request and returned at once"
)]
fn checked(
    headers: &HeaderMap,
    message: &Envelope,
    admitted: &mcp_kernel_router::transport::Admitted<'_>,
    id: &Value,
) -> Result<(), Refusal> {
    jsonrpc_shape(message)
        .and_then(|()| protocol_version(headers, id))
        .and_then(|()| mirror::check_sent(headers, message, admitted))
}

/// `initialize`: the core's answer (advertising what a session honours); a result opens the session.
async fn initialize(post: Post<'_>, server: &Server, message: Envelope) -> Response<ResponseBody> {
    let Post { policy, headers, version, extensions, owner, client } = post;
    let id = message.echoable_id();
    let admitted = server.admit(&message, &extensions);
    if let Err(refusal) = checked(headers, &message, &admitted, &id) {
        return refusal.into_response(version);
    }
    let capabilities =
        message.params().and_then(|p| p.get("capabilities")).filter(|c| c.is_object()).cloned();
    // Kept as long as the session lives and read at each of its requests: bounded, or one initialize
    // of a body's size would cost a thousand sessions' memory.
    if capabilities
        .as_ref()
        .is_some_and(|c| serde_json::to_vec(c).map_or(true, |c| c.len() > MAX_CAPABILITIES_BYTES))
    {
        let detail = format!("client capabilities exceed {MAX_CAPABILITIES_BYTES} bytes");
        let error = ErrorObject::invalid_params(&detail);
        return Refusal::post_body(StatusCode::BAD_REQUEST, error, id).into_response(version);
    }
    let inbound = Inbound::new()
        .admitted(&admitted)
        .extensions(extensions)
        .revisions(Revisions::Legacy)
        .sessionless()
        .keeps_session()
        .trace_carrier(crate::trace::carrier(headers))
        .network(crate::trace::network(version));
    let response = match run_core(server, message, version, inbound).await {
        Ok(Some(response)) => response,
        Ok(None) => JsonRpcResponse::error(id.clone(), ErrorObject::method_not_found()),
        Err(fault) => return fault,
    };
    let agreed = match &response.body {
        Ok(result) => result.to_value().get("protocolVersion").and_then(Value::as_str).map(str::to_owned),
        Err(_) => None,
    };
    // An error opens no session.
    let Some(agreed) = agreed else { return legacy_answer::answer(response) };
    let Some(session) = new_session_id() else {
        let refusal = Refusal::post_body(StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal(), id);
        return refusal.into_response(version);
    };
    let capabilities = capabilities.unwrap_or_else(|| json!({}));
    // Counted against its client (the owner, else the address prefix), bound to its owner alone.
    let quota = client.session_quota(owner.as_deref());
    let record =
        SessionRecord::new(session.clone(), owner, agreed, capabilities, now_ms(), policy.limits.idle)
            .counted_as(quota);
    if let Err(error) = policy.store.create(record, &policy.limits).await {
        return refused(error, id, version);
    }
    let mut answer = legacy_answer::answer(response);
    // 32 hex digits: always a valid header value.
    if let Ok(value) = HeaderValue::from_str(&session) {
        answer.headers_mut().insert(SESSION_HEADER, value);
    }
    answer
}

/// A session the store would not open: 429 past the client's bound (its own sessions hold it; no other
/// client is refused for it), 503 past the store's, 503 (`retry-after: 1`) when unreachable.
fn refused(error: SessionError, id: Value, version: http::Version) -> Response<ResponseBody> {
    let refusal = match error {
        SessionError::OwnerFull => Refusal::post_body(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorObject::refused("Too many sessions for this client: end one (DELETE) or let one expire"),
            id,
        ),
        SessionError::Full => {
            tracing::warn!("an initialize past the sessions' bound was refused 503");
            let error =
                ErrorObject::new(mcp_kernel_wire::code::INTERNAL_ERROR, "Too many sessions; retry later");
            Refusal::post_body(StatusCode::SERVICE_UNAVAILABLE, error, id).retry_after(5)
        }
        SessionError::Store(error) if !error.is_unavailable() => {
            tracing::error!(%error, "the session store failed; answered 500");
            Refusal::post_body(StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal(), id)
        }
        other => return unavailable(version, &other),
    };
    refusal.into_response(version)
}

/// 400 for an answer no request of this session waits for: one body whatever the reason.
fn not_awaited(version: http::Version) -> Response<ResponseBody> {
    let error = ErrorObject::refused("Bad Request: no request of this session awaits this answer");
    Refusal::post_body(StatusCode::BAD_REQUEST, error, Value::Null).into_response(version)
}

/// A POSTed response, `bytes` as received: the client's answer to a request of `session`.
async fn answer(
    post: &Post<'_>,
    session: &StoredSession,
    message: &Envelope,
    bytes: &Bytes,
) -> Response<ResponseBody> {
    let version = post.version;
    if let Err(refusal) = protocol_version(post.headers, &Value::Null) {
        return refusal.into_response(version);
    }
    let store = &post.policy.store;
    let request = message.id().and_then(Value::as_str);
    let bound = post.policy.max_answer_bytes;
    if bytes.len() > bound {
        // The request waiting for it is told at once rather than left to time out.
        if let Some(request) = request {
            let _ = store.deliver(session.id(), request, too_large(request)).await;
        }
        let error = ErrorObject::refused(format!("Answer exceeds {bound} bytes"));
        return Refusal::post_body(StatusCode::PAYLOAD_TOO_LARGE, error, Value::Null).into_response(version);
    }
    // The ids this server issues are strings; the body was read once already, so it reads again.
    let (Some(request), Ok(whole)) = (request, read_message(bytes)) else { return not_awaited(version) };
    match store.deliver(session.id(), request, Value::Object(whole)).await {
        Ok(true) => accepted(),
        Ok(false) => not_awaited(version),
        Err(error) => unavailable(version, &error),
    }
}
