//! `cargo xtask readme`: runs the copy-paste exchanges of the README and of the manual exactly as written
//! and compares what each prints with the output the document shows (answers matched by id, since
//! requests are served concurrently). `--print` prints what the commands printed instead, to update the
//! documents. Then the README's "Write a host" — its dependencies, its profile, the host and the host's
//! test — is pasted into a new project outside the repository, built, tested and talked to
//! (`host.rs`). Both read the marked blocks through `blocks.rs`.
//!
//! The exchanges ([`EXCHANGES`]): the README's `notes` over stdio and over HTTP with a bearer token, and
//! the `weather` example's over stdio (`docs/stdio.md`) and over HTTP (`docs/http.md`). Each is marked in
//! its document by an HTML comment before each fenced block: `<!-- NAME:input -->` (the command),
//! `<!-- NAME:output -->` (what it prints) and, for one that talks to a server, `<!-- NAME:server -->`
//! (the command that starts it, on 127.0.0.1:4000).

mod blocks;
mod host;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use blocks::{block_after, lines, mark};

/// How an exchange's output is compared with the document's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    /// JSON-RPC answers, one a line, matched by id (requests are served concurrently).
    ById,
    /// Line for line: the requests run one after another, and the output mixes statuses and headers
    /// with JSON.
    Lines,
}

/// One exchange a document shows: where, under which marker name, against a server or not.
#[derive(Debug)]
struct Exchange {
    /// The document, relative to the workspace root.
    file: &'static str,
    /// The marker name: `<!-- {marker}:input -->` and so on.
    marker: &'static str,
    /// Whether a server is started first (`<!-- {marker}:server -->`).
    server: bool,
    compare: Compare,
}

/// Every exchange checked, in order.
const EXCHANGES: &[Exchange] = &[
    Exchange { file: "README.md", marker: "readme-exchange", server: false, compare: Compare::ById },
    Exchange { file: "README.md", marker: "readme-oauth", server: true, compare: Compare::Lines },
    Exchange { file: "docs/stdio.md", marker: "weather-stdio", server: false, compare: Compare::ById },
    Exchange { file: "docs/http.md", marker: "weather-http", server: true, compare: Compare::ById },
];

const HTTP_ADDR: &str = "127.0.0.1:4000";
const DEADLINE: Duration = Duration::from_secs(600);

fn run_shell(script: &str) -> Result<String, String> {
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot run bash: {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) if status.success() => break,
            Some(status) => return Err(format!("the README command exited with {status}")),
            None if started.elapsed() > DEADLINE => {
                let _ = child.kill();
                return Err("the README command did not finish in time".into());
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    let mut out = String::new();
    child.stdout.take().ok_or("no stdout")?.read_to_string(&mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

fn by_id(text: &str) -> Result<Vec<Value>, String> {
    let mut values = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).map_err(|e| format!("not a JSON line ({e}): {l}")))
        .collect::<Result<Vec<_>, _>>()?;
    values.sort_by_key(|v| v.get("id").map(Value::to_string).unwrap_or_default());
    Ok(values)
}

/// A background server started from the README's command, stopped (its whole process group) on drop.
struct Background(std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let _ = self.0.wait();
    }
}

fn start_http_server(command: &str) -> Result<Background, String> {
    use std::os::unix::process::CommandExt;
    if std::net::TcpStream::connect(HTTP_ADDR).is_ok() {
        return Err(format!("{HTTP_ADDR} is already in use; the README's HTTP exchange needs it"));
    }
    let child = Command::new("bash")
        .arg("-c")
        // Not `exec`: a command may start with `NAME=value` assignments. The whole process group is
        // stopped on drop.
        .arg(command.trim())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the README's server: {e}"))?;
    let server = Background(child);
    let started = Instant::now();
    while std::net::TcpStream::connect(HTTP_ADDR).is_err() {
        if started.elapsed() > DEADLINE {
            return Err("the README's HTTP server did not start in time".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(server)
}

/// Runs one exchange (starting its server first) and compares (or prints) what it printed.
fn run_exchange(exchange: &Exchange, print: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(exchange.file).map_err(|e| format!("{}: {e}", exchange.file))?;
    let block = |part: &str| {
        block_after(&text, &mark(exchange.marker, part)).map_err(|e| format!("{}: {e}", exchange.file))
    };
    let _server = if exchange.server { Some(start_http_server(block("server")?)?) } else { None };
    let output = run_shell(block("input")?)?;
    let name = format!("{} ({})", exchange.marker, exchange.file);
    if print {
        println!("--- {name}");
        print!("{output}");
        return Ok(());
    }
    let expected = block("output")?;
    let (same, count) = match exchange.compare {
        Compare::ById => {
            let expected = by_id(expected)?;
            (expected == by_id(&output)?, format!("{} answers", expected.len()))
        }
        Compare::Lines => {
            let expected = lines(expected);
            (expected == lines(&output), format!("{} lines", expected.len()))
        }
    };
    if !same {
        return Err(format!(
            "the {name} exchange printed something else; run `cargo xtask readme --print`.\nprinted:\n{output}"
        ));
    }
    eprintln!("xtask: the {name} exchange prints what the document shows ({count})");
    Ok(())
}

/// Runs the checks; with `print`, prints the commands' output instead of comparing.
pub fn check(print: bool) -> Result<(), String> {
    for exchange in EXCHANGES {
        run_exchange(exchange, print)?;
    }
    if print {
        return Ok(());
    }
    let readme = std::fs::read_to_string("README.md").map_err(|e| format!("README.md: {e}"))?;
    host::check(&readme)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_compared_by_id_whatever_their_order() {
        let a = by_id("{\"id\":2,\"x\":1}\n\n{\"id\":1}\n").unwrap();
        let b = by_id("{\"id\":1}\n{\"id\":2,\"x\":1}\n").unwrap();
        assert_eq!(a, b);
        assert!(by_id("not json\n").is_err());
    }

    /// Every exchange's markers are in its document, each before a fenced block, and every document
    /// that shows a server command shows it on the address the check waits for.
    #[test]
    fn every_exchange_is_marked_in_its_document() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for exchange in EXCHANGES {
            let text = std::fs::read_to_string(root.join(exchange.file)).unwrap();
            let mut parts = vec!["input", "output"];
            if exchange.server {
                parts.push("server");
            }
            for part in parts {
                let block = block_after(&text, &mark(exchange.marker, part));
                assert!(block.is_ok(), "{}: {part} of {}: {block:?}", exchange.file, exchange.marker);
            }
            if exchange.server {
                let server = block_after(&text, &mark(exchange.marker, "server")).unwrap();
                assert!(server.contains(HTTP_ADDR), "{}: {server}", exchange.file);
            }
        }
    }
}
