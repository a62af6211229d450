//! The facade's root stays small: the host's everyday API, the layered crates, and one module per
//! reader or opt-in (the table in the crate docs). Every name the root declares or re-exports counts,
//! whatever feature gates it; a name past the budget belongs in one of the modules.

/// The most names the facade's root may hold.
const ROOT_BUDGET: usize = 45;

/// The names `src/lib.rs` declares or re-exports at the root, items compiled only for doctests aside.
fn root_names() -> Vec<String> {
    let source = include_str!("../src/lib.rs");
    let code: String =
        source.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
    let mut names = Vec::new();
    let mut doctest_only = false;
    for statement in code.split_inclusive([';', '}']) {
        let statement = statement.trim();
        if statement.contains("#[cfg(doctest)]") {
            doctest_only = true;
        }
        let Some(at) = statement.find("pub ") else { continue };
        let item = &statement[at + 4..];
        if std::mem::take(&mut doctest_only) {
            continue;
        }
        if let Some(path) = item.strip_prefix("use ") {
            names.extend(used_names(path.trim_end_matches(';')));
        } else if let Some(rest) = ["mod ", "fn ", "const ", "static ", "struct ", "enum ", "trait ", "type "]
            .iter()
            .find_map(|keyword| item.strip_prefix(keyword))
        {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            names.push(name);
        }
    }
    names
}

/// The names one `use` path brings in: its last segment, its alias, or each member of its braces.
fn used_names(path: &str) -> Vec<String> {
    let path = path.trim();
    if let Some(open) = path.find('{') {
        let inner = &path[open + 1..path.rfind('}').unwrap_or(path.len())];
        return inner.split(',').map(str::trim).filter(|s| !s.is_empty()).flat_map(used_names).collect();
    }
    let last = path.rsplit(" as ").next().unwrap_or(path);
    vec![last.rsplit("::").next().unwrap_or(last).trim().to_owned()]
}

#[test]
fn the_facade_root_holds_at_most_45_names() {
    let names = root_names();
    assert!(
        names.len() <= ROOT_BUDGET,
        "the facade's root holds {} names, over its budget of {ROOT_BUDGET}: {names:?}",
        names.len()
    );
}

#[test]
fn the_facade_root_count_sees_the_crates_and_the_modules_by_reader() {
    let names = root_names();
    for expected in ["wire", "schema", "router", "http", "stdio", "connectome", "manual", "shutdown_signal"] {
        assert!(names.iter().any(|n| n == expected), "{expected} not counted: {names:?}");
    }
    for expected in ["ProtocolVersion", "Server", "transport", "testing", "sealing"] {
        assert!(names.iter().any(|n| n == expected), "{expected} not counted: {names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("Doctests")), "doctest-only items are not API: {names:?}");
}
