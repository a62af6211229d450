//! rmcp's Streamable HTTP client against the weather catalog served in-process by `mcp-kernel-http` on
//! 127.0.0.1 (an ephemeral port), with every exchange recorded by a wrapper around the service.

mod common;

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use common::{Transcript, exercise, step};
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use mcp_kernel_http::{AllowedOrigins, LegacyClients, McpHttp, serve};
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tower::ServiceExt as _;

/// The client's name on the wire.
fn client_config() -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("rmcp-interop", "0.0.0"))
}

/// One recorded HTTP exchange: the request as received and the response as sent.
#[derive(Debug)]
struct Exchange {
    /// `POST /mcp`, `GET /mcp`, ...
    request_line: String,
    /// Every request header, in order, names lowercased.
    request_headers: Vec<(String, String)>,
    /// The request body.
    request_body: Value,
    /// The status code.
    status: u16,
    /// The response body as text.
    response_body: String,
}

impl Exchange {
    /// The value of one request header (the first, if repeated).
    fn header(&self, name: &str) -> Option<&str> {
        self.request_headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// The HTTP exchanges of one test, shared between the server wrapper and the test.
#[derive(Clone, Default)]
struct Exchanges(std::sync::Arc<std::sync::Mutex<Vec<Exchange>>>);

impl Exchanges {
    /// Appends one exchange, also to the printed transcript.
    fn push(&self, exchange: Exchange, log: &Transcript) {
        let headers: Vec<String> =
            exchange.request_headers.iter().map(|(n, v)| format!("{n}: {v}")).collect();
        log.push(format!(
            "-> {}\n   {}\n   {}\n<- {} {}",
            exchange.request_line,
            headers.join("\n   "),
            exchange.request_body,
            exchange.status,
            exchange.response_body
        ));
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(exchange);
    }

    /// Runs `f` over every exchange so far.
    fn with<T>(&self, f: impl FnOnce(&[Exchange]) -> T) -> T {
        f(&self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

/// A running server: its address and the way to stop it.
struct Running {
    /// Where it listens (127.0.0.1, an ephemeral port).
    addr: SocketAddr,
    /// Dropping or firing this stops `serve`.
    stop: Option<oneshot::Sender<()>>,
    /// The serve task.
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// The MCP endpoint.
    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops the server and waits (bounded) for `serve` to return.
    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let served = step("server shutdown", self.task).await;
        served.expect("serve returned an error");
    }
}

/// Starts the weather catalog on 127.0.0.1:0 behind a wrapper that records every exchange, with the
/// service's defaults.
async fn start(exchanges: &Exchanges, log: &Transcript) -> Running {
    start_with(exchanges, log, LegacyClients::default()).await
}

/// [`start`], with what the service does with `2025-11-25` clients.
async fn start_with(exchanges: &Exchanges, log: &Transcript, legacy: LegacyClients) -> Running {
    let server = mcp_kernel_rmcp_tests::weather_server().expect("weather server builds");
    let service = McpHttp::builder(server)
        .allowed_origins(AllowedOrigins::any())
        .authorize(|_| Ok(()))
        .legacy_clients(legacy)
        .build();
    let (exchanges, log) = (exchanges.clone(), log.clone());
    let recording = tower::service_fn(move |request: Request<Incoming>| {
        let (service, exchanges, log) = (service.clone(), exchanges.clone(), log.clone());
        async move {
            let (parts, body) = request.into_parts();
            let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let request_line = format!("{} {}", parts.method, parts.uri);
            let request_headers = parts
                .headers
                .iter()
                .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect();
            let request_body = serde_json::from_slice(&body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
            let response = service.oneshot(Request::from_parts(parts, Full::new(body))).await?;
            let (parts, body) = response.into_parts();
            let body: Bytes = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let exchange = Exchange {
                request_line,
                request_headers,
                request_body,
                status: parts.status.as_u16(),
                response_body: String::from_utf8_lossy(&body).into_owned(),
            };
            exchanges.push(exchange, &log);
            Ok::<_, Infallible>(Response::from_parts(parts, Full::new(body)))
        }
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("bound address");
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, recording, async move {
        let _ = stopped.await;
    }));
    Running { addr, stop: Some(stop), task }
}

/// rmcp's Streamable HTTP transport over a reqwest client that never uses a proxy.
fn transport(url: String) -> StreamableHttpClientTransport<reqwest::Client> {
    let client = reqwest::Client::builder().no_proxy().build().expect("reqwest client");
    StreamableHttpClientTransport::with_client(client, StreamableHttpClientTransportConfig::with_uri(url))
}

/// Checks that every POST carried the 2026-07-28 standard headers, agreeing with its body.
fn assert_standard_headers(exchanges: &[Exchange]) {
    assert!(!exchanges.is_empty());
    for exchange in exchanges {
        assert_eq!(exchange.request_line, "POST /mcp", "{exchange:?}");
        assert_eq!(exchange.header("mcp-protocol-version"), Some("2026-07-28"), "{exchange:?}");
        assert_eq!(exchange.header("mcp-session-id"), None, "{exchange:?}");
        let method = exchange.request_body["method"].as_str().expect("a method");
        assert_eq!(exchange.header("mcp-method"), Some(method), "{exchange:?}");
        let params = &exchange.request_body["params"];
        let name = match method {
            "tools/call" | "prompts/get" => params["name"].as_str(),
            "resources/read" => params["uri"].as_str(),
            _ => None,
        };
        assert_eq!(exchange.header("mcp-name"), name, "{exchange:?}");
        if exchange.request_body.get("id").is_some() {
            let meta = &params["_meta"];
            assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{exchange:?}");
            assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object(), "{exchange:?}");
        }
        assert_eq!(exchange.status, 200, "{exchange:?}");
    }
}

/// `server/discover`, then every step of the catalog walk, statelessly over HTTP (2026-07-28).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_2026_07_28_over_http() {
    let (exchanges, log) = (Exchanges::default(), Transcript::default());
    let _print = log.print_on_drop("http, server/discover, 2026-07-28");
    let running = start(&exchanges, &log).await;
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client =
        step("discover", client_config().serve_with_lifecycle(transport(running.url()), lifecycle)).await;
    let info = client.peer_info().expect("discovered server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);

    exercise(&client).await;

    step("client shutdown", async { client.cancel().await.map(drop) }).await;
    exchanges.with(|all| {
        assert_eq!(all[0].request_body["method"], "server/discover", "{:?}", all[0]);
        assert_standard_headers(all);
    });
    running.stop().await;
}

/// rmcp's `Auto` lifecycle: the `server/discover` probe succeeds, so it never falls back to `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_lifecycle_over_http() {
    let (exchanges, log) = (Exchanges::default(), Transcript::default());
    let _print = log.print_on_drop("http, auto lifecycle");
    let running = start(&exchanges, &log).await;
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    let client =
        step("auto lifecycle", client_config().serve_with_lifecycle(transport(running.url()), lifecycle))
            .await;
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);

    exercise(&client).await;

    step("client shutdown", async { client.cancel().await.map(drop) }).await;
    exchanges.with(assert_standard_headers);
    running.stop().await;
}

/// rmcp's plain `serve` posts a legacy `initialize` (no version header): by default the endpoint
/// serves it statelessly, negotiating `2025-11-25`, and every step of the catalog walk follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_initialize_over_http_is_served_statelessly_by_default() {
    let (exchanges, log) = (Exchanges::default(), Transcript::default());
    let _print = log.print_on_drop("http, rmcp default serve() (legacy initialize), default service");
    let running = start(&exchanges, &log).await;
    let client = step("legacy initialize", client_config().serve(transport(running.url()))).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);

    exercise(&client).await;

    step("client shutdown", async { client.cancel().await.map(drop) }).await;
    exchanges.with(|all| {
        assert_eq!(all[0].request_body["method"], "initialize", "{:?}", all[0]);
        assert_eq!(all[0].header("mcp-protocol-version"), None, "{:?}", all[0]);
        assert_eq!(all[0].status, 200, "{:?}", all[0]);
        for exchange in all.iter().filter(|e| e.request_line == "POST /mcp") {
            assert_eq!(exchange.header("mcp-session-id"), None, "no session was issued: {exchange:?}");
            assert!(exchange.status == 200 || exchange.status == 202, "{exchange:?}");
        }
    });
    running.stop().await;
}

/// rmcp's plain `serve` against a host that refuses legacy clients (`LegacyClients::Refused`, serving
/// 2026-07-28 only): the client must get a clean refusal (an error, promptly) naming the served
/// revision, never a hang or a half-open session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_initialize_over_http_is_refused_where_the_host_refuses_legacy_clients() {
    let (exchanges, log) = (Exchanges::default(), Transcript::default());
    let _print = log.print_on_drop("http, rmcp default serve() (legacy initialize), legacy refused");
    let running = start_with(&exchanges, &log, LegacyClients::Refused).await;
    let outcome = tokio::time::timeout(common::STEP, client_config().serve(transport(running.url()))).await;
    let outcome = outcome.expect("the refusal arrives before the step deadline");
    match outcome {
        Ok(_) => panic!("initialize over the stateless endpoint must fail"),
        Err(error) => log.push(format!("rmcp reports: {error}")),
    }
    exchanges.with(|all| {
        assert_eq!(all.len(), 1, "{all:?}");
        assert_eq!(all[0].request_body["method"], "initialize", "{:?}", all[0]);
        assert_eq!(all[0].header("mcp-protocol-version"), None, "{:?}", all[0]);
        assert_eq!(all[0].status, 400, "{:?}", all[0]);
        // The refusal names the served revision, so a legacy client can tell what it reached.
        let body: Value = serde_json::from_str(&all[0].response_body).expect("a JSON-RPC error body");
        // rmcp asks `initialize` for 2026-07-28 with no header: the header is what is missing.
        assert_eq!(body["error"]["code"], -32020, "{body}");
        assert_eq!(body["error"]["data"]["supported"], serde_json::json!(["2026-07-28"]), "{body}");
    });
    running.stop().await;
}
