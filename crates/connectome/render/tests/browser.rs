//! The page in headless Chromium (connectome CJ-7): every node is in the DOM, a search or a kind
//! filter read from the URL fragment narrows what is shown, a selected node lights up exactly what it
//! reaches and what reaches it, and no script error is recorded (the page's `data-errors` attribute
//! and Chromium's console log). Screenshots go to `connectome-render/` under cargo's temporary
//! directory for integration tests (`target/tmp/` in this workspace), as CI artifacts.
//!
//! Chromium is `$CHROMIUM`, else `/usr/bin/chromium` (Debian package `chromium`). When it is missing
//! the tests fail saying so; `CONNECTOME_BROWSER_TEST=skip` (and only that) skips them. Every run of
//! Chromium is killed after [`BOUND`].

#[path = "integration/common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use connectome_render::label::name;
use connectome_render::view::{View, ViewName};
use connectome_render::vocab::NodeKind;
use connectome_render::{Format, Graph, Inputs, Role, render};
use serde_json::Value;

/// The longest one run of Chromium may take before it is killed.
const BOUND: Duration = Duration::from_secs(30);
/// The variable every process of one run inherits, naming its directory (to wait for its helpers).
const RUN_VAR: &str = "CONNECTOME_BROWSER_RUN";

/// Whether the browser tests are switched off, saying so.
fn skipped() -> bool {
    let skip = std::env::var("CONNECTOME_BROWSER_TEST").is_ok_and(|v| v == "skip");
    if skip {
        eprintln!("CONNECTOME_BROWSER_TEST=skip: the headless Chromium test is skipped");
    }
    skip
}

/// A scratch directory for one test's page and Chromium profiles, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("connectome-render-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The live processes that inherited `marker` (the helpers of a run), zombies aside.
fn helpers(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { return false };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie && environ.split(|b| *b == 0).any(|var| var == marker.as_bytes())
        })
        .collect()
}

/// Runs Chromium once on `url` with `extra` flags; its stdout and stderr. Panics on a timeout, a
/// failed run, or a missing Chromium.
fn chromium(scratch: &Path, run: &str, extra: &[String], url: &str) -> (String, String) {
    let binary = std::env::var("CHROMIUM").ok().filter(|v| !v.is_empty());
    let binary = binary.unwrap_or_else(|| "/usr/bin/chromium".to_owned());
    let dir = scratch.join(run);
    std::fs::create_dir_all(dir.join("profile")).expect("a profile directory");
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let started = Instant::now();
    let mut child = Command::new(&binary)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .args(["--disable-extensions", "--no-proxy-server", "--disable-dev-shm-usage", "--hide-scrollbars"])
        .args(["--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(extra)
        .arg(url)
        .env("HOME", &dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env(RUN_VAR, &dir)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("a stdout file"))
        .stderr(File::create(&err_path).expect("a stderr file"))
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "Chromium did not start ({binary}: {e}): install it (Debian: `apt-get install chromium`) or set \
                 CHROMIUM to its path; CONNECTOME_BROWSER_TEST=skip skips this test"
            )
        });
    let status = loop {
        if let Some(status) = child.try_wait().expect("Chromium's status") {
            break Some(status);
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The helpers see the browser gone and exit by themselves; wait for them (bounded).
    let marker = format!("{RUN_VAR}={}", dir.display());
    let until = Instant::now() + Duration::from_secs(5);
    while !helpers(&marker).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = std::fs::read_to_string(&out_path).unwrap_or_default();
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    let tail: Vec<&str> = err.lines().rev().take(15).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    let Some(status) = status else { panic!("Chromium ran past {BOUND:?} on {url} and was killed:\n{tail}") };
    assert!(status.success(), "Chromium failed ({status}) on {url}:\n{tail}");
    eprintln!("{run}: Chromium loaded the page and exited in {:?}", started.elapsed());
    (out, err)
}

/// The DOM Chromium holds once the page ran, after checking that no script error was recorded.
fn dump(scratch: &Path, run: &str, page: &Path, fragment: &str) -> String {
    let url = format!("file://{}{fragment}", page.display());
    let (dom, log) = chromium(scratch, run, &["--dump-dom".to_owned()], &url);
    assert!(dom.contains("</html>"), "{run}: no DOM dumped");
    assert!(
        !dom.contains("data-errors="),
        "{run}: the page recorded a script error: {}",
        attribute(&dom, "data-errors")
    );
    let console: Vec<&str> =
        log.lines().filter(|l| l.contains("CONSOLE") && l.contains("Uncaught")).collect();
    assert!(console.is_empty(), "{run}: script errors in the console: {console:#?}");
    assert!(dom.contains("data-ready=\"1\""), "{run}: the explorer did not start");
    dom
}

/// Saves a screenshot of the page under cargo's temporary directory for integration tests
/// (`target/tmp/connectome-render/`), which is inside the target directory wherever the crate is built.
fn screenshot(scratch: &Path, run: &str, page: &Path, fragment: &str, file: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("connectome-render");
    std::fs::create_dir_all(&dir).expect("the screenshot directory");
    let shot = dir.join(file);
    let _ = std::fs::remove_file(&shot);
    let flags = [format!("--screenshot={}", shot.display()), "--window-size=1400,1500".to_owned()];
    chromium(scratch, run, &flags, &format!("file://{}{fragment}", page.display()));
    let png = std::fs::read(&shot).expect("Chromium wrote the screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "a real screenshot");
    eprintln!("{run}: screenshot {} ({} bytes)", shot.display(), png.len());
    shot
}

/// The value of the first `name="…"` attribute in `dom`.
fn attribute<'a>(dom: &'a str, name: &str) -> &'a str {
    let open = format!("{name}=\"");
    dom.find(&open).map_or("", |at| {
        let rest = &dom[at + open.len()..];
        &rest[..rest.find('"').unwrap_or(0)]
    })
}

/// Text as the DOM serializer writes it.
fn serialized(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('\u{a0}', "&nbsp;")
}

/// How many nodes `start` reaches along the edges of `view` between shown nodes (forward), or how
/// many reach it (backward), itself aside.
fn closure(view: &View, shown: &[bool], start: usize, forward: bool) -> usize {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start];
    while let Some(u) = stack.pop() {
        for e in view.edges.iter().filter(|e| shown[e.from] && shown[e.to]) {
            let (a, b) = if forward { (e.from, e.to) } else { (e.to, e.from) };
            if a == u && seen.insert(b) {
                stack.push(b);
            }
        }
    }
    seen.remove(&start);
    seen.len()
}

/// A generated host of `modules` modules and `edges` edges, plus a tool whose id would end a script.
fn test_inputs(modules: usize, edges: usize) -> Inputs {
    let mut doc: Value = serde_json::from_slice(&host_graph(modules, edges, "declared")).unwrap();
    let hostile = "big/tool/</script><script>document.title='x'</script>";
    doc["nodes"].as_array_mut().unwrap().push(node(hostile, "tool"));
    doc["edges"].as_array_mut().unwrap().push(edge("big/server", hostile, "invoke", "declared"));
    let g = Graph::from_json(Role::Declared, &serde_json::to_vec(&doc).unwrap()).unwrap();
    Inputs::new(g, None, None, None).unwrap()
}

/// Writes the page of `inputs` into `scratch`.
fn write_page(scratch: &Path, inputs: &Inputs) -> PathBuf {
    let path = scratch.join("page.html");
    let page = render(inputs, Format::Html, None).unwrap();
    std::fs::write(&path, &page).unwrap();
    eprintln!(
        "page: {} bytes, {} nodes, {} edges",
        page.len(),
        inputs.declared.nodes.len(),
        inputs.declared.edges.len()
    );
    path
}

#[test]
fn cj7_page_in_chromium_shows_every_node_narrows_on_search_and_highlights_reach() {
    if skipped() {
        return;
    }
    let scratch = Scratch::new("browser");
    let inputs = test_inputs(300, 900);
    let view = inputs.view(ViewName::Declared).unwrap();
    let page = write_page(&scratch.0, &inputs);
    let (n, m) = (view.nodes.len(), view.edges.len());

    // Every node is in the DOM, with its full id as its hover title, and shown.
    let dom = dump(&scratch.0, "all", &page, "");
    for node in &view.nodes {
        assert!(dom.contains(&format!("<title>{}\n", serialized(&node.id))), "{} is in the DOM", node.id);
    }
    assert_eq!(dom.matches("<g class=\"n\">").count(), n);
    assert_eq!(attribute(&dom, "data-shown"), n.to_string());
    assert_eq!(attribute(&dom, "data-edges-shown"), m.to_string());
    assert!(!dom.contains("<title>x</title>"), "the hostile id ran nothing");

    // A search narrows the shown nodes to the names holding it (any case); edges follow their ends.
    let query = "AREA_3";
    let matched: Vec<bool> = view
        .nodes
        .iter()
        .map(|v| name(&v.id, v.kind).to_lowercase().contains(&query.to_lowercase()))
        .collect();
    let shown = matched.iter().filter(|m| **m).count();
    assert!(shown > 0 && shown < n);
    let dom = dump(&scratch.0, "search", &page, &format!("#q={query}"));
    assert_eq!(attribute(&dom, "data-shown"), shown.to_string());
    assert_eq!(dom.matches("<g class=\"n\">").count(), shown);
    assert_eq!(dom.matches("<g class=\"n h\">").count(), n - shown);
    let edges_shown = view.edges.iter().filter(|e| matched[e.from] && matched[e.to]).count();
    assert_eq!(attribute(&dom, "data-edges-shown"), edges_shown.to_string());

    // A kind filter and a selection: the highlight is the closure both ways over the shown edges.
    let tool = view.nodes.iter().position(|v| v.id == "big/tool/tool_1").unwrap();
    let dom = dump(&scratch.0, "select", &page, "#sel=big/tool/tool_1&kinds=server,tool,module");
    let kept: Vec<bool> =
        view.nodes.iter().map(|v| !matches!(v.kind, Some(NodeKind::Resource | NodeKind::Prompt))).collect();
    let kept_count = kept.iter().filter(|k| **k).count();
    assert!(kept_count < n);
    assert_eq!(attribute(&dom, "data-shown"), kept_count.to_string());
    assert_eq!(attribute(&dom, "data-selected"), "big/tool/tool_1");
    let (reaches, reached_by) = (closure(&view, &kept, tool, true), closure(&view, &kept, tool, false));
    assert!(reaches > 10 && reached_by == 1, "{reaches} {reached_by}");
    assert_eq!(attribute(&dom, "data-reaches"), reaches.to_string());
    assert_eq!(attribute(&dom, "data-reached-by"), reached_by.to_string());
    let lit = dom.matches("<g class=\"n fwd\">").count() + dom.matches("<g class=\"n fwd bwd\">").count();
    assert_eq!(lit, reaches);
    assert_eq!(dom.matches("<g class=\"n sel\">").count(), 1);
    assert!(dom.contains("<svg class=\"graph focus\""));

    screenshot(&scratch.0, "screenshot", &page, "#sel=big/tool/tool_1", "screenshot.png");
}

#[test]
fn cj7_page_in_chromium_stays_usable_at_ten_thousand_edges() {
    if skipped() {
        return;
    }
    let scratch = Scratch::new("browser-large");
    let inputs = test_inputs(2000, 9_999);
    let view = inputs.view(ViewName::Declared).unwrap();
    assert_eq!(view.edges.len(), 10_000);
    let page = write_page(&scratch.0, &inputs);
    let dom = dump(&scratch.0, "large", &page, "");
    assert_eq!(dom.matches("<g class=\"n\">").count(), view.nodes.len());
    assert_eq!(dom.matches("<g class=\"e\">").count(), 10_000);
    let dom = dump(&scratch.0, "large-search", &page, "#q=crate_7::area_2");
    let shown: usize = attribute(&dom, "data-shown").parse().unwrap();
    assert!(shown > 0 && shown < 200, "{shown} nodes shown");
    screenshot(&scratch.0, "large-screenshot", &page, "", "screenshot-large.png");
    let selected = "#q=crate_7::&sel=big/module/crate_7::area_2::m721";
    screenshot(&scratch.0, "large-selected", &page, selected, "screenshot-large-selected.png");
}
