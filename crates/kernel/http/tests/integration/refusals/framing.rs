//! Framing edge cases over raw HTTP/1.1 bytes: a body cut short, `Content-Length` with
//! `Transfer-Encoding` (the smuggling shape), a declared length over the cap with
//! `Expect: 100-continue`.

use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::{assert_raw_pre_body, raw_head_only};
use crate::support::*;

#[tokio::test]
async fn a_body_cut_short_is_400_minus_32700_and_closes() {
    bounded(async {
        let server = start_default().await;
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", "100".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        stream.write_all(&raw_head("POST", server.addr, &fields)).await.expect("head");
        stream.write_all(b"{\"jsonrpc\":").await.expect("part of the body");
        // The client stops sending (half-close): the body can never complete.
        stream.shutdown().await.expect("half-close");
        let response = read_raw_response(&mut stream).await;
        let closed = closed_within(&mut stream, Duration::from_secs(2)).await;
        assert_eq!(response.status, 400, "{response:?}");
        assert_eq!(response.json()["error"]["code"], -32700, "{response:?}");
        assert_eq!(response.json()["id"], Value::Null);
        assert_eq!(response.header("connection"), Some("close"));
        assert!(closed);
    })
    .await;
}

#[tokio::test]
async fn content_length_with_transfer_encoding_is_411() {
    bounded(async {
        // The smuggling shape (CL.TE): refused before the read, whichever length a proxy believed.
        let server = start_default().await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", "5".into()));
        fields.push(("transfer-encoding", "chunked".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 411);
    })
    .await;
}

#[tokio::test]
async fn declared_length_over_the_cap_with_expect_continue_is_413_without_100() {
    bounded(async {
        let server = start_default().await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", (32 * 1024 * 1024).to_string()));
        fields.push(("expect", "100-continue".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 413);
    })
    .await;
}
