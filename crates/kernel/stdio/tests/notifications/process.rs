//! An example (`notifying`, or `asking` for the bridge) as a real process: requests written to its stdin (a pipe), lines read from
//! its stdout (a pipe) on a thread of its own, every wait bounded.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

/// Every line awaited arrives within this, or the test fails.
pub const LIMIT: Duration = Duration::from_secs(30);

/// How long "nothing more arrives" is watched for.
pub const QUIET: Duration = Duration::from_millis(400);

/// `params._meta` of a `2026-07-28` request.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A `subscriptions/listen` request with `id` and `filter`.
pub fn listen(id: Value, filter: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
           "params": {"_meta": meta(), "notifications": filter}})
}

/// A `2026-07-28` request.
pub fn modern(id: i64, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta()}})
}

/// A `2026-07-28` `tools/call`.
pub fn call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"_meta": meta(), "name": tool, "arguments": arguments}})
}

/// `announce` of one change (`tools`, `prompts`, `resources`), or of `updated` with a uri.
pub fn announce(id: i64, change: &str, uri: Option<&str>) -> Value {
    let mut arguments = json!({"change": change});
    if let Some(uri) = uri {
        arguments["uri"] = json!(uri);
    }
    call(id, "announce", arguments)
}

/// `notifications/cancelled` naming `id`.
pub fn cancel(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "done"}})
}

/// The tag of a line: `params._meta["io.modelcontextprotocol/subscriptionId"]`, or of a result's `_meta`.
pub fn tag(line: &Value) -> Option<&Value> {
    let key = "io.modelcontextprotocol/subscriptionId";
    line.pointer("/params/_meta").or_else(|| line.pointer("/result/_meta")).and_then(|meta| meta.get(key))
}

/// The method of a notification line.
pub fn method(line: &Value) -> Option<&str> {
    line.get("method").and_then(Value::as_str)
}

/// The example `name` as `cargo build --examples` (and `cargo test`) builds it, beside the `deps/`
/// directory of this test binary; refused when missing or older than a source it is built from (a run
/// narrowed with `--test` rebuilds no example), rather than test a stale binary.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let examples = exe.parent().and_then(Path::parent).expect("target/<profile>").join("examples");
    let path = examples.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is missing: build it with `cargo build -p mcp-kernel-stdio --example {name}`",
        path.display()
    );
    let built = std::fs::metadata(&path).and_then(|m| m.modified()).expect("the example's mtime");
    let dep_info = std::fs::read_to_string(examples.join(format!("{name}.d"))).unwrap_or_default();
    let sources = dep_info.lines().next().and_then(|line| line.split_once(": ")).map(|(_, deps)| deps);
    for source in sources.unwrap_or_default().split(' ').filter(|source| source.ends_with(".rs")) {
        let changed = std::fs::metadata(source).and_then(|m| m.modified()).unwrap_or(SystemTime::now());
        assert!(
            changed <= built,
            "{} is older than {source}: rebuild it with `cargo build -p mcp-kernel-stdio --example {name}`",
            path.display()
        );
    }
    path
}

/// A running example process; killed (and reaped) when dropped.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// What the process wrote to stderr so far.
    stderr: Arc<Mutex<String>>,
    /// Every line read so far, in order.
    pub seen: Vec<Value>,
}

impl Server {
    /// Starts the `notifying` example with `args`.
    pub fn start(args: &[&str]) -> Self {
        Self::start_example("notifying", args)
    }

    /// Starts the example `name` with `args`.
    pub fn start_example(name: &str, args: &[&str]) -> Self {
        let mut child = Command::new(example(name))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the example starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("a piped stdout");
        let errors = child.stderr.take().expect("a piped stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let written = Arc::clone(&stderr);
        thread::spawn(move || {
            for line in BufReader::new(errors).lines() {
                let Ok(line) = line else { return };
                let mut written = written.lock().unwrap_or_else(PoisonError::into_inner);
                written.push_str(&line);
                written.push('\n');
            }
        });
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|_| json!({"not json": line}));
                if sender.send(value).is_err() {
                    return;
                }
            }
        });
        Self { child, stdin, lines, stderr, seen: Vec::new() }
    }

    /// What the process wrote to stderr so far (read to its end once the process has exited and the
    /// reading thread has caught up).
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Writes one message as one line.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("the server reads its stdin");
        stdin.flush().expect("the pipe takes the line");
    }

    /// Closes stdin (end of input).
    pub fn close(&mut self) {
        self.stdin = None;
    }

    /// The next line, within [`LIMIT`]; `None` at end of output.
    pub fn next(&mut self) -> Option<Value> {
        match self.lines.recv_timeout(LIMIT) {
            Ok(line) => {
                self.seen.push(line.clone());
                Some(line)
            }
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no line within {LIMIT:?}; seen so far: {:?}", self.seen)
            }
        }
    }

    /// The next line, which must exist.
    pub fn expect(&mut self) -> Value {
        self.next().unwrap_or_else(|| panic!("the output ended; seen: {:?}", self.seen))
    }

    /// Reads lines until `wanted` is met, returning it and the lines read before it (at most 200).
    pub fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        for _ in 0..200 {
            let line = self.expect();
            if wanted(&line) {
                return (line, before);
            }
            before.push(line);
        }
        panic!("no such line among 200: {before:?}");
    }

    /// The answer to request `id` (the lines before it are kept in [`Server::seen`]).
    pub fn answer(&mut self, id: &Value) -> Value {
        self.until(|line| line.get("id") == Some(id) && method(line).is_none()).0
    }

    /// Asserts that no line arrives for [`QUIET`].
    pub fn expect_quiet(&mut self) {
        match self.lines.recv_timeout(QUIET) {
            Ok(line) => panic!("expected no output, got {line}"),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
        }
    }

    /// Every line up to end of output (at most 200), then the exit status, both within [`LIMIT`].
    pub fn rest_and_exit(&mut self) -> (Vec<Value>, ExitStatus) {
        let mut rest = Vec::new();
        while let Some(line) = self.next() {
            rest.push(line);
            assert!(rest.len() <= 200, "the output does not end: {rest:?}");
        }
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("the child can be waited for") {
                return (rest, status);
            }
            assert!(started.elapsed() < LIMIT, "the process did not exit within {LIMIT:?}");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
