//! `connectome verify`: re-hashes a connectome document as held and says whether its bytes are
//! canonical (connectome [CR-6]); sidecars, which are never hashed, are read strictly instead.
//!
//! [CR-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::ffi::OsString;
use std::io::Write;

use connectome_graph::read::{Canonicity, Verdict, read_sidecar, read_timing, verify_export, verify_record};

use crate::args::{Flag, parse};
use crate::fail::{self, Failure};

/// The help of `connectome verify`.
pub const USAGE: &str = "\
connectome verify <file> [--hash HEX]

Re-hashes a graph export, a diff record, a federation record or an effective export as held, with
the digest it names, and says whether its bytes are canonical (connectome CR-6); prints one line:
`<document>: schema_version 3, <algorithm> <hex>: canonical`. A sidecar or timing sidecar, never
hashed, is read strictly and said canonical or refused. A schema 1 or 2 export is hashed as held and
not judged.
  --hash  the digest the bytes must have (lowercase or uppercase hex)
Exit codes: 0 canonical (and hashing to --hash), 3 valid but not canonical, not hashing to --hash or
not judged, 2 refused (usage, unreadable, not a connectome document).
";

/// What a document is, by its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A graph export ([CB-4]).
    ///
    /// [CB-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Graph,
    /// A sidecar ([CB-5]).
    ///
    /// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Sidecar,
    /// A timing sidecar ([CM-2]).
    ///
    /// [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Timing,
    /// A record written with the label grammar, named.
    Record(&'static str),
}

/// The kind of the document `bytes` hold, from its top-level members (the readers judge the rest).
fn kind(bytes: &[u8]) -> Kind {
    let Ok(serde_json::Value::Object(top)) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return Kind::Graph;
    };
    let has = |member: &str| top.contains_key(member);
    if has("weights") {
        Kind::Sidecar
    } else if has("timings") {
        Kind::Timing
    } else if has("declared_graph") {
        Kind::Record("effective export")
    } else if has("instances") {
        Kind::Record("federation record")
    } else if has("classes") {
        Kind::Record("diff record")
    } else if has("nodes") || has("edges") {
        Kind::Graph
    } else {
        Kind::Record("record")
    }
}

/// Runs `connectome verify` with the arguments after `verify`.
pub fn run(args: &[OsString], stdout: &mut dyn Write) -> Result<(), Failure> {
    let parsed = parse("verify", &[Flag::once("--hash")], args)?;
    if parsed.help {
        return fail::write(None, USAGE.as_bytes(), stdout);
    }
    let [path] = <[_; 1]>::try_from(parsed.exactly(&["<file>"])?).map_err(|_| parsed.usage("one file"))?;
    let expected = parsed.text("--hash")?.map(|h| h.to_ascii_lowercase());
    if let Some(hex) = &expected
        && (hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return Err(parsed.usage("--hash must be hexadecimal"));
    }
    let bytes = fail::read(&path)?;
    let kind = kind(&bytes);
    let (name, verdict): (&str, Verdict) = match kind {
        Kind::Sidecar | Kind::Timing => {
            if expected.is_some() {
                return Err(parsed.usage("a sidecar is never hashed: --hash does not apply"));
            }
            let name = if kind == Kind::Sidecar {
                read_sidecar(&bytes).map(|_| "sidecar")
            } else {
                read_timing(&bytes).map(|_| "timing sidecar")
            }
            .map_err(|e| Failure::input(&path, e))?;
            let line = format!("{name}: schema_version 3, not hashed: canonical\n");
            return fail::write(None, line.as_bytes(), stdout);
        }
        Kind::Graph => ("graph export", verify_export(&bytes).map_err(|e| Failure::input(&path, e))?),
        Kind::Record(name) => (name, verify_record(&bytes).map_err(|e| Failure::input(&path, e))?),
    };
    let head = format!(
        "{name}: schema_version {}, {} {}",
        verdict.schema_version,
        verdict.algorithm.name(),
        verdict.hash_hex
    );
    let (line, failure) = match &verdict.canonical {
        Canonicity::Canonical => (format!("{head}: canonical\n"), None),
        Canonicity::Differs { offset, canonical_hex } => (
            format!(
                "{head}: not canonical (first differs at byte {offset}; canonical bytes hash to {canonical_hex})\n"
            ),
            Some(format!(
                "{}: not canonical: the bytes differ from their canonical form at byte {offset}",
                fail::quoted(&path)
            )),
        ),
        Canonicity::Held => (
            format!("{head}: held (schema {}: hashed as held, not judged)\n", verdict.schema_version),
            (expected.is_none()).then(|| {
                format!(
                    "{}: schema {} is hashed as held and not judged canonical",
                    fail::quoted(&path),
                    verdict.schema_version
                )
            }),
        ),
    };
    fail::write(None, line.as_bytes(), stdout)?;
    if let Some(hex) = expected
        && hex != verdict.hash_hex
    {
        return Err(Failure::Verdict(format!(
            "{}: hash mismatch: the bytes hash to {} {}, not {}",
            fail::quoted(&path),
            verdict.algorithm.name(),
            verdict.hash_hex,
            connectome_render::escape::excerpt_max(&hex, 160)
        )));
    }
    match failure {
        Some(message) => Err(Failure::Verdict(message)),
        None => Ok(()),
    }
}
