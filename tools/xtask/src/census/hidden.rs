//! No hidden sources: library code reaches every file the compiler reads through `crates/*/*/src`, so no
//! line may point a module elsewhere with `#[path = …]` or paste another file in with `include!(…)`.
//! Either would put code the census does not read (a file outside `src`, or one it reads under another
//! module's rules) into the build.

use super::lines::words;
use super::{Library, Outcome};

/// The hidden-source form a code line's bare text holds, if any.
pub fn matched(bare: &str) -> Option<&'static str> {
    let squeezed: String = bare.chars().filter(|c| !c.is_whitespace()).collect();
    if squeezed.contains("#[path") || squeezed.contains("#![path") {
        return Some("#[path = …]");
    }
    let include = words(bare)
        .into_iter()
        .any(|(at, w)| w == "include" && bare[at + w.len()..].trim_start().starts_with('!'));
    include.then_some("include!(…)")
}

/// Runs the rule over `library`.
pub fn check(library: &[Library]) -> Outcome {
    let outcome = Outcome::per_line(
        library,
        "hidden-source",
        |line| matched(&line.bare).map(str::to_owned),
        |form| format!("`{form}` brings in code the census does not read where it reads it"),
    );
    Outcome { summary: format!("{} files, no `#[path]` or `include!`", library.len()), ..outcome }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path attribute or an include is found (`hidden-source`).
    #[test]
    fn a_path_attribute_or_include_is_found() {
        let planted = Library::parse(
            "crates/kernel/router/src/lib.rs",
            "mod a;\n#[path = \"../../x/evil.rs\"]\nmod evil;\ninclude!(concat!(env!(\"OUT_DIR\"), \"/gen.rs\"));\n# [ path=\"y.rs\" ] mod y;\nstd::include! {\"z.rs\"}\n",
        );
        let findings = check(&[planted]).findings;
        assert_eq!(findings.iter().map(|f| f.line).collect::<Vec<_>>(), [2, 4, 5, 6], "{findings:?}");
        assert!(findings.iter().all(|f| f.rule == "hidden-source"));
    }

    /// Data includes, strings and comments are no hidden source.
    #[test]
    fn data_includes_strings_and_comments_are_no_hidden_source() {
        let clean = Library::parse(
            "crates/a/src/lib.rs",
            "const T: &str = include_str!(\"t.txt\");\nlet s = \"include!(x) #[path]\";\n// #[path = \"x\"]\nlet included = path;\n",
        );
        assert_eq!(check(&[clean]).findings, vec![]);
    }
}
