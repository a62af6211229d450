//! The `render` command (`connectome render`): refusals exit 2 with one short line, output is byte-identical.

use std::path::PathBuf;

use crate::common::{Output, data, run_cli};

fn scratch(name: &str, bytes: &[u8]) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("connectome-render-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

fn run(args: &[&str]) -> Output {
    run_cli(args)
}

fn refused(out: &Output) -> String {
    assert_eq!(Some(out.code), Some(2), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.len() < 240, "short: {err}");
    err
}

#[test]
fn malformed_json_exits_2_with_short_message() {
    let bad = scratch("bad.json", br#"{"schema_version":3,"algorithm":"sha256","nodes":[SECRET-CONTENT"#);
    let err = refused(&run(&["render", "--declared", &bad, "--format", "mermaid"]));
    assert!(err.starts_with("connectome: declared export: not JSON: "), "{err}");
    assert!(!err.contains("SECRET"), "{err}");
}

#[test]
fn wrong_schema_version_exits_2() {
    let v2 = scratch("v2.json", br#"{"schema_version":2,"nodes":[],"edges":[]}"#);
    let err = refused(&run(&["render", "--declared", &v2, "--format", "dot"]));
    assert_eq!(err, "connectome: declared export: schema_version: must be 3, found number \"2\"\n");
}

#[test]
fn unknown_kind_exits_2_with_truncated_escaped_excerpt() {
    let kind = format!("gadget\u{202e}{}", "x".repeat(500));
    let doc = serde_json::json!({"schema_version":3,"algorithm":"sha256",
        "nodes":[{"id":"s/server","kind":kind,"labels":{},"level":"server"}],"edges":[]});
    let path = scratch("kind.json", &serde_json::to_vec(&doc).unwrap());
    let err = refused(&run(&["render", "--declared", &path, "--format", "html"]));
    assert!(
        err.starts_with("connectome: declared export: nodes[0].kind: unknown node kind \"gadget\\u{202e}xx"),
        "{err}"
    );
    assert!(err.trim_end().ends_with("...\""), "{err}");
    assert!(err.is_ascii());
}

#[test]
fn unreadable_file_exits_2() {
    let err = refused(&run(&["render", "--declared", "/nonexistent/d.json", "--format", "html"]));
    assert_eq!(err, "connectome: declared export: cannot read \"/nonexistent/d.json\": no such file\n");
}

#[test]
fn wrong_sidecar_edge_exits_2() {
    let side = scratch(
        "side.json",
        br#"{"schema_version":3,"weights":[{"from":"x","kind":"invoke","provenance":"observed","to":"y","weight":1}]}"#,
    );
    let err =
        refused(&run(&["render", "--declared", &data("golden.json"), "--sidecar", &side, "--format", "dot"]));
    assert!(err.contains("sidecar: weights[0]: names an edge that is not in the declared export"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["render", "--format", "html"][..],
        &["render", "--declared", "d.json"],
        &["render", "--declared", "d.json", "--format", "svg"],
        &["render", "--declared", "d.json", "--format", "html", "--view", "diff"],
        &["render", "--declared", "d.json", "--declared", "e.json", "--format", "html"],
        &["draw"],
        &[],
    ] {
        let err = refused(&run(args));
        assert!(err.starts_with("connectome: usage: "), "{err}");
    }
}

#[test]
fn help_exits_0() {
    let out = run(&["--help"]);
    assert_eq!(Some(out.code), Some(0));
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("connectome render --declared"));
}

#[test]
fn binary_output_is_deterministic_and_out_matches_stdout() {
    let args = |extra: &[&str]| {
        let mut a = vec!["render".to_owned(), "--declared".into(), data("golden.json")];
        a.extend(["--observed".into(), data("golden.json"), "--sidecar".into(), data("golden.sidecar.json")]);
        a.extend(["--diff".into(), data("f7.diff.json"), "--format".into(), "html".into()]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let first = run_cli(&args(&[]));
    let second = run_cli(&args(&[]));
    assert_eq!(Some(first.code), Some(0));
    assert_eq!(first.stdout, second.stdout);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("connectome-render-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("page.html");
    let written = run_cli(&args(&["--out", &out.to_string_lossy()]));
    assert_eq!(Some(written.code), Some(0));
    assert!(written.stdout.is_empty());
    assert_eq!(std::fs::read(&out).unwrap(), first.stdout);
}
