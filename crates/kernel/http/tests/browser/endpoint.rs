//! The endpoint of the browser tests and what it saw: the fixture server behind a bearer-token
//! `authorize` hook that counts the POSTs per `Origin`, and a wrapper recording every exchange (the
//! ledger).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use http::header::{AUTHORIZATION, ORIGIN};
use http::request::Parts;
use http::{HeaderMap, Method, Request, StatusCode};
use hyper::body::Incoming;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tower::ServiceExt as _;

use mcp_kernel_http::{AllowedOrigins, McpHttp, ProtectedResource, Refused};

use crate::support::server;

/// The one token the hook admits.
pub const TOKEN: &str = "Bearer browser-token";

/// Locks `mutex`, a poisoned one included (a failed assertion elsewhere must not hide the ledger).
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The header fields of a map, names lowercased, in order.
fn fields(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect()
}

/// One request the endpoint received, and what it answered.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub method: Method,
    /// The request's header fields, names lowercased, in order.
    request: Vec<(String, String)>,
    pub status: StatusCode,
    /// The response's header fields, names lowercased, in order.
    response: Vec<(String, String)>,
}

impl Exchange {
    pub fn request_header(&self, name: &str) -> Option<&str> {
        self.request.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn response_header(&self, name: &str) -> Option<&str> {
        self.response.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn origin(&self) -> Option<&str> {
        self.request_header("origin")
    }
}

/// What the endpoint saw: every exchange (from the wrapper) and the POSTs per `Origin` (from the hook).
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    pub exchanges: Arc<Mutex<Vec<Exchange>>>,
    hook_posts: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl Ledger {
    /// The exchanges with `method` from `origin`.
    pub fn from(&self, method: &Method, origin: &str) -> Vec<Exchange> {
        lock(&self.exchanges)
            .iter()
            .filter(|e| e.method == method && e.origin() == Some(origin))
            .cloned()
            .collect()
    }

    /// How many POSTs the hook saw with `origin`.
    pub fn hook_posts(&self, origin: &str) -> usize {
        lock(&self.hook_posts).get(origin).copied().unwrap_or(0)
    }

    /// Every exchange, one per line block, for the test's output.
    pub fn describe(&self) -> String {
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
pub struct Endpoint {
    addr: SocketAddr,
    /// The endpoint as an OAuth protected resource: its challenges name the metadata URL.
    pub resource: ProtectedResource,
    stop: Option<oneshot::Sender<()>>,
    _task: JoinHandle<std::io::Result<()>>,
}

impl Endpoint {
    /// The fixture server admitting `origins`, behind the bearer-token hook and the recording wrapper.
    pub async fn start(origins: AllowedOrigins, ledger: &Ledger) -> Self {
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

    pub fn url(&self) -> String {
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
