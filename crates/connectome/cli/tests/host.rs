//! A host outside the repository (CL-10): a scratch Cargo workspace under the system's temporary
//! directory, with a library of its own (`tiny-tools`) and a server over the facade (`tiny-host`), taken
//! through every step of docs/connectome.md "Your own host, step by step" by the real `connectome`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use connectome_graph::federation::Federation;
use connectome_graph::read::read_export;
use connectome_graph::{CallFacts, Weight};

const BIN: &str = env!("CARGO_BIN_EXE_connectome");
/// The whole test's time bound: the first build compiles the facade.
const BOUND: Duration = Duration::from_secs(15 * 60);

/// The scratch workspace, removed when the test ends, pass or fail.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The repository root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

/// The persisted target directory of the scratch host (warm after the first run).
fn host_target() -> PathBuf {
    repo().join("target/connectome-host-test")
}

/// Runs `command` to its end within the test's bound, or fails naming what ran too long.
fn within(started: Instant, what: &str, command: &mut Command) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let drain = |mut reader: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            reader.read_to_end(&mut bytes).map(|_| bytes)
        })
    };
    let (out, err) = (drain(Box::new(out)), drain(Box::new(err)));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: the host test ran past its bound of {} minutes", BOUND.as_secs() / 60);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output { status, stdout: out.join().unwrap().unwrap(), stderr: err.join().unwrap().unwrap() }
}

/// Runs `connectome args…` and gives its stdout and stderr, failing unless it exits 0.
fn connectome(started: Instant, args: &[&str]) -> (String, String) {
    let mut command = Command::new(BIN);
    command.args(args).env("CARGO_TARGET_DIR", host_target()).env("CARGO_NET_OFFLINE", "true");
    let out = within(started, &format!("connectome {}", args[0]), &mut command);
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert!(out.status.success(), "connectome {args:?}: {stderr}");
    (stdout, stderr)
}

/// Writes the scratch workspace: its manifest, lock file, toolchain file and the two packages.
fn write_workspace(root: &Path) {
    let repo = repo();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // No debug info and no incremental cache, as this repository's own profile leaves them off for
    // dependencies: the host's build is kept under `target/connectome-host-test/` between runs, and
    // came to ~0.9 GB with debug info (the incremental cache of its own crates added more).
    write(
        "Cargo.toml",
        "[workspace]\nresolver = \"3\"\nmembers = [\"tiny-tools\", \"tiny-host\"]\n\n\
         [profile.dev]\ndebug = false\nincremental = false\n",
    );
    std::fs::copy(repo.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    std::fs::copy(repo.join("rust-toolchain.toml"), root.join("rust-toolchain.toml")).unwrap();
    let package =
        |name: &str| format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n");
    write("tiny-tools/Cargo.toml", &package("tiny-tools"));
    write("tiny-tools/src/lib.rs", include_str!("host/tiny_tools.rs"));
    let facade = repo.join("crates/kernel/facade");
    let manifest = format!(
        "{}\n[dependencies]\ntiny-tools = {{ path = \"../tiny-tools\" }}\n\
         mcp-kernel = {{ path = {:?}, default-features = false, features = [\"connectome\"] }}\n\
         serde_json = \"1\"\nfutures-util = {{ version = \"0.3\", default-features = false, features = [\"std\"] }}\n",
        package("tiny-host"),
        facade.to_string_lossy()
    );
    write("tiny-host/Cargo.toml", &manifest);
    write("tiny-host/src/main.rs", include_str!("host/tiny_host.rs"));
}

#[test]
fn cl10_a_host_outside_the_repository_runs_every_step() {
    let started = Instant::now();
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let scratch =
        Scratch(std::env::temp_dir().join(format!("connectome-host-{}-{nanos}", std::process::id())));
    let root = scratch.0.clone();
    assert!(!root.starts_with(repo()), "the scratch host lies outside the repository");
    write_workspace(&root);
    let path = |rel: &str| root.join(rel).to_string_lossy().into_owned();

    // Build the host, offline, against the repository's lock file (the lock gains the two packages).
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = Command::new(cargo);
    build
        .args(["build", "--offline", "-p", "tiny-host"])
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", host_target());
    let built = within(started, "building tiny-host", &mut build);
    assert!(built.status.success(), "building tiny-host: {}", String::from_utf8_lossy(&built.stderr));
    eprintln!("host test: tiny-host built in {:.1} s", started.elapsed().as_secs_f64());
    let host = host_target().join("debug/tiny-host");
    let run_host = |args: &[&str]| {
        let out = within(started, "tiny-host", Command::new(&host).args(args));
        assert!(out.status.success(), "tiny-host {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };

    // 1. Facts for the host's own crate.
    let manifest = path("Cargo.toml");
    let (_, progress) = connectome(
        started,
        &["facts", "--manifest-path", &manifest, "--package", "tiny-tools", "--out", &path("facts.json")],
    );
    assert!(progress.contains("connectome facts: building tiny-tools (1 of 1)\n"), "{progress}");
    assert!(progress.contains("connectome facts: 1 crate(s), "), "{progress}");
    let facts = CallFacts::from_json(&std::fs::read(path("facts.json")).unwrap()).unwrap();
    assert_eq!(facts.crates, ["tiny_tools"]);
    let calls =
        |caller: &str, callee: &str| facts.edges.iter().any(|e| e.caller == caller && e.callee == callee);
    assert!(calls("tiny_tools::math::add", "tiny_tools::check::bounded"), "{:?}", facts.edges);
    assert!(calls("tiny_tools::math::sum", "tiny_tools::math::add"), "{:?}", facts.edges);
    assert!(calls("tiny_tools::text::count", "tiny_tools::math::sum"), "{:?}", facts.edges);
    assert!(calls("tiny_tools::text::shout", "tiny_tools::check::clip"), "{:?}", facts.edges);

    // 2. The declared graph, built by the host with the facts; 3. two instances observed.
    run_host(&["declared", &path("facts.json"), &path("declared.json")]);
    let declared = read_export(&std::fs::read(path("declared.json")).unwrap()).unwrap().graph;
    let declared_edge = |from: &str, to: &str| {
        declared.edges().iter().any(|e| e.from == format!("tiny/{from}") && e.to == format!("tiny/{to}"))
    };
    assert!(declared_edge("module/tiny_tools::math", "module/tiny_tools::check"));
    assert!(declared_edge("module/tiny_tools::text", "module/tiny_tools::math"));
    assert!(declared_edge("tool/add", "module/tiny_tools::math"));
    run_host(&["observe", "a", &path("a")]);
    run_host(&["observe", "b", &path("b")]);

    // 4. Merge the two instances.
    let instance = |n: &str| {
        format!(
            "{n}:{}:{}:{}",
            path(&format!("{n}.json")),
            path(&format!("{n}.sidecar.json")),
            path(&format!("{n}.timing.json"))
        )
    };
    let (a, b) = (instance("a"), instance("b"));
    let (_, summary) = connectome(
        started,
        &["merge", "--system", "tiny", "--instance", &a, "--instance", &b, "--out-dir", &path("fed")],
    );
    assert!(summary.starts_with("connectome merge: 2 instance(s), "), "{summary}");
    let fed = |f: &str| std::fs::read(root.join("fed").join(f)).unwrap();
    let timing = fed("timing.json");
    let merged =
        Federation::read(&fed("export.json"), &fed("sidecar.json"), &fed("record.json"), Some(&timing))
            .unwrap();
    assert_eq!(merged.instances(), ["a", "b"]);
    let count = |tool: &str| {
        let i = merged.graph().edges().iter().position(|e| e.to == format!("tiny/tool/{tool}")).unwrap();
        (merged.graph().edges()[i].weight, merged.observed_by(i))
    };
    assert_eq!(count("add"), (Some(Weight::Int(5)), vec!["a", "b"]), "3 calls on a, 2 on b");
    assert_eq!(count("shout"), (Some(Weight::Int(1)), vec!["a"]));
    assert_eq!(count("sum"), (Some(Weight::Int(1)), vec!["b"]));
    assert_eq!(count("echo"), (Some(Weight::Int(1)), vec!["b"]));

    // 5. Diff and effective, declared against the merged graph.
    let window = r#"{"ended_at":"2026-12-01T01:00:00Z","started_at":"2026-12-01T00:00:00Z"}"#;
    let (export, sidecar, timing) =
        (path("fed/export.json"), path("fed/sidecar.json"), path("fed/timing.json"));
    connectome(
        started,
        &[
            "diff",
            &path("declared.json"),
            &export,
            "--sidecar",
            &sidecar,
            "--window",
            window,
            "--out",
            &path("diff.json"),
        ],
    );
    let diff: serde_json::Value = serde_json::from_slice(&std::fs::read(path("diff.json")).unwrap()).unwrap();
    let class = |name: &str| -> Vec<String> {
        diff["classes"][name]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| format!("{} {}", e["from"], e["to"]))
            .collect()
    };
    assert!(class("observed_but_undeclared") == [r#""tiny/server" "tiny/tool/echo""#], "{diff}");
    assert!(
        class("declared_never_observed").contains(&r#""tiny/server" "tiny/tool/count""#.to_owned()),
        "{diff}"
    );
    assert_eq!(class("declared_and_observed").len(), 3, "add, shout and sum: {diff}");
    connectome(
        started,
        &[
            "effective",
            &path("declared.json"),
            &export,
            "--sidecar",
            &sidecar,
            "--timing",
            &timing,
            "--window",
            window,
            "--out",
            &path("effective.json"),
        ],
    );
    let effective = String::from_utf8(std::fs::read(path("effective.json")).unwrap()).unwrap();
    assert!(
        effective
            .contains(r#"{"class":"declared_and_observed","count":5,"from":"tiny/server","kind":"invoke","#),
        "{effective}"
    );
    assert!(
        effective.contains(
            r#"{"class":"observed_but_undeclared","count":1,"from":"tiny/server","kind":"invoke","#
        ),
        "{effective}"
    );

    // 6. Render the page and the effective view.
    connectome(
        started,
        &[
            "render",
            "--declared",
            &path("declared.json"),
            "--observed",
            &export,
            "--sidecar",
            &sidecar,
            "--diff",
            &path("diff.json"),
            "--format",
            "html",
            "--out",
            &path("page.html"),
        ],
    );
    let page = std::fs::read_to_string(path("page.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("tiny_tools::math"), "the page");
    let (svg, _) =
        connectome(started, &["render", "--effective", &path("effective.json"), "--format", "svg"]);
    assert!(svg.starts_with("<svg") && svg.contains(">5</text>"), "{svg}");

    // 7. Verify every file; 8. reach over the declared graph.
    for file in [
        "declared.json",
        "a.json",
        "a.sidecar.json",
        "a.timing.json",
        "b.json",
        "fed/export.json",
        "fed/sidecar.json",
        "fed/record.json",
        "fed/timing.json",
        "diff.json",
        "effective.json",
    ] {
        let (verdict, _) = connectome(started, &["verify", &path(file)]);
        assert!(verdict.ends_with(": canonical\n"), "{file}: {verdict}");
    }
    let (reach, _) = connectome(
        started,
        &["reach", &path("declared.json"), "reachable", "tiny/tool/count", "tiny/module/tiny_tools::check"],
    );
    assert_eq!(
        reach,
        "true\nwitness: tiny/tool/count -invoke-> tiny/module/tiny_tools::text -invoke-> tiny/module/tiny_tools::check\n"
    );
    let (pass, _) = connectome(
        started,
        &["reach", &path("declared.json"), "mandatory_pass", "tiny/module/tiny_tools::text"],
    );
    assert_eq!(pass, "1\ntiny/server\n");
    eprintln!("host test: every step in {:.1} s", started.elapsed().as_secs_f64());
}
