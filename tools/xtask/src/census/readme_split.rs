//! The README split census (connectome CI-5): the README section "What this package is, and is not"
//! says what ships, and the library agrees.
//!
//! The section (`## What this package is, and is not`, up to the next `## `) holds the bold headings
//! **Shipping now.**, **Decided and not built.**, **Scheduled.**, **Deliberately out.**, in that order;
//! each part runs from its heading to the next. In each part, a backticked span is an *item name* when
//! it is a Rust path — identifiers joined by `::`, no spaces — that has two segments or more, or one
//! segment starting with an uppercase letter (`Server`, `LegacyClients::Stateless`,
//! `mcp_kernel::stdio::serve`). Anything else is not a name and is skipped: commands
//! (`cargo xtask conformance`), values (`unset`), versions, URIs (`connectome://`).
//!
//! Every item name under **Shipping now.** must resolve to a public item of the library (see
//! [`super::items`] for what resolves), and there must be at least one; no item name under the other
//! three headings may resolve.

use super::items::Index;
use super::{Finding, Outcome};

/// The README, for messages.
const README: &str = "README.md";
/// The section heading.
const SECTION: &str = "## What this package is, and is not";
/// The headings, in their required order; the first lists what ships.
const HEADINGS: [&str; 4] =
    ["**Shipping now.**", "**Decided and not built.**", "**Scheduled.**", "**Deliberately out.**"];

/// Whether a backticked span is an item name (see the module docs).
pub fn is_item_name(span: &str) -> bool {
    let segments: Vec<&str> = span.split("::").collect();
    let identifiers = segments.iter().all(|s| {
        let mut chars = s.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    identifiers && (segments.len() > 1 || span.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// The item names backticked in `text`.
fn item_names(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).filter(|s| is_item_name(s)).collect()
}

/// Runs the census over `readme` against the library's public items.
pub fn check(readme: &str, index: &Index) -> Outcome {
    let mut findings = Vec::new();
    let mut shipping = 0;
    let mut absent = 0;
    let outcome = |findings, summary: String| Outcome { check: "readme-split", summary, findings };
    let lines: Vec<&str> = readme.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim_end() == SECTION) else {
        findings.push(Finding::new(README, 0, "readme-split", format!("no section `{SECTION}`")));
        return outcome(findings, "no section".to_owned());
    };
    let end =
        lines[start + 1..].iter().position(|l| l.starts_with("## ")).map_or(lines.len(), |p| start + 1 + p);
    let line_of = |offset: usize, text: &str| start + 1 + text[..offset].matches('\n').count();
    let section = lines[start..end].join("\n");
    let mut found: Vec<(usize, usize)> = Vec::new();
    for (h, heading) in HEADINGS.iter().enumerate() {
        match section.find(heading) {
            Some(at) => found.push((at, h)),
            None => findings.push(Finding::new(
                README,
                start + 1,
                "readme-split",
                format!("no heading {heading} in the section"),
            )),
        }
    }
    let order: Vec<usize> = found.iter().map(|(_, h)| *h).collect();
    found.sort();
    if found.iter().map(|(_, h)| *h).collect::<Vec<_>>() != order {
        let (at, h) = found.windows(2).find(|w| w[0].1 > w[1].1).map_or((0, 0), |w| w[1]);
        findings.push(Finding::new(
            README,
            line_of(at, &section),
            "readme-split",
            format!("headings out of order: {} comes before an earlier heading", HEADINGS[h]),
        ));
    }
    for (i, (at, h)) in found.iter().enumerate() {
        let stop = found.get(i + 1).map_or(section.len(), |(next, _)| *next);
        let part = &section[*at..stop];
        let names = item_names(part);
        for name in &names {
            let offset = at + part.find(&format!("`{name}`")).unwrap_or(0);
            let line = line_of(offset, &section);
            match (index.resolve(name), *h == 0) {
                (Ok(()), true) => shipping += 1,
                (Err(why), true) => findings.push(Finding::new(
                    README,
                    line,
                    "readme-split",
                    format!("`{name}` is shipping now but is not a public item ({why})"),
                )),
                (Ok(()), false) => findings.push(Finding::new(
                    README,
                    line,
                    "readme-split",
                    format!("`{name}` is under {} but is a public item", HEADINGS[*h]),
                )),
                (Err(_), false) => absent += 1,
            }
        }
        if *h == 0 && shipping == 0 {
            findings.push(Finding::new(
                README,
                line_of(*at, &section),
                "readme-split",
                "no shipping item name resolves",
            ));
        }
    }
    outcome(
        findings,
        format!("{shipping} shipping names found, {absent} names under the other headings absent"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::census::Library;

    /// A library with a server, a facade module and an enum.
    fn index() -> Index {
        Index::build(&[
            Library::parse(
                "crates/kit/src/lib.rs",
                "pub use kit_io as io;\npub struct Server;\npub enum Mode {\n    Stateless,\n}\n",
            ),
            Library::parse("crates/kit-io/src/lib.rs", "pub fn serve() {}\n"),
        ])
    }

    /// A README section with the four parts.
    fn readme(shipping: &str, scheduled: &str) -> String {
        format!(
            "# kit\n\n{SECTION}\n\n**Shipping now.** {shipping} and `cargo xtask\nconformance`.\n\n**Decided and not built.** Nothing.\n\n**Scheduled.** {scheduled}\n\n**Deliberately out.** Signs other than `unset`.\n\n## Next\n\n`NotShipping`\n"
        )
    }

    /// A readme that matches the library passes.
    #[test]
    fn a_readme_that_matches_the_library_passes() {
        let outcome = check(&readme("`Server`, `kit::io::serve`, `Mode::Stateless`", "`Fuzzer`"), &index());
        assert_eq!(outcome.findings, vec![]);
        assert_eq!(outcome.summary, "3 shipping names found, 1 names under the other headings absent");
    }

    /// A shipping name that does not exist is found.
    #[test]
    fn a_shipping_name_that_does_not_exist_is_found() {
        let findings = check(&readme("`Server` and\n`kit::io::connect`", ""), &index()).findings;
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0]
                .to_string()
                .starts_with("README.md:6: [readme-split] `kit::io::connect` is shipping now")
        );
    }

    /// A scheduled name that exists is found.
    #[test]
    fn a_scheduled_name_that_exists_is_found() {
        let findings = check(&readme("`Server`", "`Mode::Stateless` soon"), &index()).findings;
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].message.contains("is under **Scheduled.** but is a public item"));
    }

    /// Headings out of order are found.
    #[test]
    fn headings_out_of_order_are_found() {
        let swapped = readme("`Server`", "")
            .replace("**Scheduled.**", "@@")
            .replace("**Decided and not built.**", "**Scheduled.**")
            .replace("@@", "**Decided and not built.**");
        let findings = check(&swapped, &index()).findings;
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].message.starts_with("headings out of order"));
    }

    /// A missing section or heading or name is an error not a panic.
    #[test]
    fn a_missing_section_or_heading_or_name_is_an_error_not_a_panic() {
        assert_eq!(check("# kit\n", &index()).findings.len(), 1);
        let no_heading = readme("`Server`", "").replace("**Scheduled.**", "Scheduled:");
        assert_eq!(check(&no_heading, &index()).findings.len(), 1);
        let nothing_named = check(&readme("a server", ""), &index()).findings;
        assert_eq!(nothing_named.len(), 1);
        assert!(nothing_named[0].message.contains("no shipping item name"));
    }

    /// Item names are paths or capitalised.
    #[test]
    fn item_names_are_paths_or_capitalised() {
        for yes in ["Server", "mcp_kernel::stdio::serve", "LegacyClients::Stateless", "HTTP"] {
            assert!(is_item_name(yes), "{yes}");
        }
        for no in ["unset", "cargo xtask conformance", "connectome://", "2025-11-25", "serve()", "a::", ""] {
            assert!(!is_item_name(no), "{no}");
        }
    }
}
