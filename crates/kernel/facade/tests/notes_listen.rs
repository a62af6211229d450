//! The real `notes` example binary's change notifications over HTTP, end to end: a listen stream
//! (`subscriptions/listen`, an SSE response) is keyed by the caller its bearer token names, so adding
//! a note is told to that caller's streams and never to another caller's, and a listen naming another
//! caller's note has it left out of its acknowledgment.
//!
//! The binary is `target/<profile>/examples/notes` (see `support::example`); the server binds
//! 127.0.0.1 on a port picked free, every read is bounded, and the child is killed when its test ends.
#![cfg(all(feature = "stdio", feature = "http", feature = "schemars"))]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use support::{Collected, Killed};

/// alice's token is `a-secret`, bob's `b-secret`.
const TOKENS: &str = "alice=a-secret,bob=b-secret";
/// How long the server may take to accept connections.
const STARTUP: Duration = Duration::from_secs(20);
/// How many ports are tried when another process takes the one picked before the server binds it.
const BIND_ATTEMPTS: usize = 5;
/// The bound of one exchange, and of the wait for one notification.
const EXCHANGE: Duration = Duration::from_secs(10);
/// The most bytes read for one response or stream.
const CAP: usize = 1 << 20;

/// `notes --http` on 127.0.0.1, killed when dropped.
struct Notes {
    _child: Killed,
    addr: SocketAddr,
}

impl Notes {
    /// Starts it on a port picked free (another is tried when that one was taken meanwhile) and waits
    /// until it says it serves.
    fn start() -> Self {
        for _ in 0..BIND_ATTEMPTS {
            let port =
                TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let mut command = Command::new(support::example("notes"));
            command.arg("--http").arg(addr.to_string()).env("NOTES_TOKENS", TOKENS).env("NO_COLOR", "1");
            command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
            let mut child = Killed::new(command.spawn().expect("spawn notes --http"));
            let stderr = Collected::start(child.child().stderr.take().expect("stderr is piped"));
            let serving = format!("serving http://{addr}/mcp");
            let deadline = Instant::now() + STARTUP;
            loop {
                if child.exited().is_some() {
                    let stderr = stderr.until_end(EXCHANGE);
                    assert!(stderr.contains("Address already in use"), "notes exited; stderr:\n{stderr}");
                    break;
                }
                if stderr.text().contains(&serving) {
                    return Self { _child: child, addr };
                }
                assert!(Instant::now() < deadline, "notes did not serve in time; stderr:\n{}", stderr.text());
                thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("no free port could be bound in {BIND_ATTEMPTS} attempts");
    }

    /// Sends `message` as `token`'s with the headers a `2026-07-28` client sends, and returns the
    /// response, its head read, its body still to read.
    fn send(&self, token: &str, message: &Value) -> Response {
        let method = message["method"].as_str().expect("a method");
        let name =
            message["params"]["name"].as_str().map(|n| format!("mcp-name: {n}\r\n")).unwrap_or_default();
        let body = serde_json::to_vec(message).expect("JSON");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\naccept: application/json, \
             text/event-stream\r\nauthorization: Bearer {token}\r\nmcp-protocol-version: 2026-07-28\r\n\
             mcp-method: {method}\r\n{name}content-length: {}\r\nconnection: close\r\n\r\n",
            self.addr,
            body.len()
        );
        let mut stream = TcpStream::connect_timeout(&self.addr, EXCHANGE).expect("connect");
        stream.set_read_timeout(Some(EXCHANGE)).expect("a read timeout");
        stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&body)).expect("write the request");
        Response::read_head(stream)
    }

    /// Adds a note as `token`'s: its id.
    fn add(&self, token: &str, title: &str) -> u64 {
        let call = request(
            2,
            "tools/call",
            json!({"name": "add_note", "arguments": {"title": title, "body": "text"}}),
        );
        let answer = self.send(token, &call).json();
        answer["result"]["structuredContent"]["id"].as_u64().unwrap_or_else(|| panic!("an id: {answer}"))
    }

    /// Deletes `token`'s note `id`.
    fn delete(&self, token: &str, id: u64) {
        let call = request(3, "tools/call", json!({"name": "delete_note", "arguments": {"id": id}}));
        let answer = self.send(token, &call).json();
        assert_eq!(answer["result"]["structuredContent"], json!({"id": id}), "{answer}");
    }

    /// Opens a listen as `token`'s for resources list changes and updates of `uris`.
    fn listen(&self, token: &str, uris: &[&str]) -> Response {
        let filter = json!({"resourcesListChanged": true, "resourceSubscriptions": uris});
        let listen = self.send(token, &request(1, "subscriptions/listen", json!({"notifications": filter})));
        assert_eq!(listen.content_type.as_deref(), Some("text/event-stream"), "a stream");
        listen
    }
}

/// A `2026-07-28` request.
fn request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// One response: its head read, its body decoded (chunked or not) as it arrives.
struct Response {
    stream: TcpStream,
    content_type: Option<String>,
    chunked: bool,
    /// Bytes read and not yet decoded.
    raw: Vec<u8>,
    /// The body decoded so far, less what was taken.
    body: Vec<u8>,
    read: usize,
}

impl Response {
    fn read_head(stream: TcpStream) -> Self {
        let mut response =
            Self { stream, content_type: None, chunked: false, raw: Vec::new(), body: Vec::new(), read: 0 };
        let end = loop {
            if let Some(end) = response.raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break end;
            }
            assert!(response.fill(), "the connection closed before the head ended");
        };
        let head = String::from_utf8_lossy(&response.raw[..end]).to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200"), "{head}");
        let field = |name: &str| head.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_owned());
        response.content_type = field("content-type:");
        response.chunked = field("transfer-encoding:").as_deref() == Some("chunked");
        response.raw.drain(..end + 4);
        response
    }

    /// Reads more bytes (bounded by the read timeout and [`CAP`]); `false` at end of stream.
    fn fill(&mut self) -> bool {
        let mut chunk = [0; 4096];
        let n = self.stream.read(&mut chunk).expect("read in time");
        self.read += n;
        assert!(self.read < CAP, "under {CAP} bytes");
        self.raw.extend_from_slice(&chunk[..n]);
        n > 0
    }

    /// Moves the complete chunks of `raw` (all of it, unchunked) into `body`.
    fn decode(&mut self) {
        if !self.chunked {
            self.body.append(&mut self.raw);
            return;
        }
        while let Some(line) = self.raw.windows(2).position(|w| w == b"\r\n") {
            let size = String::from_utf8_lossy(&self.raw[..line]).into_owned();
            let size =
                usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16).expect("a chunk size");
            if self.raw.len() < line + 2 + size + 2 {
                break;
            }
            self.body.extend_from_slice(&self.raw[line + 2..line + 2 + size]);
            self.raw.drain(..line + 2 + size + 2);
        }
    }

    /// The whole body, as JSON.
    fn json(mut self) -> Value {
        while self.fill() {}
        self.decode();
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("JSON ({e}): {:?}", self.body))
    }

    /// The next SSE event's data, as JSON (comments skipped), within [`EXCHANGE`].
    fn next_event(&mut self) -> Value {
        let deadline = Instant::now() + EXCHANGE;
        loop {
            self.decode();
            if let Some(end) = self.body.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.body.drain(..end + 2).collect();
                let event = String::from_utf8(event).expect("UTF-8 events");
                let data: String =
                    event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect();
                if !data.is_empty() {
                    return serde_json::from_str(&data).unwrap_or_else(|e| panic!("JSON data ({e}): {data}"));
                }
                continue;
            }
            assert!(Instant::now() < deadline, "no event within {EXCHANGE:?}");
            assert!(self.fill(), "the stream ended");
        }
    }

    /// The next notification's method and uri, if any.
    fn next_notification(&mut self) -> (String, Option<String>) {
        let event = self.next_event();
        let method = event["method"].as_str().unwrap_or_else(|| panic!("a notification: {event}")).to_owned();
        (method, event["params"]["uri"].as_str().map(str::to_owned))
    }
}

fn index_updated() -> (String, Option<String>) {
    ("notifications/resources/updated".to_owned(), Some("notes://index".to_owned()))
}

fn note_1_updated() -> (String, Option<String>) {
    ("notifications/resources/updated".to_owned(), Some("notes://note/1".to_owned()))
}

fn list_changed() -> (String, Option<String>) {
    ("notifications/resources/list_changed".to_owned(), None)
}

#[test]
fn http_a_listen_hears_its_own_callers_changes_and_no_one_elses() {
    let notes = Notes::start();
    // Each has a note 1 (ids are per caller), and listens to the index and to it.
    assert_eq!(notes.add("a-secret", "hers"), 1);
    assert_eq!(notes.add("b-secret", "his"), 1);
    let asked = ["notes://index", "notes://note/1"];
    let (mut hers, mut his) = (notes.listen("a-secret", &asked), notes.listen("b-secret", &asked));
    for listen in [&mut hers, &mut his] {
        let ack = listen.next_event();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
        assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"], json!(asked), "{ack}");
    }
    // Streams deliver in order, and an add (the index, the list) is told apart from a delete of note 1
    // (the index, note 1, the list) by its second notification: so each caller's next change shows
    // that nothing of the other's came before it.
    assert_eq!(notes.add("a-secret", "hers again"), 2);
    assert_eq!(hers.next_notification(), index_updated());
    assert_eq!(hers.next_notification(), list_changed());
    notes.delete("b-secret", 1);
    assert_eq!(his.next_notification(), index_updated());
    assert_eq!(his.next_notification(), note_1_updated(), "not alice's add before it");
    assert_eq!(his.next_notification(), list_changed());
    assert_eq!(notes.add("a-secret", "hers once more"), 3);
    assert_eq!(hers.next_notification(), index_updated());
    assert_eq!(hers.next_notification(), list_changed(), "not bob's delete before it");
}

#[test]
fn http_a_listen_naming_another_callers_note_has_it_left_out_of_the_acknowledgment() {
    let notes = Notes::start();
    notes.add("a-secret", "hers");
    for n in 1..=2 {
        notes.add("b-secret", &format!("his {n}"));
    }
    // bob's note 2 is no note of alice's: left out exactly as note 9, which nobody has.
    let acks: Vec<Value> = ["notes://note/2", "notes://note/9"]
        .iter()
        .map(|uri| notes.listen("a-secret", &["notes://index", uri, "notes://note/1"]).next_event())
        .collect();
    assert_eq!(acks[0], acks[1]);
    let honoured = &acks[0]["params"]["notifications"]["resourceSubscriptions"];
    assert_eq!(honoured, &json!(["notes://index", "notes://note/1"]), "{}", acks[0]);
}
