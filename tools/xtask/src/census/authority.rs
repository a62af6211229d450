//! No authority (connectome CI-4): no library code line names receipts, approvals, risk tiers, egress or
//! masks.
//!
//! The rule is the regex `receipts?|approv|risk[ _-]?tiers?|\btiers?\b|egress|\bmask(ed|ing|s)?\b`,
//! case-insensitive, over each code line with its string literals (a message is code too). It is
//! matched by hand ([`matched`]) because xtask has no regex dependency: `\b…\b` is read as "the whole
//! run of ASCII letters, digits and `_`", which is what the regex's word boundary means on ASCII text.

use super::lines::words;
use super::{Library, Outcome};

/// Substrings that match anywhere (`receipts?` and `approv` reduce to their stems).
const STEMS: &[&str] = &["receipt", "approv", "egress"];
/// Words that match only as a whole run of word characters.
const WORDS: &[&str] = &["tier", "tiers", "mask", "masked", "masking", "masks"];

/// The first fragment of `line` the no-authority regex matches, if any.
pub fn matched(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    if let Some(stem) = STEMS.iter().find(|s| lower.contains(**s)) {
        return Some((*stem).to_owned());
    }
    let risk_tier = lower.match_indices("risk").find(|(at, _)| {
        let rest = &lower[at + 4..];
        let rest = rest.strip_prefix([' ', '_', '-']).unwrap_or(rest);
        rest.starts_with("tier")
    });
    if let Some((at, _)) = risk_tier {
        let end = lower[at..].find("tier").map_or(lower.len(), |t| at + t + 4);
        return Some(lower[at..end].to_owned());
    }
    words(&lower).into_iter().find(|(_, w)| WORDS.contains(w)).map(|(_, w)| w.to_owned())
}

/// Runs the rule over `library`.
pub fn check(library: &[Library]) -> Outcome {
    Outcome::per_line(
        library,
        "no-authority",
        |line| matched(&line.text),
        |fragment| {
            format!(
                "`{fragment}`: the package decides no authority (no receipts, approvals, risk tiers, egress or masks)"
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clean sample names no authority.
    #[test]
    fn a_clean_sample_names_no_authority() {
        let clean = Library::parse(
            "crates/x/src/a.rs",
            "let kind_mask = [false; 4]; // a mask in a comment\nlet frontier = tiered(masking_tape);\nfn approximately() {}\n",
        );
        // `approximately` has no `approv`; `kind_mask`, `frontier`, `tiered` and `masking_tape` are other words.
        assert_eq!(check(&[clean]).findings, vec![]);
    }

    /// An approval line is found.
    #[test]
    fn an_approval_line_is_found() {
        let planted = Library::parse(
            "crates/kernel/router/src/x.rs",
            "fn a() {}\nif call.needs_approval() { hold(); }\nlet t = RiskTier::High;\nlet m = masks(x);\nlog(\"EGRESS denied\");\n",
        );
        let findings = check(&[planted]).findings;
        assert_eq!(findings.iter().map(|f| f.line).collect::<Vec<_>>(), [2, 3, 4, 5]);
        assert!(
            findings[0].to_string().starts_with("crates/kernel/router/src/x.rs:2: [no-authority] `approv`")
        );
    }

    /// The hand matcher agrees with the regex.
    #[test]
    fn the_hand_matcher_agrees_with_the_regex() {
        let cases = [
            ("receipt", true),
            ("Receipts", true),
            ("approve", true),
            ("risk tier", true),
            ("risk_tiers", true),
            ("risk-tier", true),
            ("risktier", true),
            ("a tier", true),
            ("TIERS", true),
            ("tier_1", false),
            ("frontier", false),
            ("egress_rule", true),
            ("mask", true),
            ("Masked", true),
            ("masking", true),
            ("masks", true),
            ("masker", false),
            ("kind_mask", false),
            ("KindMask", false),
            ("risk__tiers2", false),
        ];
        for (text, expected) in cases {
            assert_eq!(matched(text).is_some(), expected, "{text}");
        }
    }
}
