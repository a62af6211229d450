//! Planted violations for the sign census.

use super::*;

/// The serialization table, permitted.
const TABLE: &[Permit] = &[Permit { path: MODEL, line: "Sign::Deny => \"deny\",", why: "table" }];

/// The findings of `src` planted as a graph file next to the clean sample, as (line, rule).
fn planted(src: &str) -> Vec<(usize, &'static str)> {
    let mut library = clean();
    library.push(Library::parse("crates/connectome/graph/src/planted.rs", src));
    check(&library, TABLE, &[]).findings.into_iter().map(|f| (f.line, f.rule)).collect()
}

/// A clean sample: the enum, the table, a default, and reads that do not select.
fn clean() -> Vec<Library> {
    vec![
        Library::parse(
            MODEL,
            "pub enum Sign {\n    Deny,\n    #[default]\n    Unset,\n}\nfn as_str(self) -> &'static str {\n    match self {\n        Sign::Deny => \"deny\",\n    }\n}\n",
        ),
        Library::parse(
            "crates/connectome/graph/src/graph.rs",
            "let edge = Edge { sign: Sign::default() };\nout.push_str(edge.sign.as_str()); // Sign::Deny in a comment\nlet origins = AllowedOrigins::Denylist(\"Deny\");\nlet n = edges.iter().map(|e| {\n    e.sign.as_str()\n});\n",
        ),
    ]
}

/// A clean sample passes the sign census.
#[test]
fn a_clean_sample_passes_the_sign_census() {
    assert_eq!(check(&clean(), TABLE, &[]).findings, vec![]);
}

/// A non unset sign outside the tables is found.
#[test]
fn a_non_unset_sign_outside_the_tables_is_found() {
    let mut library = clean();
    library.push(Library::parse("crates/connectome/observe/src/snapshot.rs", "\nedge.sign = Sign::Hold;\n"));
    library.push(Library::parse("crates/connectome/graph/src/x.rs", "use connectome_canonical::Sign::*;\n"));
    let findings = check(&library, TABLE, &[]).findings;
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert_eq!(
        findings[0].to_string().split(": [").next(),
        Some("crates/connectome/observe/src/snapshot.rs:2")
    );
    assert!(findings.iter().all(|f| f.rule == "sign-construct"));
}

/// A sign variant named however it is qualified is found (`sign-construct`).
#[test]
fn a_sign_construct_however_qualified_is_found() {
    let src = "let a = <Sign>::Deny;\nlet b = Sign::r#Deny;\nuse Sign as S;\nlet c = S::Hold;\nuse connectome_canonical::model::Sign::*;\nlet d = Ungoverned;\nlet e = Sign::\n    Allow;\nlet f = AllowedOrigins::Any;\n";
    assert_eq!(
        planted(src),
        [
            (1, "sign-construct"),
            (2, "sign-construct"),
            (4, "sign-construct"),
            (5, "sign-construct"),
            (6, "sign-construct"),
            (8, "sign-construct"),
        ]
    );
    let mut library = clean();
    library.push(Library::parse("crates/connectome/graph/src/other.rs", "pub enum Sign {\n    Deny,\n}\n"));
    let findings = check(&library, TABLE, &[]).findings;
    assert_eq!(findings.iter().map(|f| (f.line, f.rule)).collect::<Vec<_>>(), [(2, "sign-construct")]);
}

/// A filter on sign is found.
#[test]
fn a_filter_on_sign_is_found() {
    let src = "let kept: Vec<_> = edges.iter().filter(|e| e.sign == Sign::Unset).collect();\nif edge.sign != Sign::Unset { continue; }\nedges.retain(|e| e.sign.as_str() != \"deny\");\n";
    assert_eq!(planted(src), [(1, "sign-filter"), (2, "sign-filter"), (3, "sign-filter")]);
}

/// A filter on sign split by rustfmt across lines is found (`sign-filter`).
#[test]
fn a_filter_on_sign_split_by_rustfmt_is_found() {
    let header = "if e.kind == 1\n    && e.sign != Sign::Unset\n{\n    n += 1;\n}\n";
    let closure = "let kept = edges\n    .iter()\n    .filter(|edge| {\n        edge.kind == 1\n            && edge.sign == Sign::Unset\n    })\n    .count();\n";
    let renamed = "edges.retain(|e| {\n    let s = e.sign;\n    s == Sign::Unset\n});\n";
    let tuple = "match (\n    e.sign,\n    e.kind,\n) {\n    _ => {}\n}\n";
    assert_eq!(planted(header), [(1, "sign-filter")]);
    assert_eq!(planted(closure), [(4, "sign-filter")]);
    assert_eq!(planted(renamed), [(2, "sign-filter"), (3, "sign-filter")]);
    assert_eq!(planted(tuple), [(1, "sign-filter")]);
    assert_eq!(planted("if f(Bar { a }) && e.sign == x {\n}\n"), [(1, "sign-filter")]);
    assert_eq!(planted("} else if e.kind == 1\n    || e.sign == x\n{\n"), [(1, "sign-filter")]);
}

/// A sign selected by any selecting form is found (`sign-filter`).
#[test]
fn a_sign_selected_by_any_selecting_form_is_found() {
    let forms = [
        "let Sign::Unset = e.sign else { return None };",
        "let top = edges.iter().max_by_key(|e| e.sign);",
        "let low = edges.iter().min_by_key(|e| e.sign);",
        "edges.dedup_by_key(|e| e.sign);",
        "groups.entry(e.sign).or_default().push(e);",
        "edges.sort_by_key(|e| e.sign);",
        "let (a, b): (Vec<_>, Vec<_>) = edges.iter().partition(|e| e.sign == x);",
        "let g = edges.chunk_by(|a, b| a.sign == b.sign);",
        "let g = edges.group_by(|a, b| a.sign == b.sign);",
        "let i = edges.iter().position(|e| e.sign == x);",
        "let f = edges.iter().find(|e| e.sign == x);",
        "let any = edges.iter().any(|e| e.sign == x);",
        "let all = edges.iter().all(|e| e.sign == x);",
        "let t = edges.iter().take_while(|e| e.sign == x);",
        "let s = edges.iter().skip_while(|e| e.sign == x);",
        "let m = matches!(e.sign, Sign::Unset);",
    ];
    for form in forms {
        assert_eq!(planted(form), [(1, "sign-filter")], "{form}");
    }
}

/// A permitted statement is matched whole, joined across lines.
#[test]
fn a_permitted_statement_is_matched_whole() {
    let permits = [Permit { path: DIFF, line: "if a.sign != b.sign && x", why: "test" }];
    let library = vec![Library::parse(DIFF, "if a.sign != b.sign\n    && x\n{\n}\n")];
    assert_eq!(check(&library, &[], &permits).findings, vec![]);
    let library = vec![Library::parse(DIFF, "if a.sign != b.sign\n    && y\n{\n}\n")];
    let rules: Vec<_> = check(&library, &[], &permits).findings.iter().map(|f| f.rule).collect();
    assert_eq!(rules, ["sign-filter", "sign-permit-stale"]);
}

/// Another default sign is found.
#[test]
fn another_default_sign_is_found() {
    let good = "pub enum Sign {\n    Unset,\n    #[default]\n    Unset,\n}\n";
    let bad = "pub enum Sign {\n    Unset,\n    #[default]\n    Other,\n}\n";
    let mut library = clean();
    library.push(Library::parse("crates/connectome/canonical/src/sign.rs", good));
    assert_eq!(check(&library, TABLE, &[]).findings, vec![]);
    library.push(Library::parse("crates/connectome/canonical/src/sign2.rs", bad));
    let findings = check(&library, TABLE, &[]).findings;
    assert_eq!(findings.iter().map(|f| (f.line, f.rule)).collect::<Vec<_>>(), [(4, "sign-default")]);
}

/// A permitted line elsewhere or gone is found.
#[test]
fn a_permitted_line_elsewhere_or_gone_is_found() {
    let moved = vec![Library::parse("crates/connectome/graph/src/other.rs", "Sign::Deny => \"deny\",\n")];
    let rules: Vec<_> = check(&moved, TABLE, &[]).findings.iter().map(|f| f.rule).collect();
    assert_eq!(rules, ["sign-construct", "sign-permit-stale"]);
}

/// Sign tokens are whole parts.
#[test]
fn sign_tokens_are_whole_parts() {
    for yes in ["sign", "signs", "declared_sign", "Sign", "SignChange", "ChangedSign", "is_sign_negative"] {
        assert!(is_sign_token(yes), "{yes}");
    }
    for no in ["design", "assign", "signature", "Signer", "signal", "consigned"] {
        assert!(!is_sign_token(no), "{no}");
    }
}
