//! `cargo xtask bench curves [--quick] [--rounds N] [--only kernel,rmcp,floor] [--curve NAME[,NAME]]
//! [--no-build]`: how cost grows — with connections, idle connections, drip connections, catalog
//! size, payload size, HTTP/2 streams, listen streams, live tasks and open sessions — for each server that can serve the curve, side by side.
//!
//! A curve is a [`Spec`] (its points, its metrics, its notes) and a list of [`Run`]s, each measuring
//! one or more of its points for one server. The runs are interleaved: for each round, each run, each
//! server in turn (3 rounds by default, 1 with `--quick`), and the medians of the rounds are reported. Each
//! curve is printed as a Markdown table (`table`), drawn as an SVG plot (`plot`), and written, every
//! round's values included, to `target/bench/curves.json`. The plots go to
//! `docs/performance/curves/<curve>.svg` (to `target/bench/curves/` with `--quick`, so that a quick
//! run never replaces the committed plots of a full one).
//!
//! The curve families live in modules of their own: `http` (`http-connections`, `h2c`), `memory`
//! (`idle-memory`, `drip-10k`), `catalog`, `payload`, `fanout` (`listen-fanout`), `stateful`
//! (`live-tasks`, `sessions`: the kernel alone); `options` reads the command line and `run`
//! holds what the families share (starting servers with enough open files, running `bench-load`).

mod catalog;
mod fanout;
mod http;
mod memory;
mod options;
mod payload;
mod plot;
mod run;
mod stateful;
mod table;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::report::{SATURATED_PCT, git_commit, machine, median};
use super::servers::Pinning;
use super::{LOAD, SERVERS, build};
use options::parse;

/// The curves, in the order they run: (name, what it measures).
const CURVES: [(&str, &str); 9] = [
    ("http-connections", "HTTP/1.1 throughput and p99 by keep-alive connections"),
    ("h2c", "h2c: 32 streams on one connection against 32 connections"),
    ("payload", "tools/call throughput by argument size, stdio and HTTP"),
    ("catalog", "list, walk, call and read latency by catalog size"),
    ("idle-memory", "server memory per idle keep-alive connection"),
    ("drip-10k", "legitimate latency with 10,000 drip connections open"),
    ("listen-fanout", "one change to 100 to 10,000 listen streams: time to the last, CPU per notification"),
    ("live-tasks", "tasks/get CPU and p99 by live tasks held, beside tools/call"),
    ("sessions", "a legacy session's call: CPU and p99 by open sessions, beside stateless legacy"),
];

const OUTPUT: &str = "target/bench/curves.json";
const DOCS_PLOTS: &str = "docs/performance/curves";
const QUICK_PLOTS: &str = "target/bench/curves";

/// One metric of a curve.
pub(super) struct Metric {
    /// Its key in `curves.json` and in a run's values.
    pub(super) key: &'static str,
    /// What it is, with its unit: a panel's heading and a table's column.
    pub(super) label: &'static str,
    /// Drawn as a panel of the plot.
    pub(super) plot: bool,
    /// Shown as columns of the table.
    pub(super) table: bool,
}

/// A metric shown in the plot and the table.
pub(super) const fn shown(key: &'static str, label: &'static str) -> Metric {
    Metric { key, label, plot: true, table: true }
}

/// A metric shown in the table, not plotted.
pub(super) const fn listed(key: &'static str, label: &'static str) -> Metric {
    Metric { key, label, plot: false, table: true }
}

/// A metric kept in `curves.json` only (and read by the notes).
pub(super) const fn kept(key: &'static str, label: &'static str) -> Metric {
    Metric { key, label, plot: false, table: false }
}

/// What a curve is.
pub(super) struct Spec {
    /// Its name (`--curve`, the file names).
    pub(super) name: &'static str,
    /// Its title.
    pub(super) title: &'static str,
    /// What the points are, with the unit: the x axis and the table's first column.
    pub(super) x_label: &'static str,
    /// The points: (x, label); `categorical` plots them evenly spaced.
    pub(super) points: Vec<(f64, String)>,
    /// Evenly spaced categories rather than numbers.
    pub(super) categorical: bool,
    /// What is measured at each point.
    pub(super) metrics: Vec<Metric>,
    /// What a reader of the table must know (settings, limits, who is not measured and why).
    pub(super) notes: Vec<String>,
}

/// What one run measured for one server: values by (point, metric key), and its errors.
#[derive(Default)]
pub(super) struct Measured {
    /// (point index, metric key, value).
    pub(super) values: Vec<(usize, &'static str, f64)>,
    /// Wrong or missing answers (`bench-load`'s count).
    pub(super) errors: u64,
    /// The first of them.
    pub(super) first_error: Option<String>,
    /// Something a reader must know about this run (a server that exited).
    pub(super) warnings: Vec<String>,
    /// The generator's CPU use, in percent of its core, when it was near its limit.
    pub(super) saturated_pct: Option<f64>,
}

impl Measured {
    /// Records, at `point`, each `(key, source)` whose `source` member of a `bench-load` result is a
    /// number; a member the result lacks is left out.
    pub(super) fn copy(&mut self, result: &serde_json::Value, point: usize, pairs: &[(&'static str, &str)]) {
        for &(key, source) in pairs {
            if let Some(value) = result[source].as_f64() {
                self.values.push((point, key, value));
            }
        }
    }
}

/// The metrics of a closed HTTP loop: throughput and p99 plotted, the server's CPU per request in the
/// table, p50 and the generator's CPU kept.
pub(super) fn closed_loop_metrics() -> Vec<Metric> {
    vec![
        shown("rps", "throughput (req/s)"),
        shown("p99_us", "p99 latency (µs)"),
        listed("server_cpu_us", SERVER_CPU_LABEL),
        kept("p50_us", "p50 latency (µs)"),
        kept("load_cpu_pct", "generator CPU (%)"),
    ]
}

/// The column of the server's own CPU per request.
pub(super) const SERVER_CPU_LABEL: &str = "server CPU per request (µs)";

/// The note under a table with the server's CPU per request: how it is read.
pub(super) const SERVER_CPU_NOTE: &str = "Server CPU per request: the server's own user + system time (the sum over \
     its threads of `/proc/PID/task/*/schedstat`, ns) over the measured window, divided by the requests answered \
     in it; lower is better.";

/// A measurement of a server: its name and binary.
pub(super) type Server = (&'static str, &'static str);

/// The function that makes a run for one server.
pub(super) type Measure = Box<dyn Fn(&Env, Server) -> Result<Measured, String>>;

/// One run of a curve.
pub(super) struct Run {
    /// What it measures (for the progress lines and the failures).
    pub(super) label: String,
    /// The servers that can serve it.
    pub(super) servers: &'static [&'static str],
    /// Measures it for one server.
    pub(super) measure: Measure,
}

/// Notes drawn from a curve's outcome, for the servers measured.
pub(super) type Summary = fn(&Spec, &Outcome, &[&'static str]) -> Vec<String>;

/// A curve: what it is and how it is measured.
pub(super) struct Curve {
    /// What it is.
    pub(super) spec: Spec,
    /// How it is measured.
    pub(super) runs: Vec<Run>,
    /// The notes its outcome adds to its table.
    pub(super) summary: Summary,
}

/// No notes from the outcome.
pub(super) fn no_summary(_: &Spec, _: &Outcome, _: &[&'static str]) -> Vec<String> {
    Vec::new()
}

/// What every run needs.
pub(super) struct Env {
    /// `--quick`: shorter runs.
    pub(super) quick: bool,
    /// How servers and the generator are pinned.
    pub(super) pinning: Pinning,
    /// The compare workspace's release directory.
    pub(super) release: PathBuf,
    /// `bench-load`.
    pub(super) load: PathBuf,
    /// HTTP warm-up, in seconds.
    pub(super) warmup_s: f64,
    /// HTTP measured window, in seconds.
    pub(super) duration_s: f64,
}

/// The values of a curve's runs: (point, metric, server) → one value per round.
type Values = BTreeMap<(usize, &'static str, &'static str), Vec<f64>>;

/// What a curve's rounds came to.
#[derive(Default)]
pub(super) struct Outcome {
    values: Values,
    /// (point, server) of values from a run with errors.
    flagged: BTreeSet<(usize, &'static str)>,
    /// What went wrong, in words.
    failures: Vec<String>,
    /// What a reader must know, in words.
    warnings: Vec<String>,
    /// The notes drawn from the values (the curve's `summary`).
    summary: Vec<String>,
    /// (run, server) → rounds in which the generator was near its limit, and its highest CPU use.
    saturated: BTreeMap<(usize, &'static str), (u32, f64)>,
}

impl Outcome {
    /// The median of the rounds at (point, metric, server).
    pub(super) fn median(&self, point: usize, key: &str, server: &str) -> Option<f64> {
        self.values
            .iter()
            .find(|((p, k, s), _)| *p == point && *k == key && *s == server)
            .and_then(|(_, v)| median(v))
    }
}

/// `cargo xtask bench curves …`.
pub(super) fn run(args: &[String], root: &Path) -> Result<(), String> {
    let options = parse(args)?;
    let manifest = root.join("benches/compare/Cargo.toml");
    if !manifest.exists() {
        return Err(format!("{} is missing", manifest.display()));
    }
    let servers: Vec<Server> =
        SERVERS.iter().copied().filter(|(name, _)| options.only.contains(name)).collect();
    if options.build {
        build::build(&manifest, &servers)?;
    }
    let release = build::release_dir(&manifest, &servers)?;
    let env = Env {
        quick: options.quick,
        pinning: Pinning::detect(),
        load: release.join(LOAD),
        release,
        warmup_s: if options.quick { 0.5 } else { 1.0 },
        duration_s: if options.quick { 1.5 } else { 2.0 },
    };
    let plots_dir = root.join(if options.quick { QUICK_PLOTS } else { DOCS_PLOTS });
    for dir in [root.join("target/bench"), plots_dir.clone()] {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    eprintln!(
        "xtask: bench curves: {} of {}, {} round(s), servers {}; {}",
        options.curves.join(" "),
        CURVES.len(),
        options.rounds,
        servers.iter().map(|s| s.0).collect::<Vec<_>>().join(" "),
        if env.pinning.enabled {
            "servers on CPU 0, load on CPU 1"
        } else {
            "no pinning (no taskset or one CPU)"
        }
    );
    let started = Instant::now();
    let mut report = serde_json::Map::new();
    let mut failures = Vec::new();
    for name in &options.curves {
        let curve = build_curve(name, &env);
        let curve_started = Instant::now();
        let mut outcome = measure(&curve, &env, &servers, options.rounds);
        let names: Vec<&'static str> = servers.iter().map(|s| s.0).collect();
        outcome.summary = (curve.summary)(&curve.spec, &outcome, &names);
        let subtitle = format!(
            "medians of {} round(s), {}; commit {}",
            options.rounds,
            machine_line(),
            git_commit(root).unwrap_or_else(|| "?".into())
        );
        println!("{}", table::markdown(&curve, &names, &outcome, options.rounds));
        let svg = plot::svg(&table::plot(&curve.spec, &names, &outcome, subtitle));
        let path = plots_dir.join(format!("{}.svg", curve.spec.name));
        std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!(
            "xtask: bench curves: {} took {:.0} s; plot written to {}",
            curve.spec.name,
            curve_started.elapsed().as_secs_f64(),
            path.strip_prefix(root).unwrap_or(&path).display()
        );
        failures.extend(outcome.failures.iter().map(|f| format!("{}: {f}", curve.spec.name)));
        report.insert(curve.spec.name.to_owned(), table::json(&curve, &names, &outcome));
    }
    let elapsed = started.elapsed().as_secs_f64();
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let report = json!({
        "commit": git_commit(root),
        "unix_time": unix,
        "machine": machine(),
        "pinned": env.pinning.enabled,
        "settings": {
            "quick": options.quick,
            "rounds": options.rounds,
            "http_warmup_s": env.warmup_s,
            "http_duration_s": env.duration_s,
        },
        "servers": servers.iter().map(|s| s.0).collect::<Vec<_>>(),
        "measuring_s": elapsed,
        "curves": Value::Object(report),
        "failures": failures,
    });
    let path = root.join(OUTPUT);
    let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("xtask: bench curves: written to {OUTPUT} ({elapsed:.0} s in all)");
    if failures.is_empty() {
        return Ok(());
    }
    for f in &failures {
        eprintln!("xtask: bench curves: {f}");
    }
    Err(format!("{} runs had errors (their cells are marked †)", failures.len()))
}

/// The curve called `name`.
fn build_curve(name: &str, env: &Env) -> Curve {
    match name {
        "http-connections" => http::connections(env),
        "h2c" => http::h2c(env),
        "payload" => payload::payload(env),
        "catalog" => catalog::catalog(env),
        "idle-memory" => memory::idle(env),
        "listen-fanout" => fanout::listen_fanout(env),
        "live-tasks" => stateful::live_tasks(env),
        "sessions" => stateful::sessions(env),
        _ => memory::drip(env),
    }
}

/// The CPU and its count, for a plot's subtitle.
fn machine_line() -> String {
    let m = machine();
    format!("{} × {}", m["nproc"], m["cpu"].as_str().unwrap_or("?"))
}

/// Every round of every run of `curve`, each server in turn.
fn measure(curve: &Curve, env: &Env, servers: &[Server], rounds: u32) -> Outcome {
    let mut outcome = Outcome::default();
    for round in 1..=rounds {
        eprintln!("xtask: bench curves: {} round {round}/{rounds}", curve.spec.name);
        for (index, run) in curve.runs.iter().enumerate() {
            for &server in servers.iter().filter(|(name, _)| run.servers.contains(name)) {
                let what = format!("{} {}, round {round}", server.0, run.label);
                match (run.measure)(env, server) {
                    Err(e) => outcome.failures.push(format!("{what}: {e}")),
                    Ok(m) => {
                        for (point, key, value) in &m.values {
                            outcome.values.entry((*point, key, server.0)).or_default().push(*value);
                            if m.errors > 0 {
                                outcome.flagged.insert((*point, server.0));
                            }
                        }
                        if m.errors > 0 {
                            outcome.failures.push(format!(
                                "{what}: {} errors; first: {}",
                                m.errors,
                                m.first_error.as_deref().unwrap_or("?")
                            ));
                        }
                        outcome.warnings.extend(m.warnings.into_iter().map(|w| format!("{what}: {w}")));
                        if let Some(pct) = m.saturated_pct {
                            let entry = outcome.saturated.entry((index, server.0)).or_insert((0, 0.0));
                            *entry = (entry.0 + 1, entry.1.max(pct));
                        }
                    }
                }
            }
        }
    }
    outcome
}
