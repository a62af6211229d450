//! `connectome reach`: the reach queries of connectome §G over one graph export, each answer printed
//! with its witness.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write;

use connectome_graph::reach::{
    DominanceOptions, Path as Witness, PathOptions, all_paths, dominates, mandatory_pass, reachable,
    reachable_without,
};
use connectome_graph::{EdgeKind, Graph};
use connectome_render::escape::excerpt;

use crate::args::{Flag, Parsed, parse};
use crate::fail::{self, Failure};
use crate::graphs;

/// The help of `connectome reach`.
pub const USAGE: &str = "\
connectome reach <export.json> reachable <FROM> <TO> [--kinds K,K…] [--max-hops N]
connectome reach <export.json> reachable_without <FROM> <TO> --gate G [--gate G…] [--kinds K,K…] [--max-hops N]
connectome reach <export.json> dominates <GATE> <TARGET> [--entry E…] [--kinds K,K…]
connectome reach <export.json> mandatory_pass <TARGET> [--entry E…] [--kinds K,K…]
connectome reach <export.json> all_paths <FROM> <TO>

Answers one reach question over a graph export (connectome §G), by node id. The first line of the
answer is `true` or `false` (for mandatory_pass, the number of nodes); then, when there is one, the
witness: `witness: A -invoke-> B -read-> C`, a shortest path that crosses no gate (reachable and
reachable_without), or one line per node every path from the entries passes through (mandatory_pass).
  --kinds     the edge kinds a path may follow (invoke, read, write, spawn), comma-separated; all four
              unless given
  --max-hops  the longest path accepted, in edges; a longer shortest path answers false
  --gate      a node the path must not cross (reachable_without; repeat for several)
  --entry     where paths start for dominates and mandatory_pass (repeatable); the server nodes unless
              given
all_paths is always refused: the number of paths can be exponential.
Exit codes: 0 answered, 2 refused (usage, input, an unknown id, an unreachable dominance target).
";

/// The flags of `reach`.
const FLAGS: &[Flag] =
    &[Flag::once("--kinds"), Flag::once("--max-hops"), Flag::many("--gate"), Flag::many("--entry")];

/// The `--kinds` set, if given.
fn kinds(parsed: &Parsed) -> Result<Option<BTreeSet<EdgeKind>>, Failure> {
    let Some(text) = parsed.text("--kinds")? else { return Ok(None) };
    let mut kinds = BTreeSet::new();
    for name in text.split(',').filter(|n| !n.is_empty()) {
        let kind = EdgeKind::from_name(name)
            .ok_or_else(|| parsed.usage(format!("--kinds: unknown edge kind {}", excerpt(name))))?;
        kinds.insert(kind);
    }
    Ok(Some(kinds))
}

/// The path options: `--kinds` and `--max-hops`.
fn path_options(parsed: &Parsed) -> Result<PathOptions, Failure> {
    let max_hops = match parsed.text("--max-hops")? {
        None => None,
        Some(text) => Some(
            text.parse::<usize>()
                .map_err(|_| parsed.usage(format!("--max-hops must be a number, not {}", excerpt(&text))))?,
        ),
    };
    Ok(PathOptions { kinds: kinds(parsed)?, max_hops, ..PathOptions::default() })
}

/// The dominance options: `--kinds` and `--entry`.
fn dominance_options(parsed: &Parsed) -> Result<DominanceOptions, Failure> {
    let entries = parsed.texts("--entry")?;
    let entries = (!entries.is_empty()).then_some(entries);
    Ok(DominanceOptions { kinds: kinds(parsed)?, entries, ..DominanceOptions::default() })
}

/// Refuses the flags among `flags` that were given but do not apply to `query`.
fn refuse(parsed: &Parsed, query: &str, flags: &[&str]) -> Result<(), Failure> {
    for flag in flags {
        if !parsed.texts(flag)?.is_empty() {
            return Err(parsed.usage(format!("{flag} does not apply to {query}")));
        }
    }
    Ok(())
}

/// `witness: A -kind-> B …`.
fn witness(path: &Witness) -> String {
    let mut line = String::from("witness: ");
    line.push_str(&printable(path.nodes.first().map(String::as_str).unwrap_or_default()));
    for (edge, node) in path.edges.iter().zip(path.nodes.iter().skip(1)) {
        let _ = write!(line, " -{}-> {}", edge.kind.as_str(), printable(node));
    }
    line
}

/// An id as one line of terminal output: control characters (a line break, an escape) written as
/// `\u{…}`, so an id cannot split the answer or drive the terminal.
fn printable(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for c in id.chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// The answer to one query over `graph`, as the lines to print.
fn answer(parsed: &Parsed, graph: &Graph, query: &str, ids: &[String]) -> Result<String, Failure> {
    let refused = |e: connectome_graph::ReachError| Failure::Input(format!("{query} refused: {e}"));
    let arity = |names: &[&str]| -> Result<(), Failure> {
        match ids.len().cmp(&names.len()) {
            std::cmp::Ordering::Less => Err(parsed.usage(format!("{query} needs {}", names.join(" ")))),
            std::cmp::Ordering::Greater => Err(parsed.usage(format!("{query} takes {}", names.join(" ")))),
            std::cmp::Ordering::Equal => Ok(()),
        }
    };
    let path_answer = |path: Option<Witness>| match path {
        Some(path) => format!("true\n{}\n", witness(&path)),
        None => "false\n".to_owned(),
    };
    match query {
        "reachable" => {
            arity(&["<FROM>", "<TO>"])?;
            refuse(parsed, query, &["--gate", "--entry"])?;
            let o = path_options(parsed)?;
            if !reachable(graph, &ids[0], &ids[1], &o).map_err(refused)? {
                return Ok("false\n".to_owned());
            }
            let gates: [&str; 0] = [];
            Ok(path_answer(reachable_without(graph, &ids[0], &ids[1], &gates, &o).map_err(refused)?))
        }
        "reachable_without" => {
            arity(&["<FROM>", "<TO>"])?;
            refuse(parsed, query, &["--entry"])?;
            let gates = parsed.texts("--gate")?;
            if gates.is_empty() {
                return Err(parsed.usage("reachable_without needs --gate"));
            }
            let o = path_options(parsed)?;
            Ok(path_answer(reachable_without(graph, &ids[0], &ids[1], &gates, &o).map_err(refused)?))
        }
        "dominates" => {
            arity(&["<GATE>", "<TARGET>"])?;
            refuse(parsed, query, &["--gate", "--max-hops"])?;
            let yes = dominates(graph, &ids[0], &ids[1], &dominance_options(parsed)?).map_err(refused)?;
            Ok(format!("{yes}\n"))
        }
        "mandatory_pass" => {
            arity(&["<TARGET>"])?;
            refuse(parsed, query, &["--gate", "--max-hops"])?;
            let set = mandatory_pass(graph, &ids[0], &dominance_options(parsed)?).map_err(refused)?;
            let mut out = format!("{}\n", set.len());
            for id in set {
                let _ = writeln!(out, "{}", printable(&id));
            }
            Ok(out)
        }
        "all_paths" => {
            arity(&["<FROM>", "<TO>"])?;
            match all_paths(graph, &ids[0], &ids[1]) {
                Err(e) => Err(refused(e)),
                Ok(never) => match never {},
            }
        }
        other => Err(parsed.usage(format!(
            "unknown query {}: reachable, reachable_without, dominates, mandatory_pass or all_paths",
            excerpt(other)
        ))),
    }
}

/// Runs `connectome reach` with the arguments after `reach`.
pub fn run(args: &[OsString], stdout: &mut dyn Write) -> Result<(), Failure> {
    let parsed = parse("reach", FLAGS, args)?;
    if parsed.help {
        return fail::write(None, USAGE.as_bytes(), stdout);
    }
    let mut words = Vec::new();
    for arg in &parsed.positional {
        let text = arg.to_str().ok_or_else(|| parsed.usage("a node id must be UTF-8"))?;
        words.push(text.to_owned());
    }
    let Some(export) = words.first() else { return Err(parsed.usage("missing <export.json>")) };
    let Some(query) = words.get(1) else { return Err(parsed.usage("missing the query")) };
    let export = graphs::graph(std::path::Path::new(export))?;
    let text = answer(&parsed, &export.graph, query, &words[2..])?;
    fail::write(None, text.as_bytes(), stdout)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn cl6_an_id_with_control_characters_is_printed_on_one_line() {
        assert_eq!(printable("srv/tool/a\nb\u{1b}[31m"), "srv/tool/a\\u{a}b\\u{1b}[31m");
        assert_eq!(
            printable("weather/resource/weather:%2F%2Fplaces"),
            "weather/resource/weather:%2F%2Fplaces"
        );
    }
}
