//! Strict reading (CB-4..CB-7): what the renderer refuses, by name, without panicking.

use connectome_render::{DiffRecord, Error, Graph, Role, Sidecar};

fn graph_err(text: &str) -> String {
    match Graph::from_json(Role::Declared, text.as_bytes()) {
        Err(e @ Error::Format { .. }) | Err(e @ Error::Json { .. }) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

const NODE: &str = r#"{"id":"s/server","kind":"server","labels":{},"level":"server"}"#;

#[test]
fn schema_version_is_read_first_and_must_be_integer_3() {
    assert!(
        graph_err(r#"{"schema_version":3.0,"algorithm":"sha256","nodes":[],"edges":[]}"#)
            .contains("must be 3")
    );
    assert!(graph_err(r#"{"schema_version":1,"extra":1}"#).contains("must be 3, found number \"1\""));
    assert!(graph_err(r#"[]"#).contains("expected an object, found array"));
}

#[test]
fn members_are_exact() {
    let e = graph_err(r#"{"schema_version":3,"algorithm":"sha256","nodes":[],"edges":[],"weight":1}"#);
    assert!(e.contains("unexpected member \"weight\""), "{e}");
    let e = graph_err(r#"{"schema_version":3,"nodes":[],"edges":[]}"#);
    assert!(e.contains("missing member \"algorithm\""), "{e}");
    let e = graph_err(
        r#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"a","kind":"tool","level":"server"}],"edges":[]}"#,
    );
    assert!(e.contains("nodes[0]: missing member \"labels\""), "{e}");
}

#[test]
fn vocabulary_outside_the_spec_is_refused() {
    let e = graph_err(r#"{"schema_version":3,"algorithm":"SHA-256","nodes":[],"edges":[]}"#);
    assert!(e.contains("unknown algorithm \"SHA-256\""), "{e}");
    let edge = |field: &str, value: &str| {
        let mut fields = [
            ("from", "s/server"),
            ("kind", "invoke"),
            ("provenance", "declared"),
            ("sign", "unset"),
            ("to", "s/server"),
        ];
        fields.iter_mut().find(|(k, _)| *k == field).unwrap().1 = value;
        let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":\"{v}\"")).collect();
        format!(
            r#"{{"schema_version":3,"algorithm":"sha256","nodes":[{NODE}],"edges":[{{{}}}]}}"#,
            body.join(",")
        )
    };
    assert!(graph_err(&edge("kind", "call")).contains("edges[0].kind: unknown edge kind \"call\""));
    assert!(graph_err(&edge("sign", "unknown")).contains("edges[0].sign: unknown sign \"unknown\""));
    assert!(graph_err(&edge("provenance", "guessed")).contains("unknown provenance"));
}

#[test]
fn dangling_and_duplicate_are_refused() {
    let e = graph_err(&format!(
        r#"{{"schema_version":3,"algorithm":"sha256","nodes":[{NODE}],"edges":[{{"from":"s/server","kind":"invoke","provenance":"declared","sign":"unset","to":"s/tool/x"}}]}}"#
    ));
    assert!(e.contains("endpoint \"s/tool/x\" is not a node"), "{e}");
    let e = graph_err(&format!(
        r#"{{"schema_version":3,"algorithm":"sha256","nodes":[{NODE},{NODE}],"edges":[]}}"#
    ));
    assert!(e.contains("duplicate node id"), "{e}");
}

#[test]
fn negative_weight_is_refused() {
    let s = br#"{"schema_version":3,"weights":[{"from":"a","kind":"read","provenance":"observed","to":"b","weight":-1}]}"#;
    assert!(Sidecar::from_json(s).unwrap_err().to_string().contains("expected a non-negative number"));
    let s = br#"{"schema_version":3,"algorithm":"sha256","weights":[]}"#;
    assert!(Sidecar::from_json(s).unwrap_err().to_string().contains("unexpected member \"algorithm\""));
}

#[test]
fn diff_record_counts_and_classes_are_exact() {
    let good = std::str::from_utf8(include_bytes!("../data/f7.diff.json")).unwrap();
    let d = DiffRecord::from_json(good.as_bytes()).unwrap();
    assert_eq!(d.coverage.get("declared_sign_only"), 1);
    let e = DiffRecord::from_json(
        good.replace("\"observed_sign_only\":0", "\"observed_sign_only\":-1").as_bytes(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("coverage.observed_sign_only: expected a non-negative integer"), "{e}");
    let e = DiffRecord::from_json(
        good.replace("\"observed_sign\":\"deny\"", "\"observed_sign\":\"no\"").as_bytes(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("classes.changed_sign[0].observed_sign: unknown sign \"no\""), "{e}");
    let e = DiffRecord::from_json(good.replace("\"schema_version\":3", "\"schema_version\":2").as_bytes())
        .unwrap_err();
    assert!(e.to_string().starts_with("diff record: schema_version: must be 3"), "{e}");
}

#[test]
fn deep_nesting_is_refused_without_panic() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(matches!(Graph::from_json(Role::Declared, deep.as_bytes()), Err(Error::Json { .. })));
}

#[test]
fn renderer_depends_on_no_connectome_or_kernel_crate() {
    // The workspace's manifest lists `name.workspace = true` lines under `[dependencies]`; the one
    // cargo writes into the package has a `[dependencies.name]` table each. Both are read.
    let manifest = include_str!("../../Cargo.toml");
    let mut names = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        if let Some(header) = line.strip_prefix('[') {
            in_dependencies = header == "dependencies]";
            if let Some(name) = header.strip_prefix("dependencies.") {
                names.push(name.trim_end_matches(']').trim_matches('"').to_owned());
            }
        } else if in_dependencies {
            names.push(line.split(['.', '=', ' ']).next().unwrap_or(line).to_owned());
        }
    }
    assert!(!names.is_empty(), "the manifest's dependencies were read");
    assert_eq!(names, ["serde_json"], "the renderer depends on serde_json alone");
}
