//! The `payload` curve: `tools/call` of `echo` with a 1 KiB, a 64 KiB and a 1 MiB − 1 KiB message
//! (the echoed result is as large), in MiB/s of request payload, over stdio ping-pong and over
//! HTTP/1.1 on 1 and on 32 connections. Every server runs with glibc's malloc thresholds fixed
//! ([`crate::PAYLOAD_MALLOC`]), as in the comparison's large-payload rows.

use crate::PAYLOAD_MALLOC;

use super::run::{SPARE_FDS, arg, load_http, load_stdio, measured, pid, start};
use super::{Curve, Env, Measured, Outcome, Run, SERVER_CPU_NOTE, Server, Spec, kept, listed, shown};

/// The message sizes. The largest leaves 1 KiB of the kernel's 1 MiB caps on a stdio line
/// (`MAX_LINE_BYTES`) and an HTTP body (`MAX_BODY_BYTES`) to the rest of the request (about 230
/// bytes), so that the defaults serve it.
const SIZES: [(usize, &str); 3] =
    [(1 << 10, "1 KiB"), (64 << 10, "64 KiB"), ((1 << 20) - (1 << 10), "1 MiB − 1 KiB")];
const ALL: &[&str] = &["kernel", "rmcp", "floor"];

/// `size` bytes in MiB.
fn mib(size: usize) -> f64 {
    size as f64 / f64::from(1u32 << 20)
}

/// The fixed malloc thresholds every server of the curve runs with.
fn malloc() -> (&'static str, String) {
    (PAYLOAD_MALLOC.0, PAYLOAD_MALLOC.1.to_owned())
}

/// Measured and warm-up calls of a stdio ping-pong run with `size`-byte messages.
fn stdio_requests(size: usize, quick: bool) -> (u32, u32) {
    let (n, warmup) = match size {
        s if s <= 4 << 10 => (2_000, 200),
        s if s <= 256 << 10 => (400, 40),
        _ => (60, 6),
    };
    if quick { (n / 2, warmup / 2) } else { (n, warmup) }
}

/// One request at a time over stdio: MiB/s is the message over the p50 round trip (the median is
/// what a busy shared machine moves least; the mean is kept too).
fn stdio(env: &Env, server: Server, point: usize, size: usize) -> Result<Measured, String> {
    let (n, warmup) = stdio_requests(size, env.quick);
    let (n, warmup, bytes) = (arg(n), arg(warmup), arg(size));
    let args = [
        "stdio-latency",
        "--requests",
        &n,
        "--warmup",
        &warmup,
        "--method",
        "call",
        "--message-bytes",
        &bytes,
        "--timeout",
        "120",
    ];
    let v = load_stdio(env, server, &args, &[malloc()])?;
    let mut m = measured(&v, Vec::new());
    if let Some(p50) = v["p50_us"].as_f64().filter(|&t| t > 0.0) {
        m.values.push((point, "stdio_mib_s", mib(size) / (p50 / 1e6)));
        m.values.push((point, "stdio_p50_us", p50));
    }
    m.copy(&v, point, &[("stdio_mean_us", "mean_us"), ("stdio_server_cpu_us", "server_cpu_us_per_unit")]);
    Ok(m)
}

/// A closed loop over `connections` HTTP/1.1 connections: MiB/s is the answered requests' messages.
fn http(env: &Env, server: Server, point: usize, size: usize, connections: u32) -> Result<Measured, String> {
    // Every connection comes from 127.0.0.1, one client to the kernel's body budget: its share is
    // raised to the whole budget (64 MiB), which 32 bodies of 1 MiB fit (rmcp and the floor ignore it).
    let share = [("BENCH_KERNEL_MAX_BODY_BYTES_PER_CLIENT", (64usize << 20).to_string()), malloc()];
    let started = start(env, server, &share, u64::from(connections) + SPARE_FDS)?;
    let (url, pid) = (started.url.clone(), pid(&started));
    let (warmup, duration, c, bytes) = (arg(env.warmup_s), arg(env.duration_s), arg(connections), arg(size));
    let args = [
        "http",
        "--url",
        &url,
        "--pid",
        &pid,
        "--connections",
        &c,
        "--message-bytes",
        &bytes,
        "--warmup",
        &warmup,
        "--duration",
        &duration,
    ];
    let (v, warnings) = load_http(env, started, &args)?;
    let mut m = measured(&v, warnings);
    let (mib_key, cpu_key, server_key) = if connections == 1 {
        ("http1_mib_s", "http1_load_cpu_pct", "http1_server_cpu_us")
    } else {
        ("http32_mib_s", "http32_load_cpu_pct", "http32_server_cpu_us")
    };
    m.copy(
        &v,
        point,
        &[(mib_key, "mib_s"), (cpu_key, "load_cpu_pct"), (server_key, "server_cpu_us_per_request")],
    );
    Ok(m)
}

/// The server CPU columns, by transport: (key, what).
const CPU_COLUMNS: [(&str, &str); 3] = [
    ("stdio_server_cpu_us", "stdio"),
    ("http1_server_cpu_us", "HTTP 1 conn."),
    ("http32_server_cpu_us", "HTTP 32 conn."),
];

/// The kernel's CPU per call against the floor's, by size and transport (the target at the large
/// sizes is 1.1).
fn cpu_summary(spec: &Spec, outcome: &Outcome, names: &[&'static str]) -> Vec<String> {
    if !names.contains(&"kernel") || !names.contains(&"floor") {
        return Vec::new();
    }
    let per_size: Vec<String> = spec
        .points
        .iter()
        .enumerate()
        .filter_map(|(p, (_, label))| {
            let ratios: Vec<String> = CPU_COLUMNS
                .iter()
                .filter_map(|(key, what)| {
                    let (k, f) = (outcome.median(p, key, "kernel")?, outcome.median(p, key, "floor")?);
                    (f > 0.0).then(|| format!("{what} {:.2}", k / f))
                })
                .collect();
            (!ratios.is_empty()).then(|| format!("{label}: {}", ratios.join(", ")))
        })
        .collect();
    if per_size.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "Server CPU per call, kernel/floor (the target at 64 KiB and 1 MiB − 1 KiB is at most 1.1): {}.",
        per_size.join("; ")
    )]
}

/// `payload`.
pub(super) fn payload(env: &Env) -> Curve {
    let spec = Spec {
        name: "payload",
        title: "tools/call echo by argument size: MiB/s of request payload",
        x_label: "message (argument) size",
        points: SIZES.iter().map(|&(bytes, label)| (bytes as f64 / 1024.0, label.to_owned())).collect(),
        categorical: false,
        metrics: vec![
            shown("stdio_mib_s", "stdio ping-pong (MiB/s)"),
            shown("http1_mib_s", "HTTP/1.1, 1 connection (MiB/s)"),
            shown("http32_mib_s", "HTTP/1.1, 32 connections (MiB/s)"),
            kept("stdio_p50_us", "stdio ping-pong p50 (µs)"),
            kept("stdio_mean_us", "stdio ping-pong mean (µs)"),
            listed("stdio_server_cpu_us", "stdio: server CPU per call (µs)"),
            listed("http1_server_cpu_us", "HTTP/1.1, 1 connection: server CPU per call (µs)"),
            listed("http32_server_cpu_us", "HTTP/1.1, 32 connections: server CPU per call (µs)"),
            kept("http1_load_cpu_pct", "generator CPU, 1 connection (%)"),
            kept("http32_load_cpu_pct", "generator CPU, 32 connections (%)"),
        ],
        notes: vec![
            "Each request is a `tools/call` of `echo` whose `message` is deterministic ASCII (letters and digits) of \
             the size shown; the result echoes it, so the answer is as large. The generator checks every echoed text \
             in full (its length, and a checksum in the error message when it differs)."
                .to_owned(),
            format!(
                "The largest message is 1 MiB − 1 KiB ({} bytes), so that the whole request (about 230 bytes more) fits \
                 under the kernel's default caps of 1 MiB on a stdio line and an HTTP body (`MAX_LINE_BYTES`, \
                 `MAX_BODY_BYTES`), which stay at their defaults.",
                SIZES[2].0
            ),
            format!(
                "stdio: one request at a time (`bench-load stdio-latency`; 2,000, 400 and 60 requests by size{}), MiB/s \
                 = message size / p50 round trip. HTTP: closed loop, {} s warm-up, {} s measured, MiB/s = answered \
                 requests × message size / window.",
                if env.quick { ", halved with --quick" } else { "" },
                env.warmup_s,
                env.duration_s
            ),
            "The generator parses and checks each answer as a client must: at 1 MiB its own JSON work is of the \
             server's order, so its CPU (the last note) bounds the HTTP figures."
                .to_owned(),
            format!(
                "Every server, at every size, runs with `{}={}` (glibc malloc's thresholds fixed, as in the \
                 comparison's large-payload rows), and so does the generator over stdio: with the defaults, \
                 which process gives its heap back and faults it in again on every call changes from one start \
                 to the next (docs/performance.md, \"Seventh round\").",
                PAYLOAD_MALLOC.0, PAYLOAD_MALLOC.1
            ),
            SERVER_CPU_NOTE.to_owned(),
        ],
    };
    let mut runs = Vec::new();
    for (point, &(size, label)) in SIZES.iter().enumerate() {
        runs.push(Run {
            label: format!("{label} over stdio"),
            servers: ALL,
            measure: Box::new(move |env, server| stdio(env, server, point, size)),
        });
        for connections in [1, 32] {
            runs.push(Run {
                label: format!("{label} over HTTP, {connections} connection(s)"),
                servers: ALL,
                measure: Box::new(move |env, server| http(env, server, point, size, connections)),
            });
        }
    }
    Curve { spec, runs, summary: cpu_summary }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_note_gives_kernel_over_floor_by_size_and_transport() {
        let spec = Spec {
            name: "payload",
            title: "",
            x_label: "",
            points: vec![(1.0, "1 KiB".into()), (64.0, "64 KiB".into())],
            categorical: false,
            metrics: Vec::new(),
            notes: Vec::new(),
        };
        let mut outcome = Outcome::default();
        for (p, key, server, v) in [
            (0, "stdio_server_cpu_us", "kernel", 12.0),
            (0, "stdio_server_cpu_us", "floor", 10.0),
            (1, "stdio_server_cpu_us", "kernel", 110.0),
            (1, "stdio_server_cpu_us", "floor", 100.0),
            (1, "http1_server_cpu_us", "kernel", 150.0),
            (1, "http1_server_cpu_us", "floor", 100.0),
            (1, "http32_server_cpu_us", "kernel", 150.0),
        ] {
            outcome.values.entry((p, key, server)).or_default().push(v);
        }
        let notes = cpu_summary(&spec, &outcome, &["kernel", "rmcp", "floor"]);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].ends_with("1 KiB: stdio 1.20; 64 KiB: stdio 1.10, HTTP 1 conn. 1.50."), "{notes:?}");
        assert!(cpu_summary(&spec, &outcome, &["kernel", "rmcp"]).is_empty());
    }
}
