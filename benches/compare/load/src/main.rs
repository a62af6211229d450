//! `bench-load`: the load generator for the comparison servers (`bench-kernel`, `bench-rmcp`,
//! `bench-floor`). Every run is bounded in count and time and talks to 127.0.0.1 only.
//!
//! ```text
//! bench-load stdio-throughput --requests N [--preamble FILE] [--timeout SECS] -- CMD ARGS...
//! bench-load stdio-latency    --requests N [--warmup N] [WORK] [--preamble FILE] [--timeout SECS] -- CMD ARGS...
//! bench-load http --url URL --connections C --warmup SECS --duration SECS [--protocol http1|h2c] [--streams S] [--rate R]
//!                 [--message-bytes B] [--pid PID] [--store-pid PID] [--live-tasks N] [--open-sessions N] [WORK]
//! bench-load hold --url URL --pid PID [--clients N] [--body-bytes B] [--hold-secs SECS]
//! bench-load drip --url URL --drips N [--requests R] [--interval-ms MS] [--wait-secs SECS] [--open-rate R] [--pid PID]
//! bench-load idle --url URL --pid PID --steps N[,N…] [--settle-secs S] [--hold-secs S] [--open-rate R]
//! bench-load listen --url URL --pid PID --streams N [--open-rate R] [--settle-secs S] [--idle-secs S] [--wait-secs S]
//! bench-load fanout --urls URL[,URL…] --streams N [--pids PID[,PID…]] [--store-pid PID] [--announcements R] [--gap-ms MS]
//!                   [--open-rate R] [--settle-secs S] [--wait-secs S]
//! bench-load tasks-memory --url URL --pid PID --count N [--as tasks|calls] [--connections C] [--settle-secs S] [--open-rate R]
//! bench-load tasks-notify --url URL --pid PID --tasks K [--spacing-ms MS] [--lead-ms MS] [--calls N] [--connections C]
//!                         [--wait-secs S]
//! bench-load tasks-trips --url URL [--stats-url URL] [--redis HOST:PORT] [--gets N] [--lifecycles L] [--wait-ms MS]
//!                        [--idle-ms MS]
//!
//! WORK: --method call [--tool NAME] [--message-bytes B] | --method list|walk [--list tools|templates]
//!       [--expect-items N] | --method read --uri URI | --method task-get | --method legacy|legacy-session
//! ```
//!
//! `work` says what one measured unit is for `stdio-latency` (a call with a message of any size, the
//! first page of a list, a walk of all its pages, a read) and checks each answer; `http` sends calls
//! with `--message-bytes` too, over HTTP/1.1 or h2c (`--streams` concurrent streams per connection).
//! `idle` (module `idle`) measures the server's memory per idle keep-alive connection, and `listen`
//! (module `listen`) the server's memory and idle CPU per open `subscriptions/listen` stream and how
//! long one change takes to reach every stream; `fanout` (module `listen`) spreads the streams over
//! servers sharing their notifications and times repeated changes to the last stream of each. `--method task-get` (for `stdio-latency` and `http`)
//! reads a working task of the tasks extension, created before the clock starts (one per connection
//! over HTTP); `tasks-memory` and `tasks-notify` (module `tasks`) measure the server's memory per live
//! task and how long a task's completion takes to reach a listener, each beside a baseline;
//! `tasks-trips` counts the trips to a shared store (Redis) per `tasks/get` and per task, by the
//! server's count and by the store's own (module `resp` reads its `INFO`). `--method legacy` (`http`
//! only) sends the `2025-11-25` `tools/call` of `echo` without a session, `--method legacy-session`
//! the same in a session of each connection's own, opened (`initialize`, `notifications/initialized`)
//! before the clock starts; `--live-tasks N` and `--open-sessions N` hold that many live tasks or open
//! sessions on the server over the run (module `held` makes them).
//!
//! `hold` (module `hold`) measures the server's memory per in-flight request whose body is half
//! sent. `drip` (module `drip`) measures legitimate requests' latency while N connections each send
//! a request head and then one body byte per second, and when the server ends those connections.
//! The other modes live in modules of their names too (`stdio`, `http`); `args` reads the command
//! line and `report` holds what a run reports.
//!
//! Unless `WORK` or `--message-bytes` says otherwise, each request is an MCP 2026-07-28 stateless
//! `tools/call` of the tool `echo` with the message `hello`; every response is checked (JSON-RPC 2.0,
//! a known id answered once, no error, no `isError`, `content[0].text == "hello"`, or what `work`
//! checks for the other kinds of request). The result is one JSON line on stdout and a human line
//! on stderr. The exit code is 0 when every request was answered correctly, 1 when some were not
//! (the JSON line is still printed), 2 when the run could not be made at all.

#![forbid(unsafe_code)]

mod args;
mod drip;
mod held;
mod hold;
mod http;
mod idle;
mod listen;
mod report;
mod resp;
mod stdio;
mod tasks;
mod work;

use std::process::ExitCode;
use std::sync::LazyLock;

use serde_json::Value;

// What `hold` and `drip` take from the crate root.
use args::{Args, seconds};
use http::{echo_request, exchange, parse_url};
use report::{Errors, Report, cpu_percent, error_suffix, own_cpu_seconds, summarize};
use work::{Step, Work, envelope};

const PROTOCOL: &str = "2026-07-28";
const MESSAGE: &str = "hello";
/// Upper bounds on what a command line may ask for: every run stays bounded.
const MAX_REQUESTS: u64 = 10_000_000;
/// Enough for `idle` at 10,000 connections and `http` at 2,048, with room.
const MAX_CONNECTIONS: usize = 16_384;
const MAX_SECONDS: f64 = 600.0;

const USAGE: &str = "usage:
  bench-load stdio-throughput --requests N [--preamble FILE] [--timeout SECS] -- CMD ARGS...
  bench-load stdio-latency    --requests N [--warmup N] [WORK] [--preamble FILE] [--timeout SECS] -- CMD ARGS...
  bench-load http --url http://127.0.0.1:PORT/mcp --connections C --warmup SECS --duration SECS
                  [--protocol http1|h2c] [--streams S] [--rate R] [--message-bytes B] [--pid PID] [--store-pid PID]
                  [--method call|task-get|legacy|legacy-session] [--live-tasks N] [--open-sessions N]
  bench-load hold --url http://127.0.0.1:PORT/mcp --pid PID [--clients N] [--body-bytes B] [--hold-secs SECS]
  bench-load drip --url http://127.0.0.1:PORT/mcp --drips N [--requests R] [--interval-ms MS] [--wait-secs SECS] [--open-rate R] [--pid PID]
  bench-load idle --url http://127.0.0.1:PORT/mcp --pid PID --steps N[,N...] [--settle-secs S] [--hold-secs S] [--open-rate R]
  bench-load listen --url http://127.0.0.1:PORT/mcp --pid PID --streams N [--open-rate R] [--settle-secs S] [--idle-secs S]
                    [--wait-secs S]
  bench-load fanout --urls http://127.0.0.1:PORT/mcp[,...] --streams N [--pids PID[,PID...]] [--store-pid PID]
                    [--announcements R] [--gap-ms MS] [--open-rate R] [--settle-secs S] [--wait-secs S]
  bench-load tasks-memory --url http://127.0.0.1:PORT/mcp --pid PID --count N [--as tasks|calls] [--connections C]
                          [--settle-secs S] [--open-rate R]
  bench-load tasks-notify --url http://127.0.0.1:PORT/mcp --pid PID --tasks K [--spacing-ms MS] [--lead-ms MS] [--calls N]
                          [--connections C] [--wait-secs S]
  bench-load tasks-trips --url http://127.0.0.1:PORT/mcp [--stats-url http://127.0.0.1:PORT/stats] [--redis 127.0.0.1:PORT]
                         [--gets N] [--lifecycles L] [--wait-ms MS] [--idle-ms MS]
WORK: --method call [--tool NAME] [--message-bytes B] | --method list|walk [--list tools|templates] [--expect-items N]
      | --method read --uri URI | --method task-get | --method legacy|legacy-session (http only)";

/// The JSON-RPC request with id `id`, as one line without its newline.
fn request_body(id: u64) -> String {
    format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"_meta":{{"#,
            r#""io.modelcontextprotocol/protocolVersion":"{}","io.modelcontextprotocol/clientCapabilities":{{}}}},"#,
            r#""name":"echo","arguments":{{"message":"{}"}}}}}}"#
        ),
        id, PROTOCOL, MESSAGE
    )
}

/// The echo call every mode but `stdio-latency --method` and `http --message-bytes` sends.
static ECHO: LazyLock<Work> = LazyLock::new(Work::default);

/// Checks one response: its numeric id if it has one, and whether it is a correct echo.
fn check_response(v: &Value) -> (Option<u64>, Result<(), String>) {
    let (id, verdict) = check_answer(v, &ECHO);
    (id, verdict.map(|_| ()))
}

/// Checks one response to a request of `work`: its numeric id if it has one, and where it leads.
fn check_answer(v: &Value, work: &Work) -> (Option<u64>, Result<Step, String>) {
    let (id, result) = envelope(v);
    (id, result.and_then(|r| work.check(r)))
}

fn short(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 200 {
        let mut cut = 200;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some(mode) = raw.first().cloned() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bench-load: no runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = Args::parse(&raw[1..]).and_then(|args| {
        runtime.block_on(async move {
            match mode.as_str() {
                "stdio-throughput" => stdio::stdio_throughput(args).await,
                "stdio-latency" => stdio::stdio_latency(args).await,
                "http" => http::http(args).await,
                "hold" => hold::hold(args).await,
                "drip" => drip::drip(args).await,
                "idle" => idle::idle(args).await,
                "listen" => listen::run(args).await,
                "fanout" => listen::fanout(args).await,
                "tasks-memory" => tasks::memory(args).await,
                "tasks-notify" => tasks::notify(args).await,
                "tasks-trips" => tasks::trips(args).await,
                "-h" | "--help" | "help" => Err(USAGE.to_owned()),
                other => Err(format!("unknown mode {other:?}\n{USAGE}")),
            }
        })
    });
    match outcome {
        Ok(report) => {
            println!("{}", report.json);
            eprintln!("{}", report.human);
            if report.errors == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Err(e) => {
            eprintln!("bench-load: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::sse_response;
    use serde_json::json;

    #[test]
    fn the_request_is_json() {
        let v: Value = serde_json::from_str(&request_body(7)).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["params"]["arguments"]["message"], "hello");
        assert_eq!(v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    }

    #[test]
    fn responses_are_checked() {
        let good = json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hello"}]}});
        assert_eq!(check_response(&good).0, Some(3));
        assert!(check_response(&good).1.is_ok());
        let wrong = json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"bye"}]}});
        assert!(check_response(&wrong).1.is_err());
        let error = json!({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"x"}});
        assert!(check_response(&error).1.is_err());
    }

    #[test]
    fn only_loopback_urls() {
        assert!(parse_url("http://127.0.0.1:8080/mcp").is_ok());
        assert!(parse_url("http://localhost:1/mcp").is_ok());
        assert!(parse_url("http://10.0.0.1:80/mcp").is_err());
        assert!(parse_url("http://example.com:80/").is_err());
        assert!(parse_url("http://127.0.0.1/mcp").is_err());
    }

    #[test]
    fn sse_bodies_are_read() {
        let body = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n";
        assert_eq!(sse_response(body, 5).unwrap()["id"], 5);
        assert!(sse_response(body, 6).is_none());
    }

    #[test]
    fn a_rate_is_a_positive_finite_number_of_requests_a_second() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        for bad in ["0", "-5", "NaN", "inf", "fast", "20000000"] {
            let args = args::Args::of(&["--url", "http://127.0.0.1:1/mcp", "--rate", bad]);
            let refused = runtime.block_on(http::http(args)).err().expect("refused before connecting");
            assert!(refused.contains("--rate"), "{bad}: {refused}");
        }
    }

    #[test]
    fn percentiles() {
        let s = summarize((1..=100).collect());
        assert_eq!((s.p50, s.p99, s.max), (50, 99, 100));
    }
}
