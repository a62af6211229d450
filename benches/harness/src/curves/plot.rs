//! The SVG writer of `cargo xtask bench curves`, by hand (no plotting dependency): one figure per
//! curve, a title and a subtitle, a legend, and one panel per plotted metric, each with its axes,
//! labelled ticks and units, and one polyline with markers per server. The x axis is numeric (ticks at
//! the points, log scale when they span two decades or more) or a row of categories; the y axis is
//! linear from 0, or log when the values span two decades or more.

use std::fmt::Write as _;

/// One figure.
pub(super) struct Plot {
    /// The figure's title.
    pub(super) title: String,
    /// A line under the title (how it was measured).
    pub(super) subtitle: String,
    /// What the x axis shows, with its unit.
    pub(super) x_label: String,
    /// The x positions of the points, shared by every panel and series.
    pub(super) x: XAxis,
    /// One panel per plotted metric.
    pub(super) panels: Vec<Panel>,
}

/// The x axis.
pub(super) enum XAxis {
    /// Numeric points: (value, tick label).
    Numeric(Vec<(f64, String)>),
    /// Evenly spaced categories, by label.
    Categorical(Vec<String>),
}

impl XAxis {
    fn label(&self, i: usize) -> &str {
        match self {
            XAxis::Numeric(points) => &points[i].1,
            XAxis::Categorical(labels) => &labels[i],
        }
    }
}

/// One panel: a metric, with its unit in the label, and a series per server.
pub(super) struct Panel {
    /// The metric and its unit, shown above the panel.
    pub(super) y_label: String,
    /// One series per server.
    pub(super) series: Vec<Series>,
}

/// One server's values, one per x point (`None` where it was not measured).
pub(super) struct Series {
    /// The server's name, as the legend shows it.
    pub(super) name: String,
    /// The values, by point.
    pub(super) values: Vec<Option<f64>>,
}

/// A map from values to pixels, linear or log.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scale {
    /// The value at `from`.
    pub(super) lo: f64,
    /// The value at `to`.
    pub(super) hi: f64,
    /// Log (base 10) rather than linear.
    pub(super) log: bool,
    /// The pixel of `lo`.
    pub(super) from: f64,
    /// The pixel of `hi`.
    pub(super) to: f64,
}

impl Scale {
    /// The pixel of `v`.
    pub(super) fn map(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.from + t * (self.to - self.from)
    }
}

/// Whether positive values from `min` to `max` span two decades or more (then a log scale shows them).
pub(super) fn spans_decades(min: f64, max: f64) -> bool {
    min > 0.0 && max / min >= 100.0
}

/// The smallest of 1, 2, 5 times a power of ten that is at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

/// The y range and ticks of `values`: (lo, hi, log, ticks).
pub(super) fn y_ticks(values: &[f64]) -> (f64, f64, bool, Vec<f64>) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let (min, max) = finite.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if finite.is_empty() {
        return (0.0, 1.0, false, vec![0.0, 0.5, 1.0]);
    }
    if spans_decades(min, max) {
        let lo = 10f64.powf(min.log10().floor());
        let mut hi = 10f64.powf(max.log10().ceil());
        if hi <= lo {
            hi = lo * 10.0;
        }
        let decades = (hi / lo).log10().round() as i32;
        let mut ticks = Vec::new();
        for d in 0..=decades {
            let base = lo * 10f64.powi(d);
            ticks.push(base);
            if decades <= 2 && d < decades {
                ticks.extend([2.0 * base, 5.0 * base]);
            }
        }
        return (lo, hi, true, ticks);
    }
    let lo = if min >= 0.0 { 0.0 } else { min };
    let step = nice_step((max.max(lo + 1e-9) - lo) / 5.0);
    let lo = if lo < 0.0 { (lo / step).floor() * step } else { 0.0 };
    let hi = ((max * 1.02) / step).ceil().max(1.0) * step;
    let count = ((hi - lo) / step).round() as usize;
    (lo, hi, false, (0..=count).map(|i| lo + i as f64 * step).collect())
}

/// A tick label: `1.5k`, `20k`, `3M`, `250`, `0.5`.
pub(super) fn tick_label(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_owned() } else { s }
    };
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.1}", v / 1e6)))
    } else if a >= 1e3 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        trim(format!("{v:.2}"))
    }
}

/// Text for SVG: `&`, `<`, `>` and `"` escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The colour and marker of the i-th series (kernel, rmcp, floor, then others).
const STYLES: [(&str, Marker); 4] = [
    ("#1f77b4", Marker::Circle),
    ("#d62728", Marker::Square),
    ("#7f7f7f", Marker::Triangle),
    ("#2ca02c", Marker::Diamond),
];

#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
}

fn marker(out: &mut String, kind: Marker, x: f64, y: f64, colour: &str, tip: &str) {
    let tip = format!("<title>{}</title>", escape(tip));
    let _ = match kind {
        Marker::Circle => {
            write!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{colour}">{tip}</circle>"#)
        }
        Marker::Square => write!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="{colour}">{tip}</rect>"#,
            x - 3.5,
            y - 3.5
        ),
        Marker::Triangle => write!(
            out,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{colour}">{tip}</polygon>"#,
            x,
            y - 4.5,
            x - 4.5,
            y + 3.5,
            x + 4.5,
            y + 3.5
        ),
        Marker::Diamond => write!(
            out,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{colour}">{tip}</polygon>"#,
            x,
            y - 5.0,
            x + 5.0,
            y,
            x,
            y + 5.0,
            x - 5.0,
            y
        ),
    };
    out.push('\n');
}

// The geometry of a figure, in pixels.
const PANEL_W: f64 = 460.0;
const PANEL_H: f64 = 320.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 66.0;
const HEAD: f64 = 92.0;
const FOOT: f64 = 8.0;

/// The SVG text of `plot`.
pub(super) fn svg(plot: &Plot) -> String {
    let columns = plot.panels.len().clamp(1, 2);
    let rows = plot.panels.len().div_ceil(2).max(1);
    let width = columns as f64 * PANEL_W;
    let height = HEAD + rows as f64 * PANEL_H + FOOT;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect x="0" y="0" width="{width:.0}" height="{height:.0}" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{:.0}" y="24" text-anchor="middle" font-size="16" font-weight="bold">{}</text>"#,
        width / 2.0,
        escape(&plot.title)
    );
    let _ = writeln!(
        out,
        r##"<text x="{:.0}" y="44" text-anchor="middle" fill="#555">{}</text>"##,
        width / 2.0,
        escape(&plot.subtitle)
    );
    legend(&mut out, plot, width);
    for (i, panel) in plot.panels.iter().enumerate() {
        let (x0, y0) = ((i % 2) as f64 * PANEL_W, HEAD + (i / 2) as f64 * PANEL_H);
        draw_panel(&mut out, plot, panel, x0, y0);
    }
    out.push_str("</svg>\n");
    out
}

/// The legend: one entry per series of the first panel, in a row under the subtitle.
fn legend(out: &mut String, plot: &Plot, width: f64) {
    let names: Vec<&str> =
        plot.panels.first().map(|p| p.series.iter().map(|s| s.name.as_str()).collect()).unwrap_or_default();
    let entry = 110.0;
    let mut x = width / 2.0 - entry * names.len() as f64 / 2.0;
    out.push_str("<g class=\"legend\">\n");
    for (i, name) in names.iter().enumerate() {
        let (colour, kind) = STYLES[i % STYLES.len()];
        let _ = writeln!(
            out,
            r#"<line x1="{:.1}" y1="66" x2="{:.1}" y2="66" stroke="{colour}" stroke-width="2"/>"#,
            x,
            x + 28.0
        );
        marker(out, kind, x + 14.0, 66.0, colour, name);
        let _ = writeln!(out, r#"<text x="{:.1}" y="70">{}</text>"#, x + 34.0, escape(name));
        x += entry;
    }
    out.push_str("</g>\n");
}

/// The x pixel of each point in a plot area from `left` to `right`.
fn x_positions(axis: &XAxis, left: f64, right: f64) -> Vec<f64> {
    match axis {
        XAxis::Categorical(labels) => {
            let n = labels.len().max(1) as f64;
            (0..labels.len()).map(|i| left + (i as f64 + 0.5) * (right - left) / n).collect()
        }
        XAxis::Numeric(points) => {
            let (min, max) =
                points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), (v, _)| (lo.min(*v), hi.max(*v)));
            let pad = (right - left) * 0.05;
            if points.len() < 2 || max <= min {
                return points.iter().map(|_| (left + right) / 2.0).collect();
            }
            let scale =
                Scale { lo: min, hi: max, log: spans_decades(min, max), from: left + pad, to: right - pad };
            points.iter().map(|(v, _)| scale.map(*v)).collect()
        }
    }
}

fn draw_panel(out: &mut String, plot: &Plot, panel: &Panel, x0: f64, y0: f64) {
    let (left, right) = (x0 + LEFT, x0 + PANEL_W - RIGHT);
    let (top, bottom) = (y0 + TOP, y0 + PANEL_H - BOTTOM);
    let values: Vec<f64> = panel.series.iter().flat_map(|s| s.values.iter().flatten().copied()).collect();
    let (lo, hi, log, ticks) = y_ticks(&values);
    let y = Scale { lo, hi, log, from: bottom, to: top };
    let xs = x_positions(&plot.x, left, right);
    out.push_str("<g class=\"panel\">\n");
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-weight="bold">{}</text>"#,
        (left + right) / 2.0,
        y0 + 18.0,
        escape(&format!("{}{}", panel.y_label, if log { " — log scale" } else { "" }))
    );
    // The y grid and its tick labels.
    for &t in &ticks {
        let py = y.map(t);
        let _ = writeln!(
            out,
            r##"<line x1="{left:.1}" y1="{py:.1}" x2="{right:.1}" y2="{py:.1}" stroke="#e0e0e0"/>"##
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            left - 6.0,
            py + 4.0,
            tick_label(t)
        );
    }
    // The axes.
    let _ = writeln!(
        out,
        r#"<polyline points="{left:.1},{top:.1} {left:.1},{bottom:.1} {right:.1},{bottom:.1}" fill="none" stroke="black" class="axes"/>"#
    );
    // The x ticks and their labels.
    let mut label_lines = 1;
    for (i, &px) in xs.iter().enumerate() {
        let _ = writeln!(
            out,
            r#"<line x1="{px:.1}" y1="{bottom:.1}" x2="{px:.1}" y2="{:.1}" stroke="black"/>"#,
            bottom + 5.0
        );
        // A label with commas is set on one line per part.
        let lines: Vec<String> = plot.x.label(i).split(", ").map(escape).collect();
        let spans: String = lines
            .iter()
            .enumerate()
            .map(|(j, l)| format!(r#"<tspan x="{px:.1}" dy="{}">{l}</tspan>"#, if j == 0 { 0 } else { 14 }))
            .collect();
        let _ = writeln!(
            out,
            r#"<text x="{px:.1}" y="{:.1}" text-anchor="middle">{spans}</text>"#,
            bottom + 18.0
        );
        label_lines = label_lines.max(lines.len());
    }
    let numeric_log = matches!(&plot.x, XAxis::Numeric(p) if {
        let (min, max) = p.iter().fold((f64::MAX, f64::MIN), |(lo, hi), (v, _)| (lo.min(*v), hi.max(*v)));
        spans_decades(min, max)
    });
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        (left + right) / 2.0,
        bottom + 38.0 + 14.0 * (label_lines - 1) as f64,
        escape(&format!("{}{}", plot.x_label, if numeric_log { " — log scale" } else { "" }))
    );
    // One polyline and its markers per series.
    for (i, series) in panel.series.iter().enumerate() {
        let (colour, kind) = STYLES[i % STYLES.len()];
        let points: Vec<(f64, f64, f64)> = series
            .values
            .iter()
            .zip(&xs)
            .filter_map(|(v, &px)| {
                v.filter(|v| v.is_finite() && (!log || *v > 0.0)).map(|v| (px, y.map(v), v))
            })
            .collect();
        let path: Vec<String> = points.iter().map(|(px, py, _)| format!("{px:.1},{py:.1}")).collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2" class="series"><title>{}</title></polyline>"#,
            path.join(" "),
            escape(&series.name)
        );
        for (px, py, v) in points {
            marker(out, kind, px, py, colour, &format!("{}: {}", series.name, tick_label(v)));
        }
    }
    out.push_str("</g>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that every tag is closed in order; the names of the elements opened, in order.
    fn balanced(svg: &str) -> Result<Vec<String>, String> {
        let mut stack: Vec<String> = Vec::new();
        let mut opened = Vec::new();
        let mut rest = svg;
        while let Some(at) = rest.find('<') {
            let end = rest[at..].find('>').ok_or("a tag without '>'")? + at;
            let tag = &rest[at + 1..end];
            rest = &rest[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                match stack.pop() {
                    Some(open) if open == name.trim() => {}
                    other => return Err(format!("</{name}> closes {other:?}")),
                }
                continue;
            }
            let name = tag.split_whitespace().next().unwrap_or_default().trim_end_matches('/').to_owned();
            opened.push(name.clone());
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        if stack.is_empty() { Ok(opened) } else { Err(format!("unclosed: {stack:?}")) }
    }

    fn sample() -> Plot {
        let series = |name: &str, values: Vec<Option<f64>>| Series { name: name.to_owned(), values };
        Plot {
            title: "HTTP & connections <test>".into(),
            subtitle: "medians of 3 rounds".into(),
            x_label: "connections".into(),
            x: XAxis::Numeric(vec![(1.0, "1".into()), (32.0, "32".into()), (2048.0, "2048".into())]),
            panels: vec![
                Panel {
                    y_label: "throughput (req/s)".into(),
                    series: vec![
                        series("kernel", vec![Some(20_000.0), Some(60_000.0), Some(55_000.0)]),
                        series("rmcp", vec![Some(9_000.0), Some(27_000.0), None]),
                        series("floor", vec![Some(25_000.0), Some(80_000.0), Some(70_000.0)]),
                    ],
                },
                Panel {
                    y_label: "p99 latency (µs)".into(),
                    series: vec![
                        series("kernel", vec![Some(90.0), Some(900.0), Some(60_000.0)]),
                        series("rmcp", vec![Some(150.0), Some(1_900.0), None]),
                        series("floor", vec![Some(80.0), Some(700.0), Some(40_000.0)]),
                    ],
                },
            ],
        }
    }

    #[test]
    fn the_svg_is_balanced_with_a_polyline_per_server_and_panel() {
        let svg = svg(&sample());
        let opened = balanced(&svg).unwrap();
        assert_eq!(opened.first().map(String::as_str), Some("svg"));
        assert_eq!(svg.matches(r#"class="series""#).count(), 6, "3 servers × 2 panels");
        // The axes of each panel are a polyline too.
        assert_eq!(opened.iter().filter(|n| *n == "polyline").count(), 6 + 2);
        // The title is escaped, the ticks are labelled, the units and the legend are there.
        assert!(svg.contains("HTTP &amp; connections &lt;test&gt;"));
        for label in
            [">2048<", ">32<", ">throughput (req/s)<", ">p99 latency (µs) — log scale<", ">80k<", ">kernel<"]
        {
            assert!(svg.contains(label), "{label} missing");
        }
        assert!(svg.contains(">connections — log scale<"));
        // rmcp has no value at 2048: its polylines have two points each.
        let rmcp: Vec<&str> =
            svg.lines().filter(|l| l.contains(r#"class="series""#) && l.contains(">rmcp<")).collect();
        assert_eq!(rmcp.len(), 2);
        assert!(
            rmcp.iter().all(|l| l
                .split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .split(' ')
                .count()
                == 2)
        );
    }

    #[test]
    fn log_scales_map_decades_evenly() {
        let scale = Scale { lo: 1.0, hi: 1000.0, log: true, from: 0.0, to: 300.0 };
        for (v, px) in [(1.0, 0.0), (10.0, 100.0), (100.0, 200.0), (1000.0, 300.0)] {
            assert!((scale.map(v) - px).abs() < 1e-9, "{v} → {}", scale.map(v));
        }
        // Upside down, as a y axis is.
        let y = Scale { lo: 10.0, hi: 100_000.0, log: true, from: 400.0, to: 0.0 };
        assert!((y.map(1000.0) - 200.0).abs() < 1e-9);
        let linear = Scale { lo: 0.0, hi: 50.0, log: false, from: 100.0, to: 200.0 };
        assert!((linear.map(25.0) - 150.0).abs() < 1e-9);
        assert!(spans_decades(1.0, 2048.0) && !spans_decades(10.0, 900.0) && !spans_decades(0.0, 1e6));
    }

    #[test]
    fn ticks_are_round() {
        let (lo, hi, log, ticks) = y_ticks(&[20_000.0, 81_000.0]);
        assert!(!log);
        assert_eq!((lo, hi), (0.0, 100_000.0));
        assert_eq!(ticks, [0.0, 20_000.0, 40_000.0, 60_000.0, 80_000.0, 100_000.0]);
        let (lo, hi, log, ticks) = y_ticks(&[90.0, 60_000.0]);
        assert!(log);
        assert_eq!((lo, hi), (10.0, 100_000.0));
        assert_eq!(ticks, [10.0, 100.0, 1000.0, 10_000.0, 100_000.0]);
        // Two decades get ticks at 2 and 5 times each power of ten too.
        let (_, _, log, ticks) = y_ticks(&[1.0, 100.0]);
        assert!(log);
        assert_eq!(ticks, [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        assert_eq!(y_ticks(&[]).3, [0.0, 0.5, 1.0]);
        assert_eq!(
            [1500.0, 20_000.0, 3e6, 250.0, 0.5, 0.0].map(tick_label),
            ["1.5k", "20k", "3M", "250", "0.5", "0"]
        );
    }

    #[test]
    fn categories_are_spaced_evenly() {
        let xs = x_positions(&XAxis::Categorical(vec!["a".into(), "b".into()]), 0.0, 100.0);
        assert_eq!(xs, [25.0, 75.0]);
        let xs = x_positions(
            &XAxis::Numeric(vec![(1.0, "1".into()), (10.0, "10".into()), (100.0, "100".into())]),
            0.0,
            100.0,
        );
        assert!((xs[1] - 50.0).abs() < 1e-9 && (xs[0] - 5.0).abs() < 1e-9 && (xs[2] - 95.0).abs() < 1e-9);
    }
}
