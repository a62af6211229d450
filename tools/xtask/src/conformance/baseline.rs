//! The baselines (`tools/conformance/baseline-<rev>.yml`), held to one rule the suite leaves out: a
//! SKIPPED check fails the run unless its baseline names it.
//!
//! The suite reads a baseline itself (`--expected-failures`): it fails on a FAILURE or WARNING the
//! baseline does not name, and on an entry that now passes. A SKIPPED check passes it silently, yet
//! what such a check tests was not tested: a server that stops advertising a capability turns its
//! checks into skips and would keep a green run. So every SKIPPED check of a scored scenario must be
//! named here — as `scenario:check-id` with its reason, or under an entry for its whole scenario — and
//! an entry that no longer skips or fails is stale, like the suite's own stale entries.

use std::path::Path;

use super::{Check, Verdict, newest_checks};

/// One entry of a baseline's `server` list: a whole scenario, or one check of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The scenario (`server-stateless`).
    pub scenario: String,
    /// The check, for a `scenario:check-id` entry.
    pub check: Option<String>,
}

impl Entry {
    /// The entry as written (`scenario` or `scenario:check-id`).
    pub fn named(&self) -> String {
        match &self.check {
            Some(check) => format!("{}:{check}", self.scenario),
            None => self.scenario.clone(),
        }
    }
}

/// The entries of a baseline's `server` list, in the suite's two forms (`scenario`,
/// `scenario:check-id`); comments and the `client` list are left out.
pub fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    let mut in_server = false;
    for (number, line) in text.lines().enumerate() {
        let content = line.split(" #").next().unwrap_or_default().trim_end();
        let trimmed = content.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let top_level = !content.starts_with([' ', '-']);
        if top_level {
            in_server = false;
            if let Some(rest) = trimmed.strip_prefix("server:") {
                match rest.trim() {
                    "" => in_server = true,
                    "[]" => {}
                    _ => return Err(format!("line {}: write the server list one entry a line", number + 1)),
                }
            }
            continue;
        }
        if !in_server {
            continue;
        }
        let item = trimmed
            .strip_prefix("- ")
            .map(|item| item.trim().trim_matches(['\'', '"']))
            .filter(|item| !item.is_empty())
            .ok_or_else(|| {
                format!("line {}: not a `- scenario` or `- scenario:check-id` entry", number + 1)
            })?;
        entries.push(match item.split_once(':') {
            Some((scenario, check)) if !scenario.is_empty() && !check.is_empty() => {
                Entry { scenario: scenario.to_owned(), check: Some(check.to_owned()) }
            }
            Some(_) => return Err(format!("line {}: both sides of the colon are needed", number + 1)),
            None => Entry { scenario: item.to_owned(), check: None },
        });
    }
    Ok(entries)
}

/// What breaks the rule in the newest runs under `results`: every SKIPPED check of a `scored` scenario
/// that `baseline` does not name, and every entry that is stale (its scenario is not scored, or its
/// check or scenario no longer skips, warns or fails). Each line names the check or the entry.
pub fn breaches(results: &Path, scored: &[String], baseline: &[Entry]) -> Vec<String> {
    breaches_of(scored, baseline, |scenario| newest_checks(results, scenario))
}

/// [`breaches`], with the checks of a scenario's newest run as `checks_of` reads them.
pub fn breaches_of(
    scored: &[String],
    baseline: &[Entry],
    checks_of: impl Fn(&str) -> Option<Vec<Check>>,
) -> Vec<String> {
    let mut found = Vec::new();
    for scenario in scored {
        let Some(checks) = checks_of(scenario) else { continue };
        let whole = baseline.iter().any(|e| &e.scenario == scenario && e.check.is_none());
        for check in checks.iter().filter(|c| c.status == "SKIPPED") {
            let named =
                baseline.iter().any(|e| &e.scenario == scenario && e.check.as_ref() == Some(&check.id));
            if !whole && !named {
                found.push(format!("{scenario}:{} SKIPPED, and the baseline does not name it", check.id));
            }
        }
    }
    for entry in baseline {
        if !scored.contains(&entry.scenario) {
            found.push(format!("baseline entry {} names no scored scenario", entry.named()));
            continue;
        }
        let Some(checks) = checks_of(&entry.scenario) else { continue };
        let stale = match &entry.check {
            None => Verdict::of(&checks) == Verdict::Passed,
            Some(id) => checks.iter().find(|c| &c.id == id).is_none_or(|c| c.status == "SUCCESS"),
        };
        if stale {
            found.push(format!("baseline entry {} is stale: it no longer skips or fails", entry.named()));
        }
    }
    found
}

/// A results directory (under the system's temporary directory, named after `name` and this
/// process) holding one run of each `(scenario, checks.json)`, as the suite writes them.
#[cfg(test)]
pub(crate) fn results_dir(name: &str, runs: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (scenario, checks) in runs {
        let run = dir.join(format!("server-{scenario}-2026-01-01T00-00-00-000Z"));
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("checks.json"), checks).unwrap();
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(name: &str, runs: &[(&str, &str)]) -> std::path::PathBuf {
        results_dir(&format!("baseline-{name}"), runs)
    }

    fn scored(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    const STATELESS: &str = r#"[{"id":"discover","status":"SUCCESS"},{"id":"ack","status":"SKIPPED"},
        {"id":"log","status":"INFO"}]"#;

    #[test]
    fn a_skipped_check_fails_the_run_and_is_named() {
        let dir = results(
            "skipped",
            &[("server-stateless", STATELESS), ("ping", r#"[{"id":"p","status":"SUCCESS"}]"#)],
        );
        let found = breaches(&dir, &scored(&["server-stateless", "ping"]), &[]);
        assert_eq!(found, ["server-stateless:ack SKIPPED, and the baseline does not name it"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_skipped_check_named_in_the_baseline_passes() {
        let dir = results("named", &[("server-stateless", STATELESS)]);
        let by_check = parse("server:\n  # design: why\n  - server-stateless:ack\nclient: []\n").unwrap();
        assert_eq!(breaches(&dir, &scored(&["server-stateless"]), &by_check), Vec::<String>::new());
        let by_scenario = parse("server:\n  - server-stateless\n").unwrap();
        assert_eq!(breaches(&dir, &scored(&["server-stateless"]), &by_scenario), Vec::<String>::new());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_skip_of_an_unscored_scenario_does_not_count() {
        let dir =
            results("unscored", &[("tasks-status-notifications", r#"[{"id":"t","status":"SKIPPED"}]"#)]);
        assert_eq!(breaches(&dir, &scored(&["ping"]), &[]), Vec::<String>::new());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_baseline_entry_that_no_longer_skips_or_fails_is_stale() {
        let dir = results(
            "stale",
            &[
                ("server-stateless", r#"[{"id":"ack","status":"SUCCESS"},{"id":"tag","status":"FAILURE"}]"#),
                ("ping", r#"[{"id":"p","status":"SUCCESS"}]"#),
                ("caching", r#"[{"id":"c","status":"WARNING"}]"#),
            ],
        );
        let baseline = parse(
            "server:\n  - server-stateless:ack\n  - server-stateless:tag\n  - server-stateless:gone\n  - ping\n  \
             - caching\n  - no-such-scenario\n",
        )
        .unwrap();
        let found = breaches(&dir, &scored(&["server-stateless", "ping", "caching"]), &baseline);
        assert_eq!(
            found,
            [
                "baseline entry server-stateless:ack is stale: it no longer skips or fails",
                "baseline entry server-stateless:gone is stale: it no longer skips or fails",
                "baseline entry ping is stale: it no longer skips or fails",
                "baseline entry no-such-scenario names no scored scenario",
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn reads_both_entry_forms_of_the_server_list_only() {
        let text = "# head\nserver:\n  # why\n  - tools-call-sampling\n  - 'server-stateless:ack' # inline\n\
                    - caching\nclient:\n  - not-read\n";
        assert_eq!(
            parse(text).unwrap(),
            [
                Entry { scenario: "tools-call-sampling".into(), check: None },
                Entry { scenario: "server-stateless".into(), check: Some("ack".into()) },
                Entry { scenario: "caching".into(), check: None },
            ]
        );
        assert_eq!(parse("server: []\nclient: []\n").unwrap(), []);
    }

    #[test]
    fn refuses_a_server_list_it_cannot_read() {
        assert!(parse("server: [a, b]\n").is_err(), "an inline list");
        assert!(parse("server:\n  - a:\n").is_err(), "a colon with one side");
        assert!(parse("server:\n  a: b\n").is_err(), "a mapping");
    }

    #[test]
    fn the_repository_baselines_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance");
        for revision in super::super::REVISIONS {
            let text = std::fs::read_to_string(dir.join(format!("baseline-{revision}.yml"))).unwrap();
            assert!(parse(&text).is_ok(), "baseline-{revision}.yml: {:?}", parse(&text));
        }
    }
}
