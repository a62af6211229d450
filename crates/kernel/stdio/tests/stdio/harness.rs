//! A stdio session over in-memory pipes, and servers whose tools the tests control.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_stdio::{StdioOptions, serve_io};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;

/// Every test finishes within this, or fails.
pub const LIMIT: Duration = Duration::from_secs(30);

/// How long "nothing arrives" is watched for.
pub const QUIET: Duration = Duration::from_millis(300);

/// Runs a test body under [`LIMIT`].
pub async fn bounded<F: Future>(body: F) -> F::Output {
    tokio::time::timeout(LIMIT, body).await.expect("the test finished within its time limit")
}

/// The client's end of a running `serve_io`.
pub struct Session {
    input: Option<DuplexStream>,
    output: BufReader<DuplexStream>,
    served: JoinHandle<io::Result<()>>,
}

impl Session {
    /// Starts serving `server` (a `Server` or a `LiveServer`) with `options` over two in-memory pipes.
    pub fn start(server: impl Into<LiveServer>, options: StdioOptions) -> Self {
        let (input, server_input) = tokio::io::duplex(64 * 1024);
        let (server_output, output) = tokio::io::duplex(64 * 1024);
        let served = tokio::spawn(serve_io(server.into(), server_input, server_output, options));
        Self { input: Some(input), output: BufReader::new(output), served }
    }

    /// Writes raw bytes to the server's input.
    pub async fn send(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("the input is open");
        input.write_all(bytes).await.expect("the server reads its input");
    }

    /// Writes one JSON message and a newline to an input the server may have stopped reading (and
    /// dropped): a closed input is not a failure here.
    pub async fn send_json_late(&mut self, message: Value) {
        let input = self.input.as_mut().expect("the input is open");
        let _ = input.write_all(format!("{message}\n").as_bytes()).await;
    }

    /// Writes one JSON message and a newline.
    pub async fn send_json(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.send(&line).await;
    }

    /// Takes the server's input, for a test that writes while it reads.
    pub fn take_input(&mut self) -> DuplexStream {
        self.input.take().expect("the input is open")
    }

    /// Closes the server's input (end of file).
    pub fn close(&mut self) {
        self.input = None;
    }

    /// The next output line, parsed; `None` at end of output.
    pub async fn recv(&mut self) -> Option<Value> {
        let mut line = String::new();
        let read = self.output.read_line(&mut line).await.expect("the output is readable");
        if read == 0 {
            return None;
        }
        assert!(line.ends_with('\n'), "every response is one whole line: {line:?}");
        let mut response: Value = serde_json::from_str(&line).expect("every output line is JSON");
        // An unreadable id is `null`; the wire crate writes it by omitting the member (MCP's
        // `JSONRPCErrorResponse`). Either form reads back as `"id": null` here.
        // A notification (`notifications/progress`) has no id and is returned as is.
        if let Value::Object(map) = &mut response
            && !map.contains_key("id")
            && !map.contains_key("method")
        {
            assert!(map.contains_key("error"), "only an error may lack an id: {line}");
            map.insert("id".into(), Value::Null);
        }
        Some(response)
    }

    /// The next output line, which must exist.
    pub async fn expect(&mut self) -> Value {
        self.recv().await.expect("a response")
    }

    /// Asserts that no output arrives for [`QUIET`].
    pub async fn expect_quiet(&mut self) {
        if let Ok(line) = tokio::time::timeout(QUIET, self.recv()).await {
            panic!("expected no output, got {line:?}");
        }
    }

    /// Every remaining output line, up to end of output.
    pub async fn rest(&mut self) -> Vec<Value> {
        let mut lines = Vec::new();
        while let Some(line) = self.recv().await {
            lines.push(line);
        }
        lines
    }

    /// Closes the input, asserts that nothing more is written, and that `serve_io` returns `Ok`.
    pub async fn ends_clean(mut self) {
        self.close();
        assert_eq!(self.rest().await, Vec::<Value>::new(), "nothing more after the input ends");
        self.finish().await.expect("a clean end");
    }

    /// Waits for `serve_io` to return.
    pub async fn finish(self) -> io::Result<()> {
        self.served.await.expect("serve_io does not panic")
    }

    /// Drops the client's reading end (the server's output then fails) and keeps the rest.
    pub fn drop_output(self) -> (Option<DuplexStream>, JoinHandle<io::Result<()>>) {
        (self.input, self.served)
    }

    /// True once `serve_io` has returned.
    pub fn is_finished(&self) -> bool {
        self.served.is_finished()
    }
}

/// `{"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":{}}}`.
pub fn call(id: i64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
}

/// A bare request.
pub fn request(id: i64, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method})
}

/// A `ping` request padded to exactly `len` bytes (without the newline).
pub fn ping_of_len(id: i64, len: usize) -> Vec<u8> {
    let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"pad":""#);
    let tail = r#""}}"#;
    let pad = len.checked_sub(head.len() + tail.len()).expect("long enough for the envelope");
    let mut bytes = head.into_bytes();
    bytes.resize(bytes.len() + pad, b'x');
    bytes.extend_from_slice(tail.as_bytes());
    assert_eq!(bytes.len(), len);
    bytes
}

/// The error object of a response.
pub fn error(response: &Value) -> &Value {
    response.get("error").unwrap_or_else(|| panic!("an error response: {response}"))
}

/// A server with no tools (ping, lists, shutdown).
pub fn plain_server() -> Server {
    Server::builder(Listing::default()).build().expect("an empty catalog builds")
}

/// What a controlled tool did, as the test observes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The named call started.
    Started(String),
    /// The named call's future was dropped before finishing.
    Dropped(String),
}

/// A server whose tools are: `slow` (waits on the gate), `forever` (never finishes), `fast`, `boom`
/// (panics), `big` (returns `size` bytes of text). Every start and every drop is reported on the channel.
pub struct Controlled {
    /// The server.
    pub server: Server,
    /// One permit lets one `slow` call finish.
    pub gate: Arc<Semaphore>,
    /// Starts and drops, in order.
    pub events: mpsc::UnboundedReceiver<Event>,
}

/// Reports a drop unless disarmed.
struct DropGuard {
    name: String,
    events: mpsc::UnboundedSender<Event>,
    armed: bool,
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.events.send(Event::Dropped(self.name.clone()));
        }
    }
}

impl Controlled {
    /// Builds the server; `big` returns `size` bytes.
    pub fn new(size: usize) -> Self {
        let gate = Arc::new(Semaphore::new(0));
        let (sender, events) = mpsc::unbounded_channel();
        let mut tools: Vec<ToolSpec> =
            ["slow", "forever", "fast", "boom"].map(|name| ToolSpec::new(name, Mode::ReadOnly)).to_vec();
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        tools.push(ToolSpec::new("big", Mode::ReadOnly).input_schema(schema));
        let tool_gate = Arc::clone(&gate);
        let server = Server::builder(Listing { tools, ..Default::default() })
            .dispatch(move |call: ToolCall| {
                let gate = Arc::clone(&tool_gate);
                let events = sender.clone();
                async move {
                    let name = call.name.to_string();
                    let _ = events.send(Event::Started(name.clone()));
                    let mut guard = DropGuard { name: name.clone(), events, armed: true };
                    match name.as_str() {
                        "slow" => gate.acquire().await.expect("the gate stays open").forget(),
                        "forever" => std::future::pending::<()>().await,
                        "boom" => panic!("the tool panicked"),
                        "big" => {
                            guard.armed = false;
                            let n = call.arguments.get("n").and_then(Value::as_u64).unwrap_or(0);
                            return Ok(ToolOutput::text(big_text(n, size)));
                        }
                        _ => {}
                    }
                    guard.armed = false;
                    Ok::<_, ToolError>(ToolOutput::text(name))
                }
            })
            .build()
            .expect("the catalog builds");
        Self { server, gate, events }
    }

    /// The next event.
    pub async fn event(&mut self) -> Event {
        self.events.recv().await.expect("the server is alive")
    }

    /// Asserts that no tool starts or drops for [`QUIET`].
    pub async fn expect_no_event(&mut self) {
        if let Ok(event) = tokio::time::timeout(QUIET, self.events.recv()).await {
            panic!("expected no tool activity, got {event:?}");
        }
    }
}

/// The text `big` returns for call `n`: `size` copies of one letter chosen by `n`.
pub fn big_text(n: u64, size: usize) -> String {
    let letter = char::from(b'a' + u8::try_from(n % 26).unwrap_or(0));
    std::iter::repeat_n(letter, size).collect()
}
