//! D-27 framing: the line cap, blank lines, legacy `Content-Length` frames, and unreadable messages.

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
        session.close();
        assert_eq!(session.rest().await, Vec::<Value>::new());
        session.finish().await.expect("a clean end");
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
        session.close();
        assert_eq!(session.rest().await, Vec::<Value>::new());
        session.finish().await.expect("a clean end");
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
        session.close();
        assert_eq!(session.rest().await, Vec::<Value>::new());
        session.finish().await.expect("a clean end");
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

        // A header line over the cap also refuses (and drains) the whole frame.
        let mut input = b"Content-Length: 2\r\nX-Pad: ".to_vec();
        input.resize(input.len() + MAX_LINE_BYTES, b'p');
        input.extend_from_slice(b"\r\n\r\n{}");
        input.extend(json_line(&request(3, "ping")));
        session.send(&input).await;
        assert_eq!(session.expect().await, refused);
        assert_eq!(session.expect().await, pong(3));
        session.close();
        assert_eq!(session.rest().await, Vec::<Value>::new());
        session.finish().await.expect("a clean end");
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
async fn eof_mid_frame_ends_the_loop() {
    bounded(async {
        let mut session = start();
        session.send(&json_line(&request(1, "ping"))).await;
        session.send(b"Content-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,").await;
        session.close();
        assert_eq!(session.rest().await, vec![pong(1)], "the partial frame is dropped unanswered");
        session.finish().await.expect("end of input is a clean end");
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
        session.close();
        assert_eq!(session.rest().await, Vec::<Value>::new());
        session.finish().await.expect("a clean end");
    })
    .await;
}
