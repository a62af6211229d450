//! A rolling restart against the real example binaries: `SIGTERM` while a call is in flight, and the
//! process answers what it read, then exits 0 — over stdio and over HTTP (`mcp_kernel::shutdown_signal`
//! wired as each example wires it).
//!
//! The `weather` binary is started with `WEATHER_LATENCY_MS`, so that its one tool takes a while and
//! the signal lands while the call runs. The binaries are the ones `cargo build --examples` built
//! (`support::example` refuses a stale one). Every wait is bounded; servers bind 127.0.0.1 only, and
//! every child is killed when its test ends, failed or not.
#![cfg(all(target_os = "linux", feature = "stdio", feature = "http", feature = "connectome"))]

mod support;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use serde_json::{Value, json};

use support::{Collected, Killed};

/// How long the weather tool takes to answer in these tests: long enough that `SIGTERM` lands while it
/// runs, short enough that the drain ends well within [`EXIT`].
const LATENCY_MS: &str = "2000";
/// The bound of one answer.
const EXCHANGE: Duration = Duration::from_secs(10);
/// How soon the binary must exit once it should.
const EXIT: Duration = Duration::from_secs(15);
/// How long an HTTP server may take to accept connections.
const STARTUP: Duration = Duration::from_secs(20);
/// How many ports are tried when another process takes the one picked before the server binds it.
const BIND_ATTEMPTS: usize = 5;

/// A 2026-07-28 request.
fn request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The slow call: `get_weather` for Oslo.
fn slow_call(id: u64) -> Value {
    request(id, "tools/call", json!({"name": "get_weather", "arguments": {"place": "Oslo"}}))
}

/// Sends `SIGTERM` to `child`, as an orchestrator does.
fn terminate(child: &Child) {
    kill_process(Pid::from_child(child), Signal::TERM).expect("SIGTERM sent");
}

/// A binary serving stdio, its stdout read line by line on a thread of its own.
struct StdioChild {
    child: Killed,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    stderr: Collected,
}

impl StdioChild {
    fn start(binary: PathBuf, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(binary);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).env("NO_COLOR", "1");
        command.envs(env.iter().copied());
        let mut child = Killed::new(command.spawn().expect("spawn the example"));
        let stdin = child.child().stdin.take().expect("stdin is piped");
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

    /// Writes every message as one line each, in one write.
    fn send(&mut self, messages: &[Value]) {
        let bytes: Vec<u8> = messages.iter().flat_map(|m| format!("{m}\n").into_bytes()).collect();
        self.stdin.write_all(&bytes).and_then(|()| self.stdin.flush()).expect("write the requests");
    }

    /// The next answer, within [`EXCHANGE`].
    fn answer(&self) -> Value {
        let line = self.lines.recv_timeout(EXCHANGE).unwrap_or_else(|_| {
            panic!("no answer in time; stderr:\n{}", self.stderr.text());
        });
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("an answer line is JSON ({e}): {line}"))
    }

    /// Waits for the exit, checks that it is 0, and that stdout then holds nothing more.
    fn exits_0(mut self) {
        let status = self.child.wait_for(EXIT);
        let stderr = self.stderr.until_end(EXIT);
        let status =
            status.unwrap_or_else(|| panic!("still running {EXIT:?} after SIGTERM; stderr:\n{stderr}"));
        assert!(status.success(), "exited {status} at SIGTERM (0 is a drained exit); stderr:\n{stderr}");
        let extra: Vec<String> = self.lines.try_iter().collect();
        assert!(extra.is_empty(), "nothing after the answers: {extra:?}");
        assert!(!stderr.contains("ERROR"), "stderr reports an error:\n{stderr}");
        // stdin stayed open all along: the exit came from the signal, not from end of input.
        drop(self.stdin);
    }
}

#[test]
fn over_stdio_sigterm_answers_every_request_read_then_exits_0() {
    let mut weather = StdioChild::start(support::example("weather"), &[("WEATHER_LATENCY_MS", LATENCY_MS)]);
    weather.send(&[slow_call(1), request(2, "ping", json!({})), request(3, "tools/list", json!({}))]);
    // The two quick requests are answered while the slow call runs: all three lines were read.
    let quick: BTreeSet<u64> =
        [weather.answer(), weather.answer()].iter().filter_map(|a| a["id"].as_u64()).collect();
    assert_eq!(quick, BTreeSet::from([2, 3]), "the quick requests first");
    assert!(weather.lines.try_recv().is_err(), "the slow call is still running when SIGTERM is sent");

    terminate(weather.child.child());
    let slow = weather.answer();
    assert_eq!(slow["id"], 1, "{slow}");
    assert_eq!(slow["result"]["structuredContent"]["temperature_c"], 12, "answered whole: {slow}");
    weather.exits_0();
}

#[test]
fn notes_over_stdio_exits_0_at_sigterm() {
    let mut notes = StdioChild::start(support::example("notes"), &[]);
    let search = request(1, "tools/call", json!({"name": "search_notes", "arguments": {"query": ""}}));
    notes.send(&[search]);
    assert_eq!(notes.answer()["id"], 1);
    terminate(notes.child.child());
    notes.exits_0();
}

/// A port that was free a moment ago on 127.0.0.1.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("the bound address").port()
}

/// `binary --http 127.0.0.1:PORT` with `env`, once it accepts connections; another port is tried when
/// the one picked was taken meanwhile.
fn start_http(binary: PathBuf, env: &[(&str, &str)]) -> (Killed, Collected, SocketAddr) {
    for _ in 0..BIND_ATTEMPTS {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut command = Command::new(&binary);
        command.arg("--http").arg(addr.to_string()).env("NO_COLOR", "1").envs(env.iter().copied());
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = Killed::new(command.spawn().expect("spawn the example over HTTP"));
        let stderr = Collected::start(child.child().stderr.take().expect("stderr is piped"));
        // The server's own line, so that another process accepting on the port is not taken for it.
        let serving = format!("serving http://{addr}");
        let deadline = Instant::now() + STARTUP;
        loop {
            if let Some(status) = child.exited() {
                let stderr = stderr.until_end(EXIT);
                if stderr.contains("Address already in use") || stderr.contains("AddrInUse") {
                    break;
                }
                panic!("exited {status} before serving; stderr:\n{stderr}");
            }
            if stderr.text().contains(&serving)
                && TcpStream::connect_timeout(&addr, Duration::from_millis(50)).is_ok()
            {
                return (child, stderr, addr);
            }
            assert!(Instant::now() < deadline, "nothing accepted within {STARTUP:?}:\n{}", stderr.text());
            thread::sleep(Duration::from_millis(50));
        }
    }
    panic!("no free port could be bound in {BIND_ATTEMPTS} attempts");
}

/// `message` as a raw HTTP/1.1 POST to `/mcp`, kept alive (the server decides when to close).
fn post(addr: SocketAddr, message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("JSON");
    let name = message["params"]["name"].as_str().map(|name| format!("mcp-name: {name}\r\n"));
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: {}\r\n{}content-length: {}\r\n\r\n",
        message["method"].as_str().expect("a method"),
        name.unwrap_or_default(),
        body.len()
    );
    let mut request = head.into_bytes();
    request.extend_from_slice(&body);
    request
}

/// Everything the server sends on `stream` until it closes it (at most 1 MiB, each read bounded).
fn until_closed(stream: &mut TcpStream) -> String {
    stream.set_read_timeout(Some(EXCHANGE)).expect("a read timeout");
    let mut all = Vec::new();
    let mut chunk = [0u8; 4096];
    while all.len() < 1 << 20 {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => all.extend_from_slice(&chunk[..n]),
            Err(error) => panic!("the server did not close the connection: {error}"),
        }
    }
    String::from_utf8(all).expect("a UTF-8 response")
}

#[test]
fn over_http_sigterm_answers_the_call_in_flight_with_connection_close_then_exits_0() {
    let (mut weather, stderr, addr) =
        start_http(support::example("weather"), &[("WEATHER_LATENCY_MS", LATENCY_MS)]);
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.write_all(&post(addr, &slow_call(1))).expect("write the request");
    // Let the server read it: the call then runs for two seconds.
    thread::sleep(Duration::from_millis(300));
    terminate(weather.child());

    let response = until_closed(&mut stream);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or_else(|| panic!("a response: {response:?}"));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.to_ascii_lowercase().contains("\r\nconnection: close"), "the last response says so: {head}");
    let answer: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("a JSON body ({e}): {body}"));
    assert_eq!(answer["result"]["structuredContent"]["temperature_c"], 12, "{answer}");
    let status = weather.wait_for(EXIT);
    let stderr = stderr.until_end(EXIT);
    let status = status.unwrap_or_else(|| panic!("still running after SIGTERM; stderr:\n{stderr}"));
    assert!(status.success(), "exited {status}; stderr:\n{stderr}");
    assert!(TcpStream::connect(addr).is_err(), "nothing listens once it has exited");
}

#[test]
fn notes_over_http_exits_0_at_sigterm() {
    let (mut notes, stderr, _addr) =
        start_http(support::example("notes"), &[("NOTES_TOKENS", "alice=a-secret")]);
    terminate(notes.child());
    let status = notes.wait_for(EXIT);
    let stderr = stderr.until_end(EXIT);
    let status = status.unwrap_or_else(|| panic!("still running after SIGTERM; stderr:\n{stderr}"));
    assert!(status.success(), "exited {status}; stderr:\n{stderr}");
}
