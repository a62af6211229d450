//! The tables of `--redis`: a column per setting, medians with the spread of the rounds, the ratio of
//! each later column to the first, and the Redis commands per operation.

use serde_json::{Value, json};

use crate::listen::Values;
use crate::report::{median, number, spread};

/// The ratio over Redis / in process of two medians, when both are there and the second is positive.
pub(crate) fn ratio(in_process: Option<f64>, over_redis: Option<f64>) -> Option<f64> {
    over_redis.zip(in_process).filter(|(_, p)| *p > 0.0).map(|(r, p)| r / p)
}

/// A table cell: the median, with the spread of the rounds when there are several.
pub(crate) fn cell(values: &[f64]) -> String {
    match (median(values), spread(values)) {
        (Some(m), Some(s)) if values.len() > 1 && m.abs() < 10.0 => format!("{m:.2} ±{s:.0}%"),
        (Some(m), Some(s)) if values.len() > 1 => format!("{} ±{s:.0}%", number(m)),
        (Some(m), _) if m.abs() < 10.0 => format!("{m:.2}"),
        (Some(m), _) => number(m),
        _ => "—".to_owned(),
    }
}

/// Prints one section — a column per `columns` (id, heading), numbered, then each later column's
/// ratio to the first — and returns its medians and runs.
pub(crate) fn section(
    title: &str,
    columns: &[(u32, &str)],
    rows: &[(&'static str, &str, bool)],
    values: &Values,
) -> serde_json::Map<String, Value> {
    let mut header = format!("{title:<40}");
    for (n, (_, heading)) in columns.iter().enumerate() {
        header.push_str(&format!(" {:>20}", format!("({}) {heading}", n + 1)));
    }
    for n in 2..=columns.len() {
        header.push_str(&format!(" {:>8}", format!("({n})/(1)")));
    }
    println!("{header}");
    println!("{}", "-".repeat(header.chars().count()));
    let mut metrics = serde_json::Map::new();
    for &(key, label, with_ratio) in rows {
        let column = |c: u32| values.get(key).and_then(|m| m.get(&c)).cloned().unwrap_or_default();
        let mut line = format!("{label:<40}");
        let (mut medians, mut runs, mut ratios) =
            (serde_json::Map::new(), serde_json::Map::new(), serde_json::Map::new());
        for &(id, heading) in columns {
            let v = column(id);
            line.push_str(&format!(" {:>20}", cell(&v)));
            medians.insert(heading.to_owned(), json!(median(&v)));
            runs.insert(heading.to_owned(), json!(v));
        }
        let first = median(&column(columns[0].0));
        for &(id, heading) in &columns[1..] {
            let r = ratio(first, median(&column(id))).filter(|_| with_ratio);
            line.push_str(&format!(" {:>8}", r.map_or(String::new(), |r| format!("{r:.2}"))));
            ratios.insert(heading.to_owned(), json!(r));
        }
        println!("{line}");
        metrics.insert(
            key.to_owned(),
            json!({"label": label, "median": medians, "ratio": ratios, "runs": runs}),
        );
    }
    metrics
}

/// `name n, name n` of a map of counts per command, largest first.
pub(crate) fn by_command(counts: &Value) -> String {
    let mut v: Vec<(&String, f64)> =
        counts.as_object().into_iter().flatten().filter_map(|(k, n)| Some((k, n.as_f64()?))).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    if v.is_empty() {
        return "none".to_owned();
    }
    v.iter().map(|(k, n)| format!("{k} {n:.2}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_need_both_medians_and_a_positive_base() {
        assert_eq!(ratio(Some(2.0), Some(3.0)), Some(1.5));
        assert_eq!(ratio(Some(0.0), Some(3.0)), None);
        assert_eq!(ratio(None, Some(3.0)), None);
        assert_eq!(ratio(Some(2.0), None), None);
    }

    #[test]
    fn cells_show_the_median_and_the_spread_of_several_rounds() {
        assert_eq!(cell(&[]), "—");
        assert_eq!(cell(&[1.0]), "1.00");
        assert_eq!(cell(&[900.0, 1_000.0, 1_100.0]), "1000 ±10%");
        assert_eq!(cell(&[2.0, 2.0, 2.0]), "2.00 ±0%");
    }

    #[test]
    fn commands_are_listed_largest_first() {
        assert_eq!(
            by_command(&json!({"get": 1.0, "evalsha": 2.0, "exists": 1.0})),
            "evalsha 2.00, exists 1.00, get 1.00"
        );
        assert_eq!(by_command(&json!({})), "none");
    }
}
