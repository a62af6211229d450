//! `cargo xtask edge [oauth|browser|proxy|traces|redis]`: the tests at the edges of the HTTP transport that
//! need real outside programs, and so are `#[ignore]`d in the ordinary run.
//!
//! For the parts that need them, it finds Node ≥ 22 (see [`crate::node`]) and installs the
//! authorization server's packages (`tools/tests-rmcp/auth-server`, `npm ci`, when `node_modules` is missing
//! or holds another `oidc-provider` than the lock names), checks that Chromium runs
//! (`/usr/bin/chromium`, or `MCP_KERNEL_CHROMIUM`), that nginx runs (`/usr/sbin/nginx`, or
//! `MCP_KERNEL_NGINX`) and that redis-server runs (`/usr/bin/redis-server`, or
//! `MCP_KERNEL_REDIS_SERVER`), then runs, with `MCP_KERNEL_NODE`, `MCP_KERNEL_AUTH_SERVER_DIR`,
//! `MCP_KERNEL_CHROMIUM`, `MCP_KERNEL_NGINX` and `MCP_KERNEL_REDIS_SERVER` set as found:
//!
//! - `oauth`: `cargo test -p mcp-kernel-rmcp-tests --test oauth -- --ignored` — rmcp's OAuth client
//!   against an mcp-kernel resource server and a real authorization server (`oidc-provider`);
//! - `browser`: `cargo test -p mcp-kernel-http --test browser -- --ignored` — a real browser against
//!   the transport;
//! - `proxy`: `cargo test -p mcp-kernel-rmcp-tests --test proxy -- --ignored --nocapture` — three
//!   stateless instances behind nginx, configured as `docs/deploy.md` shows (the counts of the rolling
//!   restart are printed);
//! - `traces`: `cargo test -p mcp-kernel-rmcp-tests --features opentelemetry --test proxy_traces --
//!   --ignored --nocapture` — one trace across three instances behind nginx;
//! - `redis`: every test that needs a `redis-server` — `mcp-kernel-redis`'s own (`cargo test -p
//!   mcp-kernel-redis --test integration -- --ignored`), the spawner's (`mcp-kernel-test-support`,
//!   `redis::`), and `cargo test -p mcp-kernel-rmcp-tests --test shared_state --test legacy_sessions
//!   --test notes_redis -- --ignored --nocapture`: three instances sharing notifications and tasks
//!   through one Redis behind nginx, with the faults (an instance killed, Redis restarted empty or
//!   paused, a rolling restart), the same sharing `2025-11-25` sessions (a session served by any
//!   instance, an answer POSTed to another, the hijack attempts), and two `notes` examples sharing one
//!   (the example built with the `redis` feature first).
//!
//! Naming parts runs only those (and skips what only the others need); none runs them all. Each
//! part's time is printed; the task exits non-zero when anything is missing or any test fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use mcp_kernel_workspace::cargo_program;
use serde_json::Value;

use crate::node;

/// The authorization server the OAuth test spawns.
const AUTH_SERVER_DIR: &str = "tools/tests-rmcp/auth-server";
/// The browser test's source, written apart from this task.
const BROWSER_TEST: &str = "crates/kernel/http/tests/browser.rs";
const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";
/// Where Debian's `nginx` package installs the server.
const DEFAULT_NGINX: &str = "/usr/sbin/nginx";
/// Where Debian's `redis-server` package installs the server.
const DEFAULT_REDIS_SERVER: &str = "/usr/bin/redis-server";

/// One part of the task: the cargo tests it runs and what it needs.
struct Part {
    name: &'static str,
    /// The test files whose `#[ignore]`d tests it runs (a path ending in `/`: every file under it).
    files: &'static [&'static str],
    /// The cargo commands, run in order.
    commands: &'static [&'static [&'static str]],
    /// Node 22 and the authorization server's packages.
    needs_node: bool,
    needs_chromium: bool,
    needs_nginx: bool,
    needs_redis: bool,
}

const PARTS: &[Part] = &[
    Part {
        name: "oauth",
        files: &["tools/tests-rmcp/tests/oauth.rs"],
        commands: &[&["test", "-p", "mcp-kernel-rmcp-tests", "--test", "oauth", "--", "--ignored"]],
        needs_node: true,
        needs_chromium: false,
        needs_nginx: false,
        needs_redis: false,
    },
    Part {
        name: "browser",
        files: &[BROWSER_TEST],
        commands: &[&["test", "-p", "mcp-kernel-http", "--test", "browser", "--", "--ignored"]],
        needs_node: false,
        needs_chromium: true,
        needs_nginx: false,
        needs_redis: false,
    },
    Part {
        name: "proxy",
        files: &["tools/tests-rmcp/tests/proxy.rs"],
        commands: &[&[
            "test",
            "-p",
            "mcp-kernel-rmcp-tests",
            "--test",
            "proxy",
            "--",
            "--ignored",
            "--nocapture",
        ]],
        needs_node: false,
        needs_chromium: false,
        needs_nginx: true,
        needs_redis: false,
    },
    Part {
        name: "traces",
        files: &["tools/tests-rmcp/tests/proxy_traces.rs"],
        commands: &[&[
            "test",
            "-p",
            "mcp-kernel-rmcp-tests",
            "--features",
            "opentelemetry",
            "--test",
            "proxy_traces",
            "--",
            "--ignored",
            "--nocapture",
        ]],
        needs_node: false,
        needs_chromium: false,
        needs_nginx: true,
        needs_redis: false,
    },
    Part {
        name: "redis",
        files: &[
            "tools/tests-rmcp/tests/shared_state.rs",
            "tools/tests-rmcp/tests/legacy_sessions.rs",
            "tools/tests-rmcp/tests/notes_redis.rs",
            "crates/kernel/redis/tests/integration/",
            "tools/test-support/src/redis.rs",
        ],
        commands: &[
            &["test", "-p", "mcp-kernel-redis", "--test", "integration", "--", "--ignored"],
            &["test", "-p", "mcp-kernel-test-support", "--lib", "--", "--ignored", "redis::"],
            // `notes_redis.rs` runs the `notes` example binary, which a plain `cargo test` rebuilds
            // without the `redis` feature: built with it here, just before.
            &["build", "-p", "mcp-kernel", "--example", "notes", "--features", "redis"],
            &[
                "test",
                "-p",
                "mcp-kernel-rmcp-tests",
                "--test",
                "shared_state",
                "--test",
                "legacy_sessions",
                "--test",
                "notes_redis",
                "--",
                "--ignored",
                "--nocapture",
            ],
        ],
        needs_node: false,
        needs_chromium: false,
        needs_nginx: true,
        needs_redis: true,
    },
];

/// Whether this task runs the `#[ignore]`d tests of `path` (the census counts them as run).
pub fn runs_ignored_tests_of(path: &str) -> bool {
    let covers = |file: &str| file == path || (file.ends_with('/') && path.starts_with(file));
    PARTS.iter().any(|part| part.files.iter().any(|file| covers(file)))
}

/// The `version` of a `package.json`-shaped value at `pointer`.
fn version_at(path: &Path, pointer: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value.pointer(pointer)?.as_str().map(str::to_owned)
}

/// Installs the authorization server's packages when `node_modules` is missing or stale.
fn auth_server_packages(node: &Path) -> Result<(), String> {
    let dir = Path::new(AUTH_SERVER_DIR);
    let locked = version_at(&dir.join("package-lock.json"), "/packages/node_modules~1oidc-provider/version")
        .ok_or_else(|| format!("{AUTH_SERVER_DIR}/package-lock.json names no oidc-provider version"))?;
    let installed = version_at(&dir.join("node_modules/oidc-provider/package.json"), "/version");
    if installed.as_deref() == Some(locked.as_str()) {
        return Ok(());
    }
    eprintln!(
        "xtask: edge: installing oidc-provider@{locked} under {AUTH_SERVER_DIR} (found {})",
        installed.as_deref().unwrap_or("none")
    );
    let mut npm = Command::new("npm");
    npm.args(["ci", "--no-audit", "--no-fund", "--prefix", AUTH_SERVER_DIR]);
    // npm runs on the `node` first on PATH; the package wants Node 22.
    if let Some(path) = node::path_with(node) {
        npm.env("PATH", path);
    }
    let status = npm.status().map_err(|e| format!("npm: {e} (npm is needed to install oidc-provider)"))?;
    if !status.success() {
        return Err(format!("npm ci --prefix {AUTH_SERVER_DIR} failed ({status})"));
    }
    let installed = version_at(&dir.join("node_modules/oidc-provider/package.json"), "/version");
    if installed.as_deref() != Some(locked.as_str()) {
        return Err(format!("npm ci left oidc-provider {installed:?} installed, the lock names {locked}"));
    }
    Ok(())
}

/// The Chromium to use, checked to run.
fn chromium() -> Result<PathBuf, String> {
    let path = std::env::var_os("MCP_KERNEL_CHROMIUM")
        .map_or_else(|| PathBuf::from(DEFAULT_CHROMIUM), PathBuf::from);
    let version = Command::new(&path).arg("--version").stdin(Stdio::null()).stderr(Stdio::null()).output();
    match version {
        Ok(out) if out.status.success() => {
            eprintln!("xtask: edge: {}", String::from_utf8_lossy(&out.stdout).trim());
            Ok(path)
        }
        Ok(out) => Err(format!("chromium at {} does not run ({})", path.display(), out.status)),
        Err(error) => Err(format!(
            "chromium not found at {} ({error}): apt-get install chromium, or set MCP_KERNEL_CHROMIUM",
            path.display()
        )),
    }
}

/// The nginx to use, checked to run (`nginx -v` prints its version on stderr).
fn nginx() -> Result<PathBuf, String> {
    let path =
        std::env::var_os("MCP_KERNEL_NGINX").map_or_else(|| PathBuf::from(DEFAULT_NGINX), PathBuf::from);
    let version = Command::new(&path).arg("-v").stdin(Stdio::null()).stdout(Stdio::null()).output();
    match version {
        Ok(out) if out.status.success() => {
            eprintln!("xtask: edge: {}", String::from_utf8_lossy(&out.stderr).trim());
            Ok(path)
        }
        Ok(out) => Err(format!("nginx at {} does not run ({})", path.display(), out.status)),
        Err(error) => Err(format!(
            "nginx not found at {} ({error}): apt-get install nginx (.ci/run does), or set MCP_KERNEL_NGINX",
            path.display()
        )),
    }
}

/// The redis-server to use, checked to run (`redis-server --version` prints its version on stdout).
fn redis_server() -> Result<PathBuf, String> {
    let path = std::env::var_os("MCP_KERNEL_REDIS_SERVER")
        .map_or_else(|| PathBuf::from(DEFAULT_REDIS_SERVER), PathBuf::from);
    let version = Command::new(&path).arg("--version").stdin(Stdio::null()).stderr(Stdio::null()).output();
    match version {
        Ok(out) if out.status.success() => {
            eprintln!("xtask: edge: {}", String::from_utf8_lossy(&out.stdout).trim());
            Ok(path)
        }
        Ok(out) => Err(format!("redis-server at {} does not run ({})", path.display(), out.status)),
        Err(error) => Err(format!(
            "redis-server not found at {} ({error}): apt-get install redis-server (.ci/run does), or set MCP_KERNEL_REDIS_SERVER",
            path.display()
        )),
    }
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the parts named in `args` (all of them when none is), stopping at the first failure.
pub fn run(args: &[String]) -> Result<(), String> {
    let parts: Vec<&Part> = if args.is_empty() {
        PARTS.iter().collect()
    } else {
        args.iter()
            .map(|arg| {
                PARTS.iter().find(|part| part.name == arg).ok_or_else(|| {
                    format!(
                        "unknown part `{arg}` (expected {})",
                        PARTS.iter().map(|p| p.name).collect::<Vec<_>>().join(" or ")
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    let node = if parts.iter().any(|part| part.needs_node) {
        let node = node::ensure(&[])?;
        eprintln!(
            "xtask: edge: node {} ({})",
            node.display(),
            node::run_quiet(&node, &["--version"]).unwrap_or_default()
        );
        auth_server_packages(&node)?;
        Some(node)
    } else {
        None
    };
    let chromium = if parts.iter().any(|part| part.needs_chromium) {
        if !Path::new(BROWSER_TEST).exists() {
            return Err(format!("{BROWSER_TEST} is missing: the browser part has no test to run"));
        }
        Some(chromium()?)
    } else {
        None
    };
    let nginx = if parts.iter().any(|part| part.needs_nginx) { Some(nginx()?) } else { None };
    let redis = if parts.iter().any(|part| part.needs_redis) { Some(redis_server()?) } else { None };
    let cargo = cargo_program();
    let mut times = Vec::new();
    for part in parts {
        let started = Instant::now();
        for args in part.commands {
            eprintln!("xtask: edge {} — cargo {}", part.name, args.join(" "));
            let mut command = Command::new(&cargo);
            command.args(*args);
            if let Some(node) = &node {
                command
                    .env("MCP_KERNEL_NODE", node)
                    .env("MCP_KERNEL_AUTH_SERVER_DIR", absolute(Path::new(AUTH_SERVER_DIR))?);
            }
            if let Some(chromium) = &chromium {
                command.env("MCP_KERNEL_CHROMIUM", chromium);
            }
            if let Some(nginx) = &nginx {
                command.env("MCP_KERNEL_NGINX", nginx);
            }
            if let Some(redis) = &redis {
                command.env("MCP_KERNEL_REDIS_SERVER", redis);
            }
            let status = command.status().map_err(|e| format!("could not run cargo: {e}"))?;
            if !status.success() {
                return Err(format!("edge {} failed ({status})", part.name));
            }
        }
        let took = started.elapsed();
        eprintln!("xtask: edge {} took {:.1} s", part.name, took.as_secs_f64());
        times.push(format!("{} {:.1} s", part.name, took.as_secs_f64()));
    }
    eprintln!("xtask: edge passed ({})", times.join(", "));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_an_existing_file_and_only_the_proxy_parts_need_nginx() {
        let root = mcp_kernel_workspace::root();
        for part in PARTS {
            for file in part.files {
                let (exists, probe) = match file.strip_suffix('/') {
                    Some(_) => (root.join(file).is_dir(), format!("{file}main.rs")),
                    None => (root.join(file).is_file(), (*file).to_owned()),
                };
                assert!(exists, "{} runs {file}", part.name);
                assert!(runs_ignored_tests_of(&probe), "{probe}");
            }
            assert_eq!(part.needs_nginx, matches!(part.name, "proxy" | "traces" | "redis"), "{}", part.name);
            assert_eq!(part.needs_redis, part.name == "redis", "{}", part.name);
            assert_eq!(part.needs_node, part.name == "oauth", "{}", part.name);
        }
        assert!(!runs_ignored_tests_of("tools/tests-rmcp/tests/http.rs"));
        assert!(runs_ignored_tests_of("crates/kernel/redis/tests/integration/store.rs"));
    }

    #[test]
    fn the_locked_oidc_provider_version_is_read_from_the_lock() {
        let locked = version_at(
            &mcp_kernel_workspace::root().join("tools/tests-rmcp/auth-server/package-lock.json"),
            "/packages/node_modules~1oidc-provider/version",
        );
        let wanted = version_at(
            &mcp_kernel_workspace::root().join("tools/tests-rmcp/auth-server/package.json"),
            "/dependencies/oidc-provider",
        );
        assert!(locked.is_some(), "the lock names oidc-provider");
        assert_eq!(locked, wanted, "package.json pins exactly what the lock holds");
    }
}
