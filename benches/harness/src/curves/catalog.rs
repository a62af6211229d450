//! The `catalog` curve: latency over stdio ping-pong, one request at a time, with 10, 1,000 and
//! 10,000 tools (`tools/list`'s first page, a walk of all its pages, `tools/call`) and 10,000 uri
//! templates (`resources/read` of a templated uri, a walk of `resources/templates/list`). The floor
//! cannot list; rmcp is measured where it has a router for the catalog (tools), not for templates.

use super::run::{arg, load_stdio, measured};
use super::table::cell;
use super::{Curve, Env, Measured, Outcome, Run, Server, Spec, kept, listed, shown};

/// The catalog sizes.
const SIZES: [usize; 3] = [10, 1_000, 10_000];
/// The variables through which `bench-kernel` (and, for tools, `bench-rmcp`) generate a catalog.
const TOOLS_VAR: &str = "BENCH_CATALOG_TOOLS";
const TEMPLATES_VAR: &str = "BENCH_CATALOG_TEMPLATES";

/// What one run asks for.
#[derive(Clone, Copy)]
enum Op {
    /// `tools/list`, the first page.
    List,
    /// `tools/list`, every page.
    Walk,
    /// `tools/call` of `echo`.
    Call,
    /// `resources/read` of the last template's uri.
    Read,
    /// `resources/read` of the first template's uri.
    ReadFirst,
    /// `resources/templates/list`, every page.
    WalkTemplates,
}

impl Op {
    fn key(self) -> &'static str {
        match self {
            Op::List => "list_us",
            Op::Walk => "walk_us",
            Op::Call => "call_us",
            Op::Read => "read_us",
            Op::ReadFirst => "read_first_us",
            Op::WalkTemplates => "templates_walk_us",
        }
    }

    /// The key of the server's CPU per unit of `op`.
    fn cpu_key(self) -> &'static str {
        match self {
            Op::List => "list_cpu_us",
            Op::Walk => "walk_cpu_us",
            Op::Call => "call_cpu_us",
            Op::Read => "read_cpu_us",
            Op::ReadFirst => "read_first_cpu_us",
            Op::WalkTemplates => "templates_walk_cpu_us",
        }
    }

    /// What the run asks, for the progress lines and the notes.
    fn what(self) -> &'static str {
        match self {
            Op::List => "tools/list",
            Op::Walk => "tools/list walk",
            Op::Call => "tools/call",
            Op::Read => "read of the last template",
            Op::ReadFirst => "read of the first template",
            Op::WalkTemplates => "resources/templates/list walk",
        }
    }

    fn servers(self) -> &'static [&'static str] {
        match self {
            Op::List | Op::Walk | Op::Call => &["kernel", "rmcp"],
            Op::Read | Op::ReadFirst | Op::WalkTemplates => &["kernel"],
        }
    }
}

/// Measured and warm-up units of `op` at catalog `size`: fewer where one costs more.
fn requests(op: Op, size: usize, quick: bool) -> (u32, u32) {
    let (n, warmup) = match (op, size) {
        (Op::Call, _) => (1_000, 100),
        (_, s) if s <= 100 => (1_000, 100),
        (_, s) if s <= 1_000 => (200, 20),
        _ => (40, 4),
    };
    if quick { (n / 2, warmup / 2) } else { (n, warmup) }
}

/// One `bench-load stdio-latency` run of `op` against `server` with a catalog of `size`.
fn one(env: &Env, server: Server, point: usize, op: Op, size: usize) -> Result<Measured, String> {
    let (n, warmup) = requests(op, size, env.quick);
    let (n, warmup) = (arg(n), arg(warmup));
    let (tools_total, last, first) =
        (arg(size + 1), format!("bench://t{:05}/42", size - 1), "bench://t00000/42");
    let size_arg = arg(size);
    let mut args = vec!["stdio-latency", "--requests", &n, "--warmup", &warmup, "--timeout", "300"];
    let var = match op {
        Op::List => {
            args.extend(["--method", "list"]);
            TOOLS_VAR
        }
        Op::Walk => {
            args.extend(["--method", "walk", "--expect-items", &tools_total]);
            TOOLS_VAR
        }
        Op::Call => {
            args.extend(["--method", "call"]);
            TOOLS_VAR
        }
        Op::Read => {
            args.extend(["--method", "read", "--uri", &last]);
            TEMPLATES_VAR
        }
        Op::ReadFirst => {
            args.extend(["--method", "read", "--uri", first]);
            TEMPLATES_VAR
        }
        Op::WalkTemplates => {
            args.extend(["--method", "walk", "--list", "templates", "--expect-items", &size_arg]);
            TEMPLATES_VAR
        }
    };
    let v = load_stdio(env, server, &args, &[(var, arg(size))])?;
    let mut m = measured(&v, Vec::new());
    if let Some(p50) = v["p50_us"].as_f64() {
        m.values.push((point, op.key(), p50));
    }
    if let (Op::Walk | Op::WalkTemplates, Some(pages)) = (op, v["pages_per_unit"].as_f64()) {
        let key = if matches!(op, Op::Walk) { "walk_pages" } else { "templates_walk_pages" };
        m.values.push((point, key, pages));
    }
    if let (Op::List, Some(bytes)) = (op, v["answer_bytes_per_unit"].as_f64()) {
        m.values.push((point, "list_bytes", bytes));
    }
    if let (Op::List, Some(cpu)) = (op, v["load_cpu_pct"].as_f64()) {
        m.values.push((point, "list_load_cpu_pct", cpu));
    }
    if let Some(us) = v["server_cpu_us_per_unit"].as_f64() {
        m.values.push((point, op.cpu_key(), us));
    }
    Ok(m)
}

/// How many pages each walk took at the largest catalog, by server.
fn pages_summary(spec: &Spec, outcome: &Outcome, names: &[&'static str]) -> Vec<String> {
    let last = spec.points.len() - 1;
    let mut parts = Vec::new();
    for (key, what) in [("walk_pages", "tools/list"), ("templates_walk_pages", "resources/templates/list")] {
        for name in names {
            if let Some(pages) = outcome.median(last, key, name) {
                parts.push(format!("{name} {what} {pages:.0}"));
            }
        }
    }
    let mut notes = Vec::new();
    if !parts.is_empty() {
        notes.push(format!("Pages per walk at {}: {}.", spec.points[last].1, parts.join(", ")));
    }
    let sizes: Vec<String> = names
        .iter()
        .filter_map(|n| {
            let bytes = outcome.median(last, "list_bytes", n)?;
            let cpu = outcome
                .median(last, "list_load_cpu_pct", n)
                .map_or(String::new(), |c| format!(", the generator busy {c:.0} % of the round trip"));
            let server = outcome
                .median(last, "list_cpu_us", n)
                .map_or(String::new(), |us| format!(", the server's own CPU {} µs per list", cell(us)));
            Some(format!("{n} {:.2} MB{cpu}{server}", bytes / 1e6))
        })
        .collect();
    if !sizes.is_empty() {
        notes.push(format!(
            "The tools/list answer at {} tools, which the client reads and parses within the time above: {}.",
            spec.points[last].1,
            sizes.join("; ")
        ));
    }
    notes
}

/// `catalog`.
pub(super) fn catalog(env: &Env) -> Curve {
    let spec = Spec {
        name: "catalog",
        title: "Latency by catalog size (stdio, one request at a time, p50)",
        x_label: "tools, or uri templates",
        points: SIZES.iter().map(|&s| (s as f64, cell(s as f64))).collect(),
        categorical: false,
        metrics: vec![
            shown("list_us", "tools/list, first page (µs)"),
            shown("walk_us", "tools/list, every page (µs per walk)"),
            shown("call_us", "tools/call of echo (µs)"),
            shown("read_us", "resources/read, last template's uri (µs)"),
            shown("read_first_us", "resources/read, first template's uri (µs)"),
            shown("templates_walk_us", "resources/templates/list, every page (µs per walk)"),
            kept("walk_pages", "tools/list pages per walk"),
            kept("templates_walk_pages", "resources/templates/list pages per walk"),
            kept("list_bytes", "tools/list answer (bytes)"),
            listed("list_cpu_us", "tools/list, first page: server CPU (µs)"),
            listed("walk_cpu_us", "tools/list, every page: server CPU (µs per walk)"),
            listed("call_cpu_us", "tools/call of echo: server CPU (µs)"),
            listed("read_cpu_us", "resources/read, last template: server CPU (µs)"),
            listed("read_first_cpu_us", "resources/read, first template: server CPU (µs)"),
            listed("templates_walk_cpu_us", "resources/templates/list, every page: server CPU (µs per walk)"),
            kept("list_load_cpu_pct", "generator CPU over the tools/list runs (%)"),
        ],
        notes: vec![
            format!(
                "N tools: `{TOOLS_VAR}=N` makes the server list `tool_00000`, `tool_00001`, … (N of them, each with the echo schema, \
                 served by the echo) and then `echo`, N + 1 in all; rmcp adds them to its tool router at run time \
                 (`ToolRouter::add_route`, copies of its `echo` route). The call is `echo`'s."
            ),
            format!(
                "N templates: `{TEMPLATES_VAR}=N` makes the kernel list `bench://t00000/{{id}}`, \
                 `bench://t00001/{{id}}`, …, answered by one reader with a short text; the reads are of the last template's uri \
                 (`bench://t09999/42` with 10,000) and of the first's, `bench://t00000/42`. rmcp 3.11.0 has no router for uri templates (a host writes \
                 `read_resource` and its matching itself), so it is not measured there; the floor cannot list or read."
            ),
            "A walk follows `nextCursor` until there is none and checks that it listed every item; its time is the \
             whole walk; where a list is answered in one page (pages per walk: below), the walk is that one \
             request."
                .to_owned(),
            format!(
                "Each cell is the p50 of one server process's requests (fewer at the larger sizes: 1,000, 200, 40 units{}); \
                 the server starts, builds its catalog and is warmed up before the measured requests.",
                if env.quick { ", halved with --quick" } else { "" }
            ),
            "Server CPU: the server's own user + system time (the sum over its threads of \
             `/proc/PID/task/*/schedstat`, ns) over the measured units, per unit (a request, or a whole walk); lower \
             is better."
                .to_owned(),
        ],
    };
    let mut runs = Vec::new();
    for (point, &size) in SIZES.iter().enumerate() {
        for op in [Op::List, Op::Walk, Op::Call, Op::Read, Op::ReadFirst, Op::WalkTemplates] {
            runs.push(Run {
                label: format!("{} at {}", op.what(), cell(size as f64)),
                servers: op.servers(),
                measure: Box::new(move |env, server| one(env, server, point, op, size)),
            });
        }
    }
    Curve { spec, runs, summary: pages_summary }
}
