//! Refusals: a status, a JSON-RPC error object, and where in the pipeline it was issued.
//!
//! Every refusal body is a JSON-RPC error object (`protocol.md` [K-2]; the 404 to another path than
//! `Builder::path`'s, in `admission/path.rs`, answers no MCP request and has none). A refusal issued
//! before the body is read carries `connection: close` over HTTP/1.x, so the server does not drain a
//! refused caller's body; never over HTTP/2, where the header is malformed (a stream ends with its response), and never
//! after the body was read, when the connection is clean (`protocol.md` [D-23], [K-4]).
//!
//! [D-23]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [K-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [K-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html

use http::header::{ALLOW, CONNECTION, CONTENT_TYPE, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{Response, StatusCode, Version};
use serde_json::Value;

use mcp_kernel_wire::{Envelope, ErrorObject, Response as JsonRpcResponse};

use crate::response::body::ResponseBody;
use crate::response::challenge::Denial;

/// Whether the request body had been read when the refusal was issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Before the body was read: the connection is closed over HTTP/1.x.
    PreBody,
    /// After the body was read: the connection is kept.
    PostBody,
}

/// One refusal, ready to be written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) error: ErrorObject,
    pub(crate) id: Value,
    pub(crate) stage: Stage,
    /// `Retry-After`, in seconds (a 503).
    pub(crate) retry_after: Option<u32>,
    /// `WWW-Authenticate` (a host's 401, or a 403 or 400 with a Bearer error code).
    pub(crate) challenge: Option<HeaderValue>,
    /// `Allow` of a 405, when it is not `POST` alone (a service with legacy sessions also serves GET
    /// and DELETE).
    pub(crate) allow: Option<&'static str>,
}

impl Refusal {
    /// A refusal issued before the body was read (the id is unknown).
    pub(crate) fn pre_body(status: StatusCode, error: ErrorObject) -> Self {
        Self {
            status,
            error,
            id: Value::Null,
            stage: Stage::PreBody,
            retry_after: None,
            challenge: None,
            allow: None,
        }
    }

    /// A refusal issued after the body was read, echoing the request's id when it is known.
    pub(crate) fn post_body(status: StatusCode, error: ErrorObject, id: Value) -> Self {
        Self { status, error, id, stage: Stage::PostBody, retry_after: None, challenge: None, allow: None }
    }

    /// A host hook's refusal of kind `denial`, at `stage`: its status, a fixed message, and its
    /// challenge pointing at `metadata_url` (the service's protected resource, if any).
    pub(crate) fn denied(denial: &Denial, metadata_url: Option<&str>, stage: Stage) -> Self {
        let error = ErrorObject::refused(denial.message());
        let mut refusal = match stage {
            Stage::PreBody => Self::pre_body(denial.status(), error),
            Stage::PostBody => Self::post_body(denial.status(), error, Value::Null),
        };
        refusal.challenge = denial.challenge(metadata_url);
        if *denial == Denial::Unavailable {
            refusal.retry_after = Some(1);
        }
        refusal
    }

    /// The same refusal, telling the client when to try again.
    pub(crate) fn retry_after(mut self, seconds: u32) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// The same 405, naming `methods` in its `Allow`.
    pub(crate) fn allowing(mut self, methods: &'static str) -> Self {
        self.allow = Some(methods);
        self
    }

    /// 400 -32020 "Header mismatch: …", after the body was read.
    pub(crate) fn header_mismatch(detail: &str, id: Value) -> Self {
        Self::post_body(StatusCode::BAD_REQUEST, ErrorObject::header_mismatch(detail), id)
    }

    /// The HTTP response for this refusal, on a connection of `version`.
    pub(crate) fn into_response(self, version: Version) -> Response<ResponseBody> {
        let allow_post = self.status == StatusCode::METHOD_NOT_ALLOWED;
        let close = self.stage == Stage::PreBody && version < Version::HTTP_2;
        let body = JsonRpcResponse::error(self.id, self.error).to_bytes();
        let mut response = json_response(self.status, body);
        if allow_post {
            response.headers_mut().insert(ALLOW, HeaderValue::from_static(self.allow.unwrap_or("POST")));
        }
        if close {
            response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
        }
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let Some(challenge) = self.challenge {
            response.headers_mut().insert(WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

/// Only requests and notifications are executed: a message without `jsonrpc: "2.0"` and a string
/// method, or whose id is neither a string nor an integer, is refused (400, -32600).
#[allow(clippy::result_large_err, reason = "built at most once per request, returned straight to the caller")]
pub(crate) fn jsonrpc_shape(message: &Envelope) -> Result<(), Refusal> {
    if message.is_call() {
        Ok(())
    } else {
        Err(Refusal::post_body(
            StatusCode::BAD_REQUEST,
            ErrorObject::invalid_request(),
            message.echoable_id(),
        ))
    }
}

/// A response with a JSON body.
pub(crate) fn json_response(status: StatusCode, body: impl Into<ResponseBody>) -> Response<ResponseBody> {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// 202 Accepted with an empty body (a notification, or a message that gets no reply).
pub(crate) fn accepted() -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_body_refusals_close_http1_connections_only() {
        let r = Refusal::pre_body(StatusCode::FORBIDDEN, ErrorObject::refused("Origin not allowed"));
        let h1 = r.clone().into_response(Version::HTTP_11);
        assert_eq!(h1.headers()[CONNECTION], "close");
        let h2 = r.into_response(Version::HTTP_2);
        assert!(h2.headers().get(CONNECTION).is_none());
    }

    #[test]
    fn post_body_refusals_keep_the_connection() {
        let r = Refusal::header_mismatch("x", Value::from(1));
        let response = r.into_response(Version::HTTP_11);
        assert!(response.headers().get(CONNECTION).is_none());
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }

    #[test]
    fn a_401_carries_its_challenge_and_closes_http1_before_the_body() {
        let denial = Denial::Unauthenticated { invalid_token: false, scope: vec![] };
        let r = Refusal::denied(
            &denial,
            Some("https://a.example/.well-known/oauth-protected-resource"),
            Stage::PreBody,
        );
        let h1 = r.clone().into_response(Version::HTTP_11);
        assert_eq!(h1.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            h1.headers()[WWW_AUTHENTICATE],
            "Bearer resource_metadata=\"https://a.example/.well-known/oauth-protected-resource\""
        );
        assert_eq!(h1.headers()[CONNECTION], "close");
        let after = Refusal::denied(&denial, None, Stage::PostBody).into_response(Version::HTTP_11);
        assert!(after.headers().get(CONNECTION).is_none());
        assert_eq!(after.headers()[WWW_AUTHENTICATE], "Bearer realm=\"mcp\"");
    }

    #[test]
    fn method_not_allowed_names_post() {
        let r = Refusal::pre_body(StatusCode::METHOD_NOT_ALLOWED, ErrorObject::refused("use POST"));
        assert_eq!(r.into_response(Version::HTTP_11).headers()[ALLOW], "POST");
    }
}
