//! The OAuth resource-server mechanics through a real listener on HTTP/1.1 and HTTP/2: a hook's
//! refusal kinds (401, 403 `insufficient_scope`, 400 `invalid_request`) with their `WWW-Authenticate`
//! challenge pointing at the Protected Resource Metadata document, the document served beside the
//! endpoint under axum, and `bearer_token`'s refusals (`src/response/challenge.rs`,
//! `src/auth/protected_resource.rs`, `src/auth/bearer.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use mcp_kernel_http::{AllowedOrigins, McpHttp, McpService, ProtectedResource, Refused, bearer_token};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::support::*;

const SECRET: &str = "secret-refusal-reason";

fn list() -> Value {
    request(1, "tools/list", json!({}))
}

/// The resource the fixture describes, at `addr`.
fn resource(addr: SocketAddr) -> ProtectedResource {
    ProtectedResource::new(&format!("http://{addr}/mcp"), ["http://127.0.0.1:9000"])
        .expect("a resource identifier")
        .scopes_supported(["notes"])
}

/// Serves `app` (an axum router) on `listener` until dropped.
struct App {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

async fn serve_app(listener: TcpListener, app: axum::Router) -> App {
    let addr = listener.local_addr().expect("an address");
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(mcp_kernel_http::serve(listener, app, async move {
        let _ = rx.await;
    }));
    App { addr, _stop: tx }
}

/// The endpoint at `/mcp` and its metadata document, under axum, with `hook` as `authorize`.
async fn described<F>(hook: F) -> (App, ProtectedResource)
where
    F: Fn(&http::request::Parts) -> Result<(), Refused> + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let resource = resource(listener.local_addr().expect("an address"));
    let service: McpService = McpHttp::builder(server())
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
        .protected_resource(resource.clone())
        .authorize(hook)
        .build();
    let app = axum::Router::new()
        .route_service("/mcp", service)
        .route_service(resource.metadata_path(), resource.metadata_service());
    (serve_app(listener, app).await, resource)
}

fn challenge(reply: &Reply) -> &str {
    reply.headers.get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or_else(|| panic!("{reply:?}"))
}

#[tokio::test]
async fn an_unauthenticated_caller_gets_401_naming_the_metadata_document_before_the_body_is_read() {
    bounded(async {
        let (app, resource) =
            described(|_| Err(Refused::unauthenticated(SECRET).with_scope(["notes"]))).await;
        let expected = format!("Bearer resource_metadata=\"{}\", scope=\"notes\"", resource.metadata_url());
        for proto in BOTH {
            let reply = post_message(app.addr, proto, &list()).await;
            reply.assert_error(401, -32600, &Value::Null);
            reply.assert_pre_body_close();
            assert_eq!(challenge(&reply), expected);
            assert!(!String::from_utf8_lossy(&reply.raw).contains(SECRET), "the reason is never sent");
        }
        // The head alone is answered: the body is never waited for, and the connection is closed.
        let mut stream = TcpStream::connect(app.addr).await.expect("connect");
        let head =
            raw_head("POST", app.addr, &[("content-type", "application/json"), ("content-length", "100")]);
        stream.write_all(&head).await.expect("write");
        let response = read_raw_response(&mut stream).await;
        assert_eq!(response.status, 401, "{response:?}");
        assert_eq!(response.header("www-authenticate"), Some(expected.as_str()));
        assert!(closed_within(&mut stream, Duration::from_secs(2)).await);
    })
    .await;
}

#[tokio::test]
async fn each_refusal_kind_has_its_status_and_challenge() {
    bounded(async {
        type Make = fn() -> Refused;
        let cases: [(Make, u16, &str); 4] = [
            (|| Refused::invalid_token(SECRET), 401, ", error=\"invalid_token\""),
            (
                || Refused::insufficient_scope(["notes:write", "notes"], SECRET),
                403,
                ", error=\"insufficient_scope\", scope=\"notes:write notes\"",
            ),
            (|| Refused::invalid_request(SECRET), 400, ", error=\"invalid_request\""),
            (|| Refused::unauthenticated(SECRET), 401, ""),
        ];
        for (make, status, rest) in cases {
            let (app, resource) = described(move |_| Err(make())).await;
            let expected = format!("Bearer resource_metadata=\"{}\"{rest}", resource.metadata_url());
            for proto in BOTH {
                let reply = post_message(app.addr, proto, &list()).await;
                reply.assert_error(status, -32600, &Value::Null);
                reply.assert_pre_body_close();
                assert_eq!(challenge(&reply), expected);
            }
        }
        // A check that could not be made is 503 with `retry-after`, and no challenge.
        let (app, _) = described(|_| Err(Refused::unavailable(SECRET))).await;
        for proto in BOTH {
            let reply = post_message(app.addr, proto, &list()).await;
            reply.assert_error(503, -32600, &Value::Null);
            assert_eq!(reply.headers["retry-after"], "1");
            assert!(reply.headers.get("www-authenticate").is_none(), "{reply:?}");
        }
        // A plain refusal is 403 with no challenge, as before.
        let (app, _) = described(|_| Err(Refused::because(SECRET))).await;
        for proto in BOTH {
            let reply = post_message(app.addr, proto, &list()).await;
            reply.assert_error(403, -32600, &Value::Null);
            assert!(reply.headers.get("www-authenticate").is_none(), "{reply:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn without_a_protected_resource_the_challenge_names_no_document() {
    bounded(async {
        let server =
            serve(builder().authorize(|_| Err::<(), _>(Refused::invalid_token(SECRET))).build()).await;
        for proto in BOTH {
            let reply = post_message(server.addr, proto, &list()).await;
            assert_eq!(reply.status, 401);
            assert_eq!(challenge(&reply), "Bearer error=\"invalid_token\"");
        }
    })
    .await;
}

#[tokio::test]
async fn authorize_body_answers_401_after_the_read_and_keeps_the_connection() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let resource = resource(listener.local_addr().expect("an address"));
        let service = McpHttp::builder(server())
            .allowed_origins(AllowedOrigins::any())
            .protected_resource(resource.clone())
            .authorize(|_| Ok(()))
            .authorize_body(|_, _| Err::<(), _>(Refused::invalid_token(SECRET)))
            .build();
        let app = serve_app(listener, axum::Router::new().route_service("/mcp", service)).await;
        for proto in BOTH {
            let mut conn = connect(app.addr, proto).await;
            for _ in 0..2 {
                let reply = conn.post(app.addr, headers_for(&list()), bytes(&list())).await;
                assert_eq!(reply.status, 401, "{reply:?}");
                reply.assert_kept();
                assert!(challenge(&reply).contains(resource.metadata_url()));
            }
        }
    })
    .await;
}

#[tokio::test]
async fn the_metadata_document_is_served_at_the_path_the_challenge_names() {
    bounded(async {
        let (app, resource) = described(|_| Err(Refused::unauthenticated(SECRET))).await;
        for proto in BOTH {
            let reply = post_message(app.addr, proto, &list()).await;
            let url = challenge(&reply).split('"').nth(1).expect("a quoted URL").to_owned();
            let path = url.strip_prefix(&format!("http://{}", app.addr)).expect("this server's URL");
            assert_eq!(path, "/.well-known/oauth-protected-resource/mcp");
            let mut conn = connect(app.addr, proto).await;
            let document =
                conn.send_to(app.addr, path, Method::GET, http::HeaderMap::new(), Bytes::new()).await;
            assert_eq!(document.status, 200, "{document:?}");
            assert_eq!(document.headers["content-type"], "application/json");
            assert_eq!(
                document.body,
                json!({
                    "resource": resource.resource(),
                    "bearer_methods_supported": ["header"],
                    "authorization_servers": ["http://127.0.0.1:9000"],
                    "scopes_supported": ["notes"]
                })
            );
        }
    })
    .await;
}

#[tokio::test]
async fn bearer_token_refuses_a_query_token_and_a_repeated_header() {
    bounded(async {
        let seen = Arc::new(AtomicUsize::new(0));
        let admitted = Arc::clone(&seen);
        let (app, _) = described(move |parts| {
            let token = bearer_token(parts)?;
            if token != "good-token" {
                return Err(Refused::invalid_token("unknown token"));
            }
            admitted.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .await;
        for proto in BOTH {
            let mut conn = connect(app.addr, proto).await;
            let good = with(headers_for(&list()), "authorization", b"bearer good-token");
            let reply = conn.post(app.addr, good.clone(), bytes(&list())).await;
            assert_eq!(reply.status, 200, "{reply:?}");

            let mut conn = connect(app.addr, proto).await;
            let query = conn
                .send_to(app.addr, "/mcp?access_token=good-token", Method::POST, good.clone(), bytes(&list()))
                .await;
            assert_eq!(query.status, 400, "{query:?}");
            assert!(challenge(&query).ends_with("error=\"invalid_request\""));

            let twice = with(good, "authorization", b"Bearer good-token");
            assert_eq!(post(app.addr, proto, twice, bytes(&list())).await.status, 400);

            let missing = post_message(app.addr, proto, &list()).await;
            assert_eq!(missing.status, 401);
            assert!(
                !challenge(&missing).contains("error="),
                "no error code without a credential (RFC 6750 §3.1)"
            );

            let basic = with(headers_for(&list()), "authorization", b"Basic Z29vZDp0b2tlbg==");
            assert_eq!(post(app.addr, proto, basic, bytes(&list())).await.status, 401);
        }
        assert_eq!(seen.load(Ordering::SeqCst), 2, "only the well-formed header was admitted");
    })
    .await;
}

#[tokio::test]
async fn the_protected_resources_own_name_is_the_default_allowed_host() {
    bounded(async {
        let (app, _) = described(|_| Err(Refused::unauthenticated(SECRET))).await;
        let port = app.addr.port();
        let mut conn = connect(app.addr, Proto::H1).await;
        // `localhost` is a loopback name, but not the one the resource (and its document) names: a
        // client using it would be refused by its own RFC 9728 check, so it is refused here, plainly.
        let other = with(headers_for(&list()), "host", format!("localhost:{port}").as_bytes());
        let reply = conn.post(app.addr, other, bytes(&list())).await;
        assert_eq!(reply.status, 421, "{reply:?}");
        for proto in BOTH {
            assert_eq!(post_message(app.addr, proto, &list()).await.status, 401, "the resource's own name");
        }
    })
    .await;
}
