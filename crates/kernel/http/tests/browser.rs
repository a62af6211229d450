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
//!
//! The harness lives in `browser/`: `endpoint.rs` (the endpoint and its ledger), `pages.rs` (the page
//! servers and the plan) and `chromium.rs` (the browser and the wait for the reports).

#[path = "browser/chromium.rs"]
mod chromium;
#[path = "browser/endpoint.rs"]
mod endpoint;
#[path = "browser/pages.rs"]
mod pages;
#[path = "integration/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use http::Method;

use mcp_kernel_http::AllowedOrigins;

use chromium::run_page;
use endpoint::{Endpoint, Ledger, lock};
use pages::{PageServer, search_arguments};

/// The bound of one test, Chromium's start included.
const TEST_BOUND: Duration = Duration::from_secs(50);

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
