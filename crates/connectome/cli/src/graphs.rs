//! `connectome diff` and `connectome effective`: a declared export against an observed one (with its
//! sidecar and timing sidecar), written as the diff record ([CB-7]) or the effective export ([CW-3]).
//!
//! [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CW-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::io::Write;
use std::path::Path;

use connectome_graph::read::{Export, read_export, read_sidecar, read_timing, weigh};
use connectome_graph::{Diff, Effective, Timings};

use crate::args::{Flag, Parsed, parse};
use crate::fail::{self, Failure};

/// The help of `connectome diff`.
pub const DIFF_USAGE: &str = "\
connectome diff <declared.json> <observed.json> [--sidecar S.json] [--window JSON] [--out FILE]

Diffs a declared graph export against an observed one and writes the diff record (the four classes
and the ten coverage counts, connectome CB-7) under the declared export's digest algorithm.
  --sidecar  the observed export's sidecar (its call counts); the diff reads no weight, but a
             sidecar given is read strictly and must weigh the observed export's edges
  --window   the observation window, a JSON object copied into the record (default {})
  --out      write to FILE instead of stdout
Exit codes: 0 written, 2 refused (usage or input), 1 output not written.
";

/// The help of `connectome effective`.
pub const EFFECTIVE_USAGE: &str = "\
connectome effective <declared.json> <observed.json> [--sidecar S.json] [--timing T.json]
                     [--window JSON] [--out FILE]

Lays the observed call counts (and times) onto the declared graph and writes the effective export
(connectome CW-3): every declared edge with its count, 0 when never observed, and every observed edge
that was not declared, flagged.
  --sidecar  the observed export's sidecar: every observed edge needs its call count
  --timing   the observed export's timing sidecar (total and longest call time per edge)
  --window   the observation window, a JSON object copied into the export (default {})
  --out      write to FILE instead of stdout
Exit codes: 0 written, 2 refused (usage or input), 1 output not written.
";

/// The flags of `diff`.
const DIFF_FLAGS: &[Flag] = &[Flag::once("--sidecar"), Flag::once("--window"), Flag::once("--out")];
/// The flags of `effective`.
const EFFECTIVE_FLAGS: &[Flag] =
    &[Flag::once("--sidecar"), Flag::once("--timing"), Flag::once("--window"), Flag::once("--out")];

/// Reads the graph export at `path` strictly ([CR-1]).
///
/// [CR-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn graph(path: &Path) -> Result<Export, Failure> {
    read_export(&fail::read(path)?).map_err(|e| Failure::input(path, e))
}

/// Reads the observed export at `path`, weighed by the sidecar at `sidecar` if one is given ([CR-4]).
///
/// [CR-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn observed(path: &Path, sidecar: Option<&Path>) -> Result<Export, Failure> {
    let export = graph(path)?;
    let Some(sidecar) = sidecar else { return Ok(export) };
    let weights = read_sidecar(&fail::read(sidecar)?).map_err(|e| Failure::input(sidecar, e))?;
    let graph = weigh(export.graph, &weights).map_err(|e| Failure::input(sidecar, e))?;
    Ok(Export { graph, algorithm: export.algorithm })
}

/// Reads the timing sidecar at `path` strictly ([CR-4]).
///
/// [CR-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn timing(path: &Path) -> Result<Timings, Failure> {
    read_timing(&fail::read(path)?).map_err(|e| Failure::input(path, e))
}

/// The `--window` object, `{}` when none is given.
fn window(parsed: &Parsed) -> Result<serde_json::Value, Failure> {
    let Some(text) = parsed.text("--window")? else { return Ok(serde_json::json!({})) };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        Ok(_) => Err(Failure::Input("--window: not a JSON object".to_owned())),
        Err(e) => Err(Failure::Input(format!("--window: not JSON: {e}"))),
    }
}

/// The declared and observed sides, refusing two exports under different algorithms.
fn sides(parsed: &Parsed) -> Result<(Export, Export), Failure> {
    let [declared, observed] = <[_; 2]>::try_from(parsed.exactly(&["<declared.json>", "<observed.json>"])?)
        .map_err(|_| parsed.usage("two exports"))?;
    let declared_export = graph(&declared)?;
    let observed_export = self::observed(&observed, parsed.path("--sidecar").as_deref())?;
    if declared_export.algorithm != observed_export.algorithm {
        return Err(Failure::Input(format!(
            "the declared export names {} and the observed export {}: one algorithm for both",
            declared_export.algorithm.name(),
            observed_export.algorithm.name()
        )));
    }
    Ok((declared_export, observed_export))
}

/// Runs `connectome diff` with the arguments after `diff`.
pub fn diff(args: &[std::ffi::OsString], stdout: &mut dyn Write) -> Result<(), Failure> {
    let parsed = parse("diff", DIFF_FLAGS, args)?;
    if parsed.help {
        return fail::write(None, DIFF_USAGE.as_bytes(), stdout);
    }
    let (declared, observed) = sides(&parsed)?;
    let window = window(&parsed)?;
    let diff = Diff::run(&declared.graph, &observed.graph, &window)
        .map_err(|e| Failure::Input(format!("diff refused: {}", fail::one_line(&e.to_string()))))?;
    fail::write(parsed.path("--out").as_deref(), &diff.encode(declared.algorithm), stdout)
}

/// Runs `connectome effective` with the arguments after `effective`.
pub fn effective(args: &[std::ffi::OsString], stdout: &mut dyn Write) -> Result<(), Failure> {
    let parsed = parse("effective", EFFECTIVE_FLAGS, args)?;
    if parsed.help {
        return fail::write(None, EFFECTIVE_USAGE.as_bytes(), stdout);
    }
    let (declared, observed) = sides(&parsed)?;
    let timings = parsed.path("--timing").map(|p| timing(&p)).transpose()?;
    let window = window(&parsed)?;
    let effective =
        Effective::build(&declared.graph, &observed.graph, timings.as_ref(), &window, declared.algorithm)
            .map_err(|e| Failure::Input(format!("effective refused: {}", fail::one_line(&e.to_string()))))?;
    fail::write(parsed.path("--out").as_deref(), effective.encode(), stdout)
}
