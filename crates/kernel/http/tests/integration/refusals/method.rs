//! Step 2: the method — anything but POST is 405 with `allow: POST`, after the `Origin` check and
//! before the length checks.

use bytes::Bytes;
use http::Method;

use super::{NULL, assert_raw_pre_body, list, raw_head_only};
use crate::support::*;

#[tokio::test]
async fn non_post_is_405_with_allow_post() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            for method in [Method::GET, Method::DELETE, Method::PUT, Method::OPTIONS] {
                let reply =
                    send(server.addr, proto, method.clone(), headers_for(&list()), Bytes::new()).await;
                reply.assert_error(405, -32600, &NULL);
                assert_eq!(reply.headers["allow"], "POST", "{method}");
                reply.assert_pre_body_close();
            }
        }
    })
    .await;
}

#[tokio::test]
async fn origin_is_checked_before_method() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let headers = with(headers_for(&list()), "origin", b"http://evil.example");
            let reply = send(server.addr, proto, Method::GET, headers, Bytes::new()).await;
            reply.assert_error(403, -32600, &NULL);
            assert!(reply.headers.get("allow").is_none());
        }
    })
    .await;
}

#[tokio::test]
async fn method_is_checked_before_length() {
    bounded(async {
        let server = start_default().await;
        let head = raw_head("GET", server.addr, &[("transfer-encoding", "chunked")]);
        let (response, closed) = raw_head_only(&server, head).await;
        assert_raw_pre_body(&response, closed, 405);
        assert_eq!(response.header("allow"), Some("POST"));
    })
    .await;
}
