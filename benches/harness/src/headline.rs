//! The comparison's headline: the server's own CPU time per request, kernel against floor, per
//! transport and payload size, each beside its target ratio, and whether it is met.

use serde_json::{Value, json};

use super::report::number;

/// The target of the request path: the kernel's CPU per request at most this many times the floor's.
pub(super) const REQUEST_TARGET: f64 = 1.25;
/// The target of the large payloads.
pub(super) const PAYLOAD_TARGET: f64 = 1.1;

/// One line of the headline: a CPU metric of `compare.json`, what it measures, and its target.
pub(super) struct Headline {
    /// The metric's key.
    pub(super) key: &'static str,
    /// The transport (and payload size), as the line names it.
    pub(super) what: &'static str,
    /// The highest kernel/floor that meets the target.
    pub(super) target: f64,
}

/// The headline lines, in the order they print.
pub(super) const HEADLINES: [Headline; 8] = [
    Headline { key: "http_cpu_us", what: "HTTP/1.1, 32 connections", target: REQUEST_TARGET },
    Headline { key: "http_paced_cpu_us", what: "HTTP/1.1, 32 conn., same rate", target: REQUEST_TARGET },
    Headline { key: "stdio_cpu_us", what: "stdio pipelined", target: REQUEST_TARGET },
    Headline { key: "latency_cpu_us", what: "stdio ping-pong", target: REQUEST_TARGET },
    Headline { key: "stdio_64kib_cpu_us", what: "64 KiB, stdio ping-pong", target: PAYLOAD_TARGET },
    Headline { key: "http_64kib_cpu_us", what: "64 KiB, HTTP/1.1, 1 connection", target: PAYLOAD_TARGET },
    Headline { key: "stdio_1mib_cpu_us", what: "1 MiB − 1 KiB, stdio ping-pong", target: PAYLOAD_TARGET },
    Headline { key: "http_1mib_cpu_us", what: "1 MiB − 1 KiB, HTTP/1.1, 1 conn.", target: PAYLOAD_TARGET },
];

/// kernel/floor when both were measured (and the floor's is above zero).
pub(super) fn ratio(kernel: Option<f64>, floor: Option<f64>) -> Option<f64> {
    kernel.zip(floor).filter(|(_, f)| *f > 0.0).map(|(k, f)| k / f)
}

/// Whether a ratio meets `target`; `None` when there is no ratio.
pub(super) fn met(ratio: Option<f64>, target: f64) -> Option<bool> {
    ratio.map(|r| r <= target)
}

/// One headline line: `WHAT — server CPU per request: kernel X µs, floor Y µs, kernel/floor Z
/// (target ≤ T): met` (or `not met`, or what was not measured).
pub(super) fn line(what: &str, kernel: Option<f64>, floor: Option<f64>, target: f64) -> String {
    let us = |v: Option<f64>| v.map_or("not measured".to_owned(), |v| format!("{} µs", number(v)));
    let r = ratio(kernel, floor);
    let verdict = match met(r, target) {
        Some(true) => "met",
        Some(false) => "not met",
        None => "no ratio",
    };
    format!(
        "{what:<32} server CPU per request: kernel {}, floor {}, kernel/floor {} (target ≤ {target}): {verdict}",
        us(kernel),
        us(floor),
        r.map_or("—".to_owned(), |r| format!("{r:.2}")),
    )
}

/// The headline of a comparison's report (its `metrics`): the lines to print, for the metrics that
/// have a value for the kernel or the floor, and the same as JSON.
pub(super) fn headline(metrics: &Value) -> (Vec<String>, Value) {
    let mut lines = Vec::new();
    let mut entries = Vec::new();
    for h in &HEADLINES {
        let median = &metrics[h.key]["median"];
        let (kernel, floor) = (median["kernel"].as_f64(), median["floor"].as_f64());
        if kernel.is_none() && floor.is_none() {
            continue;
        }
        lines.push(line(h.what, kernel, floor, h.target));
        let r = ratio(kernel, floor);
        entries.push(json!({
            "metric": h.key,
            "what": h.what,
            "kernel_us": kernel,
            "floor_us": floor,
            "kernel/floor": r,
            "target": h.target,
            "met": met(r, h.target),
        }));
    }
    (lines, Value::Array(entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_both_figures_the_ratio_the_target_and_the_verdict() {
        assert_eq!(
            line("HTTP/1.1, 32 connections", Some(15.3), Some(11.2), 1.25),
            "HTTP/1.1, 32 connections         server CPU per request: kernel 15.3 µs, floor 11.2 µs, \
             kernel/floor 1.37 (target ≤ 1.25): not met"
        );
        assert!(
            line("stdio", Some(2_200.0), Some(2_100.0), 1.1)
                .ends_with("kernel 2200 µs, floor 2100 µs, kernel/floor 1.05 (target ≤ 1.1): met")
        );
        assert!(
            line("stdio", Some(12.0), None, 1.25)
                .ends_with("kernel 12.0 µs, floor not measured, kernel/floor — (target ≤ 1.25): no ratio")
        );
    }

    #[test]
    fn the_target_is_met_at_the_ratio_itself() {
        assert_eq!(met(ratio(Some(12.5), Some(10.0)), 1.25), Some(true));
        assert_eq!(met(ratio(Some(12.6), Some(10.0)), 1.25), Some(false));
        assert_eq!(met(ratio(Some(1.0), Some(0.0)), 1.25), None);
        assert_eq!(met(ratio(None, Some(10.0)), 1.25), None);
    }

    #[test]
    fn the_headline_covers_the_measured_metrics_in_order() {
        let metrics = json!({
            "stdio_cpu_us": {"median": {"kernel": 6.0, "rmcp": 20.0, "floor": 5.0}},
            "http_cpu_us": {"median": {"kernel": 15.0, "floor": 12.0}},
            "http_1mib_cpu_us": {"median": {"kernel": 3_290.0, "floor": 3_000.0}},
            "latency_cpu_us": {"median": {"kernel": null, "floor": null}},
        });
        let (lines, json) = headline(&metrics);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("HTTP/1.1, 32 connections") && lines[0].ends_with(": met"), "{lines:?}");
        assert!(lines[1].starts_with("stdio pipelined") && lines[1].contains("1.20"), "{lines:?}");
        assert!(lines[2].contains("kernel/floor 1.10 (target ≤ 1.1): met"), "{lines:?}");
        assert_eq!(json[0]["metric"], "http_cpu_us");
        assert_eq!(json[0]["met"], true);
        assert_eq!(json[2]["target"], 1.1);
        assert_eq!(json.as_array().map(Vec::len), Some(3));
    }
}
