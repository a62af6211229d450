//! A real headless Chromium against the endpoint: what a browser page may and may not do with it.
//!
//! Every other test speaks HTTP from Rust and so can only check the headers the server sends. Whether
//! those headers make a browser *behave* — send the preflight, accept its answer, send the actual
//! request with the `Mcp-*` headers, let the script read `www-authenticate` off a 401, and refuse a
//! foreign origin before its request leaves the browser — is decided by the browser's own CORS
//! implementation, which no hand-written client reproduces faithfully (which headers go into
//! `access-control-request-headers`, how they are spelled, what a missing `expose-headers` hides).
//! So these tests launch Chromium and let it decide.
//!
//! The harness, all on 127.0.0.1:
//!
//! * the endpoint (`mcp_kernel_http::serve`, the fixture server) admitting one page origin, A, with an
//!   `authorize` hook requiring `Authorization: Bearer browser-token` and counting the POSTs it sees
//!   per `Origin`, behind a wrapper that records every request the endpoint receives (preflights
//!   included) and the status and headers it answered;
//! * two page servers, origin A (allowed) and origin B (not allowed), serving `browser/page.html` and
//!   the plan it runs: a `tools/call` of `search` with its `Mcp-Param-*` headers and the bearer token,
//!   then a `tools/list` without the token. The page reports each outcome (status, body, a header, or
//!   the error `fetch` threw) to its own origin; the test waits for them within a bound.
//!
//! Chromium is `MCP_KERNEL_CHROMIUM` (else `/usr/bin/chromium`). The tests are ignored by default and
//! run by `cargo xtask edge`; when run, a Chromium that does not start, load the page or report in
//! time fails the test, never passes it.

mod support;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fs::File;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, ORIGIN};
use http::request::Parts;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::{JoinHandle, JoinSet};
use tower::ServiceExt as _;

use mcp_kernel_http::{AllowedOrigins, McpHttp, ProtectedResource, Refused};
use support::{headers_for, request, server, with};

/// The variable naming the Chromium binary.
const CHROMIUM_VAR: &str = "MCP_KERNEL_CHROMIUM";
/// The Chromium binary when the variable is not set.
const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";
/// The bound of one test, Chromium's start included.
const TEST_BOUND: Duration = Duration::from_secs(50);
/// The bound from Chromium's launch to the page's last report.
const PAGE_BOUND: Duration = Duration::from_secs(30);
/// How often the wait for reports checks that Chromium is still running.
const POLL: Duration = Duration::from_millis(100);
/// The one token the hook admits.
const TOKEN: &str = "Bearer browser-token";
/// The page every page server serves.
const PAGE: &str = include_str!("browser/page.html");
/// The `Mcp-*` request headers the `tools/call` carries (besides the safelisted ones).
const CALL_HEADERS: [&str; 7] = [
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-param-region",
    "mcp-param-limit",
    "mcp-param-exact",
    "mcp-param-owner",
];

/// Locks `mutex`, a poisoned one included (a failed assertion elsewhere must not hide the ledger).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The header fields of a map, names lowercased, in order.
fn fields(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect()
}

// ---------------------------------------------------------------------------------------------------
// The endpoint and what it saw
// ---------------------------------------------------------------------------------------------------

/// One request the endpoint received, and what it answered.
#[derive(Debug, Clone)]
struct Exchange {
    method: Method,
    /// The request's header fields, names lowercased, in order.
    request: Vec<(String, String)>,
    status: StatusCode,
    /// The response's header fields, names lowercased, in order.
    response: Vec<(String, String)>,
}

impl Exchange {
    fn request_header(&self, name: &str) -> Option<&str> {
        self.request.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn response_header(&self, name: &str) -> Option<&str> {
        self.response.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn origin(&self) -> Option<&str> {
        self.request_header("origin")
    }
}

/// What the endpoint saw: every exchange (from the wrapper) and the POSTs per `Origin` (from the hook).
#[derive(Debug, Clone, Default)]
struct Ledger {
    exchanges: Arc<Mutex<Vec<Exchange>>>,
    hook_posts: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl Ledger {
    /// The exchanges with `method` from `origin`.
    fn from(&self, method: &Method, origin: &str) -> Vec<Exchange> {
        lock(&self.exchanges)
            .iter()
            .filter(|e| e.method == method && e.origin() == Some(origin))
            .cloned()
            .collect()
    }

    /// How many POSTs the hook saw with `origin`.
    fn hook_posts(&self, origin: &str) -> usize {
        lock(&self.hook_posts).get(origin).copied().unwrap_or(0)
    }

    /// Every exchange, one per line block, for the test's output.
    fn describe(&self) -> String {
        let mut out = String::new();
        for e in lock(&self.exchanges).iter() {
            out.push_str(&format!("-> {}\n", e.method));
            for (n, v) in &e.request {
                out.push_str(&format!("     {n}: {v}\n"));
            }
            out.push_str(&format!("<- {}\n", e.status));
            for (n, v) in &e.response {
                out.push_str(&format!("     {n}: {v}\n"));
            }
        }
        out.push_str(&format!("hook POSTs per origin: {:?}\n", lock(&self.hook_posts)));
        out
    }
}

/// The endpoint on 127.0.0.1, stopped when dropped.
struct Endpoint {
    addr: SocketAddr,
    /// The endpoint as an OAuth protected resource: its challenges name the metadata URL.
    resource: ProtectedResource,
    stop: Option<oneshot::Sender<()>>,
    _task: JoinHandle<std::io::Result<()>>,
}

impl Endpoint {
    /// The fixture server admitting `origins`, behind the bearer-token hook and the recording wrapper.
    async fn start(origins: AllowedOrigins, ledger: &Ledger) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("the bound address");
        let resource = ProtectedResource::new(&format!("http://{addr}/mcp"), ["http://127.0.0.1:9000"])
            .expect("a resource URL");
        let counts = Arc::clone(&ledger.hook_posts);
        let service = McpHttp::builder(server())
            .allowed_origins(origins)
            .protected_resource(resource.clone())
            .authorize(move |parts: &Parts| {
                if parts.method == Method::POST {
                    let origin = parts
                        .headers
                        .get(ORIGIN)
                        .map_or("(none)".into(), |v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                    *lock(&counts).entry(origin).or_insert(0) += 1;
                }
                match parts.headers.get(AUTHORIZATION) {
                    Some(value) if value.as_bytes() == TOKEN.as_bytes() => Ok(()),
                    _ => Err(Refused::unauthenticated("no token")),
                }
            })
            .build();
        let exchanges = Arc::clone(&ledger.exchanges);
        let recording = tower::service_fn(move |request: Request<Incoming>| {
            let (service, exchanges) = (service.clone(), Arc::clone(&exchanges));
            async move {
                let method = request.method().clone();
                let seen = fields(request.headers());
                let response = service.oneshot(request).await?;
                lock(&exchanges).push(Exchange {
                    method,
                    request: seen,
                    status: response.status(),
                    response: fields(response.headers()),
                });
                Ok::<_, Infallible>(response)
            }
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(mcp_kernel_http::serve(listener, recording, async move {
            let _ = stopped.await;
        }));
        Self { addr, resource, stop: Some(stop), _task: task }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// The page servers
// ---------------------------------------------------------------------------------------------------

/// One page origin on 127.0.0.1: `GET /page`, `GET /plan`, `POST /report`. Stopped when dropped.
struct PageServer {
    origin: String,
    plan: Arc<Mutex<Value>>,
    loads: Arc<AtomicUsize>,
    reports: mpsc::UnboundedReceiver<Value>,
    task: JoinHandle<()>,
}

impl PageServer {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let origin = format!("http://{}", listener.local_addr().expect("the bound address"));
        let plan = Arc::new(Mutex::new(Value::Null));
        let loads = Arc::new(AtomicUsize::new(0));
        let (tx, reports) = mpsc::unbounded_channel();
        let (plan_, loads_) = (Arc::clone(&plan), Arc::clone(&loads));
        let task = tokio::spawn(async move {
            // Dropped with the accept loop: aborts every connection still open.
            let mut connections = JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else { break };
                let (plan, loads, tx) = (Arc::clone(&plan_), Arc::clone(&loads_), tx.clone());
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let (plan, loads, tx) = (Arc::clone(&plan), Arc::clone(&loads), tx.clone());
                    async move { Ok::<_, Infallible>(page_answer(request, &plan, &loads, &tx).await) }
                });
                connections.spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
                while connections.try_join_next().is_some() {}
            }
        });
        Self { origin, plan, loads, reports, task }
    }

    fn page_url(&self) -> String {
        format!("{}/page", self.origin)
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn page_answer(
    request: Request<Incoming>,
    plan: &Mutex<Value>,
    loads: &AtomicUsize,
    reports: &mpsc::UnboundedSender<Value>,
) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, content_type: &'static str, body: Bytes| {
        let mut response = Response::new(Full::new(body));
        *response.status_mut() = status;
        response.headers_mut().insert(CONTENT_TYPE, content_type.parse().expect("a content type"));
        response.headers_mut().insert("cache-control", "no-store".parse().expect("a value"));
        response
    };
    match (request.method().clone(), request.uri().path()) {
        (Method::GET, "/page") => {
            loads.fetch_add(1, Ordering::SeqCst);
            reply(StatusCode::OK, "text/html; charset=utf-8", Bytes::from_static(PAGE.as_bytes()))
        }
        (Method::GET, "/plan") => {
            let plan = serde_json::to_vec(&*lock(plan)).expect("JSON");
            reply(StatusCode::OK, "application/json", Bytes::from(plan))
        }
        (Method::POST, "/report") => {
            let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let report = serde_json::from_slice(&body)
                .unwrap_or_else(|_| json!({"step": "unreadable", "text": String::from_utf8_lossy(&body)}));
            let _ = reports.send(report);
            reply(StatusCode::NO_CONTENT, "text/plain", Bytes::new())
        }
        _ => reply(StatusCode::NOT_FOUND, "text/plain", Bytes::from_static(b"not here")),
    }
}

// ---------------------------------------------------------------------------------------------------
// The plan: what the page sends
// ---------------------------------------------------------------------------------------------------

/// The arguments of the `tools/call`: every annotated property of `search`, and one that is not.
fn search_arguments() -> Value {
    json!({"region": "eu", "limit": 3, "exact": true, "filter": {"owner": "ann"}, "note": "from a browser"})
}

/// A header map as the JSON object `fetch` takes.
fn header_object(headers: &HeaderMap) -> Value {
    let mut object = Map::new();
    for (name, value) in headers {
        let value = value.to_str().expect("the plan's headers are ASCII");
        assert!(object.insert(name.as_str().to_owned(), Value::from(value)).is_none(), "one value per name");
    }
    Value::Object(object)
}

/// The two requests: `call` (the token, the standard headers and the `Mcp-Param-*` headers that
/// `search`'s annotations require, agreeing with the body) and `unauthorized` (`tools/list`, no token;
/// the page reads its `www-authenticate`).
fn plan(endpoint: &str) -> Value {
    let call = request(1, "tools/call", json!({"name": "search", "arguments": search_arguments()}));
    let mut headers = with(headers_for(&call), "authorization", TOKEN.as_bytes());
    for (name, value) in [
        ("mcp-param-region", "eu"),
        ("mcp-param-limit", "3"),
        ("mcp-param-exact", "true"),
        ("mcp-param-owner", "ann"),
    ] {
        headers = with(headers, name, value.as_bytes());
    }
    let list = request(2, "tools/list", json!({}));
    json!({
        "endpoint": endpoint,
        "requests": [
            {"step": "call", "headers": header_object(&headers), "body": call, "read": null},
            {"step": "unauthorized", "headers": header_object(&headers_for(&list)), "body": list,
             "read": "www-authenticate"},
        ]
    })
}

// ---------------------------------------------------------------------------------------------------
// Chromium
// ---------------------------------------------------------------------------------------------------

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
async fn run_page(page: &mut PageServer, endpoint: &Endpoint) -> BTreeMap<String, Value> {
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

/// Runs `test` within [`TEST_BOUND`].
async fn bounded<F: std::future::Future>(test: F) -> F::Output {
    let started = Instant::now();
    let output =
        tokio::time::timeout(TEST_BOUND, test).await.expect("the test did not finish within its bound");
    eprintln!("the test took {:?}", started.elapsed());
    output
}

// ---------------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------------

/// From a listed origin, Chromium's preflight is granted, the `tools/call` goes through with every
/// `Mcp-*` header and its result reaches the script, and a 401's challenge is readable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: run by cargo xtask edge"]
async fn a_browser_on_an_allowed_origin_calls_a_tool_with_the_mcp_headers() {
    bounded(async {
        let mut page = PageServer::start().await;
        let ledger = Ledger::default();
        let endpoint = Endpoint::start(AllowedOrigins::list([page.origin.clone()]), &ledger).await;
        let got = run_page(&mut page, &endpoint).await;
        eprintln!("the endpoint saw:\n{}", ledger.describe());
        let origin = page.origin.as_str();

        // The browser asked first, for POST and every `Mcp-*` header, and was granted.
        let preflights = ledger.from(&Method::OPTIONS, origin);
        assert!(!preflights.is_empty(), "no preflight reached the endpoint:\n{}", ledger.describe());
        let first = &preflights[0];
        assert_eq!(first.request_header("access-control-request-method"), Some("POST"), "{first:#?}");
        let asked = first.request_header("access-control-request-headers").unwrap_or_default();
        let asked: Vec<&str> = asked.split(',').map(str::trim).collect();
        for name in CALL_HEADERS.iter().chain(&["authorization", "content-type"]) {
            assert!(asked.contains(name), "the preflight did not ask for {name}: {first:#?}");
        }
        assert!(first.status.is_success(), "the preflight was refused: {first:#?}");
        assert_eq!(first.response_header("access-control-allow-origin"), Some(origin), "{first:#?}");

        // The call went through, the headers agreeing with the body, and its result reached the script.
        let call = &got["call"];
        assert_eq!(call["ok"], true, "the browser blocked the tools/call: {call:#}");
        assert_eq!(call["status"], 200, "{call:#}");
        assert_eq!(call["body"]["id"], 1, "{call:#}");
        assert_eq!(call["body"]["result"]["structuredContent"], search_arguments(), "{call:#}");

        // The 401's `www-authenticate` was readable by the script.
        let refused = &got["unauthorized"];
        assert_eq!(refused["ok"], true, "the browser hid the 401 from the script: {refused:#}");
        assert_eq!(refused["status"], 401, "{refused:#}");
        let challenge = refused["read"].as_str().unwrap_or_else(|| {
            panic!("www-authenticate was not readable (access-control-expose-headers): {refused:#}")
        });
        let expected = format!("Bearer resource_metadata=\"{}\"", endpoint.resource.metadata_url());
        assert_eq!(challenge, expected, "{refused:#}");

        // Both POSTs were sent, with the page's origin, and reached the hook.
        assert_eq!(ledger.from(&Method::POST, origin).len(), 2, "{}", ledger.describe());
        assert_eq!(ledger.hook_posts(origin), 2, "{}", ledger.describe());
    })
    .await;
}

/// From an origin that is not listed, only the preflight reaches the endpoint, it is not granted, and
/// the browser never sends the POSTs: the script sees a `TypeError`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: run by cargo xtask edge"]
async fn a_browser_on_a_foreign_origin_is_blocked_before_its_request_is_sent() {
    bounded(async {
        let allowed = PageServer::start().await;
        let mut foreign = PageServer::start().await;
        let ledger = Ledger::default();
        let endpoint = Endpoint::start(AllowedOrigins::list([allowed.origin.clone()]), &ledger).await;
        let got = run_page(&mut foreign, &endpoint).await;
        eprintln!("the endpoint saw:\n{}", ledger.describe());
        let origin = foreign.origin.as_str();

        // The script saw only the browser's refusal, for both requests.
        for step in ["call", "unauthorized"] {
            let outcome = &got[step];
            assert_eq!(outcome["ok"], false, "{step} was not blocked: {outcome:#}");
            assert_eq!(outcome["error"]["name"], "TypeError", "{step}: {outcome:#}");
        }

        // The browser asked, the endpoint did not grant the origin, and no POST was ever sent.
        let preflights = ledger.from(&Method::OPTIONS, origin);
        assert!(!preflights.is_empty(), "no preflight reached the endpoint:\n{}", ledger.describe());
        for preflight in &preflights {
            assert_eq!(preflight.response_header("access-control-allow-origin"), None, "{preflight:#?}");
        }
        // The wrapper is the witness: the Origin check runs before the hook, so the hook's count would
        // stay 0 even had the browser sent the POST.
        assert!(ledger.from(&Method::POST, origin).is_empty(), "a POST was sent:\n{}", ledger.describe());
        assert_eq!(ledger.hook_posts(origin), 0, "{}", ledger.describe());
        assert!(
            lock(&ledger.exchanges).iter().all(|e| e.method == Method::OPTIONS),
            "only preflights reached the endpoint:\n{}",
            ledger.describe()
        );
    })
    .await;
}
