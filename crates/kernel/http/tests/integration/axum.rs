//! The service mounted in an axum `Router` (`Router::route_service("/mcp", service)`), served over a
//! real listener by `axum::serve` and by `mcp_kernel_http::serve`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::support::*;
use mcp_kernel_http::{McpService, PeerAddr};

/// Serves `router` with `axum::serve` on 127.0.0.1; the sender stops it.
async fn axum_serve(router: axum::Router) -> (SocketAddr, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let shutdown = async move {
            let _ = rx.await;
        };
        let _ = axum::serve(listener, router).with_graceful_shutdown(shutdown).await;
    });
    (addr, tx)
}

fn mounted(service: McpService) -> axum::Router {
    axum::Router::new().route_service("/mcp", service)
}

#[tokio::test]
async fn mounted_in_axum_it_serves_both_protocols() {
    bounded(async {
        let service = builder().authorize(|_| Ok(())).build();
        let (addr, stop) = axum_serve(mounted(service)).await;
        for proto in BOTH {
            let message = request(1, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
            let reply = post_message(addr, proto, &message).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.result()["structuredContent"], json!({"message": "hi"}));
            // Refusals come from the service, with their headers.
            let reply = send(addr, proto, Method::GET, headers_for(&message), Bytes::new()).await;
            reply.assert_error(405, -32600, &Value::Null);
            assert_eq!(reply.headers["allow"], "POST");
            reply.assert_pre_body_close();
            let reply = post(addr, proto, headers_for(&message), "[]").await;
            reply.assert_error(400, -32600, &Value::Null);
            let reply = post_message(addr, proto, &notification("notifications/cancelled")).await;
            assert_eq!((reply.status.as_u16(), reply.raw.len()), (202, 0));
        }
        let _ = stop.send(());
    })
    .await;
}

#[tokio::test]
async fn a_path_outside_the_mount_is_404_from_axum() {
    bounded(async {
        let service = builder().authorize(|_| Ok(())).build();
        let (addr, stop) = axum_serve(mounted(service)).await;
        let message = request(1, "tools/list", json!({}));
        for proto in BOTH {
            for path in ["/", "/other", "/mcp/extra", "/MCP"] {
                let mut conn = connect(addr, proto).await;
                let reply =
                    conn.send_to(addr, path, Method::POST, headers_for(&message), bytes(&message)).await;
                assert_eq!(reply.status, 404, "{path}: {reply:?}");
                // axum's own 404, not a JSON-RPC answer of the service.
                assert!(reply.body.get("jsonrpc").is_none(), "{path}: {reply:?}");
            }
        }
        let _ = stop.send(());
    })
    .await;
}

#[tokio::test]
async fn an_axum_router_served_by_serve_passes_the_peer_addr() {
    bounded(async {
        let peers: Arc<Mutex<Vec<Option<SocketAddr>>>> = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&peers);
        let service = builder()
            .authorize(move |parts| {
                recorded.lock().unwrap().push(parts.extensions.get::<PeerAddr>().map(|p| p.0));
                Ok(())
            })
            .build();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(mcp_kernel_http::serve(listener, mounted(service), async move {
            let _ = rx.await;
        }));
        let message = request(1, "tools/list", json!({}));
        for proto in BOTH {
            let (mut conn, local) = connect_local(addr, proto).await;
            let reply = conn.post(addr, headers_for(&message), bytes(&message)).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(peers.lock().unwrap().pop(), Some(Some(local)));
            let reply =
                conn.send_to(addr, "/elsewhere", Method::POST, headers_for(&message), bytes(&message)).await;
            assert_eq!(reply.status, 404);
        }
        let _ = tx.send(());
        drop(task);
    })
    .await;
}
