//! The sign census (connectome CI-1, CI-2, CK-12): the package writes only `Sign::Unset`, and never
//! selects, drops or branches on a sign except in the few reads listed in [`PERMITTED`].
//!
//! - `sign-construct`: a code line naming, as a whole word, `Allow`, `Deny`, `Hold` or `Ungoverned`
//!   (however qualified: `Sign::Deny`, `<Sign>::Deny`, `Sign::r#Deny`, `S::Deny` after `use Sign as S`,
//!   a bare `Deny` after a glob import), or importing the variants with `Sign::*` / `Sign::{`, is a
//!   finding unless it is in [`NAMED`] or declares a variant inside `pub enum Sign { … }` of the model.
//! - `sign-filter`: a *statement* ([`statements`](fn@statements): lines joined where rustfmt splits them) holding a
//!   *sign token* (a word one of whose `_`- or CamelCase-separated parts is `sign` or `signs`, e.g.
//!   `sign`, `declared_sign`, `Sign`, `SignChange`) together with a *selecting form* (a keyword in
//!   [`statements::SELECTING_KEYWORDS`], `matches!`, or a call in [`statements::SELECTING_CALLS`]), or
//!   lying inside the parentheses of a selecting call, is a finding unless it is in [`PERMITTED`].
//! - `sign-default`: in a `pub enum Sign { … }` body, the variant after `#[default]` is `Unset`, so
//!   `Sign::default()` (which `Edge::new` uses) stays `Unset`.
//!
//! A permit is an exact (file, trimmed statement or line) pair; a permit that is no longer in its file is
//! a finding too (`sign-permit-stale`), so the lists stay exact.

mod statements;

use statements::statements;

use super::lines::words;
use super::{Finding, Library, Outcome};

/// A statement (or, in [`NAMED`], a line) the sign census permits: the file, the exact text, and why.
#[derive(Debug, Clone, Copy)]
pub struct Permit {
    /// The file, relative to the workspace root.
    pub path: &'static str,
    /// The exact trimmed statement (lines joined with one space) or line.
    pub line: &'static str,
    /// Why it is permitted.
    pub why: &'static str,
}

/// The canonical model file: the enum and its serialization table.
const MODEL: &str = "crates/connectome/canonical/src/model.rs";
/// The graph diff: its one-sided counts and its one comparison.
const DIFF: &str = "crates/connectome/graph/src/diff.rs";
/// The renderer's vocabularies: it parses the sign names of the exports it reads.
const VOCAB: &str = "crates/connectome/render/src/vocab.rs";

/// The lines of this workspace that may name a sign other than `Unset` (besides the enum's variants).
pub const NAMED: &[Permit] = &[
    Permit { path: MODEL, line: "Sign::Allow => \"allow\",", why: "the serialization table" },
    Permit { path: MODEL, line: "Sign::Deny => \"deny\",", why: "the serialization table" },
    Permit { path: MODEL, line: "Sign::Hold => \"hold\",", why: "the serialization table" },
    Permit { path: MODEL, line: "Sign::Ungoverned => \"ungoverned\",", why: "the serialization table" },
    Permit {
        path: MODEL,
        line: "\"allow\" => Some(Sign::Allow),",
        why: "the parse table (reading an export back)",
    },
    Permit {
        path: MODEL,
        line: "\"deny\" => Some(Sign::Deny),",
        why: "the parse table (reading an export back)",
    },
    Permit {
        path: MODEL,
        line: "\"hold\" => Some(Sign::Hold),",
        why: "the parse table (reading an export back)",
    },
    Permit {
        path: MODEL,
        line: "\"ungoverned\" => Some(Sign::Ungoverned),",
        why: "the parse table (reading an export back)",
    },
    Permit { path: VOCAB, line: "Allow => \"allow\",", why: "the renderer's sign vocabulary (parsing)" },
    Permit { path: VOCAB, line: "Deny => \"deny\",", why: "the renderer's sign vocabulary (parsing)" },
    Permit { path: VOCAB, line: "Hold => \"hold\",", why: "the renderer's sign vocabulary (parsing)" },
    Permit {
        path: VOCAB,
        line: "Ungoverned => \"ungoverned\",",
        why: "the renderer's sign vocabulary (parsing)",
    },
];

/// The statements of this workspace that may name a sign with a selecting form.
pub const PERMITTED: &[Permit] = &[
    Permit {
        path: DIFF,
        line: "let Some(&observed_sign) = observed_labels.get(label) else",
        why: "the diff looks an edge label up on the observed side; the binding only carries its sign",
    },
    Permit {
        path: DIFF,
        line: "match (declared_sign, observed_sign)",
        why: "the one-sided sign counts (CF-4, counts 9 and 10); its arms only add to counts",
    },
    Permit {
        path: DIFF,
        line: "if declared_sign != Sign::Unset && observed_sign != Sign::Unset && declared_sign != observed_sign",
        why: "the diff's one comparison: `changed_sign` needs both signs supplied and different (CF-3)",
    },
    Permit {
        path: DIFF,
        line: "classes.changed_sign.sort_by(|a, b| a.label.record_cmp(&b.label))",
        why: "the `changed_sign` class is ordered by edge label, not by sign",
    },
    Permit {
        path: "crates/connectome/graph/src/federation/mod.rs",
        line: "if kept.sign != edge.sign",
        why: "merge refuses two parts that sign one edge differently (CM-3); it never picks one of them",
    },
    Permit {
        path: "crates/connectome/canonical/src/float.rs",
        line: "let sign = if f.is_sign_negative()",
        why: "a number's sign in the float writer, not an edge sign",
    },
    Permit {
        path: "crates/connectome/canonical/src/verify.rs",
        line: "if let Some(sign) = edge.get(\"sign\") && !sign.as_str().is_some_and(|s| vocabulary.contains(&s))",
        why: "the verifier refuses a sign outside the vocabulary of the document's schema version (CC-13)",
    },
    Permit {
        path: "crates/connectome/render/src/diff.rs",
        line: "let signs = if class == DiffClass::ChangedSign",
        why: "the renderer reads both signs of a `changed_sign` entry",
    },
    Permit {
        path: "crates/connectome/render/src/view.rs",
        line: "let sign = (e.sign != Sign::Unset).then(|| e.sign.name().to_owned())",
        why: "the renderer labels an arrow with a supplied sign; it draws every edge",
    },
];

/// The sign variants the package never constructs.
const SET_VARIANTS: &[&str] = &["Allow", "Deny", "Hold", "Ungoverned"];

/// Whether `word` is a sign token: one of its `_`- or CamelCase-separated parts is `sign` or `signs`.
pub fn is_sign_token(word: &str) -> bool {
    word.split('_').any(|part| {
        let mut humps = Vec::new();
        let mut current = String::new();
        for c in part.chars() {
            if c.is_ascii_uppercase() && !current.is_empty() {
                humps.push(std::mem::take(&mut current));
            }
            current.push(c.to_ascii_lowercase());
        }
        humps.push(current);
        humps.iter().any(|h| h == "sign" || h == "signs")
    })
}

/// The non-`Unset` sign variant a line names as a whole word, if any (or an import of the variants).
fn constructed(bare: &str) -> Option<String> {
    if bare.contains("Sign::*") || bare.contains("Sign::{") {
        return Some("an import of the sign variants".to_owned());
    }
    words(bare).into_iter().find(|(_, w)| SET_VARIANTS.contains(w)).map(|(_, w)| format!("`{w}`"))
}

/// The indices (into `file.lines`) of the variant lines of `pub enum Sign { … }` in the model.
fn enum_body(file: &Library) -> std::ops::Range<usize> {
    let start = file.lines.iter().position(|l| l.bare.starts_with("pub enum Sign {"));
    match start {
        Some(start) if file.path == MODEL => {
            let len = file.lines[start + 1..].iter().take_while(|l| l.bare != "}").count();
            start + 1..start + 1 + len
        }
        _ => 0..0,
    }
}

/// The `sign-default` rule: in a `pub enum Sign` body, the variant after `#[default]` is `Unset`.
fn default_rule(file: &Library, findings: &mut Vec<Finding>) {
    let Some(start) = file.lines.iter().position(|l| l.bare.starts_with("pub enum Sign {")) else {
        if file.path == MODEL {
            findings.push(Finding::new(
                MODEL,
                0,
                "sign-default",
                "no `pub enum Sign {` here; update the census",
            ));
        }
        return;
    };
    let body = file.lines[start + 1..].iter().take_while(|l| l.bare != "}");
    let mut after_default = false;
    for line in body {
        if after_default && !line.bare.starts_with("#[") {
            if line.bare != "Unset," {
                findings.push(Finding::new(
                    &file.path,
                    line.number,
                    "sign-default",
                    format!("`{}` is the default sign; the default must be `Unset`", line.text),
                ));
            }
            after_default = false;
        }
        after_default |= line.bare == "#[default]";
    }
}

/// Marks the permit in `permits` for (`path`, `text`) used; whether there is one.
fn permit(permits: &[Permit], used: &mut [bool], path: &str, text: &str) -> bool {
    let found = permits.iter().position(|p| p.path == path && p.line == text);
    if let Some(i) = found {
        used[i] = true;
    }
    found.is_some()
}

/// The `sign-construct` rule over one file, with `named` the permitted lines.
fn construct_rule(file: &Library, named: &[Permit], used: &mut [bool], findings: &mut Vec<Finding>) {
    let body = enum_body(file);
    for (i, line) in file.lines.iter().enumerate() {
        if body.contains(&i) || permit(named, used, &file.path, &line.text) {
            continue;
        }
        if let Some(name) = constructed(&line.bare) {
            findings.push(Finding::new(
                &file.path,
                line.number,
                "sign-construct",
                format!(
                    "{name} outside the sign's serialization table; the package writes only `Sign::Unset`"
                ),
            ));
        }
    }
}

/// The stale-permit findings for the permits of `permits` not `used`.
fn stale(permits: &[Permit], used: &[bool], findings: &mut Vec<Finding>) {
    for (permit, used) in permits.iter().zip(used) {
        if !used {
            findings.push(Finding::new(
                permit.path,
                0,
                "sign-permit-stale",
                format!("the permitted `{}` ({}) is gone; update the census", permit.line, permit.why),
            ));
        }
    }
}

/// Runs the sign rules over `library`, permitting exactly the lines in `named` and the statements in
/// `permitted`.
pub fn check(library: &[Library], named: &[Permit], permitted: &[Permit]) -> Outcome {
    let mut findings = Vec::new();
    let mut used_named = vec![false; named.len()];
    let mut used = vec![false; permitted.len()];
    let mut tokens = 0;
    for file in library {
        default_rule(file, &mut findings);
        construct_rule(file, named, &mut used_named, &mut findings);
        for statement in statements(&file.lines) {
            if !words(&statement.text).iter().any(|(_, w)| is_sign_token(w)) {
                continue;
            }
            tokens += 1;
            if permit(permitted, &mut used, &file.path, &statement.text) {
                continue;
            }
            let form = statements::selecting(&statement.bare)
                .map(|form| format!("with {form}"))
                .or_else(|| statement.inside.map(|call| format!("inside `.{call}(`")));
            if let Some(form) = form {
                findings.push(Finding::new(
                    &file.path,
                    statement.line,
                    "sign-filter",
                    format!("a sign token {form}: the package never selects or branches on a sign"),
                ));
            }
        }
    }
    stale(named, &used_named, &mut findings);
    stale(permitted, &used, &mut findings);
    let summary = format!(
        "{} files, {tokens} statements naming a sign, {} permitted lines, {} permitted statements",
        library.len(),
        named.len(),
        permitted.len()
    );
    Outcome { check: "sign", summary, findings }
}

#[cfg(test)]
mod tests;
