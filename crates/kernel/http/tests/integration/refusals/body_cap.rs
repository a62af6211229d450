//! Steps 5 and 6: the body cap and the bounded read — a declared length over `MAX_BODY_BYTES` is 413
//! without reading, a streamed body over it is 413 on HTTP/2, a body of exactly the cap is admitted.

use bytes::Bytes;
use serde_json::{Value, json};

use mcp_kernel_http::MAX_BODY_BYTES;

use super::{NULL, assert_raw_pre_body, h2_head_only, list, padded_list, raw_head_only};
use crate::support::*;

#[tokio::test]
async fn declared_length_over_the_cap_is_413_without_reading() {
    bounded(async {
        let server = start_default().await;
        let declared = (32 * 1024 * 1024).to_string();
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", declared.clone()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 413);
        // One byte over the cap is over the cap.
        let over = (MAX_BODY_BYTES + 1).to_string();
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", over));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 413);
        // HTTP/2: declared in `content-length`, no DATA frame sent.
        let headers = with(headers_for(&list()), "content-length", declared.as_bytes());
        let reply = h2_head_only(&server, headers).await;
        reply.assert_error(413, -32600, &NULL);
        reply.assert_pre_body_close();
    })
    .await;
}

#[tokio::test]
async fn streamed_body_over_the_cap_is_413_on_http2() {
    bounded(async {
        let server = start_default().await;
        let sender = h2_connect(server.addr).await;
        let mut sender = sender.ready().await.expect("h2 ready");
        let (response, mut stream) =
            sender.send_request(h2_request(server.addr, headers_for(&list())), false).expect("send");
        // 1 MiB + 1 byte, no content-length, in 16 KiB DATA frames (buffered by h2 as the window opens).
        let mut left = MAX_BODY_BYTES + 1;
        while left > 0 {
            let n = left.min(16 * 1024);
            stream.send_data(Bytes::from(vec![b' '; n]), false).expect("queue a DATA frame");
            left -= n;
        }
        let (status, headers, raw) = h2_read(response).await;
        drop(stream);
        let body: Value = serde_json::from_slice(&raw).expect("JSON");
        assert_eq!(status, 413);
        assert_eq!((body["error"]["code"].clone(), body["id"].clone()), (json!(-32600), NULL));
        assert!(headers.get("connection").is_none());
    })
    .await;
}

#[tokio::test]
async fn a_body_of_exactly_the_cap_is_admitted() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let reply = post(server.addr, proto, headers_for(&list()), padded_list(MAX_BODY_BYTES)).await;
            assert_eq!(reply.status, 200, "{proto:?}");
            let reply = post(server.addr, proto, headers_for(&list()), padded_list(MAX_BODY_BYTES + 1)).await;
            reply.assert_error(413, -32600, &NULL);
            reply.assert_pre_body_close();
        }
        // Streamed over HTTP/2 with no content-length: exactly the cap, then one byte more.
        for (size, status) in [(MAX_BODY_BYTES, 200), (MAX_BODY_BYTES + 1, 413)] {
            let sender = h2_connect(server.addr).await;
            let mut sender = sender.ready().await.expect("h2 ready");
            let (response, mut stream) =
                sender.send_request(h2_request(server.addr, headers_for(&list())), false).expect("send");
            let body = padded_list(size);
            for chunk in body.chunks(16 * 1024) {
                stream.send_data(Bytes::copy_from_slice(chunk), false).expect("queue");
            }
            stream.send_data(Bytes::new(), true).expect("end the stream");
            let (got, _, _) = h2_read(response).await;
            assert_eq!(got, status, "{size} bytes streamed");
        }
    })
    .await;
}
