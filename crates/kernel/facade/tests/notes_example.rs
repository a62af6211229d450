//! The real `notes` example binary, end to end: over stdio (every call is the caller `local`), over
//! HTTP at `/mcp` (a bearer token from `NOTES_TOKENS` names the caller; 2025-11-25 clients are served
//! too), and refusing to serve HTTP without a well-formed `NOTES_TOKENS`.
//!
//! The binary is `target/<profile>/examples/notes`, which `cargo build --examples` (and `cargo xtask
//! ci`, before the tests) builds; every test fails when a source it is built from is newer than it,
//! rather than test a stale one. Every wait is bounded; the server only ever binds 127.0.0.1, and is
//! killed when its test ends, failed or not.
#![cfg(all(feature = "stdio", feature = "http", feature = "schemars"))]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use support::{Collected, Killed};

/// The tokens every HTTP server of these tests is started with.
const TOKENS: &str = "alice=a-secret,bob=b-secret";
/// alice's `Authorization`.
const ALICE: &str = "Bearer a-secret";
/// bob's `Authorization`.
const BOB: &str = "Bearer b-secret";

/// The authorization server every HTTP server of these tests names (`NOTES_AUTH_SERVER`), not the
/// default, so that the document is seen to come from the environment.
const AUTH_SERVER: &str = "http://127.0.0.1:9999";

/// The revision of the modern requests.
const MODERN: &str = "2026-07-28";
/// The legacy revision.
const LEGACY: &str = "2025-11-25";

/// How long the HTTP server may take to accept connections.
const STARTUP: Duration = Duration::from_secs(20);
/// The pause between two readiness polls.
const POLL: Duration = Duration::from_millis(50);
/// How many ports are tried when another process takes the one picked before the server binds it.
const BIND_ATTEMPTS: usize = 5;
/// The bound of one exchange (a stdio answer, an HTTP response).
const EXCHANGE: Duration = Duration::from_secs(10);
/// How soon the binary must exit once it should.
const EXIT: Duration = Duration::from_secs(10);
/// How soon a refusal of a request whose body never comes must arrive: well under the server's 15 s
/// read timeout, so that it cannot be the timeout answering.
const PRE_BODY: Duration = Duration::from_secs(3);

/// The `notes` binary.
fn notes() -> PathBuf {
    support::example("notes")
}

/// `params._meta` of a 2026-07-28 request.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A 2026-07-28 request: `params` (an object) gets the modern `_meta`.
fn modern(id: impl Into<Value>, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A bare, 2025-11-25-shaped request: no `_meta`.
fn legacy(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A `tools/call` of `name` with `arguments`.
fn call(id: impl Into<Value>, name: &str, arguments: Value) -> Value {
    modern(id, "tools/call", json!({"name": name, "arguments": arguments}))
}

/// A `resources/read` of `uri`.
fn read(id: impl Into<Value>, uri: &str) -> Value {
    modern(id, "resources/read", json!({"uri": uri}))
}

/// The result of a successful answer to request `id`.
fn result_of(answer: &Value, id: &Value) -> Value {
    assert_eq!(&answer["id"], id, "the answer to {id}: {answer}");
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert!(answer.get("result").is_some(), "a result for {id}: {answer}");
    answer["result"].clone()
}

/// The structured content of a successful tool call's result.
fn structured(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "a successful call: {result}");
    result["structuredContent"].clone()
}

/// The text of a `resources/read` result's one content, checking the uri it answers.
fn text(result: &Value, uri: &str) -> String {
    let contents = result["contents"].as_array().unwrap_or_else(|| panic!("contents: {result}"));
    assert_eq!(contents.len(), 1, "one content: {result}");
    assert_eq!(contents[0]["uri"], uri, "{result}");
    contents[0]["text"].as_str().unwrap_or_else(|| panic!("a text content: {result}")).to_owned()
}

/// The titles of the notes a `search_notes` result holds.
fn note_titles(result: &Value) -> Vec<String> {
    let notes = structured(result)["notes"].clone();
    let notes = notes.as_array().unwrap_or_else(|| panic!("notes: {result}"));
    notes.iter().map(|note| note["title"].as_str().expect("a title").to_owned()).collect()
}

/// The ids of the notes a `search_notes` result holds.
fn note_ids(result: &Value) -> Vec<u64> {
    let notes = structured(result)["notes"].clone();
    let notes = notes.as_array().unwrap_or_else(|| panic!("notes: {result}"));
    notes.iter().map(|note| note["id"].as_u64().expect("a numeric id")).collect()
}

// ---------------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------------

/// The binary serving stdio: requests go in one line at a time and each answer is awaited before the
/// next request is sent (the transport serves messages concurrently, so a pipelined `search_notes`
/// could run before the `add_note` written ahead of it).
struct StdioSession {
    child: Killed,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: Collected,
}

impl StdioSession {
    fn start() -> Self {
        let mut command = Command::new(notes());
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).env("NO_COLOR", "1");
        let mut child = Killed::new(command.spawn().expect("spawn notes"));
        let stdin = child.child().stdin.take();
        let stdout = child.child().stdout.take().expect("stdout is piped");
        let stderr = Collected::start(child.child().stderr.take().expect("stderr is piped"));
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, stdin, lines, stderr }
    }

    /// Writes `message` as one line and returns the answer (the next line), within [`EXCHANGE`].
    fn exchange(&mut self, message: &Value) -> Value {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        let mut line = serde_json::to_vec(message).expect("JSON");
        line.push(b'\n');
        stdin.write_all(&line).and_then(|()| stdin.flush()).expect("write a request line");
        let answer = self
            .lines
            .recv_timeout(EXCHANGE)
            .unwrap_or_else(|_| panic!("no answer to {message} in time; stderr:\n{}", self.stderr.text()));
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("an answer line is JSON ({e}): {answer}"))
    }
}

#[test]
fn stdio_serves_every_call_as_the_local_caller_and_exits_0_at_end_of_input() {
    let mut session = StdioSession::start();
    let add = |id: u64, title: &str, body: &str| {
        call(id, "add_note", json!({"title": title, "body": body, "tags": ["lang"]}))
    };

    let first = result_of(&session.exchange(&add(1, "Rust", "ownership")), &json!(1));
    assert_eq!(structured(&first), json!({"id": 1}));
    let second = result_of(&session.exchange(&add(2, "Go", "goroutines")), &json!(2));
    assert_eq!(structured(&second), json!({"id": 2}));

    let found = result_of(&session.exchange(&call(3, "search_notes", json!({"query": "RUST"}))), &json!(3));
    assert_eq!(
        structured(&found),
        json!({"notes": [{"id": 1, "title": "Rust", "body": "ownership", "tags": ["lang"]}]})
    );

    let index = result_of(&session.exchange(&read(4, "notes://index")), &json!(4));
    assert_eq!(text(&index, "notes://index"), "1\tRust\n2\tGo\n");

    // A note is a resource of its owner's, under the uri it is listed under.
    let note = result_of(&session.exchange(&read(5, "notes://note/2")), &json!(5));
    assert_eq!(text(&note, "notes://note/2"), "# Go\n\ngoroutines\n\ntags: lang\n");

    let deleted = result_of(&session.exchange(&call(6, "delete_note", json!({"id": 1}))), &json!(6));
    assert_eq!(structured(&deleted), json!({"id": 1}));

    // A bare request, shaped as a 2025-11-25 client sends it (no `_meta`), in the same session.
    let bare = legacy("bare-7", "tools/call", json!({"name": "search_notes", "arguments": {"query": ""}}));
    let found = result_of(&session.exchange(&bare), &json!("bare-7"));
    assert_eq!(note_ids(&found), [2], "note 1 is deleted: {found}");
    assert!(found.get("resultType").is_none(), "a 2025-11-25 result has no resultType: {found}");

    // End of input ends the session.
    drop(session.stdin.take());
    let status = session.child.wait_for(EXIT);
    let stderr = session.stderr.until_end(EXIT);
    let status = status.unwrap_or_else(|| panic!("notes did not exit at end of input; stderr:\n{stderr}"));
    assert!(status.success(), "notes exited {status}; stderr:\n{stderr}");
    let extra: Vec<String> = session.lines.try_iter().collect();
    assert!(extra.is_empty(), "nothing but the answers on stdout: {extra:?}");
    assert!(!stderr.contains("ERROR"), "stderr reports an error:\n{stderr}");
}

// ---------------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------------

/// The binary serving HTTP on 127.0.0.1 with [`TOKENS`], killed when dropped.
struct HttpServer {
    child: Killed,
    addr: SocketAddr,
    stderr: Collected,
}

/// A port that was free a moment ago on 127.0.0.1.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("the bound address").port()
}

impl HttpServer {
    /// Starts `notes --http 127.0.0.1:PORT` on a port picked free, and waits until it accepts; another
    /// port is tried (at most [`BIND_ATTEMPTS`] in all) when the one picked was taken meanwhile.
    fn start() -> Self {
        let notes = notes();
        for _ in 0..BIND_ATTEMPTS {
            let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
            let mut command = Command::new(&notes);
            command
                .arg("--http")
                .arg(addr.to_string())
                .env("NOTES_TOKENS", TOKENS)
                .env("NOTES_AUTH_SERVER", AUTH_SERVER)
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            let mut child = Killed::new(command.spawn().expect("spawn notes --http"));
            let stderr = Collected::start(child.child().stderr.take().expect("stderr is piped"));
            // The server's own line, so that a connection another process accepts on the port (the
            // race this retries) is not taken for this server being up.
            let serving = format!("serving http://{addr}/mcp");
            let deadline = Instant::now() + STARTUP;
            loop {
                if let Some(status) = child.exited() {
                    let stderr = stderr.until_end(EXIT);
                    if stderr.contains("Address already in use") || stderr.contains("AddrInUse") {
                        break;
                    }
                    panic!("notes --http {addr} exited {status} before serving; stderr:\n{stderr}");
                }
                if stderr.text().contains(&serving) && TcpStream::connect_timeout(&addr, POLL).is_ok() {
                    return Self { child, addr, stderr };
                }
                assert!(
                    Instant::now() < deadline,
                    "notes --http {addr} accepted nothing within {STARTUP:?}; stderr:\n{}",
                    stderr.text()
                );
                thread::sleep(POLL);
            }
        }
        panic!("no free port could be bound in {BIND_ATTEMPTS} attempts");
    }

    /// POSTs `message` with the headers a 2026-07-28 client sends for it (`MCP-Protocol-Version`,
    /// `Mcp-Method`, `Mcp-Name` where the method has one) and `extra`.
    fn post(&self, message: &Value, extra: &[(&str, &str)]) -> Reply {
        let method = message["method"].as_str().expect("a method");
        let mut fields = vec![("mcp-protocol-version", MODERN.to_owned()), ("mcp-method", method.to_owned())];
        let name = match method {
            "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
            "resources/read" => message["params"]["uri"].as_str(),
            _ => None,
        };
        fields.extend(name.map(|name| ("mcp-name", name.to_owned())));
        fields.extend(extra.iter().map(|(name, value)| (*name, (*value).to_owned())));
        self.post_raw(&fields, &serde_json::to_vec(message).expect("JSON"))
    }

    /// POSTs `body` with `fields` besides `host`, `content-type`, `accept`, `content-length` and
    /// `connection: close`.
    fn post_raw(&self, fields: &[(&str, String)], body: &[u8]) -> Reply {
        let mut request = self.head(body.len(), fields);
        request.extend_from_slice(body);
        let mut stream = self.connect();
        stream.write_all(&request).expect("write the request");
        read_reply(&mut stream)
    }

    /// A request head declaring a body of `length` bytes.
    fn head(&self, length: usize, fields: &[(&str, String)]) -> Vec<u8> {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\naccept: application/json, \
             text/event-stream\r\ncontent-length: {length}\r\nconnection: close\r\n",
            self.addr
        );
        for (name, value) in fields {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        head.into_bytes()
    }

    /// A `GET` of `path` with no credentials, closing the connection after it.
    fn get(&self, path: &str) -> Reply {
        let request =
            format!("GET {path} HTTP/1.1\r\nhost: {}\r\naccept: */*\r\nconnection: close\r\n\r\n", self.addr);
        let mut stream = self.connect();
        stream.write_all(request.as_bytes()).expect("write the request");
        read_reply(&mut stream)
    }

    /// A connection whose reads and writes are bounded by [`EXCHANGE`].
    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect_timeout(&self.addr, EXCHANGE).expect("connect");
        stream.set_read_timeout(Some(EXCHANGE)).expect("a read timeout");
        stream.set_write_timeout(Some(EXCHANGE)).expect("a write timeout");
        stream
    }

    /// A `tools/call` of `name` as `who` (an `Authorization` value), answered 200: its result.
    fn call_as(&self, who: &str, id: u64, name: &str, arguments: Value) -> Value {
        let reply = self.post(&call(id, name, arguments), &[("authorization", who)]);
        reply.result(&json!(id))
    }

    /// Adds a note as `who`: its id.
    fn add_as(&self, who: &str, id: u64, title: &str) -> u64 {
        let result =
            self.call_as(who, id, "add_note", json!({"title": title, "body": format!("{title} text")}));
        structured(&result)["id"].as_u64().unwrap_or_else(|| panic!("an id: {result}"))
    }

    /// alice adds her note 1, then bob his note 1 (ids are numbered per caller).
    fn alice_and_bob_add_a_note_each(&self) {
        assert_eq!(self.add_as(ALICE, 1, "alice's"), 1);
        assert_eq!(self.add_as(BOB, 2, "bob's"), 1);
    }

    /// Asserts that the server is still running, then kills it.
    fn stop(mut self) {
        if let Some(status) = self.child.exited() {
            panic!("notes --http exited {status} during the test; stderr:\n{}", self.stderr.text());
        }
        self.child.kill();
    }
}

/// One HTTP response.
#[derive(Debug)]
struct Reply {
    status: u16,
    /// The header fields, names lowercased, in order.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("a JSON body ({e}): {self:?}"))
    }

    /// The result of a 200 JSON answer to request `id`.
    fn result(&self, id: &Value) -> Value {
        assert_eq!(self.status, 200, "{self:?} {}", String::from_utf8_lossy(&self.body));
        assert_eq!(self.header("content-type"), Some("application/json"), "{self:?}");
        result_of(&self.json(), id)
    }

    /// Asserts a 401 refusal as JSON-RPC that closes the connection, whose challenge names the
    /// metadata document of `addr`'s endpoint, the scope `notes`, and `error` (if any).
    fn assert_unauthorized(&self, addr: &str, error: Option<&str>) {
        assert_eq!(self.status, 401, "{self:?} {}", String::from_utf8_lossy(&self.body));
        assert_eq!(self.header("connection"), Some("close"), "{self:?}");
        let metadata =
            format!("resource_metadata=\"http://{addr}/.well-known/oauth-protected-resource/mcp\"");
        let error = error.map(|e| format!(", error=\"{e}\"")).unwrap_or_default();
        let expected = format!("Bearer {metadata}{error}, scope=\"notes\"");
        assert_eq!(self.header("www-authenticate"), Some(expected.as_str()), "{self:?}");
        let body = self.json();
        assert_eq!(body["error"]["code"], -32600, "{body}");
        assert!(body.get("result").is_none(), "{body}");
    }
}

/// Reads one HTTP/1.1 response off `stream` (its body per `content-length`, or chunked), bounded by
/// the stream's read timeout and a 1 MiB cap.
fn read_reply(stream: &mut TcpStream) -> Reply {
    const CAP: usize = 1 << 20;
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut fill = |buffer: &mut Vec<u8>| {
        assert!(buffer.len() < CAP, "a response under 1 MiB");
        let n = stream.read(&mut chunk).expect("read the response in time");
        assert!(n > 0, "the connection closed mid-response: {:?}", String::from_utf8_lossy(buffer));
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        fill(&mut buffer);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("a status line");
    assert!(status_line.starts_with("HTTP/1.1 "), "an HTTP/1.1 status line: {status_line}");
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status code");
    let headers: Vec<(String, String)> = lines
        .map(|line| line.split_once(':').unwrap_or_else(|| panic!("a header field: {line:?}")))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut rest = buffer.split_off(head_end + 4);
    let field = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let body = if field("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(end) = rest.windows(2).position(|w| w == b"\r\n") {
                    break end;
                }
                fill(&mut rest);
            };
            let size_line = String::from_utf8_lossy(&rest[..line_end]).into_owned();
            let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                .unwrap_or_else(|_| panic!("a chunk size: {size_line:?}"));
            while rest.len() < line_end + 2 + size + 2 {
                fill(&mut rest);
            }
            body.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
            rest.drain(..line_end + 2 + size + 2);
            if size == 0 {
                break body;
            }
        }
    } else {
        let length: usize = field("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        while rest.len() < length {
            fill(&mut rest);
        }
        rest.truncate(length);
        rest
    };
    Reply { status, headers, body }
}

#[test]
fn http_other_paths_are_404_with_no_content_once_the_host_check_has_passed() {
    let server = HttpServer::start();
    for path in ["/", "/mcp/", "/MCP", "/other", "/.well-known/oauth-protected-resource"] {
        let reply = server.get(path);
        assert_eq!(reply.status, 404, "{path}: {reply:?}");
        assert!(reply.body.is_empty(), "{path}: {reply:?}");
    }
    // A call a valid token would have answered at `/mcp` is not served at another path.
    let message = serde_json::to_vec(&call(1, "search_notes", json!({"query": "x"}))).expect("JSON");
    let head = String::from_utf8(server.head(message.len(), &[("authorization", ALICE.to_owned())]))
        .expect("an ASCII head")
        .replacen("POST /mcp ", "POST / ", 1);
    let mut stream = server.connect();
    stream.write_all(head.as_bytes()).expect("write the head");
    stream.write_all(&message).expect("write the body");
    let reply = read_reply(&mut stream);
    assert_eq!(reply.status, 404, "{reply:?}");
    // The name check comes first, at every path: a rebound name is 421 here as at `/mcp`.
    let mut stream = server.connect();
    let rebound = format!(
        "GET /other HTTP/1.1\r\nhost: evil.example:{}\r\nconnection: close\r\n\r\n",
        server.addr.port()
    );
    stream.write_all(rebound.as_bytes()).expect("write the request");
    let reply = read_reply(&mut stream);
    assert_eq!(reply.status, 421, "{reply:?}");
    server.stop();
}

#[test]
fn http_search_and_index_show_only_the_callers_own_notes() {
    let server = HttpServer::start();
    server.alice_and_bob_add_a_note_each();

    let found = server.call_as(ALICE, 3, "search_notes", json!({"query": "text"}));
    assert_eq!(note_titles(&found), ["alice's"], "alice's only: {found}");
    let found = server.call_as(BOB, 4, "search_notes", json!({"query": "text"}));
    assert_eq!(note_titles(&found), ["bob's"], "bob's only: {found}");

    let index = server.post(&read(5, "notes://index"), &[("authorization", ALICE)]).result(&json!(5));
    assert_eq!(text(&index, "notes://index"), "1\talice's\n");
    server.stop();
}

#[test]
fn http_the_bearer_scheme_name_is_matched_case_insensitively() {
    let server = HttpServer::start();
    assert_eq!(server.add_as(ALICE, 1, "alice's"), 1);
    let lower = ALICE.replacen("Bearer", "bearer", 1);
    assert_ne!(lower, ALICE);
    let found = server.call_as(&lower, 2, "search_notes", json!({"query": "text"}));
    assert_eq!(note_ids(&found), [1], "the same caller: {found}");
    server.stop();
}

/// bob's requests that name note `id` in `era` ([`MODERN`] or [`LEGACY`]), each with the JSON-RPC id
/// 7 and the headers that era's client sends: `delete_note`, and a read of `notes://note/{id}`.
fn bob_naming(server: &HttpServer, era: &str, id: u64) -> Vec<Reply> {
    let delete = json!({"name": "delete_note", "arguments": {"id": id}});
    let read = json!({"uri": format!("notes://note/{id}")});
    [("tools/call", delete), ("resources/read", read)]
        .into_iter()
        .map(|(method, params)| {
            if era == MODERN {
                server.post(&modern(7, method, params), &[("authorization", BOB)])
            } else {
                let fields = [("mcp-protocol-version", LEGACY.to_owned()), ("authorization", BOB.to_owned())];
                server.post_raw(&fields, &serde_json::to_vec(&legacy(7, method, params)).expect("JSON"))
            }
        })
        .collect()
}

/// A reply to bob's naming note `id`, as bytes to compare: status, header fields but `date`, and body,
/// with the uri a read's not-found echoes spelled `notes://note/ID` (so that two ids compare).
fn as_sent(reply: &Reply, id: u64) -> (u16, Vec<(String, String)>, String) {
    let headers = reply.headers.iter().filter(|(name, _)| name != "date").cloned().collect();
    let body = String::from_utf8_lossy(&reply.body).replace(&format!("notes://note/{id}"), "notes://note/ID");
    (reply.status, headers, body)
}

#[test]
fn http_a_foreign_note_is_answered_exactly_as_a_missing_one() {
    for era in [MODERN, LEGACY] {
        let server = HttpServer::start();
        assert_eq!(server.add_as(BOB, 1, "bob's"), 1);
        // bob names note 3 before anyone has one: a missing note.
        let missing: Vec<_> = bob_naming(&server, era, 3).iter().map(|r| as_sent(r, 3)).collect();
        for n in 1..=3 {
            assert_eq!(server.add_as(ALICE, 1 + n, &format!("alice's {n}")), n);
        }
        // alice's note 3 now exists: bob's answers are the same, byte for byte.
        let replies = bob_naming(&server, era, 3);
        let foreign: Vec<_> = replies.iter().map(|r| as_sent(r, 3)).collect();
        assert_eq!(foreign, missing, "{era}");
        // And the same as for an id nobody ever used (but for the uri the read echoes).
        let never_used: Vec<_> = bob_naming(&server, era, 9).iter().map(|r| as_sent(r, 9)).collect();
        assert_eq!(foreign, never_used, "{era}");
        // Each is the miss: the tool's error, the read's not-found (the era's code).
        let deleted = replies[0].result(&json!(7));
        assert_eq!(deleted["content"], json!([{"type": "text", "text": "there is no such note"}]), "{era}");
        assert_eq!(deleted["isError"], true, "{era}");
        assert!(deleted.get("structuredContent").is_none(), "no structured content on error: {deleted}");
        let read = replies[1].json();
        let code = if era == MODERN { -32602 } else { -32002 };
        assert_eq!(read["error"]["code"], code, "{era}: {read}");
        assert_eq!(read["error"]["data"], json!({"uri": "notes://note/3"}), "not listed for bob: {read}");
        // bob's delete touched nothing of alice's.
        let found = server.call_as(ALICE, 9, "search_notes", json!({"query": ""}));
        assert_eq!(note_ids(&found), [1, 2, 3], "{era}: {found}");
        server.stop();
    }
}

#[test]
fn http_note_ids_reveal_nothing_about_other_callers_notes() {
    let mut firsts = Vec::new();
    for alice_adds in [0, 5] {
        let server = HttpServer::start();
        for n in 1..=alice_adds {
            server.add_as(ALICE, n, &format!("alice's {n}"));
        }
        firsts.push((server.add_as(BOB, 10, "bob's first"), server.add_as(BOB, 11, "bob's second")));
        server.stop();
    }
    assert_eq!(firsts[0], firsts[1], "bob's ids with no note of alice's, and after her 5");
    assert_eq!(firsts[0], (1, 2));
}

#[test]
fn http_a_caller_reads_her_own_note_under_its_uri() {
    let server = HttpServer::start();
    server.alice_and_bob_add_a_note_each();

    let uri = "notes://note/1";
    let note = server.post(&read(3, uri), &[("authorization", ALICE)]).result(&json!(3));
    assert_eq!(text(&note, uri), "# alice's\n\nalice's text\n\ntags: \n");

    // The same uri, read by bob, is his own note 1, never hers.
    let note = server.post(&read(4, uri), &[("authorization", BOB)]).result(&json!(4));
    assert_eq!(text(&note, uri), "# bob's\n\nbob's text\n\ntags: \n");
    server.stop();
}

/// Sends a `tools/call` head declaring `Content-Length: 100` and no body byte, with `authorization`
/// (when given), and returns the answer with the time it took.
fn refused_before_the_body(server: &HttpServer, authorization: Option<&str>) -> (Reply, Duration) {
    let mut fields = vec![
        ("mcp-protocol-version", MODERN.to_owned()),
        ("mcp-method", "tools/call".to_owned()),
        ("mcp-name", "search_notes".to_owned()),
    ];
    fields.extend(authorization.map(|value| ("authorization", value.to_owned())));
    let mut stream = server.connect();
    let started = Instant::now();
    stream.write_all(&server.head(100, &fields)).expect("write the head");
    let reply = read_reply(&mut stream);
    (reply, started.elapsed())
}

#[test]
fn http_a_request_without_a_bearer_token_is_refused_401_before_its_body_is_read() {
    let server = HttpServer::start();
    let (reply, took) = refused_before_the_body(&server, None);
    reply.assert_unauthorized(&server.addr.to_string(), None);
    assert!(took < PRE_BODY, "answered in {took:?}: the body was waited for");
    // Another scheme is no bearer credential either.
    let (reply, _) = refused_before_the_body(&server, Some("Basic YWxpY2U6YS1zZWNyZXQ="));
    reply.assert_unauthorized(&server.addr.to_string(), None);
    server.stop();
}

#[test]
fn http_an_unknown_bearer_token_is_refused_401_invalid_token_before_its_body_is_read() {
    let server = HttpServer::start();
    for unknown in ["Bearer c-secret", "Bearer a-secret-but-longer"] {
        let (reply, took) = refused_before_the_body(&server, Some(unknown));
        reply.assert_unauthorized(&server.addr.to_string(), Some("invalid_token"));
        assert!(took < PRE_BODY, "{unknown}: answered in {took:?}: the body was waited for");
    }
    server.stop();
}

#[test]
fn http_the_metadata_document_names_the_authorization_server_and_the_scope() {
    let server = HttpServer::start();
    let reply = server.get("/.well-known/oauth-protected-resource/mcp");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(
        reply.json(),
        json!({
            "resource": format!("http://{}/mcp", server.addr),
            "bearer_methods_supported": ["header"],
            "authorization_servers": [AUTH_SERVER],
            "scopes_supported": ["notes"]
        })
    );
    server.stop();
}

#[test]
fn http_a_2025_11_25_client_initializes_and_is_served_its_own_notes() {
    let server = HttpServer::start();
    server.alice_and_bob_add_a_note_each();

    // The opener: no version header, no `_meta`, no `Mcp-*` header.
    let initialize = legacy(
        1,
        "initialize",
        json!({
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "legacy-client", "version": "1.0.0"}
        }),
    );
    let fields = [("authorization", ALICE.to_owned())];
    let reply = server.post_raw(&fields, &serde_json::to_vec(&initialize).expect("JSON"));
    let result = reply.result(&json!(1));
    assert_eq!(result["protocolVersion"], LEGACY, "{result}");
    assert_eq!(result["serverInfo"]["name"], "notes", "{result}");
    assert!(reply.header("mcp-session-id").is_none(), "no session: {reply:?}");

    // Then a call carrying the negotiated version in its header, and nothing modern.
    let search = legacy(2, "tools/call", json!({"name": "search_notes", "arguments": {"query": ""}}));
    let fields = [("mcp-protocol-version", LEGACY.to_owned()), ("authorization", ALICE.to_owned())];
    let found = server.post_raw(&fields, &serde_json::to_vec(&search).expect("JSON")).result(&json!(2));
    assert_eq!(note_ids(&found), [1], "alice's only: {found}");
    assert!(found.get("resultType").is_none(), "a 2025-11-25 result: {found}");
    server.stop();
}

#[test]
fn http_a_foreign_origin_is_refused_403() {
    let server = HttpServer::start();
    let message = call(1, "search_notes", json!({"query": ""}));
    let reply = server.post(&message, &[("authorization", ALICE), ("origin", "http://evil.example")]);
    assert_eq!(reply.status, 403, "{reply:?}");
    assert_eq!(reply.header("connection"), Some("close"), "{reply:?}");
    assert!(reply.header("www-authenticate").is_none(), "no challenge: signing in would not help");
    server.stop();
}

#[test]
fn http_the_servers_own_localhost_origin_is_admitted() {
    let server = HttpServer::start();
    server.alice_and_bob_add_a_note_each();
    let origin = format!("http://localhost:{}", server.addr.port());
    let message = call(3, "search_notes", json!({"query": ""}));
    let found = server.post(&message, &[("authorization", ALICE), ("origin", &origin)]).result(&json!(3));
    assert_eq!(note_ids(&found), [1], "{found}");
    server.stop();
}

// ---------------------------------------------------------------------------------------------------
// NOTES_TOKENS
// ---------------------------------------------------------------------------------------------------

/// Runs `notes --http 127.0.0.1:0` with `NOTES_TOKENS` set to `tokens` (unset when `None`): its exit
/// must come within [`EXIT`], non-zero, with a reason naming `NOTES_TOKENS` on stderr.
fn assert_refuses_to_serve(tokens: Option<&str>) {
    let mut command = Command::new(notes());
    command
        .arg("--http")
        .arg("127.0.0.1:0")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match tokens {
        Some(tokens) => command.env("NOTES_TOKENS", tokens),
        None => command.env_remove("NOTES_TOKENS"),
    };
    let mut child = Killed::new(command.spawn().expect("spawn notes --http"));
    let stderr = Collected::start(child.child().stderr.take().expect("stderr is piped"));
    let status = child.wait_for(EXIT);
    let stderr = stderr.until_end(EXIT);
    let status =
        status.unwrap_or_else(|| panic!("NOTES_TOKENS={tokens:?}: notes is serving; stderr:\n{stderr}"));
    assert!(!status.success(), "NOTES_TOKENS={tokens:?}: notes exited {status}; stderr:\n{stderr}");
    assert!(stderr.contains("NOTES_TOKENS"), "NOTES_TOKENS={tokens:?}: no reason on stderr:\n{stderr}");
    assert!(!stderr.contains("serving http://"), "NOTES_TOKENS={tokens:?}: it bound first:\n{stderr}");
}

#[test]
fn http_without_notes_tokens_exits_non_zero_with_a_reason() {
    assert_refuses_to_serve(None);
    assert_refuses_to_serve(Some(""));
    assert_refuses_to_serve(Some(" , ,"));
}

#[test]
fn http_with_malformed_notes_tokens_exits_non_zero_with_a_reason() {
    for tokens in ["alice", "alice=", "=a-secret", "alice=a-secret,bob"] {
        assert_refuses_to_serve(Some(tokens));
    }
}
