//! Chromium for the browser tests: a headless run with a fresh profile, killed with every helper
//! process when dropped, and the wait for the page's reports.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::endpoint::{Endpoint, lock};
use crate::pages::{PageServer, plan};

/// The variable naming the Chromium binary.
const CHROMIUM_VAR: &str = "MCP_KERNEL_CHROMIUM";
/// The Chromium binary when the variable is not set.
const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";
/// The bound from Chromium's launch to the page's last report.
const PAGE_BOUND: Duration = Duration::from_secs(30);
/// How often the wait for reports checks that Chromium is still running.
const POLL: Duration = Duration::from_millis(100);
/// The variable every process of one Chromium run inherits, naming the run: how its helpers
/// (zygotes, renderers, the network service, the crash handler) are found after the browser is killed.
const RUN_VAR: &str = "MCP_KERNEL_BROWSER_RUN";
/// How long the helpers of a killed Chromium get to exit before its directory is removed anyway.
const EXIT_BOUND: Duration = Duration::from_secs(5);

/// A headless Chromium with a fresh profile (and `HOME`), killed with every helper process and its
/// directory removed when dropped.
struct Chromium {
    binary: String,
    child: Child,
    dir: PathBuf,
}

impl Chromium {
    /// Launches Chromium at `url`; panics when it cannot be started.
    fn launch(url: &str) -> Self {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let binary = std::env::var(CHROMIUM_VAR)
            .ok()
            .filter(|value| !value.is_empty())
            .unwrap_or_else(|| DEFAULT_CHROMIUM.to_owned());
        let run = RUNS.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("mcp-kernel-browser-{}-{run}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("profile")).expect("a temporary directory for Chromium");
        let log = File::create(dir.join("chromium.log")).expect("Chromium's log file");
        let child = Command::new(&binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--no-proxy-server",
                "--disable-dev-shm-usage",
            ])
            .arg(format!("--user-data-dir={}", dir.join("profile").display()))
            .arg(url)
            // Crash reports and caches stay in the run's directory, not the user's home.
            .env("HOME", &dir)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env(RUN_VAR, &dir)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().expect("Chromium's log file")))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|e| {
                let _ = std::fs::remove_dir_all(&dir);
                panic!(
                    "Chromium did not start ({binary}: {e}); install it (`apt-get install chromium`) \
                     or set {CHROMIUM_VAR} to its path"
                )
            });
        Self { binary, child, dir }
    }

    /// The last lines of Chromium's output.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.join("chromium.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Panics when Chromium has exited.
    fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("Chromium ({}) exited early ({status}):\n{}", self.binary, self.log_tail());
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The helpers see the browser gone and exit by themselves; wait for them (bounded).
        let until = Instant::now() + EXIT_BOUND;
        let mut left = helpers(&self.dir);
        while !left.is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
            left = helpers(&self.dir);
        }
        if !left.is_empty() {
            eprintln!("Chromium helpers still running {EXIT_BOUND:?} after the browser was killed: {left:?}");
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The live processes (zombies aside) of the Chromium run whose directory is `dir`, found by the
/// [`RUN_VAR`] they inherited.
fn helpers(dir: &std::path::Path) -> Vec<u32> {
    let marker = format!("{RUN_VAR}={}", dir.display());
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { return false };
            let ours = environ.split(|b| *b == 0).any(|var| var == marker.as_bytes());
            // The state follows the command name's closing parenthesis.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            ours && !zombie
        })
        .collect()
}

/// The page's reports by step, once it reported `done`: waits at most [`PAGE_BOUND`] from now and
/// panics (with what arrived and Chromium's output) when Chromium exits or the bound passes first.
async fn reports(page: &mut PageServer, browser: &mut Chromium) -> BTreeMap<String, Value> {
    let deadline = Instant::now() + PAGE_BOUND;
    let mut got = BTreeMap::new();
    let mut tick = tokio::time::interval(POLL);
    loop {
        tokio::select! {
            report = page.reports.recv() => {
                let report = report.expect("the page server runs");
                let step = report["step"].as_str().unwrap_or("unnamed").to_owned();
                let done = step == "done";
                got.insert(step, report);
                if done {
                    return got;
                }
            }
            _ = tick.tick() => {
                browser.assert_running();
                assert!(
                    Instant::now() < deadline,
                    "the page at {} did not finish within {PAGE_BOUND:?} (loaded {} times); reports: {got:#?}\n\
                     Chromium's output:\n{}",
                    page.origin,
                    page.loads.load(Ordering::SeqCst),
                    browser.log_tail(),
                );
            }
        }
    }
}

/// Runs the page of `page` in Chromium against `endpoint` and returns its reports.
pub async fn run_page(page: &mut PageServer, endpoint: &Endpoint) -> BTreeMap<String, Value> {
    *lock(&page.plan) = plan(&endpoint.url());
    let started = Instant::now();
    let mut browser = Chromium::launch(&page.page_url());
    let got = reports(page, &mut browser).await;
    drop(browser);
    eprintln!("{}: Chromium launched, ran the page and was killed in {:?}", page.origin, started.elapsed());
    eprintln!("{}: reports {}", page.origin, serde_json::to_string_pretty(&got).expect("JSON"));
    assert!(!got.contains_key("page"), "the page's script failed: {got:#?}");
    got
}
