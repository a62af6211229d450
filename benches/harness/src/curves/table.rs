//! A curve's outcome three ways: a Markdown table of the medians (one row per point, one column per
//! metric and server, the notes under it), the plot model of its plotted metrics, and its JSON (the
//! medians and every round's values).

use serde_json::{Value, json};

use super::plot::{Panel, Plot, Series, XAxis};
use super::{Curve, Outcome, SATURATED_PCT, Spec};

/// A median for a table: `64,626`, `482`, `96`, `12.5`, `6.0`, `0.84`.
pub(super) fn cell(v: f64) -> String {
    if v.abs() >= 1000.0 || (v.fract() == 0.0 && v.abs() >= 10.0) {
        let digits = format!("{:.0}", v.abs());
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        format!("{}{grouped}", if v < 0.0 { "-" } else { "" })
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The (metric, server) columns of the table: every table metric, for each server with a value for it.
fn columns<'a>(
    spec: &'a Spec,
    names: &[&'static str],
    outcome: &Outcome,
) -> Vec<(&'a str, &'a str, &'static str)> {
    let mut columns = Vec::new();
    for metric in spec.metrics.iter().filter(|m| m.table) {
        for &name in names {
            if (0..spec.points.len()).any(|p| outcome.median(p, metric.key, name).is_some()) {
                columns.push((metric.key, metric.label, name));
            }
        }
    }
    columns
}

/// Where the generator was near its limit, in words: per server, the runs and in how many rounds.
fn saturation_note(curve: &Curve, names: &[&'static str], outcome: &Outcome, rounds: u32) -> Option<String> {
    let mut per_server = Vec::new();
    let mut highest: f64 = 0.0;
    for &name in names {
        let runs: Vec<String> = outcome
            .saturated
            .iter()
            .filter(|((_, server), _)| *server == name)
            .map(|((run, _), (count, pct))| {
                highest = highest.max(*pct);
                format!("{} ({count} of {rounds})", curve.runs[*run].label)
            })
            .collect();
        if !runs.is_empty() {
            per_server.push(format!("{name}: {}", runs.join(", ")));
        }
    }
    (!per_server.is_empty()).then(|| {
        format!(
            "The generator used over {SATURATED_PCT:.0} % of its core (up to {highest:.0} %), so the server may be faster \
             than measured, in these runs (rounds): {}.",
            per_server.join("; ")
        )
    })
}

/// The curve's table in Markdown, its heading and notes included.
pub(super) fn markdown(curve: &Curve, names: &[&'static str], outcome: &Outcome, rounds: u32) -> String {
    let spec = &curve.spec;
    let mut out = format!("#### `{}`: {}\n\n", spec.name, spec.title);
    let columns = columns(spec, names, outcome);
    let mut header = format!("| {} |", spec.x_label);
    let mut rule = String::from("|---|");
    for (_, label, name) in &columns {
        header.push_str(&format!(" {name}: {label} |"));
        rule.push_str("---:|");
    }
    out.push_str(&header);
    out.push('\n');
    out.push_str(&rule);
    out.push('\n');
    for (p, (_, label)) in spec.points.iter().enumerate() {
        let mut line = format!("| {label} |");
        for (key, _, name) in &columns {
            let mark = if outcome.flagged.contains(&(p, *name)) { " †" } else { "" };
            let text = outcome.median(p, key, name).map_or("—".to_owned(), cell);
            line.push_str(&format!(" {text}{mark} |"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&format!("\nMedians of {rounds} round(s).\n"));
    for note in spec.notes.iter().chain(&outcome.summary) {
        out.push_str(&format!("- {note}\n"));
    }
    if let Some(note) = saturation_note(curve, names, outcome, rounds) {
        out.push_str(&format!("- {note}\n"));
    }
    if !outcome.flagged.is_empty() {
        out.push_str(
            "- † a run of this cell had wrong or missing answers (see the failures below the tables).\n",
        );
    }
    for warning in &outcome.warnings {
        out.push_str(&format!("- warning: {warning}\n"));
    }
    for failure in &outcome.failures {
        out.push_str(&format!("- failure: {failure}\n"));
    }
    out
}

/// The plot of the curve's plotted metrics: one panel per metric, one series per server that has a
/// value in any panel (so that a server's colour is the same in every panel).
pub(super) fn plot(spec: &Spec, names: &[&'static str], outcome: &Outcome, subtitle: String) -> Plot {
    let plotted: Vec<_> = spec.metrics.iter().filter(|m| m.plot).collect();
    let servers: Vec<&'static str> = names
        .iter()
        .copied()
        .filter(|name| {
            plotted.iter().any(|m| (0..spec.points.len()).any(|p| outcome.median(p, m.key, name).is_some()))
        })
        .collect();
    let panels = plotted
        .iter()
        .map(|metric| Panel {
            y_label: metric.label.to_owned(),
            series: servers
                .iter()
                .map(|name| Series {
                    name: (*name).to_owned(),
                    values: (0..spec.points.len()).map(|p| outcome.median(p, metric.key, name)).collect(),
                })
                .collect(),
        })
        .collect();
    Plot {
        title: spec.title.to_owned(),
        subtitle,
        x_label: spec.x_label.to_owned(),
        x: if spec.categorical {
            XAxis::Categorical(spec.points.iter().map(|(_, l)| l.clone()).collect())
        } else {
            XAxis::Numeric(spec.points.clone())
        },
        panels,
    }
}

/// The curve in `curves.json`: its points, notes, and per metric the medians and every round's values
/// by server (one entry per point, `null` where not measured).
pub(super) fn json(curve: &Curve, names: &[&'static str], outcome: &Outcome) -> Value {
    let spec = &curve.spec;
    let mut metrics = serde_json::Map::new();
    for metric in &spec.metrics {
        let (mut medians, mut runs) = (serde_json::Map::new(), serde_json::Map::new());
        for &name in names {
            let per_point: Vec<Vec<f64>> = (0..spec.points.len())
                .map(|p| outcome.values.get(&(p, metric.key, name)).cloned().unwrap_or_default())
                .collect();
            if per_point.iter().all(Vec::is_empty) {
                continue;
            }
            medians.insert(
                name.to_owned(),
                json!(
                    (0..spec.points.len()).map(|p| outcome.median(p, metric.key, name)).collect::<Vec<_>>()
                ),
            );
            runs.insert(name.to_owned(), json!(per_point));
        }
        metrics.insert(
            metric.key.to_owned(),
            json!({"label": metric.label, "plotted": metric.plot, "median": medians, "runs": runs}),
        );
    }
    let flagged: Vec<Value> =
        outcome.flagged.iter().map(|(p, s)| json!({"point": spec.points[*p].1, "server": s})).collect();
    json!({
        "title": spec.title,
        "x_label": spec.x_label,
        "points": spec.points.iter().map(|(x, label)| json!({"x": x, "label": label})).collect::<Vec<_>>(),
        "notes": spec.notes,
        "summary": outcome.summary,
        "metrics": metrics,
        "with_errors": flagged,
        "warnings": outcome.warnings,
        "generator_saturated": outcome
            .saturated
            .iter()
            .map(|((run, server), (rounds, pct))| {
                json!({"run": curve.runs[*run].label, "server": server, "rounds": rounds, "max_pct": pct})
            })
            .collect::<Vec<_>>(),
        "failures": outcome.failures,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Metric, Run, kept, no_summary, shown};
    use super::*;

    fn spec() -> Spec {
        Spec {
            name: "demo",
            title: "a demo",
            x_label: "connections",
            points: vec![(1.0, "1".into()), (8.0, "8".into())],
            categorical: false,
            metrics: vec![shown("rps", "req/s"), kept("cpu", "generator CPU (%)")],
            notes: vec!["a note".into()],
        }
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(
            [64_626.4, 1_234_567.0, 482.2, 96.0, 10.0, 12.34, 6.0, 0.844, -2500.0].map(cell),
            ["64,626", "1,234,567", "482", "96", "10", "12.3", "6.0", "0.84", "-2,500"]
        );
    }

    #[test]
    fn the_table_has_a_column_per_metric_and_measured_server() {
        let mut outcome = Outcome::default();
        for (p, v) in [(0, 100.0), (0, 300.0), (0, 200.0), (1, 5000.0)] {
            outcome.values.entry((p, "rps", "kernel")).or_default().push(v);
        }
        outcome.values.entry((0, "cpu", "kernel")).or_default().push(50.0);
        outcome.flagged.insert((1, "kernel"));
        outcome.saturated.insert((0, "kernel"), (2, 91.0));
        let curve = Curve {
            spec: spec(),
            runs: vec![Run {
                label: "one run".into(),
                servers: &["kernel"],
                measure: Box::new(|_, _| Err("x".into())),
            }],
            summary: no_summary,
        };
        let text = markdown(&curve, &["kernel", "rmcp"], &outcome, 3);
        assert!(text.contains("| connections | kernel: req/s |"), "{text}");
        assert!(!text.contains("rmcp"), "rmcp has no values: {text}");
        assert!(text.contains("| 1 | 200 |") && text.contains("| 8 | 5,000 † |"), "{text}");
        assert!(text.contains("- a note"));
        assert!(text.contains("(up to 91 %)") && text.contains("kernel: one run (2 of 3)"), "{text}");
        let plot = plot(&spec(), &["kernel", "rmcp"], &outcome, String::new());
        assert_eq!(plot.panels.len(), 1);
        assert_eq!(plot.panels[0].series.len(), 1);
        assert_eq!(plot.panels[0].series[0].values, [Some(200.0), Some(5000.0)]);
        let v = json(&curve, &["kernel", "rmcp"], &outcome);
        assert_eq!(v["generator_saturated"][0]["rounds"], 2);
        assert_eq!(v["metrics"]["rps"]["runs"]["kernel"], json!([[100.0, 300.0, 200.0], [5000.0]]));
        assert_eq!(v["metrics"]["cpu"]["median"]["kernel"], json!([50.0, null]));
        assert!(v["metrics"]["rps"]["median"].get("rmcp").is_none());
        let _: &Metric = &spec().metrics[0];
    }
}
