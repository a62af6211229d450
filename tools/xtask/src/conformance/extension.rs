//! The tasks extension's scenarios (`io.modelcontextprotocol/tasks`, SEP-2663), scored here since the
//! suite does not score them.
//!
//! The suite runs them with `--requirements 2026-07-28` and writes their `checks.json` like any
//! other, but lists them under "Run and reported, but never scored" and leaves them out of its exit
//! code and of `--expected-failures`. So `cargo xtask conformance` holds them to the rule it holds
//! the scored ones to, with a baseline of its own ([`BASELINE`], the same format): a FAILURE or a
//! WARNING it does not name fails the run, so does a SKIPPED check it does not name, a scenario that
//! did not run, and an entry that no longer skips or fails. Its reason word `suite` marks what the
//! suite itself does not test yet.
//!
//! One check is judged again ([`checks`]): `wire-schema-valid` validates every message against the
//! revision's core schema, which has no `CreateTaskResult` — the extension's answer to a `tools/call`
//! that became a task (`resultType: "task"`, no `content`) is read there as a `CallToolResult`
//! without `content`. Those violations, and only those, are left out; any other fails the check.

use std::path::Path;

use serde_json::{Value, json};

use super::baseline::{self, Entry};
use super::{Check, Verdict, fold, newest_lines};

/// The revision whose run carries the extension's scenarios.
pub const REVISION: &str = "2026-07-28";
/// The prefix of the extension's server scenarios.
pub const PREFIX: &str = "tasks-";
/// How the extension's row is labelled.
pub const LABEL: &str = "tasks extension";
/// The extension's baseline, read by `cargo xtask conformance` alone.
pub const BASELINE: &str = "tools/conformance/baseline-2026-07-28-tasks.yml";
/// The check judged again.
const WIRE_SCHEMA: &str = "wire-schema-valid";
/// What the suite's core-schema validator says of a `CreateTaskResult` answering a `tools/call`.
const MISREAD: &str = "CallToolResult: must have required property 'content' (result of 'tools/call')";

/// The extension's server scenarios in the output of `list --requirements <rev>`: the entries under
/// "Run and reported, but never scored", reason `extension`, marked `[server]`, whose name starts
/// with [`PREFIX`].
pub fn scenarios(listed: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_extension = false;
    for line in listed.lines().skip_while(|l| !l.starts_with("Run and reported, but never scored")).skip(1) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            break;
        }
        match trimmed.strip_prefix("- ") {
            Some(item) if in_extension => {
                if let Some(name) = item.strip_suffix(" [server]").filter(|n| n.starts_with(PREFIX)) {
                    names.push(name.to_owned());
                }
            }
            Some(_) => {}
            None => in_extension = trimmed.starts_with("extension ("),
        }
    }
    names
}

/// Whether a violation `wire-schema-valid` reports is a `CreateTaskResult` read as a `CallToolResult`
/// (a result of `tools/call` with `resultType: "task"` and a task id, and no other error).
fn is_misread(violation: &Value) -> bool {
    let result = &violation["message"]["result"];
    violation["origin"] == "implementation"
        && violation["context"] == "response to 'tools/call'"
        && violation["errors"] == json!([MISREAD])
        && result["resultType"] == "task"
        && result["taskId"].is_string()
}

/// The checks of the newest run of an extension scenario under `results`, folded, with
/// `wire-schema-valid` judged again: a FAILURE whose every violation is a misread `CreateTaskResult`
/// is a SUCCESS. With them, how many violations were left out. `None` when it did not run.
pub fn checks(results: &Path, scenario: &str) -> Option<(Vec<Check>, usize)> {
    let mut lines = newest_lines(results, scenario)?;
    let mut left_out = 0;
    for line in lines.iter_mut().filter(|l| l["id"] == WIRE_SCHEMA && l["status"] == "FAILURE") {
        let violations = line["details"]["violations"].as_array().cloned().unwrap_or_default();
        if !violations.is_empty() && violations.iter().all(is_misread) {
            left_out += violations.len();
            line["status"] = Value::from("SUCCESS");
        }
    }
    Some((fold(&lines), left_out))
}

/// The verdict of an extension scenario's newest run, judged as [`checks`] does.
pub fn verdict(results: &Path, scenario: &str) -> Verdict {
    checks(results, scenario).map_or(Verdict::NotRun, |(checks, _)| Verdict::of(&checks))
}

/// What breaks the rule in the newest runs of the extension's `scenarios` under `results` (judged as
/// [`checks`] does): a scenario that did not run, a FAILURE or WARNING that `expected` does not name,
/// and what [`baseline::breaches_of`] finds (an unnamed SKIPPED check, a stale entry). Each line names
/// the check.
pub fn breaches(results: &Path, scenarios: &[String], expected: &[Entry]) -> Vec<String> {
    let checks_of = |scenario: &str| checks(results, scenario).map(|(checks, _)| checks);
    let mut found = Vec::new();
    if scenarios.is_empty() {
        found.push(format!("the suite lists no {PREFIX}* extension scenario"));
    }
    for scenario in scenarios {
        let Some(checks) = checks_of(scenario).filter(|checks| !checks.is_empty()) else {
            found.push(format!("{scenario} did not run"));
            continue;
        };
        let whole = expected.iter().any(|e| &e.scenario == scenario && e.check.is_none());
        for check in checks.iter().filter(|c| c.status == "FAILURE" || c.status == "WARNING") {
            let named =
                expected.iter().any(|e| &e.scenario == scenario && e.check.as_ref() == Some(&check.id));
            if !whole && !named {
                found.push(format!(
                    "{scenario}:{} {}, and the baseline does not name it",
                    check.id, check.status
                ));
            }
        }
    }
    found.extend(baseline::breaches_of(scenarios, expected, checks_of));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The relevant part of the pinned suite's `list --requirements 2026-07-28`, as it prints it.
    const LISTED: &str = "Server scenarios (test against a server):\n  - server-stateless\n\n\
        Client scenarios (test against a client):\n  - tools_call\n\n\
        Run and reported, but never scored:\n  extension (4):\n    - auth/dpop [client]\n    \
        - tasks-lifecycle [server]\n    - tasks-status-notifications [server]\n    - other-ext [server]\n  \
        pending (2):\n    - json-schema-2020-12 [server]\n    - tasks-not-an-extension [server]\n\n";

    #[test]
    fn the_extension_scenarios_are_the_server_entries_listed_as_extension_and_never_scored() {
        assert_eq!(scenarios(LISTED), ["tasks-lifecycle", "tasks-status-notifications"]);
        assert_eq!(
            scenarios("Server scenarios (test against a server):\n  - tasks-lifecycle\n"),
            Vec::<String>::new()
        );
    }

    fn results(name: &str, runs: &[(&str, &str)]) -> std::path::PathBuf {
        crate::conformance::baseline::results_dir(&format!("extension-{name}"), runs)
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| (*n).to_owned()).collect()
    }

    const SKIPPED_BY_THE_SUITE: &str = r#"[{"id":"tasks-status-notifications","status":"SKIPPED"}]"#;

    #[test]
    fn a_regression_of_an_unscored_extension_scenario_fails_the_run() {
        let dir = results(
            "regressed",
            &[
                ("tasks-lifecycle", r#"[{"id":"a","status":"SUCCESS"},{"id":"b","status":"FAILURE"}]"#),
                ("tasks-wire-fields", r#"[{"id":"w","status":"WARNING"}]"#),
                ("tasks-status-notifications", SKIPPED_BY_THE_SUITE),
            ],
        );
        let expected =
            baseline::parse("server:\n  - tasks-status-notifications:tasks-status-notifications\n").unwrap();
        let scenarios =
            names(&["tasks-lifecycle", "tasks-wire-fields", "tasks-status-notifications", "tasks-gone"]);
        assert_eq!(
            breaches(&dir, &scenarios, &expected),
            [
                "tasks-lifecycle:b FAILURE, and the baseline does not name it",
                "tasks-wire-fields:w WARNING, and the baseline does not name it",
                "tasks-gone did not run",
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_skip_of_the_suite_passes_only_while_the_baseline_names_it_and_it_still_skips() {
        let dir = results("skip", &[("tasks-status-notifications", SKIPPED_BY_THE_SUITE)]);
        let scenarios = names(&["tasks-status-notifications"]);
        assert_eq!(
            breaches(&dir, &scenarios, &[]),
            [
                "tasks-status-notifications:tasks-status-notifications SKIPPED, and the baseline does not name it"
            ]
        );
        let named =
            baseline::parse("server:\n  - tasks-status-notifications:tasks-status-notifications\n").unwrap();
        assert_eq!(breaches(&dir, &scenarios, &named), Vec::<String>::new());
        let now_passing = results(
            "tested",
            &[("tasks-status-notifications", r#"[{"id":"tasks-status-notifications","status":"SUCCESS"}]"#)],
        );
        assert_eq!(
            breaches(&now_passing, &scenarios, &named),
            [
                "baseline entry tasks-status-notifications:tasks-status-notifications is stale: it no longer skips or fails"
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&now_passing);
    }

    /// A `wire-schema-valid` line reporting `violations`.
    fn wire_schema(violations: &[Value]) -> String {
        let line = json!([{"id": "a", "status": "SUCCESS"},
            {"id": WIRE_SCHEMA, "status": "FAILURE", "details": {"violations": violations}}]);
        line.to_string()
    }

    fn violation(result: Value, errors: &[&str]) -> Value {
        json!({"origin": "implementation", "context": "response to 'tools/call'", "errors": errors,
               "message": {"jsonrpc": "2.0", "id": 2, "result": result}})
    }

    #[test]
    fn a_create_task_result_the_core_schema_misreads_is_left_out_of_wire_schema_valid_and_nothing_else() {
        let created = json!({"taskId": "t1", "status": "working", "resultType": "task", "ttlMs": 1000});
        let misread = violation(created.clone(), &[MISREAD]);
        let sync_without_content = violation(json!({"resultType": "complete"}), &[MISREAD]);
        let other_error = violation(created, &[MISREAD, "CallToolResult/x: must be string"]);
        let dir = results(
            "misread",
            &[
                ("tasks-lifecycle", &wire_schema(&[misread.clone(), misread.clone()])),
                ("tasks-wire-fields", &wire_schema(&[misread.clone(), sync_without_content])),
                ("tasks-mrtr-input", &wire_schema(&[other_error])),
            ],
        );
        let (judged, left_out) = checks(&dir, "tasks-lifecycle").unwrap();
        assert_eq!(left_out, 2);
        assert_eq!(Verdict::of(&judged), Verdict::Passed);
        assert_eq!(
            verdict(&dir, "tasks-wire-fields"),
            Verdict::Failed,
            "a complete result must carry content"
        );
        assert_eq!(
            verdict(&dir, "tasks-mrtr-input"),
            Verdict::Failed,
            "another error of the same message counts"
        );
        assert_eq!(checks(&dir, "tasks-wire-fields").unwrap().1, 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_suite_that_lists_no_extension_scenario_fails_the_run() {
        let dir = results("none", &[]);
        assert_eq!(breaches(&dir, &[], &[]), ["the suite lists no tasks-* extension scenario"]);
    }

    #[test]
    fn the_repository_baseline_of_the_extension_parses_and_gives_each_entry_a_reason() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(BASELINE);
        let text = std::fs::read_to_string(&path).unwrap();
        let entries = baseline::parse(&text).unwrap();
        assert!(entries.iter().all(|e| e.scenario.starts_with(PREFIX)), "{entries:?}");
        let mut reason = false;
        for line in text.lines().map(str::trim) {
            let word = line.strip_prefix("# ").and_then(|rest| rest.split_once(':')).map(|(word, _)| word);
            reason |= matches!(word, Some("suite" | "not-implemented" | "design" | "harness"));
            assert!(!line.starts_with("- ") || reason, "{line}: no reason word before it");
        }
    }
}
