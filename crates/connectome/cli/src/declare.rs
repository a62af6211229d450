//! `connectome declare`: the declared export built from a server's catalog export (CB-9) and, when
//! given, the call facts, each typed tool, resource and prompt linked to the module of the function that
//! serves it (CL-12).

use std::ffi::OsString;
use std::io::Write;

use connectome_graph::declared::Declared;
use connectome_graph::{Algorithm, CallFacts};

use crate::args::{Flag, parse};
use crate::catalog::{self, Reader, item_of, module_of};
use crate::facts;
use crate::fail::{self, Failure};

/// The help of `connectome declare`.
pub const USAGE: &str = "\
connectome declare --catalog <catalog.json> [--facts <facts.json> | --package <package>…
                   [--manifest-path <Cargo.toml>] [--target-dir <dir>]] [--system <name>]
                   [--bound <file>] [--out <file>|-]

Builds the declared graph export (module level) from a server's catalog export
(`Server::catalog_export`, connectome CB-9) and the call facts `connectome facts` wrote. Each tool,
resource, template and prompt the catalog names a handler for is linked to the module of that function
(a closure's enclosing function, connectome CB-10); one served by untyped dispatch has no link, and a
tool without one is listed in the bound's tools_without_module.
  --catalog  the catalog export (required)
  --facts    the call facts (default: none, the graph holds the catalog and the links only)
  --package  instead of --facts: read the call facts of these packages here, as `connectome facts`
             does (`-p`; repeat it), with its --manifest-path and --target-dir
  --system   the server's name in the graph (default: the catalog's `server`)
  --bound    also write what the graph does not show (the declared bound, JSON) to this file
  --out      the declared export; stdout when absent or `-`
A summary line goes to stderr.
Exit codes: 0 written, 2 refused (usage or input), 1 output not written.
";

/// The flags of `declare`.
const FLAGS: &[Flag] = &[
    Flag::once("--catalog"),
    Flag::once("--facts"),
    Flag { long: "--package", short: Some("-p"), repeat: true },
    Flag::once("--manifest-path"),
    Flag::once("--target-dir"),
    Flag::once("--system"),
    Flag::once("--bound"),
    Flag::once("--out"),
];

/// The most characters of a refusal of the builder shown: its messages may quote a name from the
/// catalog file, which is shown no longer than this, on one line, its control characters escaped.
const REFUSAL_MAX: usize = 160;

/// A refusal of the builder, as shown.
fn refusal(message: &str) -> String {
    let line = fail::printable(&fail::one_line(message));
    match line.char_indices().nth(REFUSAL_MAX) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// Runs `connectome declare` with the arguments after `declare`.
pub fn run(args: &[OsString], stdout: &mut dyn Write) -> Result<(), Failure> {
    let parsed = parse("declare", FLAGS, args)?;
    if parsed.help {
        return fail::write(None, USAGE.as_bytes(), stdout);
    }
    parsed.exactly(&[])?;
    let Some(catalog_path) = parsed.path("--catalog") else {
        return Err(parsed.usage("no --catalog given"));
    };
    let catalog = catalog::read(&fail::read(&catalog_path)?).map_err(|e| Failure::input(&catalog_path, e))?;
    let packages = parsed.texts("--package")?;
    let from_cargo = parsed.path("--manifest-path").is_some() || parsed.path("--target-dir").is_some();
    let facts = match parsed.path("--facts") {
        Some(_) if !packages.is_empty() => {
            return Err(parsed.usage("--facts and --package exclude each other"));
        }
        Some(path) if !from_cargo => {
            Some(CallFacts::from_json(&fail::read(&path)?).map_err(|e| Failure::input(&path, e))?)
        }
        None if !packages.is_empty() => Some(facts::read_packages(&parsed, packages, "declare")?),
        None if !from_cargo => None,
        _ => return Err(parsed.usage("--manifest-path and --target-dir need --package")),
    };
    let system = parsed.text("--system")?.unwrap_or_else(|| catalog.server.clone());
    let mut builder = Declared::builder(system).catalog(catalog.declared.clone());
    let mut linked = 0;
    for tool in &catalog.tools {
        if let Some(item) = tool.handler.as_deref().and_then(item_of) {
            builder = builder.tool_module(tool.name.clone(), module_of(&item));
            linked += 1;
        }
    }
    let mut readers_linked = 0;
    for (reader, link) in &catalog.readers {
        if let Some(item) = link.handler.as_deref().and_then(item_of) {
            builder = match reader {
                Reader::Resource => builder.resource_module(link.name.clone(), module_of(&item)),
                Reader::Prompt => builder.prompt_module(link.name.clone(), module_of(&item)),
            };
            readers_linked += 1;
        }
    }
    if let Some(facts) = facts {
        builder = builder.facts(facts);
    }
    let declared =
        builder.build().map_err(|e| Failure::Input(format!("declare: {}", refusal(&e.to_string()))))?;
    let bytes = declared
        .graph
        .to_canonical_bytes(Algorithm::Sha256)
        .map_err(|e| Failure::Input(format!("declare: {}", refusal(&e.to_string()))))?;
    if let Some(path) = parsed.path("--bound") {
        // The bound is lists of strings: it always serializes.
        fail::write_file(&path, &serde_json::to_vec(&declared.bound).unwrap_or_default())?;
    }
    let out = parsed.path("--out");
    fail::write(out.as_deref(), &bytes, stdout)?;
    let written = match out.as_deref().filter(|p| p.as_os_str() != "-") {
        Some(path) => path.display().to_string(),
        None => "stdout".to_owned(),
    };
    let graph = &declared.graph;
    eprintln!(
        "connectome declare: {} tools ({linked} linked to their module), {} resources and prompts \
         ({readers_linked} linked); {} nodes, {} edges → {written}",
        catalog.tools.len(),
        catalog.readers.len(),
        graph.nodes().len(),
        graph.edges().len(),
    );
    Ok(())
}
