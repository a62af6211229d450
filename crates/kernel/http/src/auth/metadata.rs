//! The service answering the Protected Resource Metadata document (RFC 9728 §3).
//!
//! The document is public (it names the resource and its authorization servers, nothing secret), so
//! it is served to any caller and any origin (`access-control-allow-origin: *`, without credentials),
//! as browser-based clients must read it cross-origin; a CORS preflight (a client that sends
//! `MCP-Protocol-Version` with its `GET`) is granted `GET`, `HEAD` and that header, with a 204 that
//! carries no `content-length`. A `HEAD` is answered with `GET`'s headers, `content-length` (the
//! document's length) included, and no content (RFC 9110 §8.6, §9.3.2), over HTTP/1.1 and HTTP/2
//! alike. It is serialized once, when the service is made; the request body is never read.

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_METHOD, ALLOW, CACHE_CONTROL, CONTENT_LENGTH,
    CONTENT_TYPE, HeaderValue, ORIGIN,
};
use http::{Method, Request, Response, StatusCode};
use serde_json::Value;

use crate::response::body::ResponseBody;

/// How long a client may keep the document: five minutes.
const CACHE_CONTROL_VALUE: &str = "max-age=300";

/// Serves one protected resource's metadata document: `GET` and `HEAD` get it (200,
/// `application/json`; `HEAD` with `GET`'s `content-length` and no content); any other method gets
/// 405 with `allow: GET, HEAD`. Cheap to clone. Made by
/// [`crate::ProtectedResource::metadata_service`].
#[derive(Clone)]
pub struct MetadataService {
    document: Bytes,
}

impl std::fmt::Debug for MetadataService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetadataService").field("document_bytes", &self.document.len()).finish()
    }
}

impl MetadataService {
    pub(crate) fn new(document: &Value) -> Self {
        Self { document: Bytes::from(document.to_string()) }
    }

    /// The whole answer to a request for the document, whose body is never read.
    pub(crate) fn respond(&self, parts: &http::request::Parts) -> Response<ResponseBody> {
        let mut response = self.answer(parts);
        crate::body::read::close_when_body_unread(&mut response, parts);
        response
    }

    fn answer(&self, parts: &http::request::Parts) -> Response<ResponseBody> {
        let method = &parts.method;
        let preflight = method == Method::OPTIONS
            && parts.headers.contains_key(ORIGIN)
            && parts.headers.contains_key(ACCESS_CONTROL_REQUEST_METHOD);
        if preflight {
            let mut response = Response::new(ResponseBody::empty());
            *response.status_mut() = StatusCode::NO_CONTENT;
            let headers = response.headers_mut();
            headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
            headers.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, HEAD"));
            headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("mcp-protocol-version"));
            headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
            return response;
        }
        let mut response = if method == Method::GET {
            Response::new(ResponseBody::from(self.document.to_vec()))
        } else if method == Method::HEAD {
            // No content, and `GET`'s length, the only one RFC 9110 §8.6 allows on a `HEAD` answer:
            // set here, so that nothing derives `0` from the empty body.
            let mut head = Response::new(ResponseBody::empty());
            head.headers_mut().insert(CONTENT_LENGTH, HeaderValue::from(self.document.len()));
            head
        } else {
            let mut refused = Response::new(ResponseBody::empty());
            *refused.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            refused.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            return refused;
        };
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static(CACHE_CONTROL_VALUE));
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        response
    }
}

impl<B> tower_service::Service<Request<B>> for MetadataService {
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Ready<Result<Response<ResponseBody>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let (parts, _body) = request.into_parts();
        ready(Ok(self.respond(&parts)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::CONNECTION;
    use http_body_util::BodyExt;
    use serde_json::json;
    use tower::ServiceExt;

    async fn call(method: Method) -> (StatusCode, http::HeaderMap, Bytes) {
        call_with(Request::builder().method(method).uri("/").body(()).unwrap()).await
    }

    async fn call_with(request: Request<()>) -> (StatusCode, http::HeaderMap, Bytes) {
        let service = MetadataService::new(&json!({"resource": "https://mcp.example.com/mcp"}));
        let response = service.oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        (parts.status, parts.headers, body.collect().await.unwrap().to_bytes())
    }

    #[tokio::test]
    async fn get_serves_the_document_to_any_origin() {
        let (status, headers, body) = call(Method::GET).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[CONTENT_TYPE], "application/json");
        assert_eq!(headers[ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert_eq!(
            serde_json::from_slice::<Value>(&body).unwrap()["resource"],
            "https://mcp.example.com/mcp"
        );
    }

    #[tokio::test]
    async fn a_head_is_answered_with_gets_headers_and_length_and_no_content() {
        let (_, get, document) = call(Method::GET).await;
        let (status, head, body) = call(Method::HEAD).await;
        assert_eq!((status, body.len()), (StatusCode::OK, 0));
        assert_eq!(head[CONTENT_LENGTH], document.len().to_string().as_str());
        for name in [CONTENT_TYPE, CACHE_CONTROL, ACCESS_CONTROL_ALLOW_ORIGIN] {
            assert_eq!(head[&name], get[&name]);
        }
    }

    #[tokio::test]
    async fn a_preflight_is_granted_get_and_the_protocol_version_header() {
        let request = Request::options("/")
            .header(ORIGIN, "https://app.example")
            .header(ACCESS_CONTROL_REQUEST_METHOD, "GET")
            .body(())
            .unwrap();
        let (status, headers, body) = call_with(request).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert_eq!(headers[ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert_eq!(headers[ACCESS_CONTROL_ALLOW_METHODS], "GET, HEAD");
        assert_eq!(headers[ACCESS_CONTROL_ALLOW_HEADERS], "mcp-protocol-version");
        assert!(body.is_empty());
        assert_eq!(call(Method::OPTIONS).await.0, StatusCode::METHOD_NOT_ALLOWED, "not a preflight");
    }

    #[tokio::test]
    async fn a_request_with_a_body_closes_an_http1_connection() {
        let request = Request::post("/").header("content-length", "300000").body(()).unwrap();
        let (status, headers, _) = call_with(request).await;
        assert_eq!(
            (status, &headers[CONNECTION]),
            (StatusCode::METHOD_NOT_ALLOWED, &HeaderValue::from_static("close"))
        );
        let (_, headers, _) = call(Method::GET).await;
        assert!(headers.get(CONNECTION).is_none());
    }

    #[tokio::test]
    async fn other_methods_are_405() {
        let (status, headers, _) = call(Method::POST).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(headers[ALLOW], "GET, HEAD");
    }
}
