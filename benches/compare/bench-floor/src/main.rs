//! `bench-floor stdio` | `bench-floor http 127.0.0.1:PORT`
//!
//! The physical floor: only the JSON work every server must do for an echo `tools/call` — parse the
//! request into a `serde_json::Value`, move `id` and `params.arguments.message` out of it, and write
//! `{"jsonrpc":"2.0","id":<id>,"result":{"content":[{"type":"text","text":<message>}],"isError":false,"resultType":"complete"}}`.
//! No validation, no header checks, no routing: any POST (any path) gets the same treatment.
//!
//! - HTTP: bare hyper 1.x through `hyper_util`'s `server::conn::auto::Builder`, which serves HTTP/1.1
//!   (keep-alive on) and HTTP/2 with prior knowledge (h2c) on the same port, one task per connection.
//!   An interrupt (`SIGINT`) stops it accepting and the process exits 0, so that an instrumented
//!   build writes its profile at exit (`cargo xtask bench pgo`).
//! - stdio: one sequential line loop, in the flavour `BENCH_FLOOR_STDIO` names (module `stdio`):
//!   blocking std I/O with no runtime by default, the fastest way to do the job.

#![forbid(unsafe_code)]

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use serde_json::{Value, json};

mod stdio;

/// The answer to one parsed request, or `None` when the bytes are not JSON at all.
fn answer(request: &[u8]) -> Option<Vec<u8>> {
    let mut request: Value = serde_json::from_slice(request).ok()?;
    let id = request.get_mut("id").map(Value::take).unwrap_or(Value::Null);
    let message = request.pointer_mut("/params/arguments/message").map(Value::take).unwrap_or(Value::Null);
    let response = json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {
            "content": [{"type": "text", "text": message}],
            "isError": false,
            "resultType": "complete"
        }
    });
    serde_json::to_vec(&response).ok()
}

async fn handle(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    Ok(match answer(&body) {
        Some(json) => {
            let mut response = Response::new(Full::new(Bytes::from(json)));
            response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        None => status(StatusCode::BAD_REQUEST),
    })
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

async fn serve_http(addr: &str) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let interrupted = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::pin!(interrupted);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut interrupted => return Ok(()),
        };
        let (stream, _) = match accepted {
            Ok(accepted) => accepted,
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        // As the kernel does: no answer's last segment waits on the client's delayed ACK.
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let mut builder = auto::Builder::new(TokioExecutor::new());
            builder.http1().keep_alive(true);
            let _ = builder.serve_connection(TokioIo::new(stream), service_fn(handle)).await;
        });
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["stdio"] => stdio::serve(stdio::Flavour::from_env()?)?,
        ["http", addr] => {
            tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(serve_http(addr))?
        }
        _ => return Err("usage: bench-floor stdio | bench-floor http 127.0.0.1:PORT".into()),
    }
    Ok(())
}
