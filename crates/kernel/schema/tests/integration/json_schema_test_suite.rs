//! Rule: every case of the JSON-Schema-Test-Suite (draft 2020-12, required tests) either
//! validates exactly as the suite says, or its schema is refused at compile time as a
//! remote reference — the only refusal the suite can legitimately provoke.
//!
//! Run with `--nocapture` to see the counts.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use mcp_kernel_schema::{SchemaError, compile};
use serde_json::Value;

/// Suite cases that fail because of the underlying `jsonschema` crate, as
/// `(file, group description, test description, reason)`. Asserted to fail exactly, so an
/// upstream fix is noticed.
const KNOWN_DIVERGENCES: &[(&str, &str, &str, &str)] = &[];

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/json-schema-test-suite/draft2020-12")
}

#[test]
fn json_schema_test_suite_draft2020_12() {
    let dir = suite_dir();
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no suite files in {}", dir.display());

    let mut groups = 0usize;
    let mut passed = 0usize;
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut refused_cases = 0usize;
    let mut wrong_refusals: Vec<String> = Vec::new();
    let mut failures: Vec<(String, String, String, String)> = Vec::new();

    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(file).expect("suite file");
        let suite: Vec<Value> = serde_json::from_str(&text).expect("suite JSON");
        for group in &suite {
            groups += 1;
            let description = group["description"].as_str().unwrap_or_default();
            let tests = group["tests"].as_array().expect("tests array");
            let compiled = match compile(&group["schema"]) {
                Ok(compiled) => compiled,
                Err(error) => {
                    let kind = match &error {
                        SchemaError::RemoteReference { .. } => "RemoteReference".to_owned(),
                        other => {
                            wrong_refusals.push(format!("{name} / {description}: {other}"));
                            format!("{other:?}")
                        }
                    };
                    refused.entry(kind).or_default().push(format!("{name} / {description}: {error}"));
                    refused_cases += tests.len();
                    continue;
                }
            };
            for test in tests {
                let test_description = test["description"].as_str().unwrap_or_default();
                let instance = &test["data"];
                let expected = test["valid"].as_bool().expect("valid flag");
                let actual = compiled.validate_value(instance);
                // `validate` (the tool-call entry point) agrees on objects and refuses the rest.
                let call = compiled.validate(instance);
                if instance.is_object() {
                    assert_eq!(
                        call.is_ok(),
                        actual.is_ok(),
                        "{name} / {description} / {test_description}: validate and \
                         validate_value disagree"
                    );
                } else {
                    assert_eq!(
                        call.as_ref().map_err(|violation| violation.reason()),
                        Err("arguments must be an object")
                    );
                }
                if let Err(violation) = &actual {
                    assert!(violation.reason().len() <= mcp_kernel_schema::MAX_REASON_LEN);
                }
                if actual.is_ok() == expected {
                    passed += 1;
                } else {
                    failures.push((
                        name.clone(),
                        description.to_owned(),
                        test_description.to_owned(),
                        format!(
                            "expected valid={expected}, got {}",
                            actual.err().map_or("valid".to_owned(), |v| v.into_reason())
                        ),
                    ));
                }
            }
        }
    }

    println!("JSON-Schema-Test-Suite draft2020-12 (required):");
    println!("  files: {}, groups: {groups}", files.len());
    println!(
        "  cases passed: {passed}, cases failed: {}, cases in refused groups: {refused_cases}",
        failures.len()
    );
    let refused_groups: usize = refused.values().map(Vec::len).sum();
    println!("  groups refused at compile time: {refused_groups}");
    for (kind, list) in &refused {
        println!("    {kind}: {}", list.len());
        for entry in list {
            println!("      - {entry}");
        }
    }
    for (file, group, test, why) in &failures {
        println!("  FAILED {file} / {group} / {test}: {why}");
    }

    assert!(wrong_refusals.is_empty(), "refusals other than RemoteReference: {wrong_refusals:#?}");
    let failed: Vec<(&str, &str, &str)> = failures
        .iter()
        .map(|(file, group, test, _)| (file.as_str(), group.as_str(), test.as_str()))
        .collect();
    let known: Vec<(&str, &str, &str)> =
        KNOWN_DIVERGENCES.iter().map(|(file, group, test, _)| (*file, *group, *test)).collect();
    assert_eq!(failed, known, "suite failures differ from KNOWN_DIVERGENCES");
}
