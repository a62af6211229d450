//! The README's walk (CL-13): the commands of README.md "Draw it", read from the README and run as
//! written — the `notes` example writes its catalog export, the real `connectome` reads the facts,
//! builds the declared export and renders the page — then the page in headless Chromium: every node of
//! the declared export is in the DOM, and a tool's name in the search narrows the view to that tool.
//!
//! `cargo run -p mcp-kernel --example notes --` is the `notes` binary cargo already built
//! (`target/<profile>/examples/notes`: `cargo xtask ci` builds the examples before the tests); the test
//! fails, rather than run a stale binary, when a source it was built from is newer. The commands run in
//! a scratch directory under cargo's temporary directory for integration tests, inside the workspace,
//! so `connectome facts` finds it as it does from the repository root. Chromium is `$CHROMIUM`, else
//! `/usr/bin/chromium` (Debian package `chromium`); missing, the test fails saying so, and
//! `CONNECTOME_BROWSER_TEST=skip` (and only that) skips the browser half. Every process is bounded.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use connectome_graph::read::read_export;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_connectome");
/// The whole walk's bound: the first `connectome facts` builds the facade's dependencies.
const BOUND: Duration = Duration::from_secs(15 * 60);
/// One run of Chromium's bound.
const BROWSER_BOUND: Duration = Duration::from_secs(30);
/// The README heading whose first `sh` block is the walk.
const HEADING: &str = "### Draw it\n";
/// How the README builds and runs the example; the test runs the binary cargo built.
const CARGO_RUN_NOTES: &str = "cargo run -p mcp-kernel --example notes --";

/// The repository root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

/// The walk's commands, one a line, as the README shows them.
fn readme_walk() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let at = readme.find(HEADING).expect("README.md has the section \"Draw it\"");
    let rest = &readme[at..];
    let start = rest.find("```sh\n").expect("an sh block in \"Draw it\"") + "```sh\n".len();
    let block = &rest[start..start + rest[start..].find("```").unwrap()];
    block.lines().filter(|line| !line.trim().is_empty()).map(str::to_owned).collect()
}

/// The `notes` binary cargo built, failing when it is missing or older than a source it was built from.
fn notes() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // The test binary is `target/<profile>/deps/<test>-<hash>`.
    let examples = exe.parent().and_then(Path::parent).unwrap().join("examples");
    let path = examples.join(format!("notes{}", std::env::consts::EXE_SUFFIX));
    let rebuild = "cargo build -p mcp-kernel --example notes";
    let built = std::fs::metadata(&path).and_then(|m| m.modified()).unwrap_or_else(|_| {
        panic!("the notes example is missing at {}: build it with `{rebuild}`", path.display())
    });
    // Cargo's dep-info beside it lists the sources (`a\ b` is a space inside a path).
    let dep_info = std::fs::read_to_string(examples.join("notes.d")).unwrap_or_default();
    let listed = dep_info.split_once(": ").map_or("", |(_, files)| files).replace("\\ ", "\u{0}");
    for file in listed.split_whitespace().map(|f| PathBuf::from(f.replace('\u{0}', " "))) {
        let changed =
            std::fs::metadata(&file).and_then(|m| m.modified()).unwrap_or_else(|_| SystemTime::now());
        assert!(
            changed <= built,
            "{} is older than {}: rebuild it with `{rebuild}`",
            path.display(),
            file.display()
        );
    }
    path
}

/// Waits for `child` within `bound` of `started`, killing it past that; whether it succeeded.
fn bounded(mut child: Child, started: Instant, bound: Duration, what: &str) -> bool {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success();
        }
        if started.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} ran past its bound of {} s and was killed", bound.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs one README line in `dir`: the example for `cargo run … --`, the built `connectome` for
/// `connectome`; its stderr goes to `log`.
fn run_line(line: &str, dir: &Path, notes: &Path, started: Instant) {
    let (program, rest) = if let Some(rest) = line.strip_prefix(CARGO_RUN_NOTES) {
        (notes.to_path_buf(), rest)
    } else if let Some(rest) = line.strip_prefix("connectome ") {
        (PathBuf::from(BIN), rest)
    } else {
        panic!("README \"Draw it\" runs only the example and connectome: {line}");
    };
    assert!(!line.contains(['\'', '"', '\\', '$']), "a README line this test splits on spaces: {line}");
    let log = dir.join("stderr.log");
    let child = Command::new(program)
        .args(rest.split_whitespace())
        .current_dir(dir)
        .env("CARGO_NET_OFFLINE", "true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let ok = bounded(child, started, BOUND, line);
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(ok, "README line failed: {line}\n{stderr}");
    eprintln!("walk: {line} ({:.1} s)\n{}", started.elapsed().as_secs_f64(), stderr.trim_end());
}

/// The DOM Chromium holds once `page` ran with `fragment`, checked to have no script error.
fn dom(dir: &Path, page: &Path, fragment: &str, run: &str) -> String {
    let binary = std::env::var("CHROMIUM").ok().filter(|v| !v.is_empty());
    let binary = binary.unwrap_or_else(|| "/usr/bin/chromium".to_owned());
    let profile = dir.join(format!("chromium-{run}"));
    std::fs::create_dir_all(&profile).unwrap();
    let out = profile.join("dom.html");
    let child = Command::new(&binary)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .args(["--disable-extensions", "--no-proxy-server", "--disable-dev-shm-usage", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.join("data").display()))
        .arg(format!("file://{}{fragment}", page.display()))
        .env("HOME", &profile)
        .env("XDG_CONFIG_HOME", profile.join("config"))
        .env("XDG_CACHE_HOME", profile.join("cache"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "Chromium did not start ({binary}: {e}): install it (Debian: `apt-get install chromium`) or set \
                 CHROMIUM to its path; CONNECTOME_BROWSER_TEST=skip skips the browser half"
            )
        });
    assert!(bounded(child, Instant::now(), BROWSER_BOUND, "Chromium"), "Chromium failed on {run}");
    let dom = std::fs::read_to_string(&out).unwrap();
    assert!(dom.contains("data-ready=\"1\""), "{run}: the page's explorer did not start");
    assert!(!dom.contains("data-errors="), "{run}: the page recorded a script error");
    dom
}

/// The value of the first `name="…"` attribute in `dom`.
fn attribute<'a>(dom: &'a str, name: &str) -> &'a str {
    let open = format!("{name}=\"");
    dom.find(&open).map_or("", |at| {
        let rest = &dom[at + open.len()..];
        &rest[..rest.find('"').unwrap_or(0)]
    })
}

/// The value of `flag` on the README line that starts with `prefix`: the file it writes.
fn out_of(lines: &[String], prefix: &str, flag: &str) -> String {
    let line = lines.iter().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("a line {prefix}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == flag).unwrap_or_else(|| panic!("{flag} on {line}"));
    words[at + 1].to_owned()
}

#[test]
fn cl13_the_readme_walk_draws_notes_and_the_search_narrows_to_a_tool() {
    let started = Instant::now();
    let lines = readme_walk();
    assert!(lines.len() <= 3, "a server to a page in three commands: {lines:?}");
    let notes = notes();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("connectome-walk");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    assert!(dir.starts_with(repo()), "the walk runs inside the workspace, as from its root");
    for line in &lines {
        run_line(line, &dir, &notes, started);
    }

    // The catalog export names a handler for each tool, the resource and the prompt; each is linked to
    // the module of its handler.
    let catalog: Value = serde_json::from_slice(
        &std::fs::read(dir.join(out_of(&lines, CARGO_RUN_NOTES, "--catalog"))).unwrap(),
    )
    .unwrap();
    let tools: Vec<&str> =
        catalog["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["add_note", "delete_note", "export_notes", "search_notes"]);
    let declared = std::fs::read(dir.join(out_of(&lines, "connectome declare", "--out"))).unwrap();
    let export = read_export(&declared).unwrap();
    let graph = &export.graph;
    for tool in &tools {
        let edge = (format!("notes/tool/{tool}"), "notes/module/notes::host".to_owned());
        assert!(graph.edges().iter().any(|e| (e.from.clone(), e.to.clone()) == edge), "{tool} linked");
    }
    for part in ["notes/resource/notes:%2F%2Findex", "notes/prompt/summarize"] {
        let edge = (part.to_owned(), "notes/module/notes::host".to_owned());
        assert!(graph.edges().iter().any(|e| (e.from.clone(), e.to.clone()) == edge), "{part} linked");
    }
    assert!(
        graph.nodes().iter().any(|n| n.id().starts_with("notes/module/mcp_kernel")),
        "the facts' modules"
    );

    if std::env::var("CONNECTOME_BROWSER_TEST").is_ok_and(|v| v == "skip") {
        eprintln!("CONNECTOME_BROWSER_TEST=skip: the headless Chromium half is skipped");
        return;
    }
    // Every node of the declared export is in the page, shown.
    let page = dir.join(out_of(&lines, "connectome render", "--out"));
    let all = dom(&dir, &page, "", "all");
    let n = graph.nodes().len();
    for node in graph.nodes() {
        assert!(all.contains(&format!("<title>{}\n", node.id())), "{} is in the page", node.id());
    }
    assert_eq!(attribute(&all, "data-shown"), n.to_string());
    assert_eq!(all.matches("<g class=\"n\">").count(), n);
    // A tool's name in the search shows that tool alone.
    for tool in &tools {
        let narrowed = dom(&dir, &page, &format!("#q={tool}"), tool);
        assert_eq!(attribute(&narrowed, "data-shown"), "1", "the search {tool}");
        assert_eq!(narrowed.matches("<g class=\"n\">").count(), 1);
        assert_eq!(narrowed.matches("<g class=\"n h\">").count(), n - 1);
        let shown = format!("<g class=\"n\"><title>notes/tool/{tool}\n");
        assert!(narrowed.contains(&shown), "{tool} is the one shown");
    }
    eprintln!(
        "walk: {n} nodes in the page, each tool found by its name ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
}
