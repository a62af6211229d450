//! Step 4: the `authorize` hook — its refusal is 403 before any body byte is read (no `100 Continue`,
//! before the declared length is checked), and its panic is 500 with the server serving on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_kernel_http::Refused;

use super::{NULL, assert_raw_pre_body, h2_head_only, list, raw_head_only};
use crate::support::*;

/// An `authorize` hook that refuses everyone and counts its calls.
fn refusing(calls: &Arc<AtomicUsize>) -> impl Fn(&http::request::Parts) -> Result<(), Refused> + use<> {
    let calls = Arc::clone(calls);
    move |_| {
        calls.fetch_add(1, Ordering::SeqCst);
        Err(Refused::because("secret-authorize-reason"))
    }
}

#[tokio::test]
async fn authorize_refusal_is_403_before_any_body_byte_is_read() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let server = serve(builder().authorize(refusing(&calls)).build()).await;
        // HTTP/1.1: a Content-Length is declared and the body is never sent.
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", "100".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 403);
        assert!(!String::from_utf8_lossy(&response.body).contains("secret-authorize-reason"));
        // HTTP/2: HEADERS without END_STREAM and never a DATA frame.
        let headers = with(headers_for(&list()), "content-length", b"100");
        let reply = h2_head_only(&server, headers).await;
        reply.assert_error(403, -32600, &NULL);
        reply.assert_pre_body_close();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    })
    .await;
}

#[tokio::test]
async fn authorize_refusal_with_expect_continue_sends_no_100() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let server = serve(builder().authorize(refusing(&calls)).build()).await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", "100".into()));
        fields.push(("expect", "100-continue".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        // The first response read is the final 403: no `100 Continue` invited the body.
        assert_raw_pre_body(&response, closed, 403);
    })
    .await;
}

#[tokio::test]
async fn authorize_is_checked_before_the_declared_length() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let server = serve(builder().authorize(refusing(&calls)).build()).await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", (32 * 1024 * 1024).to_string()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 403);
    })
    .await;
}

#[tokio::test]
async fn authorize_panic_is_500_and_the_next_request_succeeds() {
    bounded(async {
        let service = builder()
            .authorize(|parts| {
                if parts.headers.contains_key("x-panic") {
                    panic!("authorize bug: secret-hook-detail");
                }
                Ok(())
            })
            .build();
        let server = serve(service).await;
        for proto in BOTH {
            let headers = with(headers_for(&list()), "x-panic", b"1");
            let reply = post(server.addr, proto, headers, bytes(&list())).await;
            reply.assert_error(500, -32603, &NULL);
            assert_eq!(reply.message(), "Internal error");
            reply.assert_pre_body_close();
            let reply = post(server.addr, proto, headers_for(&list()), bytes(&list())).await;
            assert_eq!(reply.status, 200, "the server keeps serving: {reply:?}");
        }
    })
    .await;
}
