//! The README's "Use it in a host", pasted into a new project outside the repository.
//!
//! The README tells a user to depend on a clone that sits beside their crate
//! (`mcp-kernel = { path = "../mcp-kernel/crates/mcp-kernel" }`) or on it by git. This makes exactly that
//! layout under the system's temporary directory — `mcp-kernel` (a link to this clone) beside
//! `my-host` — writes the README's `[dependencies]` block verbatim into `my-host/Cargo.toml` and its
//! host program verbatim into `my-host/src/main.rs`, builds it as a user would, and talks to the program
//! over stdio: a `tools/call` of its `echo` tool must come back with the message. The git form is then
//! resolved and checked the same way, with the README's URL pointed at this clone.
//!
//! Two things are not left to the day: the crates.io versions come from this workspace's `Cargo.lock`
//! (a copy; cargo keeps the entries the new project uses), and the toolchain from its
//! `rust-toolchain.toml`, the minimum Rust version the crates declare. The project and its build are
//! removed afterwards.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::readme::block_after;
use crate::scratch::{Scratch, cargo_in, copy_pins};

/// The marker before the README's `[dependencies]` block.
const TOML_MARK: &str = "<!-- readme-host:toml -->";
/// The marker before the README's host program.
const MAIN_MARK: &str = "<!-- readme-host:main -->";
/// The git URL the README shows, replaced by this clone's.
const README_GIT_URL: &str = "file:///home/you/src/mcp-kernel";
/// How long the host may take to answer once built.
const ANSWER_DEADLINE: Duration = Duration::from_secs(30);

/// Builds the README's host in a new project beside a clone, by path then by git, and talks to it.
pub fn check(readme: &str) -> Result<(), String> {
    let dependencies = block_after(readme, TOML_MARK)?;
    let main = block_after(readme, MAIN_MARK)?;
    let repo = std::env::current_dir().map_err(|e| e.to_string())?;
    let scratch = Scratch::new("mcp-kernel-readme-host")?;
    let host = scratch.0.join("my-host");
    std::fs::create_dir_all(host.join("src")).map_err(|e| format!("{}: {e}", host.display()))?;
    std::os::unix::fs::symlink(&repo, scratch.0.join("mcp-kernel")).map_err(|e| e.to_string())?;
    std::fs::write(host.join("src/main.rs"), main).map_err(|e| e.to_string())?;
    copy_pins(&repo, &host)?;
    let target = scratch.0.join("target");

    std::fs::write(host.join("Cargo.toml"), manifest(dependencies)).map_err(|e| e.to_string())?;
    cargo(&host, &target, &["build", "--quiet"])?;
    let answer = talk(&target.join("debug/my-host"))?;
    let expected = json!({"message": "hello from the README"});
    if answer["result"]["structuredContent"] != expected || answer["result"]["isError"] != false {
        return Err(format!("the README's host answered something else: {answer}"));
    }
    eprintln!("xtask: the README's host builds in a new project beside the clone (path) and answers");

    let git_url = format!("file://{}", repo.display());
    let by_git = git_form(dependencies, &git_url)?;
    std::fs::write(host.join("Cargo.toml"), manifest(&by_git)).map_err(|e| e.to_string())?;
    cargo(&host, &target, &["check", "--quiet"])?;
    eprintln!("xtask: the README's git form resolves and checks (branch main of {git_url})");
    Ok(())
}

/// The new project's manifest: a package, then the README's block as it is.
fn manifest(dependencies: &str) -> String {
    format!("[package]\nname = \"my-host\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n{dependencies}")
}

/// The README's block with the path line replaced by its `# or:` git line, pointed at `url`.
fn git_form(dependencies: &str, url: &str) -> Result<String, String> {
    let git = dependencies
        .lines()
        .find_map(|line| line.strip_prefix("# or: "))
        .ok_or("the README's dependencies show no `# or:` git form")?;
    if !git.contains(README_GIT_URL) {
        return Err(format!("the README's git form no longer names {README_GIT_URL}"));
    }
    let git = git.replace(README_GIT_URL, url);
    let lines: Vec<String> = dependencies
        .lines()
        .filter(|line| !line.starts_with("# or: "))
        .map(|line| if line.starts_with("mcp-kernel = ") { git.clone() } else { line.to_owned() })
        .collect();
    Ok(lines.join("\n") + "\n")
}

/// Runs cargo in the new project, which is outside every workspace of this repository.
fn cargo(dir: &Path, target: &Path, args: &[&str]) -> Result<(), String> {
    let status = cargo_in(dir, target)
        .args(args)
        // The new project has the default profile; debug info is not what is under test, and without
        // it the build (every dependency, in the temporary directory) is a third of the size.
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo {} of the README's host failed ({status})", args.join(" ")))
    }
}

/// Sends one `tools/call` of `echo` to the host over stdio and reads its one answer line.
fn talk(program: &Path) -> Result<Value, String> {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"_meta": meta, "name": "echo", "arguments": {"message": "hello from the README"}}
    });
    let mut child = Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the README's host: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    writeln!(stdin, "{call}").map_err(|e| e.to_string())?;
    drop(stdin); // end of input: the host answers what it read, then returns
    let started = Instant::now();
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(_) => break,
            None if started.elapsed() > ANSWER_DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the README's host did not answer and exit in time".into());
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut out = String::new();
    child.stdout.take().ok_or("no stdout")?.read_to_string(&mut out).map_err(|e| e.to_string())?;
    let line = out.lines().next().ok_or("the README's host answered nothing")?;
    serde_json::from_str(line).map_err(|e| format!("the README's host wrote a line that is not JSON ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str = "[dependencies]\nmcp-kernel = { path = \"../mcp-kernel/crates/mcp-kernel\" }\n\
                         # or: mcp-kernel = { git = \"file:///home/you/src/mcp-kernel\", branch = \"main\" }\n\
                         tokio = \"1\"\n";

    #[test]
    fn the_git_form_replaces_the_path_line_and_points_at_the_clone() {
        let text = git_form(BLOCK, "file:///clone").unwrap();
        assert_eq!(
            text,
            "[dependencies]\nmcp-kernel = { git = \"file:///clone\", branch = \"main\" }\ntokio = \"1\"\n"
        );
    }

    #[test]
    fn a_readme_without_the_git_form_is_refused() {
        let block = "[dependencies]\nmcp-kernel = { path = \"../x\" }\n";
        assert!(git_form(block, "file:///clone").is_err());
    }

    #[test]
    fn the_manifest_is_a_package_then_the_block_verbatim() {
        let text = manifest(BLOCK);
        assert!(text.starts_with("[package]\nname = \"my-host\""));
        assert!(text.ends_with(BLOCK));
    }
}
