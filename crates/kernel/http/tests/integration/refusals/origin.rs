//! Step 1 of the pipeline: the `Origin` check — a foreign value, a second foreign value or a non-UTF-8
//! one is 403 before anything else is looked at.

use super::{NULL, list};
use crate::support::*;

#[tokio::test]
async fn foreign_origin_is_403_and_closes_http1() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let headers = with(headers_for(&list()), "origin", b"http://evil.example");
            let reply = post(server.addr, proto, headers, bytes(&list())).await;
            reply.assert_error(403, -32600, &NULL);
            reply.assert_pre_body_close();
        }
    })
    .await;
}

#[tokio::test]
async fn origin_with_a_second_foreign_value_is_403() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            for pair in [[ALLOWED_ORIGIN, "http://evil.example"], ["http://evil.example", ALLOWED_ORIGIN]] {
                let headers = with(headers_for(&list()), "origin", pair[0].as_bytes());
                let headers = with(headers, "origin", pair[1].as_bytes());
                let reply = post(server.addr, proto, headers, bytes(&list())).await;
                reply.assert_error(403, -32600, &NULL);
                reply.assert_pre_body_close();
            }
            // A near miss is foreign: exact comparison.
            let headers = with(headers_for(&list()), "origin", format!("{ALLOWED_ORIGIN}/").as_bytes());
            post(server.addr, proto, headers, bytes(&list())).await.assert_error(403, -32600, &NULL);
        }
    })
    .await;
}

#[tokio::test]
async fn non_utf8_origin_is_403() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let headers = with(headers_for(&list()), "origin", b"http://\xffevil.example");
            let reply = post(server.addr, proto, headers, bytes(&list())).await;
            // Present and invalid: 403 (MCP S-14), like a foreign origin.
            reply.assert_error(403, -32600, &NULL);
            reply.assert_pre_body_close();
            assert!(!reply.raw.windows(4).any(|w| w == b"evil"), "the value is never echoed");
        }
    })
    .await;
}
