//! `cargo xtask bench features [--rounds N]`: what each feature of the facade costs a host.
//!
//! One small host program — an `echo` tool, served over stdio or (with `http`) over HTTP, with the
//! connectome surface listed and its collector on the dispatch site when `connectome` is on — is built
//! in release mode with the facade under several feature sets, each from a clean target directory, one
//! after the other in the same run. Per set: the wall time of the whole build (dependencies included,
//! crates already downloaded), the number of crates compiled, and the size of the program as built and
//! stripped. Each figure is also given as a ratio to the first set, a stdio-only host with hand-written
//! schemas, so that the table carries across machines. `--rounds N` builds every set N times,
//! interleaved, and reports the medians. Written to `target/bench/features.json`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use mcp_kernel_workspace::scratch::{cargo_in, copy_pins};
use serde_json::{Value, json};

use super::report::median;

/// The feature sets measured: (name, the facade's features). The first is the baseline.
const SETS: &[(&str, &[&str])] = &[
    ("stdio", &["stdio"]),
    ("stdio + schemars", &["stdio", "schemars"]),
    ("stdio + connectome", &["stdio", "connectome"]),
    ("http", &["http"]),
    ("http + connectome", &["http", "connectome"]),
    ("defaults (stdio, http, schemars)", &["stdio", "http", "schemars"]),
    ("defaults + connectome", &["stdio", "http", "schemars", "connectome"]),
];

/// The host program: every part behind the feature that brings it.
const MAIN: &str = r#"//! The host `cargo xtask bench features` builds: one tool, one transport, the connectome if asked.
use mcp_kernel::{Listing, Mode, RequestContext, Server, ToolError, ToolSpec, Tools};
use serde_json::{Value, json};

fn tools() -> Tools {
    let spec = ToolSpec::new("echo", Mode::ReadOnly).input_schema(json!({
        "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]
    }));
    Tools::new().add(spec, |args: Value, _cx: RequestContext| async move {
        Ok::<_, ToolError>(args["message"].as_str().unwrap_or_default().to_owned())
    })
}

#[cfg(feature = "schemars")]
fn with_derived(tools: Tools) -> Tools {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Shout {
        message: String,
    }
    tools.add_derived(ToolSpec::new("shout", Mode::ReadOnly), |args: Shout, _cx: RequestContext| async move {
        Ok::<_, ToolError>(args.message.to_uppercase())
    })
}
#[cfg(not(feature = "schemars"))]
fn with_derived(tools: Tools) -> Tools {
    tools
}

#[cfg(feature = "connectome")]
fn server() -> Result<Server, Box<dyn std::error::Error>> {
    use mcp_kernel::connectome::{self, Surface};
    use mcp_kernel::connectome::observe::Collector;
    let collector = Collector::new();
    collector.start();
    let surface = Surface::new().observed(collector.clone());
    let mut listing = Listing::new();
    listing.resources.extend(connectome::resources());
    let reader = move |request: mcp_kernel::resources::ReadResource| {
        let answer = surface.read(&request.uri);
        async move {
            match answer {
                Some(answer) => answer.map_err(|e| mcp_kernel::ReaderError::new(e.to_string())),
                None => Err(mcp_kernel::ReaderError::new("no such resource")),
            }
        }
    };
    Ok(Server::builder(listing).tools(with_derived(tools())).observe_dispatch(collector).resource_reader(reader).build()?)
}
#[cfg(not(feature = "connectome"))]
fn server() -> Result<Server, Box<dyn std::error::Error>> {
    Ok(Server::builder(Listing::new()).tools(with_derived(tools())).build()?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server()?;
    #[cfg(feature = "http")]
    {
        use mcp_kernel::http::{AllowedOrigins, McpHttp};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let service = McpHttp::builder(server).allowed_origins(AllowedOrigins::loopback(port)).authorize(|_| Ok(())).build();
        mcp_kernel::http::serve(listener, service, mcp_kernel::shutdown_signal()).await?;
    }
    #[cfg(all(feature = "stdio", not(feature = "http")))]
    mcp_kernel::stdio::serve(server).await?;
    Ok(())
}
"#;

/// One build's figures.
struct Figures {
    seconds: f64,
    crates: usize,
    bytes: u64,
    stripped: u64,
}

/// Runs the measurement.
pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let rounds = match args {
        [_] => 1,
        [_, flag, n] if flag == "--rounds" => {
            n.parse::<usize>().ok().filter(|n| (1..=9).contains(n)).ok_or("--rounds takes 1 to 9")?
        }
        _ => return Err("usage: cargo xtask bench features [--rounds N]".into()),
    };
    let dir = root.join("target/bench/features");
    let host = dir.join("host");
    std::fs::create_dir_all(host.join("src")).map_err(|e| format!("{}: {e}", host.display()))?;
    std::fs::write(host.join("Cargo.toml"), manifest(&root.join("crates/kernel/facade")))
        .map_err(|e| e.to_string())?;
    std::fs::write(host.join("src/main.rs"), MAIN).map_err(|e| e.to_string())?;
    copy_pins(root, &host)?;
    // Download once, so that no set's time includes the network.
    cargo(&host, &dir.join("fetch"), &["fetch"])?;
    let mut results: Vec<Vec<Figures>> = SETS.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (index, (name, features)) in SETS.iter().enumerate() {
            eprintln!("xtask: bench features: round {} of {rounds}: {name}", round + 1);
            results[index].push(build(&host, &dir.join(format!("set-{index}")), features)?);
        }
    }
    report(&results, &dir.join("../features.json"))
}

/// The host's manifest: the facade by path with no default feature, and a feature per facade feature.
fn manifest(facade: &Path) -> String {
    format!(
        "[package]\nname = \"host\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nmcp-kernel = {{ path = {facade:?}, default-features = false }}\n\
         tokio = {{ version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }}\n\
         serde_json = \"1\"\nserde = {{ version = \"1\", features = [\"derive\"], optional = true }}\n\
         schemars = {{ version = \"1\", optional = true }}\n\n\
         [features]\nstdio = [\"mcp-kernel/stdio\"]\nhttp = [\"mcp-kernel/http\"]\n\
         connectome = [\"mcp-kernel/connectome\"]\nschemars = [\"mcp-kernel/schemars\", \"dep:schemars\", \"dep:serde\"]\n\n\
         [workspace]\n"
    )
}

/// One clean release build of the host with `features`.
fn build(host: &Path, target: &Path, features: &[&str]) -> Result<Figures, String> {
    let _ = std::fs::remove_dir_all(target);
    let list = features.join(",");
    let started = Instant::now();
    let out = cargo_in(host, target)
        .args(["build", "--release", "--offline", "--features", &list])
        .output()
        .map_err(|e| format!("cargo: {e}"))?;
    let seconds = started.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "building the host with {list} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let crates = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.trim_start().starts_with("Compiling "))
        .count();
    let program = target.join("release/host");
    let bytes = std::fs::metadata(&program).map_err(|e| format!("{}: {e}", program.display()))?.len();
    let stripped_path: PathBuf = target.join("host.stripped");
    let status = Command::new("strip")
        .arg("-o")
        .arg(&stripped_path)
        .arg(&program)
        .status()
        .map_err(|e| format!("strip: {e}"))?;
    if !status.success() {
        return Err("strip failed".into());
    }
    let stripped = std::fs::metadata(&stripped_path).map_err(|e| e.to_string())?.len();
    let _ = std::fs::remove_dir_all(target);
    Ok(Figures { seconds, crates, bytes, stripped })
}

fn cargo(host: &Path, target: &Path, args: &[&str]) -> Result<(), String> {
    let status = cargo_in(host, target).args(args).status().map_err(|e| format!("cargo: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("cargo {} failed", args.join(" "))) }
}

/// Prints the Markdown table and writes the JSON.
fn report(results: &[Vec<Figures>], json_path: &Path) -> Result<(), String> {
    let medians: Vec<[f64; 4]> = results
        .iter()
        .map(|runs| {
            let pick =
                |f: &dyn Fn(&Figures) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>()).unwrap_or(0.0);
            [
                pick(&|f| f.seconds),
                pick(&|f| f.crates as f64),
                pick(&|f| f.bytes as f64),
                pick(&|f| f.stripped as f64),
            ]
        })
        .collect();
    let base = medians[0];
    println!("| features | build (s) | × | crates | binary (MiB) | stripped (MiB) | × |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut rows = Vec::new();
    for ((name, features), m) in SETS.iter().zip(&medians) {
        let mib = |b: f64| b / (1024.0 * 1024.0);
        println!(
            "| {name} | {:.1} | {:.2} | {} | {:.2} | {:.2} | {:.2} |",
            m[0],
            m[0] / base[0],
            m[1],
            mib(m[2]),
            mib(m[3]),
            m[3] / base[3]
        );
        rows.push(json!({"set": name, "features": features, "build_s": m[0], "crates": m[1], "bytes": m[2], "stripped_bytes": m[3],
            "build_ratio": m[0] / base[0], "stripped_ratio": m[3] / base[3]}));
    }
    let doc: Value = json!({"rounds": results[0].len(), "baseline": SETS[0].0, "sets": rows});
    std::fs::write(json_path, serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    eprintln!("xtask: bench features: written to {}", json_path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_manifest_maps_each_feature_to_the_facade() {
        let text = manifest(Path::new("/w/crates/kernel/facade"));
        assert!(
            text.contains("mcp-kernel = { path = \"/w/crates/kernel/facade\", default-features = false }"),
            "{text}"
        );
        for feature in ["stdio", "http", "connectome"] {
            assert!(text.contains(&format!("{feature} = [\"mcp-kernel/{feature}\"]")), "{feature}");
        }
    }

    #[test]
    fn the_baseline_is_a_stdio_host_and_every_set_has_a_transport() {
        assert_eq!(SETS[0].1, ["stdio"]);
        assert!(SETS.iter().all(|(_, f)| f.contains(&"stdio") || f.contains(&"http")));
    }
}
