//! `Builder::path`: the service answers at its one path and refuses every other one 404, before any
//! other step reads the request; without it, every path is served. Pins `protocol.md` D-2a, and D-2's
//! unchecked path without it.

use http::Method;
use serde_json::{Value, json};

use crate::support::*;

/// Paths a service at `/mcp` does not serve: the root, another, a longer one, another case, a
/// trailing slash, an encoded character.
const OTHER_PATHS: [&str; 6] = ["/", "/other", "/mcp/extra", "/MCP", "/mcp/", "/m%63p"];

#[tokio::test]
async fn with_a_path_every_other_path_is_refused_404_before_the_body_is_read() {
    bounded(async {
        let running = start(|b| b.path("/mcp")).await;
        let message = request(1, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
        for proto in BOTH {
            for path in OTHER_PATHS {
                let mut conn = connect(running.addr, proto).await;
                let reply = conn
                    .send_to(running.addr, path, Method::POST, headers_for(&message), bytes(&message))
                    .await;
                // The service's own refusal, not an answer: the message was not read (its id is not echoed).
                reply.assert_error(404, -32600, &Value::Null);
                reply.assert_pre_body_close();
            }
        }
        running.stop().await;
    })
    .await;
}

#[tokio::test]
async fn with_a_path_another_path_is_404_before_the_host_check() {
    bounded(async {
        let running = start(|b| b.path("/mcp")).await;
        let message = request(1, "tools/list", json!({}));
        // A name the endpoint does not answer to is 421 at its path, and 404 at any other.
        let headers = replace(headers_for(&message), "host", b"rebound.example");
        let mut conn = connect(running.addr, Proto::H1).await;
        let at_path =
            conn.send_to(running.addr, "/mcp", Method::POST, headers.clone(), bytes(&message)).await;
        assert_eq!(at_path.status, 421, "{at_path:?}");
        let mut conn = connect(running.addr, Proto::H1).await;
        let elsewhere = conn.send_to(running.addr, "/other", Method::POST, headers, bytes(&message)).await;
        elsewhere.assert_error(404, -32600, &Value::Null);
        running.stop().await;
    })
    .await;
}

#[tokio::test]
async fn with_a_path_that_path_is_served_with_or_without_a_query() {
    bounded(async {
        let running = start(|b| b.path("/mcp")).await;
        for proto in BOTH {
            for (id, path) in [(1, "/mcp"), (2, "/mcp?session=ignored")] {
                let message =
                    request(id, "tools/call", json!({"name": "echo", "arguments": {"message": path}}));
                let mut conn = connect(running.addr, proto).await;
                let reply = conn
                    .send_to(running.addr, path, Method::POST, headers_for(&message), bytes(&message))
                    .await;
                assert_eq!(reply.status, 200, "{path}: {reply:?}");
                assert_eq!(reply.id(), &json!(id), "{path}: {reply:?}");
                assert_eq!(reply.result()["structuredContent"], json!({"message": path}));
            }
        }
        running.stop().await;
    })
    .await;
}

#[tokio::test]
async fn without_a_path_every_path_is_served() {
    bounded(async {
        let running = start_default().await;
        let message = request(7, "tools/call", json!({"name": "echo", "arguments": {"message": "any"}}));
        for proto in BOTH {
            for path in ["/mcp"].into_iter().chain(OTHER_PATHS) {
                let mut conn = connect(running.addr, proto).await;
                let reply = conn
                    .send_to(running.addr, path, Method::POST, headers_for(&message), bytes(&message))
                    .await;
                assert_eq!(reply.status, 200, "{path}: {reply:?}");
                assert_eq!(reply.result()["structuredContent"], json!({"message": "any"}));
            }
        }
        running.stop().await;
    })
    .await;
}

#[test]
fn a_path_that_no_request_could_match_is_refused_by_the_builder() {
    for path in ["", "mcp", "/mcp?x=1", "/mcp#top", "/m cp", "http://host/mcp"] {
        let outcome = std::panic::catch_unwind(|| builder().authorize(|_| Ok(())).path(path).build());
        assert!(outcome.is_err(), "{path:?} was accepted");
    }
    for path in ["/", "/mcp", "/api/v1/mcp", "/m%63p"] {
        let service = builder().authorize(|_| Ok(())).path(path).build();
        assert!(format!("{service:?}").contains(&format!("{path:?}")), "{path:?}: {service:?}");
    }
}
