//! `bench-floor stdio` | `bench-floor http 127.0.0.1:PORT`
//!
//! The physical floor: only the JSON work every server must do for an echo `tools/call` — parse the
//! request into a `serde_json::Value`, take `id` and `params.arguments.message`, and write
//! `{"jsonrpc":"2.0","id":<id>,"result":{"content":[{"type":"text","text":<message>}],"isError":false,"resultType":"complete"}}`.
//! No validation, no header checks, no routing: any POST (any path) gets the same treatment.
//!
//! - HTTP: bare hyper 1.x through `hyper_util`'s `server::conn::auto::Builder`, which serves HTTP/1.1
//!   (keep-alive on) and HTTP/2 with prior knowledge (h2c) on the same port, one task per connection.
//! - stdio: one sequential line loop. When stdin and stdout are FIFOs (as a load generator that spawns
//!   the binary makes them) they are reopened through `/proc/self/fd` as non-blocking tokio pipes, so
//!   reads and writes run on the reactor, as rmcp's `stdio_pipes()` does; otherwise tokio's
//!   stdin/stdout are used. Output is buffered and flushed whenever no further input is already read.

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
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

/// The answer to one parsed request, or `None` when the bytes are not JSON at all.
fn answer(request: &[u8]) -> Option<Vec<u8>> {
    let request: Value = serde_json::from_slice(request).ok()?;
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let message = request.pointer("/params/arguments/message").cloned().unwrap_or(Value::Null);
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
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        tokio::spawn(async move {
            let mut builder = auto::Builder::new(TokioExecutor::new());
            builder.http1().keep_alive(true);
            let _ = builder.serve_connection(TokioIo::new(stream), service_fn(handle)).await;
        });
    }
}

type Reader = Box<dyn AsyncRead + Unpin + Send>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// stdin and stdout as non-blocking pipes of their own (new open file descriptions, so the process's
/// standard streams keep their flags) when both are FIFOs.
#[cfg(target_os = "linux")]
fn fifo_pipes() -> Option<(Reader, Writer)> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    const O_NONBLOCK: i32 = 0o4000; // Linux, every architecture tokio supports
    let open = |path: &str, write: bool| {
        std::fs::OpenOptions::new().read(!write).write(write).custom_flags(O_NONBLOCK).open(path).ok()
    };
    let input = open("/proc/self/fd/0", false)?;
    let output = open("/proc/self/fd/1", true)?;
    if !input.metadata().ok()?.file_type().is_fifo() || !output.metadata().ok()?.file_type().is_fifo() {
        return None;
    }
    let input = tokio::net::unix::pipe::Receiver::from_file(input).ok()?;
    let output = tokio::net::unix::pipe::Sender::from_file(output).ok()?;
    Some((Box::new(input), Box::new(output)))
}

#[cfg(not(target_os = "linux"))]
fn fifo_pipes() -> Option<(Reader, Writer)> {
    None
}

async fn serve_stdio() -> std::io::Result<()> {
    let (input, output): (Reader, Writer) =
        fifo_pipes().unwrap_or_else(|| (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout())));
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut output = BufWriter::with_capacity(64 * 1024, output);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        let trimmed = line.trim_ascii();
        if !trimmed.is_empty()
            && let Some(mut json) = answer(trimmed)
        {
            json.push(b'\n');
            output.write_all(&json).await?;
        }
        if input.buffer().is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["stdio"] => serve_stdio().await?,
        ["http", addr] => serve_http(addr).await?,
        _ => return Err("usage: bench-floor stdio | bench-floor http 127.0.0.1:PORT".into()),
    }
    Ok(())
}
