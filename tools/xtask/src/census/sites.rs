//! One digest site and one node-id site (connectome CI-3, CI-6, CK-12).
//!
//! - `crypto-site`: the files of library code that name a hash or MAC implementation are exactly
//!   [`CRYPTO_SITES`]. A line names one when, outside its string literals, it holds one of the words in
//!   [`CRYPTO_WORDS`] (crate names such as `sha2`, `hmac`; types such as `Sha256`, `Hmac`) or a path in
//!   [`CRYPTO_PATHS`] (`digest::Digest`), except the *name* of an algorithm:
//!   `Algorithm::Sha256` (the variant of the connectome's digest vocabulary) and a vocabulary entry
//!   line that is exactly `Sha256,` or `Sha256 => "sha256",`. A pinned file that no longer names one is
//!   a finding too, so the pin stays exact.
//! - `one-digest-fn`: in the connectome crates (`crates/connectome/*`), every such line other than a
//!   `use` line lies inside the body of the one `fn digest(` of `connectome-canonical/src/digest.rs`.
//! - `one-id-fn`: in the connectome crates, the only `fn id(` / `fn id<` lines are the derivation
//!   `pub fn id(&self) -> String {` in `connectome-graph/src/identity.rs` (it must be there) and the
//!   accessor `pub fn id(&self) -> &str {` in `connectome-graph/src/graph.rs`; the id escaping
//!   `escape_component(` is named only in `identity.rs`.
//! - `node-literal`: in each crate, a `Node { … }` literal (the word `Node` followed by `{`, not after
//!   `struct`, `enum`, `impl`, `for`, `trait` or `->`) appears only in the file that defines
//!   `struct Node`: nodes are built through `Node::new` / `Node::from_identity`, which derive the id.

use super::lines::{Braces, CodeLine, words};
use super::{Finding, Library, Outcome};

/// The files that may name a hash or MAC implementation.
pub const CRYPTO_SITES: &[&str] = &[
    "crates/connectome/canonical/src/digest.rs",
    "crates/kernel/router/src/sealing/sealer.rs",
    "crates/kernel/router/src/sealing/state.rs",
    "crates/kernel/router/src/tasks/owner.rs",
];
/// Words that name a hash or MAC implementation (crates, then types).
const CRYPTO_WORDS: &[&str] = &[
    "sha1",
    "sha2",
    "sha3",
    "md5",
    "blake2",
    "blake3",
    "hmac",
    "hkdf",
    "ring",
    "aws_lc_rs",
    "openssl",
    "sha256",
    "Hmac",
    "Hkdf",
    "Md5",
    "Blake2b512",
    "Blake2s256",
    "Sha3_256",
    "Sha3_512",
    "Sha1",
    "Sha224",
    "Sha256",
    "Sha384",
    "Sha512",
];
/// The file holding the one digest function of the connectome crates.
const DIGEST_FILE: &str = "crates/connectome/canonical/src/digest.rs";
/// The file holding the one id derivation.
const IDENTITY_FILE: &str = "crates/connectome/graph/src/identity.rs";
/// The permitted `fn id(` lines of the connectome crates.
const ID_FNS: &[(&str, &str)] = &[
    (IDENTITY_FILE, "pub fn id(&self) -> String {"),
    ("crates/connectome/graph/src/graph.rs", "pub fn id(&self) -> &str {"),
];

/// Paths that name the generic hash and MAC traits of the `digest` crate.
const CRYPTO_PATHS: &[&str] = &["digest::Digest", "digest::DynDigest", "digest::Mac", "digest::core_api"];

/// The implementation word a code line names, if any (algorithm names excepted), read on the line with
/// literal contents blanked (`bare`), so a message or a vocabulary string is not a site.
pub fn crypto_word(bare: &str) -> Option<&str> {
    let entry = bare.trim_end_matches(',');
    let is_entry = |w: &str| {
        let rest = entry.strip_prefix(w).map(str::trim_start);
        entry == w
            || rest
                .and_then(|r| r.strip_prefix("=> \""))
                .is_some_and(|r| r.ends_with('"') && !r[..r.len() - 1].contains('"'))
    };
    if let Some(path) = CRYPTO_PATHS.iter().find(|p| bare.contains(**p)) {
        return Some(path);
    }
    words(bare)
        .into_iter()
        .find(|(at, w)| CRYPTO_WORDS.contains(w) && !bare[..*at].ends_with("Algorithm::") && !is_entry(w))
        .map(|(_, w)| w)
}

/// Whether a bare code line declares a function named `id` (`fn id(` or `fn id<`).
fn declares_id(bare: &str) -> bool {
    let found = words(bare);
    found
        .windows(2)
        .any(|w| w[0].1 == "fn" && w[1].1 == "id" && bare[w[1].0 + 2..].trim_start().starts_with(['(', '<']))
}

/// The index range (into `lines`) of the body of the first function named `name`, if any.
fn fn_span(lines: &[CodeLine], name: &str) -> Option<(usize, usize)> {
    let start = lines.iter().position(|l| l.bare.contains(&format!("fn {name}(")))?;
    let mut braces = Braces::default();
    for (i, line) in lines.iter().enumerate().skip(start) {
        braces.count(&line.bare);
        if braces.closed() {
            return Some((start, i));
        }
    }
    Some((start, lines.len()))
}

/// Whether the word `Node` at byte `at` of `bare` starts a struct literal.
fn node_literal_at(bare: &str, at: usize) -> bool {
    if !bare[at + 4..].trim_start().starts_with('{') {
        return false;
    }
    let before = bare[..at].trim_end().trim_end_matches("::").trim_end();
    let before = before.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':');
    let previous = words(bare[..at].trim_end()).last().map(|(_, w)| *w);
    let declares = matches!(previous, Some("struct" | "enum" | "impl" | "for" | "trait" | "union"));
    !(declares || before.trim_end().ends_with("->"))
}

/// The digest rules over `library`, with `pinned` the permitted crypto files.
fn digest_rules(library: &[Library], pinned: &[&str], findings: &mut Vec<Finding>) -> usize {
    let mut sites = 0;
    for file in library {
        let named: Vec<&CodeLine> = file.lines.iter().filter(|l| crypto_word(&l.bare).is_some()).collect();
        let is_pinned = pinned.contains(&file.path.as_str());
        if named.is_empty() {
            if is_pinned {
                findings.push(Finding::new(
                    &file.path,
                    0,
                    "crypto-site",
                    "a pinned site names no hash or MAC any more; update the census",
                ));
            }
            continue;
        }
        sites += 1;
        if !is_pinned {
            let first = named[0];
            let word = crypto_word(&first.bare).unwrap_or_default();
            findings.push(Finding::new(
                &file.path,
                first.number,
                "crypto-site",
                format!("`{word}`: a new hash or MAC site; the sites are exactly {}", pinned.join(", ")),
            ));
        }
        if file.krate.starts_with("connectome-") {
            let span = (file.path == DIGEST_FILE).then(|| fn_span(&file.lines, "digest")).flatten();
            for line in named.iter().filter(|l| !l.text.starts_with("use ")) {
                let inside = span.is_some_and(|(a, b)| {
                    let i = file.lines.iter().position(|l| l.number == line.number).unwrap_or(0);
                    a < i && i <= b
                });
                if !inside {
                    findings.push(Finding::new(
                        &file.path,
                        line.number,
                        "one-digest-fn",
                        format!("a hash computed outside `{DIGEST_FILE}`'s `fn digest`"),
                    ));
                }
            }
        }
    }
    for pin in pinned.iter().filter(|p| !library.iter().any(|f| f.path == **p)) {
        findings.push(Finding::new(pin, 0, "crypto-site", "a pinned site is missing; update the census"));
    }
    sites
}

/// The node-id rules over `library`.
fn id_rules(library: &[Library], findings: &mut Vec<Finding>) {
    let mut derivation = false;
    for file in library.iter().filter(|f| f.krate.starts_with("connectome-")) {
        for line in &file.lines {
            if declares_id(&line.bare) {
                if ID_FNS.contains(&(file.path.as_str(), line.text.as_str())) {
                    derivation |= file.path == IDENTITY_FILE;
                } else {
                    findings.push(Finding::new(
                        &file.path,
                        line.number,
                        "one-id-fn",
                        "a second `fn id`: ids are derived only by `Identity::id`",
                    ));
                }
            }
            if line.bare.contains("escape_component(") && file.path != IDENTITY_FILE {
                findings.push(Finding::new(
                    &file.path,
                    line.number,
                    "one-id-fn",
                    "id escaping outside `identity.rs`: ids are derived only by `Identity::id`",
                ));
            }
        }
    }
    if !derivation {
        findings.push(Finding::new(
            IDENTITY_FILE,
            0,
            "one-id-fn",
            "the id derivation `pub fn id(&self) -> String {` was not found",
        ));
    }
    for file in library {
        let defines = |f: &Library| {
            f.lines.iter().any(|l| words(&l.bare).windows(2).any(|w| w[0].1 == "struct" && w[1].1 == "Node"))
        };
        let home: Vec<&str> =
            library.iter().filter(|f| f.krate == file.krate && defines(f)).map(|f| f.path.as_str()).collect();
        if home.is_empty() || home.contains(&file.path.as_str()) {
            continue;
        }
        for line in &file.lines {
            let literal =
                words(&line.bare).into_iter().any(|(at, w)| w == "Node" && node_literal_at(&line.bare, at));
            if literal {
                findings.push(Finding::new(
                    &file.path,
                    line.number,
                    "node-literal",
                    format!("a `Node {{ … }}` literal outside {}: build nodes with `Node::new` or `Node::from_identity`", home.join(", ")),
                ));
            }
        }
    }
}

/// Runs the digest and node-id rules over `library`, with `pinned` the permitted crypto files.
pub fn check(library: &[Library], pinned: &[&str]) -> Outcome {
    let mut findings = Vec::new();
    let sites = digest_rules(library, pinned, &mut findings);
    id_rules(library, &mut findings);
    let summary = format!("{sites} hash/MAC sites (pinned {}), one digest fn, one id fn", pinned.len());
    Outcome { check: "sites", summary, findings }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clean sample: the digest fn, the id derivation and accessor, and a node built in its module.
    fn clean() -> Vec<Library> {
        vec![
            Library::parse(
                DIGEST_FILE,
                "use sha2::Digest as _;\npub enum Algorithm {\n    Sha256,\n}\npub fn digest(a: Algorithm, b: &[u8]) -> Vec<u8> {\n    match a {\n        Algorithm::Sha256 => sha2::Sha256::digest(b).to_vec(),\n    }\n}\n",
            ),
            Library::parse("crates/connectome/canonical/src/verify.rs", "(_, None) => Algorithm::Sha256,\n"),
            Library::parse("crates/connectome/render/src/vocab.rs", "Sha256 => \"sha256\",\n"),
            Library::parse(
                IDENTITY_FILE,
                "pub fn id(&self) -> String {\n    escape_component(self.server())\n}\n",
            ),
            Library::parse(
                "crates/connectome/graph/src/graph.rs",
                "pub struct Node {\n    id: String,\n}\nimpl Node {\n    pub fn new(i: Identity) -> Node {\n        Node { id: i.id() }\n    }\n    pub fn id(&self) -> &str {\n        &self.id\n    }\n}\n",
            ),
            Library::parse(
                "crates/connectome/graph/src/diff.rs",
                "let n = Node::from_identity(i, l);\nfn f() -> Node {\n    n\n}\n",
            ),
        ]
    }

    /// The clean sample's single pinned site.
    const PINNED: &[&str] = &[DIGEST_FILE];

    /// The clean sample with the file `path` holding `text` added.
    fn clean_and(path: &str, text: &str) -> Vec<Library> {
        let mut library = clean();
        library.push(Library::parse(path, text));
        library
    }

    /// The line and rule of each finding on `library`.
    fn lines_and_rules(library: &[Library]) -> Vec<(usize, &'static str)> {
        check(library, PINNED).findings.iter().map(|f| (f.line, f.rule)).collect()
    }

    /// A clean sample has one digest site and one id site.
    #[test]
    fn a_clean_sample_has_one_digest_site_and_one_id_site() {
        assert_eq!(check(&clean(), PINNED).findings, vec![]);
    }

    /// A second digest site is found.
    #[test]
    fn a_second_digest_site_is_found() {
        let mut library =
            clean_and("crates/kernel/http/src/etag.rs", "fn a() {}\nuse sha2::{Digest, Sha256};\n");
        library.push(Library::parse(
            "crates/connectome/graph/src/diff2.rs",
            "let h = sha2::Sha512::digest(&bytes);\n",
        ));
        let findings = check(&library, PINNED).findings;
        let got: Vec<_> = findings.iter().map(|f| (f.path.as_str(), f.line, f.rule)).collect();
        assert_eq!(
            got,
            [
                ("crates/kernel/http/src/etag.rs", 2, "crypto-site"),
                ("crates/connectome/graph/src/diff2.rs", 1, "crypto-site"),
                ("crates/connectome/graph/src/diff2.rs", 1, "one-digest-fn"),
            ]
        );
    }

    /// A hash outside the digest fn is found.
    #[test]
    fn a_hash_outside_the_digest_fn_is_found() {
        let mut library = clean();
        library[0] = Library::parse(
            DIGEST_FILE,
            "pub fn digest() {}\npub fn quick(b: &[u8]) -> Vec<u8> {\n    sha2::Sha256::digest(b).to_vec()\n}\n",
        );
        assert_eq!(lines_and_rules(&library), [(3, "one-digest-fn")]);
    }

    /// A second id site and a node literal are found.
    #[test]
    fn a_second_id_site_and_a_node_literal_are_found() {
        let mut library = clean_and(
            "crates/connectome/observe/src/snapshot.rs",
            "pub fn id(&self) -> String {\n    format!(\"{}/tool/{}\", escape_component(s), t)\n}\nlet n = Node { id, kind, level, labels };\nlet m = connectome_graph::Node {\n",
        );
        assert_eq!(lines_and_rules(&library), [(1, "one-id-fn"), (2, "one-id-fn")]);
        library.push(Library::parse(
            "crates/connectome/graph/src/declared/build.rs",
            "let n = Node { id, kind, level, labels };\nlet m = crate::graph::Node {\n",
        ));
        let literals: Vec<_> = check(&library, PINNED)
            .findings
            .into_iter()
            .filter(|f| f.rule == "node-literal")
            .map(|f| f.line)
            .collect();
        assert_eq!(literals, [1, 2]);
    }

    /// Every hash or MAC crate and the generic traits are found (`crypto-site`); names are not.
    #[test]
    fn every_crypto_crate_and_trait_is_found() {
        let planted = [
            "let h = sha256::digest(b);",
            "let h = blake2::Blake2b512::new();",
            "let h = blake3::hash(b);",
            "let h = md5::compute(b);",
            "use sha1::Sha1;",
            "let h = sha3::Sha3_256::new();",
            "let k = ring::hmac::Key::new(a, b);",
            "use aws_lc_rs::digest;",
            "use openssl::sha::sha256;",
            "fn h<D: digest::Digest>() {}",
        ];
        for line in planted {
            let library = clean_and("crates/kernel/http/src/etag.rs", line);
            assert_eq!(lines_and_rules(&library), [(1, "crypto-site")], "{line}");
        }
        for name in
            ["Algorithm::Sha256 => \"sha256\",", "Sha384 => \"sha384\",", "let m = \"sha2 and hmac\";"]
        {
            assert_eq!(crypto_word(&Library::parse("a", name).lines[0].bare), None, "{name}");
        }
    }

    /// A second id fn with generics is found (`one-id-fn`).
    #[test]
    fn a_second_id_fn_with_generics_is_found() {
        let library = clean_and(
            "crates/connectome/observe/src/snapshot.rs",
            "pub fn id<T: AsRef<str>>(s: T) -> String {\n    s.as_ref().to_owned()\n}\nfn identity(x: u8) {}\n",
        );
        assert_eq!(lines_and_rules(&library), [(1, "one-id-fn")]);
    }

    /// A pinned site that is gone is found.
    #[test]
    fn a_pinned_site_that_is_gone_is_found() {
        let library = clean().into_iter().skip(1).collect::<Vec<_>>();
        let rules: Vec<_> = check(&library, PINNED).findings.iter().map(|f| f.rule).collect();
        assert_eq!(rules, ["crypto-site"]);
    }
}
