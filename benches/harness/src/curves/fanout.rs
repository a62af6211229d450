//! The `listen-fanout` curve: one change of the tools list to 100, 1,000 and 10,000 open
//! `subscriptions/listen` streams of one kernel, in process: the time from the `announce` call until
//! the last stream read the `notifications/tools/list_changed`, and the server's CPU per notification
//! delivered. Only the kernel serves listen streams.

use super::run::{KERNEL_MAX_CONNECTIONS, SPARE_FDS, arg, load_http, measured, pid, start};
use super::table::cell;
use super::{Curve, Env, Measured, Outcome, Run, Server, Spec, kept, listed, shown};

/// The listeners, one stream per HTTP/1.1 connection.
const LISTENERS: [u64; 3] = [100, 1_000, 10_000];
/// Changes announced per run, one after another (fewer with `--quick`).
const ANNOUNCEMENTS: u32 = 20;
const QUICK_ANNOUNCEMENTS: u32 = 5;
/// Quiet between two changes (ms), once every listener read the last one.
const GAP_MS: u32 = 50;
/// The variable through which `bench-kernel` raises its listen limits (in all and per client).
const KERNEL_MAX_LISTENS: &str = "BENCH_KERNEL_MAX_LISTENS";
const KERNEL: &[&str] = &["kernel"];

fn announcements(env: &Env) -> u32 {
    if env.quick { QUICK_ANNOUNCEMENTS } else { ANNOUNCEMENTS }
}

/// One `bench-load fanout` run with `listeners` streams on one fresh kernel.
fn one(env: &Env, server: Server, point: usize, listeners: u64) -> Result<Measured, String> {
    let limit = arg(listeners + SPARE_FDS);
    let vars = [(KERNEL_MAX_CONNECTIONS, limit.clone()), (KERNEL_MAX_LISTENS, limit)];
    let started = start(env, server, &vars, listeners + SPARE_FDS)?;
    let (url, pid) = (started.url.clone(), pid(&started));
    let (streams, count, gap) = (arg(listeners), arg(announcements(env)), arg(GAP_MS));
    let args = [
        "fanout",
        "--urls",
        &url,
        "--pids",
        &pid,
        "--streams",
        &streams,
        "--announcements",
        &count,
        "--gap-ms",
        &gap,
    ];
    let (v, warnings) = load_http(env, started, &args)?;
    let mut m = measured(&v, warnings);
    m.copy(
        &v,
        point,
        &[
            ("last_p50_us", "last_p50_us"),
            ("last_max_us", "last_max_us"),
            ("cpu_per_notification_us", "server_cpu_us_per_stream"),
            ("stream_p50_us", "stream_p50_us"),
            ("announce_call_us", "announce_call_p50_us"),
            ("load_cpu_pct", "load_cpu_pct"),
            ("open_s", "open_s"),
        ],
    );
    Ok(m)
}

/// The growth of the last listener's time and of the CPU per notification, first point to last.
fn summary(spec: &Spec, outcome: &Outcome, _names: &[&'static str]) -> Vec<String> {
    let last = spec.points.len() - 1;
    let at = |p: usize, key: &str| outcome.median(p, key, "kernel");
    let mut notes = Vec::new();
    if let (Some(first), Some(end)) = (at(0, "last_p50_us"), at(last, "last_p50_us")) {
        let per = |p: usize, t: f64| t / spec.points[p].0;
        notes.push(format!(
            "From {} to {} listeners the last one read the change after {} and {} µs: {} and {} µs per listener.",
            spec.points[0].1,
            spec.points[last].1,
            cell(first),
            cell(end),
            cell(per(0, first)),
            cell(per(last, end))
        ));
    }
    notes
}

/// `listen-fanout`.
pub(super) fn listen_fanout(env: &Env) -> Curve {
    let spec = Spec {
        name: "listen-fanout",
        title: "One change to N listen streams: time to the last listener and server CPU per notification",
        x_label: "listeners",
        points: LISTENERS.iter().map(|&n| (n as f64, cell(n as f64))).collect(),
        categorical: false,
        metrics: vec![
            shown("last_p50_us", "change → last listener, p50 (µs)"),
            shown("cpu_per_notification_us", "server CPU per notification delivered (µs)"),
            listed("last_max_us", "change → last listener, max (µs)"),
            listed("stream_p50_us", "change → every listener, p50 (µs)"),
            kept("announce_call_us", "the announce call's round trip, p50 (µs)"),
            kept("load_cpu_pct", "generator CPU over the fan-outs (%)"),
            kept("open_s", "opening the streams (s)"),
        ],
        notes: vec![
            format!(
                "`bench-load fanout --streams N --announcements {} --gap-ms {GAP_MS}` against one fresh kernel (in \
                 process, `Notifications::in_process()`): N `subscriptions/listen` streams (`toolsListChanged`), one per \
                 HTTP/1.1 connection, opened 3,000 a second; then {} calls of `announce` one after another, each once \
                 every stream read the change before and {GAP_MS} ms passed; per change, the time from just before the \
                 call was sent until the last stream read its `notifications/tools/list_changed` (p50 and max over the \
                 changes).",
                announcements(env),
                announcements(env)
            ),
            "Server CPU per notification: the kernel's CPU (every thread's `schedstat`) from the call until every \
             stream read the change, divided by the streams: the call itself is in it, and is small beside N writes."
                .to_owned(),
            format!(
                "All streams come from 127.0.0.1: the kernel is started with `{KERNEL_MAX_CONNECTIONS}` and \
                 `{KERNEL_MAX_LISTENS}` at N + {SPARE_FDS} (its defaults admit 32 listens per client). The same \
                 measurement as `cargo xtask bench compare --listen N` and `--redis`, with one change per run there."
            ),
        ],
    };
    let runs = LISTENERS
        .iter()
        .enumerate()
        .map(|(point, &n)| Run {
            label: format!("{} listeners", cell(n as f64)),
            servers: KERNEL,
            measure: Box::new(move |env, server| one(env, server, point, n)),
        })
        .collect();
    Curve { spec, runs, summary }
}
