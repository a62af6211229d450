//! The `connectome` program, spawned: each subcommand's happy path, its `--help`, and its refusals
//! (one line on stderr, a non-zero exit).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use connectome_graph::federation::Federation;
use connectome_graph::read::{read_export, read_observed};
use connectome_graph::{Algorithm, Diff, Effective, Weight};

const BIN: &str = env!("CARGO_BIN_EXE_connectome");
const SUBCOMMANDS: [&str; 8] =
    ["facts", "declare", "render", "diff", "effective", "merge", "reach", "verify"];

/// A committed weather export, by file name (`tests/data/` links to `docs/connectome-example/`, and the
/// package carries the files).
fn weather(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    dir.join(name).to_string_lossy().into_owned()
}

/// A fresh scratch directory of this test binary, by name.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("connectome-cli").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `bytes` to `name` in `dir`, giving its path.
fn file(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// The stdout of a run that must succeed.
fn ok(args: &[&str]) -> Vec<u8> {
    let out = run(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The one stderr line of a run refused with `code`.
fn refused_with(code: i32, args: &[&str]) -> String {
    let out = run(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
    assert!(err.starts_with("connectome: ") && err.len() < 300, "{args:?}: {err}");
    err
}

fn refused(args: &[&str]) -> String {
    refused_with(2, args)
}

#[test]
fn cl1_help_lists_every_subcommand_and_each_has_its_help() {
    let top = String::from_utf8(ok(&["--help"])).unwrap();
    for command in SUBCOMMANDS {
        assert!(top.contains(&format!("\n  {command} ")), "{command} listed: {top}");
        let help = String::from_utf8(ok(&[command, "--help"])).unwrap();
        assert!(help.starts_with(&format!("connectome {command} ")), "{command}: {help}");
        assert!(help.contains("Exit codes"), "{command}: {help}");
    }
    assert_eq!(ok(&["help"]), top.as_bytes());
}

#[test]
fn cl1_unknown_command_or_flag_is_one_usage_line_exit_2() {
    assert!(refused(&[]).starts_with("connectome: usage: missing command"));
    assert!(refused(&["draw"]).contains("unknown command \"draw\""));
    for command in SUBCOMMANDS {
        let err = refused(&[command, "--frobnicate", "x"]);
        assert!(err.starts_with("connectome: usage: "), "{command}: {err}");
        assert!(err.contains("--frobnicate") || err.contains("unknown argument"), "{command}: {err}");
    }
    assert!(refused(&["diff", "only-one.json"]).contains("missing <observed.json>"));
    assert!(refused(&["merge", "--out-dir", "x"]).contains("nothing to merge"));
    assert!(refused(&["facts"]).contains("no --package given"));
    assert!(refused(&["declare"]).contains("no --catalog given"));
    assert!(refused(&["verify", "a", "b"]).contains("unexpected argument"));
    assert!(refused(&["diff", "a", "b", "--out", "x", "--out", "y"]).contains("--out given twice"));
}

#[test]
fn cl2_every_subcommand_refuses_bad_input_with_one_line() {
    let dir = scratch("bad");
    let declared = std::fs::read(weather("weather.declared.json")).unwrap();
    let truncated = file(&dir, "truncated.json", &declared[..declared.len() / 2]);
    let v2 = String::from_utf8(declared.clone()).unwrap().replacen(
        "\"schema_version\":3",
        "\"schema_version\":4",
        1,
    );
    let v4 = file(&dir, "v4.json", v2.as_bytes());
    let spaced = String::from_utf8(declared).unwrap().replacen(',', ", ", 1);
    let spaced = file(&dir, "spaced.json", spaced.as_bytes());
    let observed = weather("weather.observed.json");
    let sidecar = weather("weather.observed.sidecar.json");
    for bad in [&truncated, &v4, &spaced, &"/nonexistent/x.json".to_owned()] {
        let instance = format!("a:{bad}:{sidecar}");
        let cases: [Vec<&str>; 6] = [
            vec!["diff", bad, &observed],
            vec!["effective", bad, &observed, "--sidecar", &sidecar],
            vec!["reach", bad, "reachable", "a", "b"],
            vec!["merge", "--system", "weather", "--instance", &instance, "--out-dir"],
            vec!["render", "--declared", bad, "--format", "html"],
            vec!["diff", &observed, bad],
        ];
        for mut args in cases {
            let out_dir = dir.join("never").to_string_lossy().into_owned();
            if args.last() == Some(&"--out-dir") {
                args.push(&out_dir);
            }
            let err = refused(&args);
            let expected = if bad.starts_with("/nonexistent") {
                "cannot read \"/nonexistent/x.json\": no such file"
            } else if bad == &truncated {
                "not JSON"
            } else if bad == &v4 {
                "must be 3"
            } else {
                "not canonical"
            };
            assert!(err.contains(expected), "{args:?}: {err}");
            assert!(!dir.join("never").exists());
        }
    }
    assert!(refused(&["verify", &truncated]).contains("not JSON"));
    assert!(refused(&["verify", &v4]).contains("must be 3"));
    let err = refused(&["diff", &weather("weather.declared.json"), &observed, "--window", "[1]"]);
    assert!(err.contains("--window: not a JSON object"), "{err}");
    let err = refused(&["effective", &weather("weather.declared.json"), &observed]);
    assert!(err.contains("effective refused"), "an observed edge needs its count: {err}");
}

#[test]
fn cl3_diff_writes_the_record_the_library_writes() {
    let (declared, observed) = (weather("weather.declared.json"), weather("weather.observed.json"));
    let window = r#"{"started_at":"2026-11-30T00:00:00Z","ended_at":"2026-11-30T01:00:00Z"}"#;
    let bytes = ok(&["diff", &declared, &observed, "--window", window]);
    assert_eq!(bytes, std::fs::read(weather("weather.diff.json")).unwrap(), "the committed weather diff");
    let d = read_export(&std::fs::read(&declared).unwrap()).unwrap();
    let o = read_export(&std::fs::read(&observed).unwrap()).unwrap();
    let expected = Diff::run(&d.graph, &o.graph, &serde_json::json!({})).unwrap().encode(Algorithm::Sha256);
    let out = scratch("diff").join("diff.json");
    let with_sidecar = ["diff", &declared, &observed, "--sidecar", &weather("weather.observed.sidecar.json")];
    assert_eq!(ok(&with_sidecar), expected);
    assert!(ok(&["diff", &declared, &observed, "--out", &out.to_string_lossy()]).is_empty());
    assert_eq!(std::fs::read(&out).unwrap(), expected);
    let text = String::from_utf8(expected).unwrap();
    assert!(text.contains(r#""declared_never_observed":[{"from":"weather/tool/connectome""#), "{text}");
}

#[test]
fn cl4_effective_writes_the_export_the_library_writes() {
    let (declared, observed, sidecar) = (
        weather("weather.declared.json"),
        weather("weather.observed.json"),
        weather("weather.observed.sidecar.json"),
    );
    let bytes = ok(&["effective", &declared, &observed, "--sidecar", &sidecar, "--window", r#"{"w":1}"#]);
    let d = read_export(&std::fs::read(&declared).unwrap()).unwrap();
    let o = read_observed(&std::fs::read(&observed).unwrap(), &std::fs::read(&sidecar).unwrap()).unwrap();
    let library =
        Effective::build(&d.graph, &o.graph, None, &serde_json::json!({"w": 1}), Algorithm::Sha256).unwrap();
    assert_eq!(bytes, library.encode());
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains(r#"{"class":"declared_and_observed","count":4,"from":"weather/server""#), "{text}");
    let dir = scratch("effective");
    let path = file(&dir, "effective.json", library.encode());
    let svg = String::from_utf8(ok(&["render", "--effective", &path, "--format", "svg"])).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains(">4</text>"), "{svg}");
}

#[test]
fn cl5_merge_writes_the_four_federation_files_and_reads_them_back() {
    let (export, sidecar) = (weather("weather.observed.json"), weather("weather.observed.sidecar.json"));
    let dir = scratch("merge");
    let ab = dir.join("ab").to_string_lossy().into_owned();
    let a = format!("a:{export}:{sidecar}");
    let b = format!("b:{export}:{sidecar}");
    ok(&["merge", "--system", "weather", "--instance", &a, "--instance", &b, "--out-dir", &ab]);
    let read = |d: &str, f: &str| std::fs::read(Path::new(d).join(f)).unwrap();
    let merged = Federation::read(
        &read(&ab, "export.json"),
        &read(&ab, "sidecar.json"),
        &read(&ab, "record.json"),
        None,
    )
    .unwrap();
    assert_eq!(merged.instances(), ["a", "b"]);
    let weights: Vec<_> = merged.graph().edges().iter().map(|e| e.weight).collect();
    assert_eq!(weights, [Some(Weight::Int(2)), Some(Weight::Int(8))], "counts summed");
    assert!(!Path::new(&ab).join("timing.json").exists());
    let c = dir.join("c").to_string_lossy().into_owned();
    ok(&["merge", "--system", "weather", "--instance", &format!("c:{export}:{sidecar}"), "--out-dir", &c]);
    let abc = dir.join("abc").to_string_lossy().into_owned();
    ok(&["merge", "--federation", &ab, "--federation", &c, "--out-dir", &abc]);
    let text = String::from_utf8(read(&abc, "sidecar.json")).unwrap();
    assert!(text.contains(r#""to":"weather/tool/get_weather","weight":12"#), "{text}");
    let twice = refused(&["merge", "--federation", &ab, "--federation", &ab, "--out-dir", &abc]);
    assert!(twice.contains("merge refused") && twice.contains("\"a\""), "{twice}");
    let other = refused(&["merge", "--system", "rain", "--instance", &a, "--out-dir", &abc]);
    assert!(other.contains("instance \"a\""), "{other}");
    assert!(refused(&["merge", "--instance", &a, "--out-dir", &abc]).contains("--instance needs --system"));
    assert!(
        refused(&["merge", "--system", "w", "--instance", "a:b", "--out-dir", &abc]).contains("NAME:EXPORT")
    );
}

#[test]
fn cl6_reach_answers_with_the_witness() {
    let declared = weather("weather.declared.json");
    let (server, tool, module) =
        ("weather/server", "weather/tool/get_weather", "weather/module/weather::catalog");
    let text = |args: &[&str]| String::from_utf8(ok(args)).unwrap();
    assert_eq!(
        text(&["reach", &declared, "reachable", server, module]),
        format!("true\nwitness: {server} -invoke-> {tool} -invoke-> {module}\n")
    );
    assert_eq!(text(&["reach", &declared, "reachable", module, server]), "false\n");
    assert_eq!(text(&["reach", &declared, "reachable", server, module, "--max-hops", "1"]), "false\n");
    assert_eq!(text(&["reach", &declared, "reachable", server, module, "--kinds", "read"]), "false\n");
    assert_eq!(text(&["reach", &declared, "reachable_without", server, module, "--gate", tool]), "false\n");
    let via =
        text(&["reach", &declared, "reachable_without", server, module, "--gate", "weather/tool/connectome"]);
    assert!(via.starts_with("true\nwitness: weather/server -invoke-> weather/tool/get_weather"), "{via}");
    assert_eq!(text(&["reach", &declared, "dominates", tool, module]), "true\n");
    assert_eq!(text(&["reach", &declared, "dominates", "weather/tool/connectome", module]), "false\n");
    assert_eq!(text(&["reach", &declared, "mandatory_pass", module]), format!("2\n{server}\n{tool}\n"));
    assert!(refused(&["reach", &declared, "all_paths", server, module]).contains("all_paths"));
    assert!(refused(&["reach", &declared, "reachable", server, "nope"]).contains("nope"));
    assert!(
        refused(&["reach", &declared, "dominates", server, "weather/prompt/forecast"]).contains("refused")
    );
    assert!(refused(&["reach", &declared, "reachable", server]).contains("reachable needs <FROM> <TO>"));
    assert!(
        refused(&["reach", &declared, "reachable", server, module, "--gate", tool])
            .contains("does not apply")
    );
    assert!(refused(&["reach", &declared, "everything"]).contains("unknown query"));
}

#[test]
fn cl7_verify_exits_0_canonical_3_otherwise() {
    let declared = weather("weather.declared.json");
    let out = String::from_utf8(ok(&["verify", &declared])).unwrap();
    assert!(
        out.starts_with("graph export: schema_version 3, sha256 ") && out.ends_with(": canonical\n"),
        "{out}"
    );
    let hex = out.split_whitespace().nth(5).unwrap().trim_end_matches(':').to_owned();
    ok(&["verify", &declared, "--hash", &hex]);
    ok(&["verify", &declared, "--hash", &hex.to_ascii_uppercase()]);
    let diff = String::from_utf8(ok(&["verify", &weather("weather.diff.json")])).unwrap();
    assert!(diff.starts_with("diff record: schema_version 3, sha256 ") && diff.ends_with(": canonical\n"));
    let dir = scratch("verify");
    let fed = dir.join("fed").to_string_lossy().into_owned();
    let instance =
        format!("a:{}:{}", weather("weather.observed.json"), weather("weather.observed.sidecar.json"));
    ok(&["merge", "--system", "weather", "--instance", &instance, "--out-dir", &fed]);
    let record = String::from_utf8(ok(&["verify", &format!("{fed}/record.json")])).unwrap();
    assert!(record.starts_with("federation record: schema_version 3, sha256 "), "{record}");
    let side = String::from_utf8(ok(&["verify", &weather("weather.observed.sidecar.json")])).unwrap();
    assert_eq!(side, "sidecar: schema_version 3, not hashed: canonical\n");
    let wrong = format!("{}0", &hex[..63]);
    let err = refused_with(3, &["verify", &declared, "--hash", &wrong]);
    assert!(err.contains("hash mismatch"), "{err}");
    let spaced = String::from_utf8(std::fs::read(&declared).unwrap()).unwrap().replacen(',', ", ", 1);
    let spaced = file(&dir, "spaced.json", spaced.as_bytes());
    let out = run(&["verify", &spaced]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8(out.stdout).unwrap().contains(": not canonical (first differs at byte 20;"));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.lines().count() == 1 && err.contains("at byte 20"), "{err}");
    assert!(refused(&["verify", &declared, "--hash", "xyz"]).contains("--hash must be hexadecimal"));
}

#[test]
fn cl8_facts_refuses_an_unknown_package_naming_only_it() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let err = refused(&["facts", "--manifest-path", &manifest.to_string_lossy(), "-p", "no-such-package"]);
    assert!(err.contains("no-such-package"), "{err}");
    let err = refused(&["facts", "--manifest-path", "/nonexistent/Cargo.toml", "--package", "x"]);
    assert!(err.starts_with("connectome: facts: "), "{err}");
}

#[test]
fn cl11_each_facts_refusal_says_what_to_do() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let manifest = manifest.to_string_lossy();
    let err = refused(&["facts", "--manifest-path", &manifest, "-p", "no-such-package"]);
    assert!(err.ends_with(": name a member as its Cargo.toml's [package] name does\n"), "{err}");
    let err = refused(&["facts", "--manifest-path", "/nonexistent/Cargo.toml", "-p", "x"]);
    assert_eq!(
        err,
        "connectome: facts: /nonexistent/Cargo.toml: no such manifest: name your workspace's Cargo.toml, \
         or a member's\n"
    );
    let out = Command::new(BIN)
        .args(["facts", "--manifest-path", &manifest, "-p", "connectome-cli"])
        .env("CARGO", "/nonexistent/cargo")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err,
        "connectome: facts: cargo metadata: cargo not found: install Rust (https://rustup.rs), or set \
         CARGO to its path\n"
    );
}

#[test]
fn cl9_render_is_the_renderer_library() {
    let args = [
        "render",
        "--declared",
        &weather("weather.declared.json"),
        "--observed",
        &weather("weather.observed.json"),
        "--sidecar",
        &weather("weather.observed.sidecar.json"),
        "--diff",
        &weather("weather.diff.json"),
        "--format",
        "html",
    ]
    .map(str::to_owned);
    assert_eq!(ok(&args.each_ref().map(String::as_str)), std::fs::read(weather("weather.html")).unwrap());
    let err = refused(&["render", "--declared", "d.json"]);
    assert!(err.starts_with("connectome: usage: --format is required"), "{err}");
    let help = String::from_utf8(ok(&["render", "--help"])).unwrap();
    assert!(help.starts_with("connectome render --declared"));
}

#[test]
fn cl2_an_input_that_is_not_a_regular_file_is_refused_before_it_is_read() {
    // `/dev/zero` never ends: read whole, it would fill memory; it is refused at once instead.
    for args in [vec!["verify", "/dev/zero"], vec!["diff", "/dev/zero", "/dev/null"]] {
        let err = refused(&args);
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
}

/// A catalog export as `Server::catalog_export` writes it (CB-9): a closure, a `fn` item, a tool served
/// by untyped dispatch, one the host's dispatch serves, a resource and a prompt.
const CATALOG: &str = concat!(
    r#"{"format":"mcp-kernel-catalog","prompts":[{"handler":"my_tools::prompts::{{closure}}","name":"brief","served_by":"typed"}],"#,
    r#""resource_templates":[],"resources":[{"served_by":"host","uri":"r://index"}],"server":"my-host","tools":["#,
    r#"{"handler":"my_tools::math::tools::{{closure}}","mode":"read_only","name":"add","served_by":"typed"},"#,
    r#"{"handler":"my_tools::io::save<u8>","mode":"proposal","name":"save","served_by":"typed"},"#,
    r#"{"mode":"read_only","name":"listed","served_by":"host"},"#,
    r#"{"mode":"read_only","name":"plain","served_by":"untyped"}],"version":1}"#
);

#[test]
fn cl12_declare_links_each_typed_part_to_the_module_of_its_handler() {
    use connectome_graph::CallFacts;
    use connectome_graph::declared::Declared;
    let dir = scratch("declare");
    let catalog = file(&dir, "catalog.json", CATALOG.as_bytes());
    let facts = CallFacts {
        format: connectome_graph::FACTS_FORMAT,
        rustc_version: "rustc 1.95.0".into(),
        crates: vec!["my_tools".into()],
        edges: vec![connectome_graph::CallEdge {
            caller: "my_tools::math::tools".into(),
            callee: "my_tools::check::valid".into(),
        }],
        bound: connectome_graph::FactsBound { sources_used: vec!["llvm_ir".into()], ..Default::default() },
    };
    let facts_file = file(&dir, "facts.json", &serde_json::to_vec(&facts).unwrap());
    let bound = dir.join("bound.json").to_string_lossy().into_owned();
    let out = run(&["declare", "--catalog", &catalog, "--facts", &facts_file, "--bound", &bound]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = String::from_utf8(out.stderr).unwrap();
    let linked = "connectome declare: 4 tools (2 linked to their module), 2 resources and prompts (1 linked)";
    assert!(summary.starts_with(linked), "{summary}");
    // The bytes are the library's, built with the links the handlers' type names give.
    let expected = Declared::builder("my-host")
        .catalog(connectome_graph::declared::DeclaredCatalog {
            tools: vec![
                connectome_graph::declared::DeclaredTool::new("add", "read_only"),
                connectome_graph::declared::DeclaredTool::new("save", "proposal"),
                connectome_graph::declared::DeclaredTool::new("listed", "read_only"),
                connectome_graph::declared::DeclaredTool::new("plain", "read_only"),
            ],
            resources: vec!["r://index".into()],
            prompts: vec!["brief".into()],
            ..Default::default()
        })
        .tool_module("add", "my_tools::math")
        .tool_module("save", "my_tools::io")
        .prompt_module("brief", "my_tools")
        .facts(facts)
        .build()
        .unwrap();
    assert_eq!(out.stdout, expected.graph.to_canonical_bytes(Algorithm::Sha256).unwrap());
    let export = read_export(&out.stdout).unwrap();
    let edges: Vec<(String, String)> =
        export.graph.edges().iter().map(|e| (e.from.clone(), e.to.clone())).collect();
    assert!(
        edges.contains(&("my-host/tool/add".into(), "my-host/module/my_tools::math".into())),
        "{edges:?}"
    );
    assert!(
        edges.contains(&("my-host/module/my_tools::math".into(), "my-host/module/my_tools::check".into()))
    );
    let bound: serde_json::Value = serde_json::from_slice(&std::fs::read(&bound).unwrap()).unwrap();
    assert_eq!(bound["tools_without_module"], serde_json::json!(["listed", "plain"]));
    // `--system` names the server in the graph.
    let renamed = ok(&["declare", "--catalog", &catalog, "--system", "other"]);
    assert!(String::from_utf8(renamed).unwrap().contains("\"other/tool/add\""));
}

#[test]
fn cl12_declare_refuses_a_bad_catalog_or_facts_with_one_line() {
    let dir = scratch("declare-bad");
    let v2 = file(&dir, "v2.json", CATALOG.replace("\"version\":1", "\"version\":2").as_bytes());
    let err = refused(&["declare", "--catalog", &v2]);
    assert!(err.ends_with("v2.json\": catalog export version is not 1\n"), "{err}");
    let untyped = CATALOG.replace(r#""served_by":"untyped""#, r#""served_by":"dynamic""#);
    let untyped = file(&dir, "untyped.json", untyped.as_bytes());
    assert!(refused(&["declare", "--catalog", &untyped]).contains("tools[3]: served_by is not typed"));
    let catalog = file(&dir, "catalog.json", CATALOG.as_bytes());
    let err = refused(&["declare", "--catalog", &catalog, "--facts", &catalog]);
    assert!(err.contains("catalog.json\": "), "the facts file named: {err}");
    let twice = CATALOG.replace(r#""name":"save""#, r#""name":"add""#);
    let twice = file(&dir, "twice.json", twice.as_bytes());
    let err = refused(&["declare", "--catalog", &twice]);
    assert!(
        err.contains("its name is an earlier item's") && !err.contains("\"add\""),
        "position, no value: {err}"
    );
    let out = dir.join("never.json").to_string_lossy().into_owned();
    refused(&["declare", "--catalog", "/nonexistent/c.json", "--out", &out]);
    assert!(!dir.join("never.json").exists());
    let err = refused_with(1, &["declare", "--catalog", &catalog, "--out", "/nonexistent/dir/d.json"]);
    assert!(err.contains("cannot write"), "{err}");
}

#[test]
fn cl12_declare_takes_facts_from_a_file_or_from_packages_never_both() {
    let dir = scratch("declare-both");
    let catalog = file(&dir, "catalog.json", CATALOG.as_bytes());
    let err = refused(&["declare", "--catalog", &catalog, "--facts", &catalog, "-p", "my-tools"]);
    assert!(err.contains("--facts and --package exclude each other"), "{err}");
    let err = refused(&["declare", "--catalog", &catalog, "--manifest-path", "/nonexistent/Cargo.toml"]);
    assert!(err.contains("need --package"), "{err}");
    let err = refused(&["declare", "--catalog", &catalog, "--facts", &catalog, "--target-dir", "/x"]);
    assert!(err.contains("need --package"), "{err}");
    // `-p` runs the facts as `connectome facts` does: a manifest that does not exist is its refusal.
    let err =
        refused(&["declare", "--catalog", &catalog, "-p", "x", "--manifest-path", "/nonexistent/Cargo.toml"]);
    assert!(err.contains("no such manifest"), "{err}");
}
