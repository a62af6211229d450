//! What the curve families share: a server started over HTTP with enough open files (and
//! `bench-kernel`'s connection limits raised when a point needs it), `bench-load` run on its CPU
//! against it or against a stdio server it spawns, and the errors and warnings of its result.

use serde_json::Value;

use super::{Env, Measured, SATURATED_PCT, Server};
use crate::drip::soft_limit_of;
use crate::servers::{HttpServer, run_load_env, start_http_argv};

/// Open files a process needs beside its connections (stdio, the runtime, the listener, a probe).
pub(super) const SPARE_FDS: u64 = 128;

/// The variable through which `bench-kernel` raises both of its connection limits.
pub(super) const KERNEL_MAX_CONNECTIONS: &str = "BENCH_KERNEL_MAX_CONNECTIONS";

/// The kernel's default limit on connections from one peer address (`ServeOptions`).
pub(super) const KERNEL_PER_PEER_DEFAULT: u64 = 512;

/// The hard limit of the row `name` in the text of `/proc/PID/limits`; `None` when unlimited or absent.
pub(super) fn hard_limit_of(limits: &str, name: &str) -> Option<u64> {
    limits
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().nth(1)?.parse().ok())
}

/// `argv` with the soft limit on open files raised to `nofile` before the program runs, when this
/// process's own (which a child inherits) is lower: the program is run by `sh -c 'ulimit -S -n N &&
/// exec "$0" "$@"'`, after `taskset` if `argv` starts with it, so that its pid stays the program's.
pub(super) fn with_nofile(argv: Vec<String>, nofile: u64) -> Result<Vec<String>, String> {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft = soft_limit_of(&limits, "Max open files");
    if soft.is_none_or(|s| s >= nofile) {
        return Ok(argv);
    }
    if let Some(hard) = hard_limit_of(&limits, "Max open files").filter(|&h| h < nofile) {
        return Err(format!(
            "this needs {nofile} open files and the hard limit is {hard}: raise `ulimit -Hn`"
        ));
    }
    Ok(wrap_nofile(argv, nofile))
}

/// `argv` run through a shell that raises the soft limit on open files to `nofile` first.
pub(super) fn wrap_nofile(argv: Vec<String>, nofile: u64) -> Vec<String> {
    let at = if argv.first().is_some_and(|p| p == "taskset") { 3.min(argv.len()) } else { 0 };
    let mut wrapped = argv[..at].to_vec();
    wrapped.extend([
        "sh".to_owned(),
        "-c".to_owned(),
        format!("ulimit -S -n {nofile} && exec \"$0\" \"$@\""),
    ]);
    wrapped.extend(argv[at..].iter().cloned());
    wrapped
}

/// Starts `server` over HTTP on CPU 0, with `vars` in its environment and `nofile` open files.
pub(super) fn start(
    env: &Env,
    server: Server,
    vars: &[(&str, String)],
    nofile: u64,
) -> Result<HttpServer, String> {
    let binary = env.release.join(server.1);
    let argv = with_nofile(env.pinning.command(0, &binary, &["http", "127.0.0.1:0"]), nofile)?;
    start_http_argv(&argv, &binary, vars)
}

/// Runs `bench-load args…` on CPU 1 against a started server and stops the server; the server is
/// reported if it exited during the run.
pub(super) fn load_http(
    env: &Env,
    server: HttpServer,
    args: &[&str],
) -> Result<(Value, Vec<String>), String> {
    let mut server = server;
    let argv = env.pinning.command(1, &env.load, args);
    let result = run_load_env(&argv, &[]);
    let mut warnings = Vec::new();
    if let Ok(Some(status)) = server.child.try_wait() {
        warnings.push(format!("the server exited during the run ({status})"));
    }
    drop(server);
    result.map(|v| (v, warnings))
}

/// Runs `bench-load args… -- <server> stdio` (the server on CPU 0, spawned by the generator on CPU 1,
/// with `vars` in its environment).
pub(super) fn load_stdio(
    env: &Env,
    server: Server,
    args: &[&str],
    vars: &[(&str, String)],
) -> Result<Value, String> {
    let mut argv = env.pinning.command(1, &env.load, args);
    argv.push("--".to_owned());
    argv.extend(env.pinning.command(0, &env.release.join(server.1), &["stdio"]));
    run_load_env(&argv, vars)
}

/// A run's result with its values still to add: its errors and what a reader must know.
pub(super) fn measured(v: &Value, warnings: Vec<String>) -> Measured {
    Measured {
        errors: v["errors"].as_u64().unwrap_or(0),
        first_error: v["first_errors"].get(0).and_then(Value::as_str).map(str::to_owned),
        warnings,
        saturated_pct: v["load_cpu_pct"].as_f64().filter(|&c| c > SATURATED_PCT),
        ..Measured::default()
    }
}

/// The pid of a started server, as `bench-load` takes it.
pub(super) fn pid(server: &HttpServer) -> String {
    server.child.id().to_string()
}

/// A number for a command line.
pub(super) fn arg(v: impl ToString) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_wrapper_comes_after_taskset() {
        let argv: Vec<String> =
            ["taskset", "-c", "0", "/b/bench-kernel", "http", "127.0.0.1:0"].map(String::from).into();
        assert_eq!(
            wrap_nofile(argv, 2176),
            [
                "taskset",
                "-c",
                "0",
                "sh",
                "-c",
                "ulimit -S -n 2176 && exec \"$0\" \"$@\"",
                "/b/bench-kernel",
                "http",
                "127.0.0.1:0"
            ]
        );
        let bare: Vec<String> = ["/b/bench-floor", "http"].map(String::from).into();
        assert_eq!(wrap_nofile(bare, 10)[..3], ["sh", "-c", "ulimit -S -n 10 && exec \"$0\" \"$@\""]);
    }

    #[test]
    fn hard_limits_are_read() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max open files            1024                 524288               files     \n\
                      Max locked memory         unlimited            unlimited            bytes     \n";
        assert_eq!(hard_limit_of(limits, "Max open files"), Some(524_288));
        assert_eq!(hard_limit_of(limits, "Max locked memory"), None);
        assert_eq!(soft_limit_of(limits, "Max open files"), Some(1024));
    }
}
