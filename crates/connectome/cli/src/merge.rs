//! `connectome merge`: several instances' observed exports, or earlier merged results, merged into one
//! federation (connectome [CM-4], [CM-5]), written as its four files in one directory.
//!
//! [CM-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use connectome_graph::federation::{Federation, merge};

use crate::args::{Flag, parse};
use crate::fail::{self, Failure, quoted};

/// The help of `connectome merge`.
pub const USAGE: &str = "\
connectome merge --system NAME --instance NAME:EXPORT:SIDECAR[:TIMING] [--instance …]
                 [--federation DIR …] --out-dir DIR
connectome merge --federation DIR --federation DIR [--federation DIR …] --out-dir DIR

Merges the observed exports of several instances of one system (its server name) into one
federation: nodes united, each edge's call count and total time summed and its longest call kept,
each edge naming the instances that observed it (connectome CM-4).
  --system      the system: the server name of every instance's server node (needed with --instance)
  --instance    one instance: its name, its observed graph export, its sidecar and, optionally, its
                timing sidecar, separated by `:` (so the paths hold no `:`); repeat for each instance
  --federation  a directory an earlier merge wrote; its instances join the merge
  --out-dir     the directory to write (created if missing): export.json (the graph export),
                sidecar.json (the summed counts), record.json (the federation record) and, when every
                part is timed, timing.json (a stale timing.json there is removed)
Each input is read strictly; an instance named twice, another system or another algorithm is refused.
A summary line goes to stderr. Exit codes: 0 written, 2 refused (usage or input), 1 output not written.
";

/// The file names of a federation directory: export, sidecar, record, timing.
pub const FILES: [&str; 4] = ["export.json", "sidecar.json", "record.json", "timing.json"];

/// The flags of `merge`.
const FLAGS: &[Flag] =
    &[Flag::once("--system"), Flag::many("--instance"), Flag::many("--federation"), Flag::once("--out-dir")];

/// Lifts one `--instance NAME:EXPORT:SIDECAR[:TIMING]` of `system` into a federation of one.
fn instance(spec: &str, system: &str) -> Result<Federation, Failure> {
    let parts: Vec<&str> = spec.split(':').collect();
    let (name, export, sidecar, timing) = match parts.as_slice() {
        [name, export, sidecar] => (*name, *export, *sidecar, None),
        [name, export, sidecar, timing] => (*name, *export, *sidecar, Some(*timing)),
        _ => {
            return Err(Failure::usage(
                "merge",
                format!(
                    "--instance {} is not NAME:EXPORT:SIDECAR[:TIMING]",
                    connectome_render::escape::excerpt(spec)
                ),
            ));
        }
    };
    let export_bytes = fail::read(Path::new(export))?;
    let sidecar_bytes = fail::read(Path::new(sidecar))?;
    let timing_bytes = timing.map(|t| fail::read(Path::new(t))).transpose()?;
    Federation::instance(name, system, &export_bytes, &sidecar_bytes, timing_bytes.as_deref()).map_err(|e| {
        Failure::Input(format!(
            "instance {}: {}",
            connectome_render::escape::excerpt(name),
            fail::one_line(&e.to_string())
        ))
    })
}

/// Reads the federation an earlier merge wrote into `dir`.
pub fn federation(dir: &Path) -> Result<Federation, Failure> {
    let [export, sidecar, record, timing] = FILES.map(|f| dir.join(f));
    let (export, sidecar, record) = (fail::read(&export)?, fail::read(&sidecar)?, fail::read(&record)?);
    let timing = if timing.exists() { Some(fail::read(&timing)?) } else { None };
    Federation::read(&export, &sidecar, &record, timing.as_deref()).map_err(|e| Failure::input(dir, e))
}

/// Writes `merged` into `dir` as [`FILES`].
fn write_out(dir: &Path, merged: &Federation) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::Output(format!("cannot create {}: {}", quoted(dir), connectome_render::cli::io_reason(&e)))
    })?;
    let [export, sidecar, record, timing] = FILES.map(|f| dir.join(f));
    fail::write_file(&export, merged.export_bytes())?;
    fail::write_file(&sidecar, merged.sidecar_bytes())?;
    fail::write_file(&record, merged.record_bytes())?;
    match merged.timing_bytes() {
        Some(bytes) => fail::write_file(&timing, bytes),
        None if timing.exists() => std::fs::remove_file(&timing).map_err(|e| {
            Failure::Output(format!(
                "cannot remove {}: {}",
                quoted(&timing),
                connectome_render::cli::io_reason(&e)
            ))
        }),
        None => Ok(()),
    }
}

/// Runs `connectome merge` with the arguments after `merge`.
pub fn run(args: &[OsString], stdout: &mut dyn Write) -> Result<(), Failure> {
    let parsed = parse("merge", FLAGS, args)?;
    if parsed.help {
        return fail::write(None, USAGE.as_bytes(), stdout);
    }
    parsed.exactly(&[])?;
    let instances = parsed.texts("--instance")?;
    let federations: Vec<PathBuf> = parsed.texts("--federation")?.into_iter().map(PathBuf::from).collect();
    if instances.is_empty() && federations.is_empty() {
        return Err(parsed.usage("nothing to merge: give --instance or --federation"));
    }
    let Some(out_dir) = parsed.path("--out-dir") else { return Err(parsed.usage("--out-dir is required")) };
    let system = parsed.text("--system")?;
    let mut parts = Vec::new();
    if !instances.is_empty() {
        let Some(system) = system.as_deref() else { return Err(parsed.usage("--instance needs --system")) };
        for spec in &instances {
            parts.push(instance(spec, system)?);
        }
    }
    for dir in &federations {
        parts.push(federation(dir)?);
    }
    if let Some(system) = system.as_deref()
        && let Some(other) = parts.iter().find(|p| p.system() != system)
    {
        return Err(Failure::Input(format!(
            "--system is {} but a part is of {}",
            connectome_render::escape::excerpt(system),
            connectome_render::escape::excerpt(other.system())
        )));
    }
    let merged = merge(&parts)
        .map_err(|e| Failure::Input(format!("merge refused: {}", fail::one_line(&e.to_string()))))?;
    write_out(&out_dir, &merged)?;
    eprintln!(
        "connectome merge: {} instance(s), {} nodes, {} edges, {}, record {} {} → {}",
        merged.instances().len(),
        merged.graph().nodes().len(),
        merged.graph().edges().len(),
        if merged.timings().is_some() { "timed" } else { "untimed" },
        merged.algorithm().name(),
        merged.record_hash_hex(),
        out_dir.display()
    );
    Ok(())
}
