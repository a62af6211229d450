//! The canonical-form document is part of the contract: `docs/connectome-canonical.md` is read at
//! compile time, its "## Worked example" and "## Golden graph" sections are parsed (the first ```json
//! block after the heading and the `sha256:` / `sha384:` / `sha512:` lines), and the same graphs, built
//! through the library, must give those bytes and those hashes. The diff record of `docs/connectome.md`
//! ("### Worked example") is checked the same way against `encode_value`.
//!
//! Every check returns a message naming the document and the section, so an altered or missing block or
//! line fails clearly; `altered_documents_fail_naming_the_section` proves it on mutated copies.

use std::collections::BTreeMap;

use connectome_canonical::{
    Algorithm, CanonicalGraph, Value, digest, encode, encode_value, hash_hex, to_hex, verify,
};

const CANONICAL_DOC: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../docs/connectome-canonical.md"));
const CANONICAL_DOC_NAME: &str = "docs/connectome-canonical.md";

const OVERVIEW_DOC: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../docs/connectome.md"));
const OVERVIEW_DOC_NAME: &str = "docs/connectome.md";

const WORKED_EXAMPLE: &str = "## Worked example";
const GOLDEN_GRAPH: &str = "## Golden graph";
const DIFF_EXAMPLE: &str = "### Worked example";

// ---------------------------------------------------------------------------------------------- parsing

/// What a document section states: one line of bytes and one hash line per algorithm.
#[derive(Debug)]
struct Section {
    /// `<document>, section "<heading>"`, the prefix of every message.
    place: String,
    /// The single line inside the first ```json block.
    block: String,
    /// The hash lines, in the order `Algorithm::ALL` lists them.
    hashes: Vec<(Algorithm, String)>,
}

impl Section {
    fn hash(&self, algorithm: Algorithm) -> Result<&str, String> {
        self.hashes
            .iter()
            .find(|(a, _)| *a == algorithm)
            .map(|(_, hex)| hex.as_str())
            .ok_or_else(|| format!("{}: no {} line", self.place, algorithm.name()))
    }

    /// The block's bytes with the `algorithm` member changed to `algorithm`.
    fn block_with(&self, algorithm: Algorithm) -> Result<String, String> {
        let member = r#""algorithm":"sha256""#;
        if self.block.matches(member).count() != 1 {
            return Err(format!("{}: the ```json block must hold {member} exactly once", self.place));
        }
        Ok(self.block.replacen(member, &format!(r#""algorithm":"{}""#, algorithm.name()), 1))
    }
}

fn is_fence(line: &str) -> bool {
    line.starts_with("```")
}

/// The number of `#` of a heading line (`## Title` → 2), or `None`.
fn heading_level(line: &str) -> Option<usize> {
    let level = line.bytes().take_while(|b| *b == b'#').count();
    (level > 0 && line[level..].starts_with(' ')).then_some(level)
}

/// The lines under `heading` (outside code fences), up to the next heading of the same or a higher level.
fn section_lines<'d>(place: &str, doc: &'d str, heading: &str) -> Result<Vec<&'d str>, String> {
    let level = heading_level(heading).expect("a markdown heading");
    let lines: Vec<&str> = doc.lines().map(|l| l.trim_end_matches('\r')).collect();
    let mut in_fence = false;
    let mut starts = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if is_fence(line) {
            in_fence = !in_fence;
        } else if !in_fence && *line == heading {
            starts.push(i);
        }
    }
    let start = match starts.as_slice() {
        [start] => *start + 1,
        [] => return Err(format!("{place}: the heading is missing")),
        _ => return Err(format!("{place}: the heading appears {} times", starts.len())),
    };
    let mut in_fence = false;
    let mut body = Vec::new();
    for line in &lines[start..] {
        if is_fence(line) {
            in_fence = !in_fence;
        } else if !in_fence && heading_level(line).is_some_and(|l| l <= level) {
            break;
        }
        body.push(*line);
    }
    Ok(body)
}

/// Parses a hash line `<name>: `<hex>``; `Ok(None)` when the line is not a hash line.
fn hash_line(place: &str, line: &str) -> Result<Option<(Algorithm, String)>, String> {
    let Some(algorithm) = Algorithm::ALL.into_iter().find(|a| line.starts_with(&format!("{}:", a.name())))
    else {
        return Ok(None);
    };
    let name = algorithm.name();
    let value = line[name.len() + 1..]
        .strip_prefix(" `")
        .and_then(|rest| rest.strip_suffix('`'))
        .ok_or_else(|| format!("{place}: the {name} line must read `{name}: `<hex>``, found {line:?}"))?;
    let well_formed = value.len() == algorithm.output_len() * 2
        && value.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !well_formed {
        return Err(format!(
            "{place}: the {name} line must hold {} lowercase hex digits, found {value:?}",
            algorithm.output_len() * 2
        ));
    }
    Ok(Some((algorithm, value.to_owned())))
}

/// Parses `heading` of `doc`: the first ```json block (exactly one line) and exactly one hash line for
/// each of `expected` (and none for any other algorithm).
fn parse_section(
    doc_name: &str,
    doc: &str,
    heading: &str,
    expected: &[Algorithm],
) -> Result<Section, String> {
    let place = format!("{doc_name}, section {heading:?}");
    let body = section_lines(&place, doc, heading)?;

    let open = body
        .iter()
        .position(|l| l.trim_end() == "```json")
        .ok_or_else(|| format!("{place}: no ```json block"))?;
    let close = body[open + 1..]
        .iter()
        .position(|l| is_fence(l))
        .map(|i| open + 1 + i)
        .ok_or_else(|| format!("{place}: the ```json block is not closed"))?;
    let block = match &body[open + 1..close] {
        [line] if !line.is_empty() => (*line).to_owned(),
        lines => {
            return Err(format!(
                "{place}: the ```json block must hold exactly one line, found {}",
                lines.len()
            ));
        }
    };

    let mut hashes: Vec<(Algorithm, String)> = Vec::new();
    let mut in_fence = false;
    for line in &body {
        if is_fence(line) {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some((algorithm, hex)) = hash_line(&place, line)? {
            if hashes.iter().any(|(a, _)| *a == algorithm) {
                return Err(format!("{place}: more than one {} line", algorithm.name()));
            }
            if !expected.contains(&algorithm) {
                return Err(format!("{place}: an unexpected {} line", algorithm.name()));
            }
            hashes.push((algorithm, hex));
        }
    }
    for algorithm in expected {
        if !hashes.iter().any(|(a, _)| a == algorithm) {
            return Err(format!("{place}: the {} line is missing", algorithm.name()));
        }
    }
    hashes.sort_by_key(|(a, _)| Algorithm::ALL.iter().position(|x| x == a));
    Ok(Section { place, block, hashes })
}

fn canonical_section(heading: &str) -> Section {
    parse_section(CANONICAL_DOC_NAME, CANONICAL_DOC, heading, &Algorithm::ALL)
        .unwrap_or_else(|e| panic!("{e}"))
}

// ---------------------------------------------------------------------------------------------- graphs

#[path = "integration/common/mod.rs"]
mod common;

/// "## Worked example": the CC-15 graph.
use common::{cc15_graph as worked_example_graph, golden_graph, labels};

fn utf8(place: &str, bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| format!("{place}: the library wrote ill-formed UTF-8: {e}"))
}

/// Where two texts first differ, for a readable message.
fn first_difference(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

fn same_text(place: &str, what: &str, document: &str, library: &str) -> Result<(), String> {
    if document == library {
        return Ok(());
    }
    let at = first_difference(document, library);
    Err(format!("{place}: {what} differ from byte {at}\n  document: {document}\n  library:  {library}"))
}

/// `encode(&g, Algorithm::Sha256)` equals the block exactly.
fn check_bytes(section: &Section, graph: &CanonicalGraph) -> Result<(), String> {
    let place = &section.place;
    let bytes = encode(graph, Algorithm::Sha256).map_err(|e| format!("{place}: the library refused: {e}"))?;
    same_text(
        place,
        "the ```json block and encode(&g, Algorithm::Sha256)",
        &section.block,
        &utf8(place, bytes)?,
    )
}

/// `hash_hex(&g, alg)` equals each hash line.
fn check_hash_lines(section: &Section, graph: &CanonicalGraph) -> Result<(), String> {
    let place = &section.place;
    for (algorithm, documented) in &section.hashes {
        let computed =
            hash_hex(graph, *algorithm).map_err(|e| format!("{place}: the library refused: {e}"))?;
        if &computed != documented {
            return Err(format!(
                "{place}: the {} line is {documented}, hash_hex gives {computed}",
                algorithm.name()
            ));
        }
    }
    Ok(())
}

/// For every algorithm but sha256: the library's bytes are the block with the member changed, and the
/// line is the digest of those bytes.
fn check_member_changed(section: &Section, graph: &CanonicalGraph) -> Result<(), String> {
    let place = &section.place;
    for (algorithm, documented) in section.hashes.iter().filter(|(a, _)| *a != Algorithm::Sha256) {
        let name = algorithm.name();
        let library = encode(graph, *algorithm).map_err(|e| format!("{place}: the library refused: {e}"))?;
        let digest_hex = to_hex(&digest(*algorithm, &library));
        same_text(
            place,
            &format!("the block with \"algorithm\":\"{name}\" and encode(&g, {algorithm:?})"),
            &section.block_with(*algorithm)?,
            &utf8(place, library)?,
        )?;
        if &digest_hex != documented {
            return Err(format!(
                "{place}: the {name} line is {documented}, the {name} digest of the member-changed bytes is \
                 {digest_hex}"
            ));
        }
    }
    Ok(())
}

/// The document's bytes verify against its own lines (the member changed for sha384 / sha512).
fn check_verify(section: &Section) -> Result<(), String> {
    let place = &section.place;
    for (algorithm, documented) in &section.hashes {
        let bytes = section.block_with(*algorithm)?;
        let verified = verify(bytes.as_bytes(), documented)
            .map_err(|e| format!("{place}: the {} bytes do not verify: {e}", algorithm.name()))?;
        if verified.schema_version != 3 || verified.algorithm != *algorithm {
            return Err(format!("{place}: verify read {verified:?}, expected schema 3 and {algorithm:?}"));
        }
    }
    Ok(())
}

fn check_all(section: &Section, graph: &CanonicalGraph) -> Result<(), String> {
    check_bytes(section, graph)?;
    check_hash_lines(section, graph)?;
    check_member_changed(section, graph)?;
    check_verify(section)
}

fn ok(result: Result<(), String>) {
    if let Err(message) = result {
        panic!("{message}");
    }
}

// ---------------------------------------------------------------------------------------------- ## Worked example

#[test]
fn worked_example_bytes_are_the_library_encoding() {
    ok(check_bytes(&canonical_section(WORKED_EXAMPLE), &worked_example_graph()));
}

#[test]
fn worked_example_hash_lines_are_the_library_hashes() {
    let section = canonical_section(WORKED_EXAMPLE);
    assert_eq!(
        section.hash(Algorithm::Sha256).unwrap(),
        hash_hex(&worked_example_graph(), Algorithm::default()).unwrap(),
        "{}: the default algorithm is sha256",
        section.place
    );
    ok(check_hash_lines(&section, &worked_example_graph()));
}

#[test]
fn worked_example_sha384_and_sha512_lines_digest_the_member_changed_bytes() {
    ok(check_member_changed(&canonical_section(WORKED_EXAMPLE), &worked_example_graph()));
}

#[test]
fn worked_example_bytes_verify() {
    ok(check_verify(&canonical_section(WORKED_EXAMPLE)));
}

// ---------------------------------------------------------------------------------------------- ## Golden graph

#[test]
fn golden_graph_bytes_are_the_library_encoding() {
    ok(check_bytes(&canonical_section(GOLDEN_GRAPH), &golden_graph()));
}

#[test]
fn golden_graph_hash_lines_are_the_library_hashes() {
    ok(check_hash_lines(&canonical_section(GOLDEN_GRAPH), &golden_graph()));
}

#[test]
fn golden_graph_sha384_and_sha512_lines_digest_the_member_changed_bytes() {
    ok(check_member_changed(&canonical_section(GOLDEN_GRAPH), &golden_graph()));
}

#[test]
fn golden_graph_bytes_verify() {
    ok(check_verify(&canonical_section(GOLDEN_GRAPH)));
}

// ---------------------------------------------------------------------------------------------- docs/connectome.md

fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(labels(entries))
}

fn label(from: &str, to: &str) -> Value {
    object([
        ("from", format!("srv/tool/{from}").into()),
        ("kind", "invoke".into()),
        ("to", format!("srv/tool/{to}").into()),
    ])
}

/// The diff record of the overview's worked example, written by hand as the diff writes it.
fn diff_record(algorithm: Algorithm) -> BTreeMap<String, Value> {
    let changed = object([
        ("declared_sign", "allow".into()),
        ("from", "srv/tool/c".into()),
        ("kind", "invoke".into()),
        ("observed_sign", "deny".into()),
        ("to", "srv/tool/a".into()),
    ]);
    let classes = object([
        ("changed_sign", Value::Array(vec![changed])),
        ("declared_and_observed", Value::Array(vec![label("a", "b"), label("b", "a")])),
        ("declared_never_observed", Value::Array(vec![label("a", "c")])),
        ("observed_but_undeclared", Value::Array(vec![label("b", "c")])),
    ]);
    let coverage = object([
        ("declared_edges", 4.into()),
        ("observed_edges", 4.into()),
        ("declared_and_observed", 3.into()),
        ("declared_endpoint_covered", 4.into()),
        ("observed_endpoint_declared", 4.into()),
        ("declared_nodes", 4.into()),
        ("observed_nodes", 4.into()),
        ("nodes_in_both", 4.into()),
        ("declared_sign_only", 1.into()),
        ("observed_sign_only", 0.into()),
    ]);
    let window =
        object([("started_at", "2026-09-14T00:00:00Z".into()), ("ended_at", "2026-09-14T01:00:00Z".into())]);
    labels([
        ("window", window),
        ("schema_version", 3.into()),
        ("coverage", coverage),
        ("classes", classes),
        ("algorithm", algorithm.name().into()),
    ])
}

#[test]
fn diff_worked_example_record_is_encode_value_and_verifies() {
    let section =
        parse_section(OVERVIEW_DOC_NAME, OVERVIEW_DOC, DIFF_EXAMPLE, &[Algorithm::Sha256, Algorithm::Sha384])
            .unwrap_or_else(|e| panic!("{e}"));
    let place = &section.place;
    let bytes = encode_value(&diff_record(Algorithm::Sha256)).unwrap();
    assert_eq!(bytes.len(), 800, "{place}: the record is 800 bytes");
    ok(same_text(
        place,
        "the ```json block and encode_value",
        &section.block,
        &String::from_utf8(bytes).unwrap(),
    ));
    for (algorithm, documented) in &section.hashes {
        let library = encode_value(&diff_record(*algorithm)).unwrap();
        ok(same_text(
            place,
            &format!("the block with \"algorithm\":\"{}\" and encode_value", algorithm.name()),
            &section.block_with(*algorithm).unwrap(),
            std::str::from_utf8(&library).unwrap(),
        ));
        assert_eq!(
            &to_hex(&digest(*algorithm, &library)),
            documented,
            "{place}: the {} line",
            algorithm.name()
        );
        let verified =
            verify(&library, documented).unwrap_or_else(|e| panic!("{place}: does not verify: {e}"));
        assert_eq!((verified.schema_version, verified.algorithm), (3, *algorithm), "{place}");
    }
}

// ---------------------------------------------------------------------------------------------- the checks themselves

/// Runs every check of a canonical-document section on `doc`, as the tests above do.
fn check_document(doc: &str, heading: &str, graph: &CanonicalGraph) -> Result<(), String> {
    let section = parse_section(CANONICAL_DOC_NAME, doc, heading, &Algorithm::ALL)?;
    check_all(&section, graph)
}

fn mutate(doc: &str, from: &str, to: &str) -> String {
    assert!(doc.contains(from), "the mutation {from:?} does not apply to the document");
    doc.replacen(from, to, 1)
}

#[test]
fn the_document_passes_every_check() {
    ok(check_document(CANONICAL_DOC, WORKED_EXAMPLE, &worked_example_graph()));
    ok(check_document(CANONICAL_DOC, GOLDEN_GRAPH, &golden_graph()));
}

#[test]
fn altered_documents_fail_naming_the_section() {
    let c15_sha256 = "a401cd47f0f0410d17248538eb8a3ef00018f6a31bf6fb6a7b9b0ba3377f570e";
    let c15_sha384 =
        "f5b9b2f4fe21a4bfe88721d804f4f82d167f73f7dd59b1a64ae0196f4cf78f05a6b9a3efa6d02e7362469796dbba53dd";
    let c15_sha512_line = "sha512: `26cacb025eeaeabb0c441a293882ab81ec2436b80559618fd700dc494f9a5d2e2c6d46cee69a68cbdc84746aa9d64a4a11da027df7b0bc733ba1091031ee2e78`";
    let golden_sha512 = "21637ad9bbfb72132e751e2f4ead2e9a902d42dedba664c8f199527dd05304158116d0499b02b8441c028e8cf60de7783c398ffdcb97115b9c7a2ba90f495fe4";
    let cc15_block = r#"{"id":"s/tool/t","kind":"tool","labels":{"mode":"read_only"},"level":"server"}"#;

    let cases: Vec<(&str, String, &str)> = vec![
        (
            WORKED_EXAMPLE,
            mutate(CANONICAL_DOC, "## Worked example\n", "## Worked examples\n"),
            "heading is missing",
        ),
        (
            WORKED_EXAMPLE,
            mutate(CANONICAL_DOC, "## Worked example\n", "## Worked example\n\n## Worked example\n"),
            "appears 2 times",
        ),
        (
            WORKED_EXAMPLE,
            mutate(
                CANONICAL_DOC,
                concat!(
                    "\n```json\n",
                    r#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"s/server""#
                ),
                concat!("\n```\n", r#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"s/server""#),
            ),
            "no ```json block",
        ),
        (
            WORKED_EXAMPLE,
            mutate(CANONICAL_DOC, cc15_block, &cc15_block.replace("read_only", "read_ONLY")),
            "differ from byte",
        ),
        (
            WORKED_EXAMPLE,
            mutate(CANONICAL_DOC, cc15_block, &cc15_block.replace(r#""labels":"#, "\n\"labels\":")),
            "exactly one line",
        ),
        (WORKED_EXAMPLE, mutate(CANONICAL_DOC, c15_sha512_line, ""), "the sha512 line is missing"),
        (
            WORKED_EXAMPLE,
            mutate(CANONICAL_DOC, c15_sha512_line, &format!("{c15_sha512_line}\n\n{c15_sha512_line}")),
            "more than one sha512 line",
        ),
        (
            WORKED_EXAMPLE,
            mutate(CANONICAL_DOC, c15_sha256, &c15_sha256.replace("a401", "a402")),
            "the sha256 line is",
        ),
        (WORKED_EXAMPLE, mutate(CANONICAL_DOC, c15_sha384, &c15_sha384.to_uppercase()), "lowercase hex"),
        (
            WORKED_EXAMPLE,
            mutate(CANONICAL_DOC, &format!("sha256: `{c15_sha256}`"), &format!("sha256: {c15_sha256}")),
            "must read",
        ),
        (
            GOLDEN_GRAPH,
            mutate(CANONICAL_DOC, golden_sha512, &golden_sha512.replace("2163", "2164")),
            "the sha512 line is",
        ),
        (GOLDEN_GRAPH, mutate(CANONICAL_DOC, r#""title":"café""#, r#""title":"cafe""#), "differ from byte"),
    ];
    for (heading, doc, expected) in cases {
        let graph = if heading == WORKED_EXAMPLE { worked_example_graph() } else { golden_graph() };
        let message = check_document(&doc, heading, &graph)
            .expect_err(&format!("an altered {heading:?} section passed (expected {expected:?})"));
        let place = format!("{CANONICAL_DOC_NAME}, section {heading:?}");
        assert!(message.starts_with(&place), "{message:?} does not name {place:?}");
        assert!(message.contains(expected), "{message:?} does not say {expected:?}");
    }
}
