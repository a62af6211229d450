//! D-27 framing: the line cap, blank lines, legacy `Content-Length` frames (a bounded header block that
//! never swallows a request, and an answer for every frame begun), and unreadable messages.

use mcp_kernel_stdio::{MAX_LINE_BYTES, StdioOptions};
use serde_json::{Value, json};

use crate::harness::{Session, bounded, error, ping_of_len, plain_server, request};

fn start() -> Session {
    Session::start(plain_server(), StdioOptions::default())
}

fn line(mut bytes: Vec<u8>, ending: &[u8]) -> Vec<u8> {
    bytes.extend_from_slice(ending);
    bytes
}

fn json_line(message: &Value) -> Vec<u8> {
    line(message.to_string().into_bytes(), b"\n")
}

fn pong(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {}})
}

fn refusal(code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
}

/// Sorts responses by their id's JSON text (null first), for checks that do not depend on task order.
fn sorted(mut responses: Vec<Value>) -> Vec<Value> {
    responses.sort_by_key(|r| r["id"].to_string());
    responses
}

#[tokio::test]
async fn admits_a_line_of_exactly_the_cap() {
    bounded(async {
        assert_eq!(MAX_LINE_BYTES, 1_048_576);
        let mut session = start();
        session.send(&line(ping_of_len(1, MAX_LINE_BYTES), b"\n")).await;
        assert_eq!(session.expect().await, pong(1));
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test]
async fn refuses_a_line_one_byte_over_the_cap_once_and_drains_it() {
    bounded(async {
        let mut session = start();
        // Both over-long lines are valid requests: they must be neither parsed nor answered.
        session.send(&line(ping_of_len(1, MAX_LINE_BYTES + 1), b"\n")).await;
        session.send(&line(ping_of_len(2, 3 * MAX_LINE_BYTES), b"\n")).await;
        session.send(&json_line(&request(3, "ping"))).await;
        let refused = refusal(-32600, "Request line exceeds 1048576 bytes");
        assert_eq!(session.expect().await, refused, "one refusal for the first line, however long");
        assert_eq!(session.expect().await, refused, "one refusal for the second line, however long");
        assert_eq!(session.expect().await, pong(3), "the next line is read normally");
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test]
async fn trailing_cr_counts_toward_the_cap() {
    bounded(async {
        let mut session = start();
        session.send(&line(ping_of_len(1, MAX_LINE_BYTES - 1), b"\r\n")).await;
        assert_eq!(session.expect().await, pong(1), "cap - 1 bytes and a \\r make exactly the cap");
        session.send(&line(ping_of_len(2, MAX_LINE_BYTES), b"\r\n")).await;
        let refused = refusal(-32600, "Request line exceeds 1048576 bytes");
        assert_eq!(session.expect().await, refused, "cap bytes and a \\r are one byte over");
        session.send(&line(request(3, "ping").to_string().into_bytes(), b"\r\n")).await;
        assert_eq!(session.expect().await, pong(3), "the \\r is trimmed before parsing");
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test]
async fn skips_blank_lines() {
    bounded(async {
        let mut session = start();
        session.send(b"\n\r\n \t \r\n").await;
        session.send(&json_line(&request(1, "ping"))).await;
        session.send(b"\n\n   \n").await;
        session.send(&line(request(2, "ping").to_string().into_bytes(), b"\r\n")).await;
        session.send(b"\r\n\t\n").await;
        session.close();
        assert_eq!(sorted(session.rest().await), vec![pong(1), pong(2)], "blank lines get no answer");
        session.finish().await.expect("a clean end");
    })
    .await;
}

#[tokio::test]
async fn reads_legacy_content_length_frames() {
    bounded(async {
        let mut session = start();
        let first = request(1, "ping").to_string();
        // A pretty-printed body spans lines: only the declared length delimits it.
        let second = serde_json::to_string_pretty(&request(2, "ping")).expect("json");
        let mut input = format!("Content-Length: {}\r\n\r\n{first}", first.len()).into_bytes();
        input.extend(
            format!(
                "content-LENGTH:{}\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{second}",
                second.len()
            )
            .into_bytes(),
        );
        input.extend(json_line(&request(3, "ping")));
        session.send(&input).await;
        session.close();
        assert_eq!(sorted(session.rest().await), vec![pong(1), pong(2), pong(3)]);
        session.finish().await.expect("a clean end");
    })
    .await;
}

#[tokio::test]
async fn refuses_oversized_content_length_frame_and_drains_it() {
    bounded(async {
        let mut session = start();
        // The body is made of valid requests: none of them may be parsed or answered.
        let inner = json_line(&request(9, "ping"));
        let mut body: Vec<u8> = inner.iter().copied().cycle().take(MAX_LINE_BYTES - inner.len()).collect();
        body.resize(MAX_LINE_BYTES + 1, b' ');
        let mut input = format!("Content-Length: {}\r\nContent-Type: x\r\n\r\n", body.len()).into_bytes();
        input.extend(body);
        input.extend(json_line(&request(2, "ping")));
        session.send(&input).await;
        let refused = refusal(-32600, "Request frame exceeds 1048576 bytes");
        assert_eq!(session.expect().await, refused);
        assert_eq!(session.expect().await, pong(2));
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test]
async fn invalid_content_length_is_parse_error() {
    bounded(async {
        let mut session = start();
        for (header, id) in [("Content-Length: 1x", 1), ("CONTENT-LENGTH: -4", 2), ("content-length:   ", 3)]
        {
            session.send(format!("{header}\r\nContent-Type: x\r\n\r\n").as_bytes()).await;
            session.send(&json_line(&request(id, "ping"))).await;
        }
        session.close();
        let invalid = refusal(-32700, "Parse error: invalid_content_length");
        let missing = refusal(-32700, "Parse error: missing_content_length");
        let expected = sorted(vec![invalid.clone(), invalid, missing, pong(1), pong(2), pong(3)]);
        assert_eq!(sorted(session.rest().await), expected);
        session.finish().await.expect("a clean end");
    })
    .await;
}

#[tokio::test]
async fn a_frame_cut_by_eof_is_answered_once() {
    bounded(async {
        let ended = refusal(-32700, "Parse error: input ended inside a frame");
        // Inside a body of at most the cap.
        let mut session = start();
        session.send(&json_line(&request(1, "ping"))).await;
        session.send(b"Content-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,").await;
        session.close();
        assert_eq!(session.rest().await, vec![pong(1), ended.clone()], "one answer for the frame begun");
        session.finish().await.expect("end of input is a clean end");
        // Inside the header block.
        let mut session = start();
        session.send(b"Content-Length: 100\r\nContent-Type: application/vscode-jsonrpc\r\n").await;
        session.close();
        assert_eq!(session.rest().await, vec![ended]);
        session.finish().await.expect("end of input is a clean end");
    })
    .await;
}

#[tokio::test]
async fn an_oversized_frame_is_answered_even_at_eof() {
    bounded(async {
        let mut session = start();
        session.send(&json_line(&request(1, "ping"))).await;
        // The body declared is twice the cap; only valid requests, a fraction of it, arrive.
        let mut input = format!("Content-Length: {}\r\n\r\n", 2 * MAX_LINE_BYTES).into_bytes();
        let inner = json_line(&request(9, "ping"));
        input.extend(inner.iter().copied().cycle().take(100 * inner.len()));
        session.send(&input).await;
        session.close();
        let refused = refusal(-32600, "Request frame exceeds 1048576 bytes");
        assert_eq!(session.rest().await, vec![pong(1), refused], "answered once, and nothing in it is");
        session.finish().await.expect("end of input is a clean end");
    })
    .await;
}

#[tokio::test]
async fn a_stray_content_length_line_swallows_no_request() {
    bounded(async {
        let mut session = start();
        // A stray header with no blank line: the three valid requests after it must all be answered.
        let mut input = b"Content-Length: 120\r\n".to_vec();
        for id in 1..=3 {
            input.extend(json_line(&request(id, "ping")));
        }
        session.send(&input).await;
        let refused = refusal(-32700, "Parse error: frame header ended without a blank line");
        assert_eq!(session.expect().await, refused, "the header block is refused once");
        // After other header lines too, and with a line that opens a batch.
        session.send(b"content-length: 7\r\nContent-Type: x\r\n").await;
        session.send(&json_line(&json!([request(4, "ping")]))).await;
        session.send(&json_line(&request(5, "ping"))).await;
        session.close();
        let batch = refusal(-32600, "Expected a JSON object, got an array");
        assert_eq!(
            sorted(session.rest().await),
            sorted(vec![pong(1), pong(2), pong(3), refused, batch, pong(5)])
        );
        session.finish().await.expect("a clean end");
    })
    .await;
}

/// `Content-Length: <len>` and `extra` header lines `X-N: v`.
fn header_lines(len: usize, extra: usize) -> Vec<u8> {
    let mut block = format!("Content-Length: {len}\r\n").into_bytes();
    for n in 0..extra {
        block.extend(format!("X-{n}: v\r\n").into_bytes());
    }
    block
}

#[tokio::test]
async fn a_header_block_is_bounded_at_32_lines() {
    bounded(async {
        let mut session = start();
        // 32 lines, the `Content-Length` line included: a frame.
        let body = request(1, "ping").to_string();
        let mut input = header_lines(body.len(), 31);
        input.extend_from_slice(b"\r\n");
        input.extend(body.into_bytes());
        session.send(&input).await;
        assert_eq!(session.expect().await, pong(1));
        // 33 lines: refused once; the blank line and the body that follow are read as lines.
        let body = request(2, "ping").to_string();
        let mut input = header_lines(body.len(), 32);
        input.extend_from_slice(b"\r\n");
        input.extend(json_line(&request(2, "ping")));
        session.send(&input).await;
        assert_eq!(session.expect().await, refusal(-32700, "Parse error: frame header block too large"));
        assert_eq!(session.expect().await, pong(2));
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test]
async fn a_header_block_is_bounded_at_8_kib() {
    bounded(async {
        let too_large = refusal(-32700, "Parse error: frame header block too large");
        let mut session = start();
        // 8,192 bytes of header lines, their line endings not counted: a frame.
        let body = request(1, "ping").to_string();
        let mut input = header_lines(body.len(), 0);
        let pad = 8192 - (input.len() - 2);
        let mut line = b"X-Pad: ".to_vec();
        line.resize(pad, b'p');
        input.extend_from_slice(&line);
        input.extend_from_slice(b"\r\n\r\n");
        input.extend(body.into_bytes());
        session.send(&input).await;
        assert_eq!(session.expect().await, pong(1));
        // One byte more: refused once, and what follows is read as lines.
        let body = request(2, "ping").to_string();
        let mut input = header_lines(body.len(), 0);
        line.push(b'p');
        input.extend_from_slice(&line);
        input.extend_from_slice(b"\r\n\r\n");
        input.extend(json_line(&request(2, "ping")));
        session.send(&input).await;
        assert_eq!(session.expect().await, too_large);
        assert_eq!(session.expect().await, pong(2));
        // A header line over the line cap: the same refusal, once, however long the line.
        let mut input = b"Content-Length: 2\r\nX-Pad: ".to_vec();
        input.resize(input.len() + MAX_LINE_BYTES, b'p');
        input.extend_from_slice(b"\r\n\r\n");
        input.extend(json_line(&request(3, "ping")));
        session.send(&input).await;
        assert_eq!(session.expect().await, too_large);
        assert_eq!(session.expect().await, pong(3));
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test]
async fn parse_error_has_null_id_and_no_data() {
    bounded(async {
        let mut session = start();
        session.send(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"\n").await;
        let response = session.expect().await;
        assert_eq!(response, refusal(-32700, "Parse error: body is not valid JSON"));
        assert!(error(&response).get("data").is_none());
        // A repeated key is refused with id null too, even though an id can be read.
        session.send(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"id\":7,\"method\":\"ping\"}\n").await;
        let response = session.expect().await;
        assert_eq!(response["id"], Value::Null);
        assert_eq!(error(&response)["code"], -32600);
        session.send(&json_line(&request(8, "ping"))).await;
        assert_eq!(session.expect().await, pong(8), "the loop goes on");
        session.close();
        session.finish().await.expect("a clean end");
    })
    .await;
}

#[tokio::test]
async fn non_object_is_invalid_request() {
    bounded(async {
        let mut session = start();
        let batch = json!([request(1, "ping")]);
        for (message, kind) in [(batch, "an array"), (json!("ping"), "a string"), (json!(42), "a number")] {
            session.send(&json_line(&message)).await;
            let expected = refusal(-32600, &format!("Expected a JSON object, got {kind}"));
            assert_eq!(session.expect().await, expected);
        }
        session.ends_clean().await;
    })
    .await;
}
