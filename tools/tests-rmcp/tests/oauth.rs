//! rmcp's OAuth client against an mcp-kernel HTTP endpoint acting as an OAuth protected resource,
//! with a real authorization server: `oidc-provider` (`tools/tests-rmcp/auth-server`, Node 22) issuing
//! opaque client-credentials tokens bound to a resource (RFC 8707) and answering introspection
//! (RFC 7662).
//!
//! The resource server is the host's `authorize_async` hook: it reads the bearer token, introspects
//! it at the authorization server, refuses it (401 `invalid_token`) when it is not active or its
//! audience is not this endpoint, and admits the caller as a [`Principal`] the tool reads back.
//! rmcp starts with no token, follows our 401's `resource_metadata` to the protected resource
//! metadata document and on to the authorization server, obtains a token, and calls the tool.
//!
//! Ignored in the ordinary run (they need Node 22 and the server's npm packages); `cargo xtask edge
//! oauth` installs both and runs them with `MCP_KERNEL_NODE` and `MCP_KERNEL_AUTH_SERVER_DIR` set.
//! Everything binds 127.0.0.1; every wait is bounded, each test by [`WHOLE_TEST`].

// The shared catalog walk is not used here, only its bounded steps and transcript.
#[allow(dead_code)]
mod common;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Transcript, step, to_json};
use http::request::Parts;
use http::{Request, Response};
use mcp_kernel::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_http::{AllowedOrigins, McpHttp, ProtectedResource, Refused, bearer_token, serve};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadataSource, ClientCredentialsConfig,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, StreamableHttpClient, StreamableHttpClientTransportConfig,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use tower::ServiceExt as _;

/// The longest any one test may take, from spawning the authorization server to stopping everything.
const WHOLE_TEST: Duration = Duration::from_secs(60);
/// How long the authorization server may take to print its address.
const AUTH_SERVER_START: Duration = Duration::from_secs(20);
/// The scope the endpoint wants, and the only one the authorization server grants.
const SCOPE: &str = "notes";
/// The resource server's own client at the authorization server: it may introspect.
const INTROSPECTION_CLIENT: (&str, &str) = ("notes-resource", "resource-secret");

/// Runs a test body under [`WHOLE_TEST`].
async fn bounded(body: impl Future<Output = ()>) {
    if tokio::time::timeout(WHOLE_TEST, body).await.is_err() {
        panic!("the test did not finish within {WHOLE_TEST:?}");
    }
}

/// An environment variable the test cannot run without; a missing one fails the test, it never
/// passes silently.
fn required(name: &str) -> PathBuf {
    match std::env::var_os(name) {
        Some(value) if !value.is_empty() => PathBuf::from(value),
        _ => panic!(
            "{name} is not set: this test needs Node.js 22 (MCP_KERNEL_NODE) and tools/tests-rmcp/auth-server with \
             its npm packages installed (MCP_KERNEL_AUTH_SERVER_DIR); run it with `cargo xtask edge oauth`"
        ),
    }
}

/// A reqwest client that never uses a proxy (the endpoints are all on 127.0.0.1).
fn http_client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().timeout(common::STEP).build().expect("reqwest client")
}

/// The running `oidc-provider`, killed when dropped, whatever happened.
struct AuthServer {
    /// The child process.
    child: Child,
    /// `http://127.0.0.1:<port>`, exactly as the server's metadata names it.
    issuer: String,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl AuthServer {
    /// Spawns `node server.mjs` on a free port and waits (bounded) for its address.
    async fn start() -> AuthServer {
        let node = required("MCP_KERNEL_NODE");
        let dir = required("MCP_KERNEL_AUTH_SERVER_DIR");
        let installed = dir.join("node_modules/oidc-provider/package.json");
        assert!(
            installed.is_file(),
            "{} is missing: install the server's packages (`npm ci --prefix {}`, or `cargo xtask edge oauth`)",
            installed.display(),
            dir.display()
        );
        let mut child = Command::new(&node)
            .arg("server.mjs")
            .current_dir(&dir)
            .env("PORT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {} server.mjs in {}: {e}", node.display(), dir.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        let read = tokio::time::timeout(AUTH_SERVER_START, BufReader::new(stdout).read_line(&mut line)).await;
        let mut server = AuthServer { child, issuer: String::new() };
        match read {
            Ok(Ok(n)) if n > 0 => {}
            Ok(_) => panic!("the authorization server exited before printing its address"),
            Err(_) => panic!("the authorization server printed no address within {AUTH_SERVER_START:?}"),
        }
        let issuer = line.trim().strip_prefix("listening ");
        server.issuer = issuer.unwrap_or_else(|| panic!("unexpected first line {line:?}")).to_owned();
        assert!(server.issuer.starts_with("http://127.0.0.1:"), "{}", server.issuer);
        server
    }

    /// The authorization server's metadata (RFC 8414), which names its introspection endpoint.
    async fn metadata(&self, http: &reqwest::Client) -> Value {
        let url = format!("{}/.well-known/oauth-authorization-server", self.issuer);
        let response = step("authorization server metadata", http.get(&url).send()).await;
        assert_eq!(response.status(), 200, "{url}");
        let metadata: Value = step("authorization server metadata body", response.json()).await;
        assert_eq!(metadata["issuer"], self.issuer.as_str(), "{metadata}");
        metadata
    }
}

/// Who the resource server admitted: the client the token was issued to, and its granted scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Principal {
    /// `client_id` of the introspection response.
    client_id: String,
    /// `scope` of the introspection response, split.
    scopes: Vec<String>,
}

/// The client the kernel charges a request's body to is the OAuth client, whatever scopes its token
/// carries this time.
impl std::hash::Hash for Principal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.client_id.hash(state);
    }
}

/// The resource server's side: token introspection at the authorization server, then the checks.
struct Introspector {
    /// The client for the introspection calls.
    http: reqwest::Client,
    /// The authorization server's introspection endpoint.
    endpoint: String,
    /// This endpoint as a protected resource: the audience its tokens must name.
    resource: ProtectedResource,
}

impl Introspector {
    /// What the authorization server says about `token` (RFC 7662 §2.2).
    async fn introspect(&self, token: &str) -> Result<Value, String> {
        let (id, secret) = INTROSPECTION_CLIENT;
        let request = self.http.post(&self.endpoint).basic_auth(id, Some(secret)).form(&[("token", token)]);
        let response = request.send().await.map_err(|e| format!("introspection: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("introspection answered {}", response.status()));
        }
        response.json().await.map_err(|e| format!("introspection body: {e}"))
    }

    /// The `authorize_async` decision for one request's bearer token.
    async fn admit(&self, token: &str) -> Result<Principal, Refused> {
        // Without an answer from the authorization server nothing is admitted: 503, retry (logged).
        let answer = self.introspect(token).await.map_err(Refused::unavailable)?;
        if answer["active"] != json!(true) {
            return Err(Refused::invalid_token("the token is not active").with_scope([SCOPE]));
        }
        // MCP forbids token passthrough: a token issued for another resource is refused here.
        if !self.resource.is_audience(&answer["aud"]) {
            return Err(
                Refused::invalid_token(format!("the token is for {}", answer["aud"])).with_scope([SCOPE])
            );
        }
        let scopes: Vec<String> =
            answer["scope"].as_str().unwrap_or_default().split_whitespace().map(str::to_owned).collect();
        if !scopes.iter().any(|scope| scope == SCOPE) {
            return Err(Refused::insufficient_scope([SCOPE], "the token lacks the notes scope"));
        }
        let client_id = answer["client_id"].as_str().ok_or_else(|| Refused::invalid_token("no client_id"))?;
        Ok(Principal { client_id: client_id.to_owned(), scopes })
    }
}

/// `whoami` answers with the principal the transport attached.
async fn whoami(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let principal = call.context.principal::<Principal>().ok_or_else(|| ToolError::new("no principal"))?;
    ToolOutput::json(&json!({"client_id": principal.client_id, "scopes": principal.scopes}))
}

fn server() -> Server {
    let catalog = Listing { tools: vec![ToolSpec::new("whoami", Mode::ReadOnly)], ..Listing::default() };
    Server::builder(catalog).dispatch(whoami).build().expect("the whoami catalog builds")
}

/// The resource server: the MCP endpoint and its protected resource metadata, on 127.0.0.1:0.
struct ResourceServer {
    /// Where it listens.
    addr: SocketAddr,
    /// The description both the challenges and the audience check derive from.
    resource: ProtectedResource,
    /// The same introspection the hook runs, for the test's own checks.
    introspector: Arc<Introspector>,
    /// Dropping or firing this stops `serve`.
    stop: Option<oneshot::Sender<()>>,
    /// The serve task.
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl ResourceServer {
    /// The MCP endpoint, which is also the resource identifier.
    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Serves `whoami` behind introspection at `auth`, recording every exchange in `log`.
    async fn start(auth: &AuthServer, log: &Transcript) -> ResourceServer {
        let http = http_client();
        let metadata = auth.metadata(&http).await;
        let endpoint =
            metadata["introspection_endpoint"].as_str().expect("an introspection endpoint").to_owned();
        // The identifier names the port, so the listener is bound first.
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("bound address");
        let resource = ProtectedResource::new(&format!("http://{addr}/mcp"), [auth.issuer.as_str()])
            .expect("a valid resource identifier")
            .scopes_supported([SCOPE]);
        let introspector = Arc::new(Introspector { http, endpoint, resource: resource.clone() });
        let hook = Arc::clone(&introspector);
        let service = McpHttp::builder(server())
            .allowed_origins(AllowedOrigins::any())
            .protected_resource(resource.clone())
            .authorize_async(move |parts: &Parts| {
                let token = bearer_token(parts).map(str::to_owned);
                let introspector = Arc::clone(&hook);
                async move { introspector.admit(&token?).await }
            })
            .build();
        let app = axum::Router::new()
            .route_service("/mcp", service)
            .route_service(resource.metadata_path(), resource.metadata_service());
        let log = log.clone();
        let recording = tower::service_fn(move |request: Request<hyper::body::Incoming>| {
            let (app, log) = (app.clone(), log.clone());
            async move {
                let line = format!(
                    "{} {} (authorization: {})",
                    request.method(),
                    request.uri(),
                    request.headers().get("authorization").map_or("none", |_| "Bearer …")
                );
                let response = app.oneshot(request).await?;
                let challenge = response
                    .headers()
                    .get("www-authenticate")
                    .map(|v| format!(" www-authenticate: {}", String::from_utf8_lossy(v.as_bytes())))
                    .unwrap_or_default();
                log.push(format!("resource server: {line} -> {}{challenge}", response.status().as_u16()));
                Ok::<Response<axum::body::Body>, Infallible>(response)
            }
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(listener, recording, async move {
            let _ = stopped.await;
        }));
        ResourceServer { addr, resource, introspector, stop: Some(stop), task }
    }

    /// Stops the server and waits (bounded) for `serve` to return.
    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        step("resource server shutdown", self.task).await.expect("serve returned an error");
    }
}

fn client_config() -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("rmcp-oauth-interop", "0.0.0"))
}

fn discover() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

/// The `WWW-Authenticate` challenge of a connection refused 401, as rmcp reports it
/// (`StreamableHttpError::AuthRequired`, whose [`AuthRequiredError`] carries the header).
fn challenge_of(error: &ClientInitializeError) -> String {
    let ClientInitializeError::TransportError { error: transport, .. } = error else {
        panic!("expected a transport error carrying our 401, got {error:?}")
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(transport.error.as_ref());
    while let Some(current) = source {
        if let Some(required) = current.downcast_ref::<AuthRequiredError>() {
            return required.www_authenticate_header.clone();
        }
        source = current.source();
    }
    panic!("expected rmcp's AuthRequired (a 401 with a challenge), got {error:?}")
}

/// Connects with rmcp over `client`, expecting our 401: the challenge rmcp surfaced.
async fn refused<C>(
    what: &str,
    client: C,
    config: StreamableHttpClientTransportConfig,
    log: &Transcript,
) -> String
where
    C: StreamableHttpClient + Send + Sync + 'static,
{
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let connecting = client_config().serve_with_lifecycle(transport, discover());
    let error = match tokio::time::timeout(common::STEP, connecting).await {
        Err(_) => panic!("{what}: no refusal within {:?}", common::STEP),
        Ok(Ok(_)) => panic!("{what}: the connection was admitted"),
        Ok(Err(error)) => error,
    };
    let challenge = challenge_of(&error);
    log.push(format!("rmcp ({what}): {error} — {challenge}"));
    challenge
}

/// Connects with rmcp over `client`, calls `whoami`, and returns what the tool saw.
async fn whoami_over<C>(what: &str, client: C, config: StreamableHttpClientTransportConfig) -> Value
where
    C: StreamableHttpClient + Send + Sync + 'static,
{
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let client: rmcp::service::RunningService<RoleClient, _> =
        step(what, client_config().serve_with_lifecycle(transport, discover())).await;
    let info = client.peer_info().expect("discovered server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    let called =
        to_json(&step("tools/call whoami", client.call_tool(CallToolRequestParams::new("whoami"))).await);
    assert_ne!(called["isError"], json!(true), "{called}");
    step("client shutdown", async { client.cancel().await.map(drop) }).await;
    called["structuredContent"].clone()
}

/// rmcp with no token at all: its `AuthClient` sends the request unauthenticated and surfaces our
/// 401's challenge, which names our metadata document and no error (RFC 6750 §3.1).
async fn first_challenge(rs: &ResourceServer, log: &Transcript) -> String {
    let url = rs.url();
    let manager = step("AuthorizationManager::new", AuthorizationManager::new(url.as_str())).await;
    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
    let challenge = refused("no token", AuthClient::new(http_client(), manager), config, log).await;
    assert_challenge(&challenge, &rs.resource, None);
    challenge
}

/// An rmcp authorization manager for `endpoint`, set up from the 401 `challenge` alone: it follows
/// `resource_metadata` to our document, and the document to the authorization server.
async fn manager_from_challenge(endpoint: &str, challenge: &str, issuer: &str) -> AuthorizationManager {
    let mut manager = step("AuthorizationManager::new", AuthorizationManager::new(endpoint)).await;
    // rmcp's own client would honour HTTP(S)_PROXY; these servers are on 127.0.0.1.
    manager.with_client(http_client()).expect("rmcp takes the reqwest client");
    let resolution =
        step("resolve_metadata_from_challenge", manager.resolve_metadata_from_challenge(Some(challenge)))
            .await;
    assert_eq!(
        resolution.source,
        AuthorizationMetadataSource::ProtectedResourceMetadata,
        "rmcp found the authorization server through our metadata document"
    );
    assert_eq!(resolution.metadata.issuer.as_deref(), Some(issuer));
    assert_eq!(resolution.metadata.token_endpoint, format!("{issuer}/token"));
    manager.set_metadata(resolution.metadata);
    manager
}

fn client_credentials(client_id: &str, client_secret: &str, resource: &str) -> ClientCredentialsConfig {
    ClientCredentialsConfig::ClientSecret {
        client_id: client_id.to_owned(),
        client_secret: client_secret.to_owned(),
        scopes: vec![SCOPE.to_owned()],
        resource: Some(resource.to_owned()),
    }
}

/// Obtains a token with `config` through `manager` (client credentials, SEP-1046).
async fn exchange(manager: &mut AuthorizationManager, config: &ClientCredentialsConfig) -> String {
    manager.validate_client_credentials_metadata(config).expect("the server supports client_secret_post");
    manager.configure_client_credentials(config).expect("client credentials configured");
    step("exchange_client_credentials", manager.exchange_client_credentials(config)).await;
    step("the token rmcp stored", manager.get_access_token()).await
}

/// Checks a challenge names our metadata document (and, with `error`, carries that error code).
fn assert_challenge(challenge: &str, resource: &ProtectedResource, error: Option<&str>) {
    let metadata = format!("resource_metadata=\"{}\"", resource.metadata_url());
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(challenge.contains(&metadata), "{challenge} lacks {metadata}");
    match error {
        Some(error) => assert!(challenge.contains(&format!("error=\"{error}\"")), "{challenge}"),
        None => assert!(!challenge.contains("error="), "{challenge}"),
    }
}

/// No token, our 401, the metadata document, the authorization server, a token for this endpoint,
/// and the tool sees the client the token was issued to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and oidc-provider: run by cargo xtask edge"]
async fn rmcp_signs_in_with_client_credentials_and_the_tool_sees_the_principal() {
    bounded(async {
        let log = Transcript::default();
        let _print = log.print_on_drop("oauth, client credentials");
        let started = Instant::now();
        let auth = AuthServer::start().await;
        let rs = ResourceServer::start(&auth, &log).await;
        let url = rs.url();

        let challenge = first_challenge(&rs, &log).await;
        let mut manager = manager_from_challenge(&url, &challenge, &auth.issuer).await;
        let token = exchange(&mut manager, &client_credentials("notes-client", "notes-secret", &url)).await;
        let answer = rs.introspector.introspect(&token).await.expect("introspection answers");
        assert_eq!(answer["aud"], url.as_str(), "the token is bound to this endpoint: {answer}");

        let seen = whoami_over(
            "connect with a token",
            AuthClient::new(http_client(), manager),
            StreamableHttpClientTransportConfig::with_uri(url.as_str()),
        )
        .await;
        assert_eq!(seen, json!({"client_id": "notes-client", "scopes": [SCOPE]}));

        let entries = log.entries().join("\n");
        let document = format!("GET {} (authorization: none) -> 200", rs.resource.metadata_path());
        assert!(entries.contains(&document), "rmcp read our metadata document:\n{entries}");
        assert!(entries.contains("POST /mcp (authorization: Bearer …) -> 200"), "{entries}");
        rs.stop().await;
        drop(auth);
        log.push(format!("took {:?}", started.elapsed()));
    })
    .await;
}

/// A valid, active token issued for another resource is refused `invalid_token`: the endpoint does
/// not accept tokens meant for someone else (MCP: no token passthrough).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and oidc-provider: run by cargo xtask edge"]
async fn a_token_for_another_audience_is_refused_invalid_token() {
    bounded(async {
        let log = Transcript::default();
        let _print = log.print_on_drop("oauth, another audience");
        let auth = AuthServer::start().await;
        let rs = ResourceServer::start(&auth, &log).await;
        let url = rs.url();
        let challenge = first_challenge(&rs, &log).await;
        let mut manager = manager_from_challenge(&url, &challenge, &auth.issuer).await;
        let other = "http://127.0.0.1:1/other";
        let token = exchange(&mut manager, &client_credentials("notes-client", "notes-secret", other)).await;
        let answer = rs.introspector.introspect(&token).await.expect("introspection answers");
        assert_eq!(answer["active"], true, "the token itself is good: {answer}");
        assert_eq!(answer["aud"], other, "{answer}");

        let client = AuthClient::new(http_client(), manager);
        let challenge = refused(
            "a token for another audience",
            client,
            StreamableHttpClientTransportConfig::with_uri(url.as_str()),
            &log,
        )
        .await;
        assert_challenge(&challenge, &rs.resource, Some("invalid_token"));
        let entries = log.entries().join("\n");
        assert!(entries.contains("POST /mcp (authorization: Bearer …) -> 401"), "{entries}");
        rs.stop().await;
    })
    .await;
}

/// A `short-client` token (2 s) is admitted, and once expired is refused `invalid_token`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and oidc-provider: run by cargo xtask edge"]
async fn an_expired_token_is_refused_invalid_token() {
    bounded(async {
        let log = Transcript::default();
        let _print = log.print_on_drop("oauth, expiry");
        let auth = AuthServer::start().await;
        let rs = ResourceServer::start(&auth, &log).await;
        let url = rs.url();
        let challenge = first_challenge(&rs, &log).await;
        let mut manager = manager_from_challenge(&url, &challenge, &auth.issuer).await;
        let token = exchange(&mut manager, &client_credentials("short-client", "short-secret", &url)).await;
        // The token is sent as given (not through AuthClient, which drops a token in its last second).
        let with_token =
            || StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header(token.clone());
        let seen = whoami_over("connect with a fresh short-lived token", http_client(), with_token()).await;
        assert_eq!(seen, json!({"client_id": "short-client", "scopes": [SCOPE]}));

        // Wait (bounded) until the authorization server says the token has expired.
        let deadline = Instant::now() + Duration::from_secs(5);
        tokio::time::sleep(Duration::from_secs(2)).await;
        while rs.introspector.introspect(&token).await.expect("introspection answers")["active"] == true {
            assert!(Instant::now() < deadline, "the 2 s token is still active after 5 s");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let challenge = refused("an expired token", http_client(), with_token(), &log).await;
        assert_challenge(&challenge, &rs.resource, Some("invalid_token"));

        // rmcp itself no longer offers the token: AuthClient goes out without one and gets our plain 401.
        assert!(matches!(manager.get_access_token().await, Err(AuthError::AuthorizationRequired)));
        let client = AuthClient::new(http_client(), manager);
        let challenge = refused(
            "AuthClient after expiry",
            client,
            StreamableHttpClientTransportConfig::with_uri(url.as_str()),
            &log,
        )
        .await;
        assert_challenge(&challenge, &rs.resource, None);
        rs.stop().await;
    })
    .await;
}
