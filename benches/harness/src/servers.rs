//! The servers under test and the load generator: pinning to CPUs, an HTTP server started and
//! probed until it answers, whether a stdio server needs a handshake, and `bench-load` runs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A stateless `tools/call` of `echo`, to see that an HTTP server answers before it is loaded.
const PROBE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"#,
    r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"#,
    r#""name":"echo","arguments":{"message":"hello"}}}"#
);

/// `taskset -c CPU` before a command when `taskset` exists and two CPUs are there to pin to.
pub(super) struct Pinning {
    pub(super) enabled: bool,
}

impl Pinning {
    /// Pinning when `taskset` runs and there are two CPUs to pin to.
    pub(super) fn detect() -> Pinning {
        let two = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
        let works = Command::new("taskset")
            .args(["-c", "0,1", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        Pinning { enabled: two && works }
    }

    /// The argument vector of `program args…` on `cpu`.
    pub(super) fn command(&self, cpu: u32, program: &Path, args: &[&str]) -> Vec<String> {
        let mut v = Vec::new();
        if self.enabled {
            v.extend(["taskset".to_owned(), "-c".to_owned(), cpu.to_string()]);
        }
        v.push(program.display().to_string());
        v.extend(args.iter().map(|a| (*a).to_owned()));
        v
    }
}

fn spawn(argv: &[String]) -> Command {
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..]);
    c
}

/// The arguments of a closed-loop `bench-load http` run of `method` against the server at `url` (its
/// CPU read through `pid`): what every scenario that loads one server on many connections shares.
pub(super) fn http_loop_args<'a>(
    url: &'a str,
    pid: &'a str,
    connections: &'a str,
    (warmup, duration): (&'a str, &'a str),
    method: &'a str,
) -> Vec<&'a str> {
    let mut args = vec!["http", "--url", url, "--pid", pid, "--connections", connections];
    args.extend(["--warmup", warmup, "--duration", duration, "--method", method]);
    args
}

/// Runs `bench-load` and returns its JSON line (also when it reports errors: exit code 1).
pub(super) fn run_load(argv: &[String]) -> Result<Value, String> {
    run_load_with(argv, Stdio::inherit(), &[])
}

/// Runs `bench-load` with `env` added to its environment (and so to that of a stdio server it spawns).
pub(super) fn run_load_env(argv: &[String], env: &[(&str, String)]) -> Result<Value, String> {
    run_load_with(argv, Stdio::inherit(), env)
}

fn run_load_with(argv: &[String], stderr: Stdio, env: &[(&str, String)]) -> Result<Value, String> {
    let out = spawn(argv)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stderr(stderr)
        .output()
        .map_err(|e| format!("{}: {e}", argv.join(" ")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.lines().rev().find_map(|l| serde_json::from_str::<Value>(l.trim()).ok()) {
        Some(v) if v.is_object() => Ok(v),
        _ => Err(format!("`{}` gave no result ({})", argv.join(" "), out.status)),
    }
}

/// An HTTP server under test; killed when dropped.
pub(super) struct HttpServer {
    pub(super) child: Child,
    pub(super) url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `binary http 127.0.0.1:0` with `env` added to its environment, reads the URL it prints,
/// and waits until it answers a call.
pub(super) fn start_http(
    pinning: &Pinning,
    binary: &Path,
    env: &[(&str, String)],
) -> Result<HttpServer, String> {
    start_http_argv(&pinning.command(0, binary, &["http", "127.0.0.1:0"]), binary, env)
}

/// Starts the server command `argv` (which runs `binary http 127.0.0.1:0`, perhaps through `taskset`
/// and a shell that execs it, so that its pid stays the server's) as [`start_http`] does.
pub(super) fn start_http_argv(
    argv: &[String],
    binary: &Path,
    env: &[(&str, String)],
) -> Result<HttpServer, String> {
    let mut child = spawn(argv)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{}: {e}", argv.join(" ")))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut server = HttpServer { child, url: String::new() };
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            if line.contains("listening on ") {
                break;
            }
            line.clear();
        }
        let _ = send.send(line);
        // Keep draining so that the server never blocks on a full pipe.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = receive
        .recv_timeout(Duration::from_secs(30))
        .map_err(|_| format!("{} printed no address", binary.display()))?;
    let url = line
        .split("listening on ")
        .nth(1)
        .map(str::trim)
        .filter(|u| u.starts_with("http://127.0.0.1:"))
        .ok_or_else(|| format!("{} printed no 127.0.0.1 address: {line:?}", binary.display()))?;
    server.url = url.to_owned();
    let started = Instant::now();
    loop {
        match probe(&server.url) {
            Ok(()) => return Ok(server),
            Err(e) if started.elapsed() > Duration::from_secs(15) => {
                return Err(format!("{} does not answer at {}: {e}", binary.display(), server.url));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// One `tools/call` over a fresh connection: Ok when the answer is 200 and echoes `hello`.
fn probe(url: &str) -> Result<(), String> {
    let rest = url.trim_start_matches("http://");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).map_err(|e| e.to_string())?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PROBE}",
        PROBE.len()
    );
    stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.lines().next().unwrap_or_default();
    if !status.starts_with("HTTP/1.1 200") {
        return Err(format!("status {status:?}"));
    }
    if !answer.contains("\"hello\"") {
        return Err("the answer does not echo the message".into());
    }
    Ok(())
}

/// Whether a stdio server needs the handshake first: it answers a lone stateless call, or only after
/// the handshake, or neither (an error).
pub(super) fn stdio_needs_handshake(
    pinning: &Pinning,
    load: &Path,
    binary: &Path,
    handshake: &Path,
) -> Result<bool, String> {
    let server = pinning.command(0, binary, &["stdio"]);
    let handshake = handshake.display().to_string();
    for (preamble, needs) in [(None, false), (Some(handshake.as_str()), true)] {
        let mut args = vec!["stdio-latency", "--requests", "3", "--warmup", "0", "--timeout", "5"];
        if let Some(file) = preamble {
            args.extend(["--preamble", file]);
        }
        args.push("--");
        let mut argv = pinning.command(1, load, &args);
        argv.extend(server.iter().cloned());
        let result = run_load_with(&argv, Stdio::null(), &[]);
        if result.as_ref().is_ok_and(|v| v["errors"] == 0) {
            return Ok(needs);
        }
    }
    Err(format!("{} answers no stdio tools/call, with or without a handshake", binary.display()))
}

/// `bench-load MODE OPTIONS… [--preamble FILE] -- <binary> stdio` (`mode_args` is `MODE OPTIONS…`),
/// each on its CPU.
pub(super) fn stdio_argv(
    pinning: &Pinning,
    load: &Path,
    mode_args: &[&str],
    handshake: bool,
    handshake_file: &Path,
    binary: &Path,
) -> Vec<String> {
    let file = handshake_file.display().to_string();
    let mut args = mode_args.to_vec();
    if handshake {
        args.extend(["--preamble", file.as_str()]);
    }
    args.push("--");
    let mut argv = pinning.command(1, load, &args);
    argv.extend(pinning.command(0, binary, &["stdio"]));
    argv
}

#[cfg(test)]
mod tests {
    use super::http_loop_args;

    #[test]
    fn the_closed_loop_names_its_server_its_pid_and_its_method() {
        let args = http_loop_args("http://127.0.0.1:9/mcp", "42", "32", ("1", "5"), "task-get");
        assert_eq!(
            args,
            [
                "http",
                "--url",
                "http://127.0.0.1:9/mcp",
                "--pid",
                "42",
                "--connections",
                "32",
                "--warmup",
                "1",
                "--duration",
                "5",
                "--method",
                "task-get"
            ]
        );
    }
}
