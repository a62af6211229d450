//! The README's "Write a host", pasted into a new project outside the repository.
//!
//! The README tells a user to depend on a clone that sits beside their crate
//! (`mcp-kernel = { path = "../mcp-kernel/crates/mcp-kernel" }`) or on it by git. This makes exactly that
//! layout under the system's temporary directory — `mcp-kernel` (a link to this clone) beside
//! `my-host` — and pastes the README's four blocks as a user would: the `[dependencies]` block and the
//! profile block verbatim into `my-host/Cargo.toml`, the host program and then its test verbatim into
//! `my-host/src/main.rs`. It builds the program and talks to it over stdio (a `tools/call` of its `echo`
//! tool must come back with the message), then runs `cargo test`: the README's test must pass against
//! the README's host as pasted. The git form is then resolved and checked the same way, with the
//! README's URL pointed at this clone.
//!
//! Two things are not left to the day: the crates.io versions come from this workspace's `Cargo.lock`
//! (a copy; cargo keeps the entries the new project uses), and the toolchain from its
//! `rust-toolchain.toml`, the minimum Rust version the crates declare. The project and its build are
//! removed afterwards.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_kernel_workspace::scratch::{Scratch, cargo_in, copy_pins};
use serde_json::{Value, json};

use super::blocks::block_after;

/// The marker before the README's `[dependencies]` block.
const TOML_MARK: &str = "<!-- readme-host:toml -->";
/// The marker before the README's `[profile.*]` block.
const PROFILE_MARK: &str = "<!-- readme-host:profile -->";
/// The marker before the README's host program.
const MAIN_MARK: &str = "<!-- readme-host:main -->";
/// The marker before the host's test, which the README puts at the end of the same file.
const TEST_MARK: &str = "<!-- readme-host:test -->";
/// The git URL the README shows, replaced by this clone's.
const README_GIT_URL: &str = "file:///home/you/src/mcp-kernel";
/// How long the host may take to answer once built.
const ANSWER_DEADLINE: Duration = Duration::from_secs(30);

/// Builds the README's host in a new project beside a clone, by path then by git, talks to it and runs
/// its test.
pub fn check(readme: &str) -> Result<(), String> {
    let dependencies = block_after(readme, TOML_MARK)?;
    let profile = block_after(readme, PROFILE_MARK)?;
    let main = main_rs(block_after(readme, MAIN_MARK)?, block_after(readme, TEST_MARK)?)?;
    let repo = std::env::current_dir().map_err(|e| e.to_string())?;
    let scratch = Scratch::new("mcp-kernel-readme-host")?;
    let host = scratch.0.join("my-host");
    std::fs::create_dir_all(host.join("src")).map_err(|e| format!("{}: {e}", host.display()))?;
    std::os::unix::fs::symlink(&repo, scratch.0.join("mcp-kernel")).map_err(|e| e.to_string())?;
    std::fs::write(host.join("src/main.rs"), main).map_err(|e| e.to_string())?;
    copy_pins(&repo, &host)?;
    let target = scratch.0.join("target");

    std::fs::write(host.join("Cargo.toml"), manifest(dependencies, profile)).map_err(|e| e.to_string())?;
    cargo(&host, &target, &["build", "--quiet"])?;
    let answer = talk(&target.join("debug/my-host"))?;
    let expected = json!({"message": "hello from the README"});
    if answer["result"]["structuredContent"] != expected || answer["result"]["isError"] != false {
        return Err(format!("the README's host answered something else: {answer}"));
    }
    eprintln!("xtask: the README's host builds in a new project beside the clone (path) and answers");
    cargo(&host, &target, &["test", "--quiet"])?;
    eprintln!("xtask: the README's test passes against the README's host, pasted into the same file");

    let git_url = format!("file://{}", repo.display());
    let by_git = git_form(dependencies, &git_url)?;
    std::fs::write(host.join("Cargo.toml"), manifest(&by_git, profile)).map_err(|e| e.to_string())?;
    cargo(&host, &target, &["check", "--quiet", "--all-targets"])?;
    eprintln!("xtask: the README's git form resolves and checks (branch main of {git_url})");
    Ok(())
}

/// The new project's manifest: a package (as `cargo new` writes it), then the README's two blocks as
/// they are.
fn manifest(dependencies: &str, profile: &str) -> String {
    format!(
        "[package]\nname = \"my-host\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n{dependencies}\n{profile}"
    )
}

/// The new project's `src/main.rs`: the README's host, then its test, as the README says to paste them.
/// The test must be a `#[cfg(test)]` module that reaches the host through `super`, and the host must not
/// bring a test of its own: otherwise the two blocks do not make the one file the README describes.
fn main_rs(host: &str, test: &str) -> Result<String, String> {
    if !test.trim_start().starts_with("#[cfg(test)]") {
        return Err("the README's test block is not a `#[cfg(test)]` module to paste after the host".into());
    }
    if !test.contains("use super::") {
        return Err("the README's test does not reach the host through `use super::`".into());
    }
    if host.contains("#[cfg(test)]") {
        return Err("the README's host block holds a test module of its own".into());
    }
    Ok(format!("{host}\n{test}"))
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
        // The README's profile block, pasted into the manifest, keeps the build (every dependency, in
        // the temporary directory) small: no override here, the user's profile is what is checked.
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

    const PROFILE: &str = "[profile.dev]\ndebug = \"line-tables-only\"\n";

    #[test]
    fn the_manifest_is_a_package_then_the_two_blocks_verbatim() {
        let text = manifest(BLOCK, PROFILE);
        assert!(text.starts_with("[package]\nname = \"my-host\""));
        assert!(text.ends_with(&format!("{BLOCK}\n{PROFILE}")));
        let parsed: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
        assert_eq!(parsed, ["[package]", "[dependencies]", "[profile.dev]"]);
    }

    const HOST: &str = "fn server() -> u8 {\n    1\n}\n\nfn main() {}\n";
    const TEST: &str = "#[cfg(test)]\nmod tests {\n    use super::server;\n}\n";

    #[test]
    fn main_rs_is_the_host_then_its_test() {
        assert_eq!(main_rs(HOST, TEST).unwrap(), format!("{HOST}\n{TEST}"));
    }

    #[test]
    fn a_test_block_that_is_not_a_test_module_of_the_host_is_refused() {
        let bare = "#[tokio::test]\nasync fn t() { let _ = server(); }\n";
        assert!(main_rs(HOST, bare).unwrap_err().contains("#[cfg(test)]"));
        let hidden = "#[cfg(test)]\nmod tests {\n    fn server() -> u8 { 2 }\n}\n";
        assert!(main_rs(HOST, hidden).unwrap_err().contains("use super::"));
        let twice = format!("{HOST}#[cfg(test)]\nmod more {{}}\n");
        assert!(main_rs(&twice, TEST).unwrap_err().contains("test module of its own"));
    }

    /// The README holds the four blocks, and they make a manifest and a `src/main.rs` as pasted.
    #[test]
    fn the_readme_holds_the_four_blocks_and_they_compose() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
        let readme = std::fs::read_to_string(path).unwrap();
        let dependencies = block_after(&readme, TOML_MARK).unwrap();
        let profile = block_after(&readme, PROFILE_MARK).unwrap();
        assert!(dependencies.starts_with("[dependencies]\n"), "{dependencies}");
        assert!(profile.starts_with("[profile."), "{profile}");
        for crate_ in ["mcp-kernel", "tokio", "serde", "serde_json", "schemars"] {
            assert!(dependencies.lines().any(|l| l.starts_with(&format!("{crate_} = "))), "{crate_}");
        }
        let main =
            main_rs(block_after(&readme, MAIN_MARK).unwrap(), block_after(&readme, TEST_MARK).unwrap());
        let main = main.unwrap();
        assert!(main.contains("fn server()") && main.contains("#[tokio::test]"), "{main}");
        git_form(dependencies, "file:///clone").unwrap();
    }
}
