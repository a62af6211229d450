//! Tallying the rounds: the values per server and metric, medians, spreads and ratios, the machine
//! and commit a report names, the table of medians, and writing a report.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

/// Generator CPU above this share of its core means the server may have been faster than measured.
pub(super) const SATURATED_PCT: f64 = 80.0;

/// The measurements of one server: metric key → one value per round.
pub(super) type Runs = BTreeMap<&'static str, Vec<f64>>;

pub(super) struct Tally {
    pub(super) runs: BTreeMap<&'static str, Runs>,
    pub(super) errors: BTreeMap<&'static str, u64>,
    pub(super) failures: Vec<String>,
}

impl Tally {
    pub(super) fn record(&mut self, server: &'static str, key: &'static str, value: Option<f64>) {
        if let Some(v) = value {
            self.runs.entry(server).or_default().entry(key).or_default().push(v);
        }
    }

    /// Takes the error count of a result, or records a failure.
    pub(super) fn check(
        &mut self,
        server: &'static str,
        what: &str,
        result: Result<Value, String>,
    ) -> Option<Value> {
        match result {
            Ok(v) => {
                let errors = v["errors"].as_u64().unwrap_or(0);
                if errors > 0 {
                    *self.errors.entry(server).or_default() += errors;
                    self.failures.push(format!(
                        "{server} {what}: {errors} errors; first: {}",
                        v["first_errors"].get(0).and_then(Value::as_str).unwrap_or("?")
                    ));
                }
                Some(v)
            }
            Err(e) => {
                *self.errors.entry(server).or_default() += 1;
                self.failures.push(format!("{server} {what}: {e}"));
                None
            }
        }
    }
}

pub(super) fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 })
}

/// Half the range of the values, relative to their median, in percent.
pub(super) fn spread(values: &[f64]) -> Option<f64> {
    let m = median(values)?;
    let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    (m > 0.0).then(|| (hi - lo) / 2.0 / m * 100.0)
}

pub(super) fn number(v: f64) -> String {
    if v >= 100.0 { format!("{v:.0}") } else { format!("{v:.1}") }
}

pub(super) fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(str::trim)
        .unwrap_or("unknown");
    let nproc = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    json!({"nproc": nproc, "cpu": model})
}

pub(super) fn git_commit(root: &Path) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(["rev-parse", "--short", "HEAD"]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Prints the medians of the rounds per server, with ratios kernel/rmcp and kernel/floor for the
/// keys marked so, and returns them as JSON metrics. `empty(server, key)` is the cell of a key
/// without values.
pub(super) fn median_table(
    keys: &[(&str, &str, bool)],
    names: &[&'static str],
    tally: &Tally,
    empty: &dyn Fn(&str, &str) -> String,
) -> serde_json::Map<String, Value> {
    let values = |name: &str, key: &str| -> Vec<f64> {
        tally.runs.get(name).and_then(|r| r.get(key)).cloned().unwrap_or_default()
    };
    let ratio_keys: Vec<&str> =
        ["rmcp", "floor"].into_iter().filter(|o| names.contains(&"kernel") && names.contains(o)).collect();
    let mut header = format!("{:<36}", "median of the rounds");
    for name in names {
        header.push_str(&format!(" {name:>15}"));
    }
    for other in &ratio_keys {
        header.push_str(&format!(" {:>12}", format!("kernel/{other}")));
    }
    println!("{header}");
    println!("{}", "-".repeat(header.chars().count()));
    let mut metrics = serde_json::Map::new();
    for &(key, label, with_ratio) in keys {
        let mut line = format!("{label:<36}");
        let (mut medians, mut runs, mut ratios) =
            (serde_json::Map::new(), serde_json::Map::new(), serde_json::Map::new());
        for name in names {
            let v = values(name, key);
            let cell = match (median(&v), spread(&v)) {
                (Some(m), Some(s)) => format!("{} ±{s:.0}%", number(m)),
                (Some(m), None) => number(m),
                _ => empty(name, key),
            };
            line.push_str(&format!(" {cell:>15}"));
            medians.insert((*name).to_owned(), json!(median(&v)));
            runs.insert((*name).to_owned(), json!(v));
        }
        for other in &ratio_keys {
            let ratio = median(&values("kernel", key))
                .zip(median(&values(other, key)))
                .filter(|(_, o)| *o > 0.0)
                .map(|(k, o)| k / o);
            let cell = match ratio {
                Some(r) if with_ratio => format!("{r:.2}"),
                _ => String::new(),
            };
            line.push_str(&format!(" {cell:>12}"));
            if with_ratio {
                ratios.insert(format!("kernel/{other}"), json!(ratio));
            }
        }
        println!("{line}");
        metrics.insert(
            key.to_owned(),
            json!({"label": label, "median": medians, "ratio": ratios, "runs": runs}),
        );
    }
    metrics
}

/// Writes a run's report under `root` and fails when any run had errors.
pub(super) fn finish(
    root: &Path,
    output: &str,
    report: &Value,
    elapsed: f64,
    failures: &[String],
) -> Result<(), String> {
    let path = root.join(output);
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("xtask: bench: written to {output} ({elapsed:.0} s of measuring)");
    if failures.is_empty() {
        return Ok(());
    }
    for f in failures {
        eprintln!("xtask: bench: {f}");
    }
    Err(format!("{} runs had errors", failures.len()))
}
