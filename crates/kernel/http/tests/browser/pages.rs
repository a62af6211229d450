//! The page servers of the browser tests, one per origin, serving `page.html` and the plan it runs
//! (what the page sends), and collecting its reports.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

use crate::endpoint::{TOKEN, lock};
use crate::support::{headers_for, request, with};

/// The page every page server serves.
const PAGE: &str = include_str!("page.html");

/// One page origin on 127.0.0.1: `GET /page`, `GET /plan`, `POST /report`. Stopped when dropped.
pub struct PageServer {
    pub origin: String,
    pub plan: Arc<Mutex<Value>>,
    pub loads: Arc<AtomicUsize>,
    pub reports: mpsc::UnboundedReceiver<Value>,
    task: JoinHandle<()>,
}

impl PageServer {
    pub async fn start() -> Self {
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

    pub fn page_url(&self) -> String {
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

/// The arguments of the `tools/call`: every annotated property of `search`, and one that is not.
pub fn search_arguments() -> Value {
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
pub fn plan(endpoint: &str) -> Value {
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
