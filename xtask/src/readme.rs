//! `cargo xtask readme`: runs the README's copy-paste exchange exactly as written and compares what it
//! prints with the output the README shows (answers matched by id, since requests are served
//! concurrently). `--print` prints what the command printed instead, to update the README. Then the
//! README's "Use it in a host" is pasted into a new project outside the repository (`readme_host.rs`).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const INPUT_MARK: &str = "<!-- readme-exchange:input -->";
const OUTPUT_MARK: &str = "<!-- readme-exchange:output -->";
const HTTP_SERVER_MARK: &str = "<!-- readme-http:server -->";
const HTTP_INPUT_MARK: &str = "<!-- readme-http:input -->";
const HTTP_OUTPUT_MARK: &str = "<!-- readme-http:output -->";
const OAUTH_SERVER_MARK: &str = "<!-- readme-oauth:server -->";
const OAUTH_INPUT_MARK: &str = "<!-- readme-oauth:input -->";
const OAUTH_OUTPUT_MARK: &str = "<!-- readme-oauth:output -->";
const HTTP_ADDR: &str = "127.0.0.1:4000";
const DEADLINE: Duration = Duration::from_secs(600);

/// The body of the first fenced block after `mark`.
pub fn block_after<'a>(text: &'a str, mark: &str) -> Result<&'a str, String> {
    let start = text.find(mark).ok_or_else(|| format!("README.md has no {mark}"))?;
    let rest = &text[start + mark.len()..];
    let open = rest.find("```").ok_or("no fenced block after the marker")?;
    let rest = &rest[open..];
    let body_start = rest.find('\n').ok_or("unterminated fence")? + 1;
    let body = &rest[body_start..];
    let close = body.find("\n```").ok_or("unterminated fence")?;
    Ok(&body[..close + 1])
}

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

/// Compares (or prints) one exchange.
fn compare(name: &str, text: &str, input: &str, output_mark: &str, print: bool) -> Result<(), String> {
    let output = run_shell(block_after(text, input)?)?;
    if print {
        println!("--- {name}");
        print!("{output}");
        return Ok(());
    }
    let expected = by_id(block_after(text, output_mark)?)?;
    let actual = by_id(&output)?;
    if expected != actual {
        return Err(format!(
            "the README's {name} exchange printed something else; run `cargo xtask readme --print`.\nprinted:\n{output}"
        ));
    }
    eprintln!("xtask: the README's {name} exchange prints what the README shows ({} answers)", actual.len());
    Ok(())
}

/// Compares (or prints) an exchange whose requests run one after another, line for line: its output
/// mixes statuses and headers with JSON.
fn compare_lines(name: &str, text: &str, input: &str, output_mark: &str, print: bool) -> Result<(), String> {
    let output = run_shell(block_after(text, input)?)?;
    if print {
        println!("--- {name}");
        print!("{output}");
        return Ok(());
    }
    let lines = |t: &str| {
        t.lines().map(str::trim_end).filter(|l| !l.is_empty()).map(str::to_owned).collect::<Vec<_>>()
    };
    let expected = lines(block_after(text, output_mark)?);
    if expected != lines(&output) {
        return Err(format!(
            "the README's {name} exchange printed something else; run `cargo xtask readme --print`.\nprinted:\n{output}"
        ));
    }
    eprintln!("xtask: the README's {name} exchange prints what the README shows ({} lines)", expected.len());
    Ok(())
}

/// Runs the checks; with `print`, prints the commands' output instead of comparing.
pub fn check(print: bool) -> Result<(), String> {
    let text = std::fs::read_to_string("README.md").map_err(|e| format!("README.md: {e}"))?;
    compare("stdio", &text, INPUT_MARK, OUTPUT_MARK, print)?;
    {
        let _server = start_http_server(block_after(&text, HTTP_SERVER_MARK)?)?;
        compare("HTTP", &text, HTTP_INPUT_MARK, HTTP_OUTPUT_MARK, print)?;
    }
    {
        let _server = start_http_server(block_after(&text, OAUTH_SERVER_MARK)?)?;
        compare_lines("OAuth", &text, OAUTH_INPUT_MARK, OAUTH_OUTPUT_MARK, print)?;
    }
    if print { Ok(()) } else { crate::readme_host::check(&text) }
}
