//! The HTTP curves: `http-connections` (HTTP/1.1 keep-alive `tools/call` throughput and p99 by the
//! number of connections, 1 to 2,048) and `h2c` (32 streams on one HTTP/2 prior-knowledge connection,
//! against 32 h2c connections of one stream each, and 32 HTTP/1.1 connections for reference).

use super::run::{
    KERNEL_MAX_CONNECTIONS, KERNEL_PER_PEER_DEFAULT, SPARE_FDS, arg, load_http, measured, pid, start,
};
use super::{Curve, Env, Measured, Run, SERVER_CPU_NOTE, Spec, closed_loop_metrics, no_summary};

/// The connection counts of `http-connections`.
const CONNECTIONS: [u32; 6] = [1, 8, 32, 128, 512, 2048];
/// The streams (or connections) of `h2c`.
const H2C_STREAMS: u32 = 32;
const ALL: &[&str] = &["kernel", "rmcp", "floor"];

/// One closed-loop `bench-load http` run of `connections` × `streams` over `protocol` against a fresh
/// server; its throughput and latencies at `point`.
fn closed_loop(
    env: &Env,
    server: super::Server,
    point: usize,
    connections: u32,
    streams: u32,
    protocol: &str,
) -> Result<Measured, String> {
    let connections_total = u64::from(connections);
    // The kernel admits 512 connections per peer by default: past that, its limits are raised.
    let vars: Vec<(&str, String)> = if connections_total > KERNEL_PER_PEER_DEFAULT {
        vec![(KERNEL_MAX_CONNECTIONS, arg(connections_total + SPARE_FDS))]
    } else {
        Vec::new()
    };
    let started = start(env, server, &vars, connections_total + SPARE_FDS)?;
    let (url, pid) = (started.url.clone(), pid(&started));
    let (warmup, duration) = (arg(env.warmup_s), arg(env.duration_s));
    let (connections, streams) = (arg(connections), arg(streams));
    let args = [
        "http",
        "--url",
        &url,
        "--pid",
        &pid,
        "--connections",
        &connections,
        "--streams",
        &streams,
        "--protocol",
        protocol,
        "--warmup",
        &warmup,
        "--duration",
        &duration,
    ];
    let (v, warnings) = load_http(env, started, &args)?;
    let mut m = measured(&v, warnings);
    m.copy(
        &v,
        point,
        &[
            ("rps", "rps"),
            ("p50_us", "p50_us"),
            ("p99_us", "p99_us"),
            ("load_cpu_pct", "load_cpu_pct"),
            ("server_cpu_us", "server_cpu_us_per_request"),
        ],
    );
    Ok(m)
}

/// `http-connections`.
pub(super) fn connections(env: &Env) -> Curve {
    let spec = Spec {
        name: "http-connections",
        title: "HTTP/1.1 keep-alive tools/call: throughput and p99 by connections",
        x_label: "connections",
        points: CONNECTIONS.iter().map(|&c| (f64::from(c), c.to_string())).collect(),
        categorical: false,
        metrics: closed_loop_metrics(),
        notes: vec![
            format!(
                "Closed loop (`bench-load http`): each connection sends its next `tools/call` of `echo` when the last \
                 is answered; {} s warm-up (the connections open in it, 64 at a time), then {} s measured; a fresh \
                 server per point.",
                env.warmup_s, env.duration_s
            ),
            format!(
                "The kernel runs with its default `ServeOptions` (4,096 connections, 512 per peer address) up to 512 \
                 connections; at 2,048, all from 127.0.0.1, it is started with `{KERNEL_MAX_CONNECTIONS}={}` (both \
                 limits), which rmcp and the floor ignore.",
                u64::from(CONNECTIONS[CONNECTIONS.len() - 1]) + SPARE_FDS
            ),
            "The server's and the generator's soft limits on open files are raised to the connections plus 128."
                .to_owned(),
            "The generator has one core: where it used over 80 % of it (the last note), the server may be faster \
             than measured."
                .to_owned(),
            SERVER_CPU_NOTE.to_owned(),
        ],
    };
    let runs = CONNECTIONS
        .iter()
        .enumerate()
        .map(|(point, &c)| Run {
            label: format!("{c} connections"),
            servers: ALL,
            measure: Box::new(move |env, server| closed_loop(env, server, point, c, 1, "http1")),
        })
        .collect();
    Curve { spec, runs, summary: no_summary }
}

/// `h2c`.
pub(super) fn h2c(env: &Env) -> Curve {
    let n = H2C_STREAMS;
    // (label, connections, streams per connection, protocol).
    let configs: [(String, u32, u32, &str); 3] = [
        (format!("h2c, 1 × {n}"), 1, n, "h2c"),
        (format!("h2c, {n} × 1"), n, 1, "h2c"),
        (format!("HTTP/1.1, {n} × 1"), n, 1, "http1"),
    ];
    let spec = Spec {
        name: "h2c",
        title: "h2c: 32 streams on one connection against 32 connections",
        x_label: "protocol, connections × streams each (32 requests in flight)",
        points: configs.iter().enumerate().map(|(i, c)| (i as f64, c.0.clone())).collect(),
        categorical: true,
        metrics: closed_loop_metrics(),
        notes: vec![
            format!(
                "HTTP/2 with prior knowledge (h2c) over plain TCP, {n} requests in flight in closed loop; {} s warm-up, \
                 {} s measured. The HTTP/1.1 row is the same load over {n} keep-alive connections, for reference.",
                env.warmup_s, env.duration_s
            ),
            "The kernel keeps its default `ServeOptions`: it advertises SETTINGS_MAX_CONCURRENT_STREAMS = 16, so on \
             one connection 16 of the 32 requests are open at once and the other 16 wait in the client's queue \
             (counted in their latency); hyper's default, which the floor and rmcp (through `axum::serve`) keep, is \
             200."
                .to_owned(),
            "Each h2c connection first sends one request and waits for its answer (the server's SETTINGS are in by \
             then), so that its streams keep to the server's limit; the floor serves HTTP/1.1 and h2c through \
             `hyper_util`'s `auto::Builder`, rmcp through `axum::serve` with axum's `http2` feature."
                .to_owned(),
            SERVER_CPU_NOTE.to_owned(),
        ],
    };
    let runs = configs
        .into_iter()
        .enumerate()
        .map(|(point, (label, connections, streams, protocol))| Run {
            label,
            servers: ALL,
            measure: Box::new(move |env, server| {
                closed_loop(env, server, point, connections, streams, protocol)
            }),
        })
        .collect();
    Curve { spec, runs, summary: no_summary }
}
