//! Measures the HTTP transport's resource bounds on this machine (`protocol.md` J-1 to J-3).
//!
//! ```text
//! cargo run --release -p mcp-kernel-http --example measure
//! ```
//!
//! (a) resident memory per in-flight cap-sized request: N HTTP/1.1 connections each send a complete
//!     ~1 MiB `tools/call` whose tool waits on a gate; VmRSS is sampled before and while all N are
//!     in flight.
//! (b) bytes read before a 413: the request bodies are counted as the service reads them (a counting
//!     layer in front of the service), for a body streamed over HTTP/2 without `content-length`, and
//!     for an HTTP/1.1 body declaring 32 MiB; plus the bytes the client managed to send meanwhile.
//! (c) the 408 timing for 300 ms and 1,500 ms deadlines, 3 runs each, over HTTP/1.1 and HTTP/2.
//!
//! Everything is bounded in time and count and stays on 127.0.0.1.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use mcp_kernel_http::{AllowedOrigins, MAX_BODY_BYTES, McpHttp, McpService, ResponseBody};
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot};
use tower::ServiceExt;

/// In-flight requests for (a).
const IN_FLIGHT: usize = 200;
/// The bound of any single wait.
const BOUND: Duration = Duration::from_secs(60);

/// Holds every `hold` call until released.
#[derive(Default)]
struct Gate {
    arrived: AtomicUsize,
    released: AtomicBool,
    notify: Notify,
}

impl Gate {
    async fn pass(&self) {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        for _ in 0..1_000 {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.released.load(Ordering::SeqCst) {
                return;
            }
            let _ = tokio::time::timeout(BOUND, notified).await;
        }
    }

    fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
}

fn server(gate: Arc<Gate>) -> Server {
    let catalog = Listing {
        tools: vec![ToolSpec::new("hold", Mode::ReadOnly).input_schema(json!({
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"]
        }))],
        ..Listing::default()
    };
    Server::builder(catalog)
        .dispatch(move |call: ToolCall| {
            let gate = Arc::clone(&gate);
            async move {
                gate.pass().await;
                let length = call.arguments.get_str("message").map_or(0, str::len);
                ToolOutput::json(&json!({"length": length})).map_err(|_| ToolError::new("encode"))
            }
        })
        .build()
        .expect("a valid catalog")
}

fn service(gate: Arc<Gate>, read_timeout: Duration) -> McpService {
    McpHttp::builder(server(gate))
        .allowed_origins(AllowedOrigins::any())
        .authorize(|_| Ok(()))
        .read_timeout(read_timeout)
        .build()
}

/// Serves `service` on 127.0.0.1 with every request body counted into `read` as it is read.
async fn start(service: McpService, read: Arc<AtomicUsize>) -> (SocketAddr, oneshot::Sender<()>) {
    let counting = tower::service_fn(move |request: Request<Incoming>| {
        let read = Arc::clone(&read);
        let request = request.map(move |body| {
            body.map_frame(move |frame| {
                if let Some(data) = frame.data_ref() {
                    read.fetch_add(data.len(), Ordering::SeqCst);
                }
                frame
            })
        });
        let service = service.clone();
        async move { service.oneshot(request).await.map(|r: Response<ResponseBody>| r) }
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("address");
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(mcp_kernel_http::serve(listener, counting, async move {
        let _ = rx.await;
    }));
    (addr, tx)
}

fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A `tools/call` of `hold` whose string argument makes the body exactly `size` bytes.
fn cap_sized_call(size: usize) -> Bytes {
    let shell = |n: usize| {
        serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "hold", "arguments": {"message": "x".repeat(n)}, "_meta": meta()}
        }))
        .expect("JSON")
    };
    let overhead = shell(0).len();
    let body = shell(size - overhead);
    assert_eq!(body.len(), size);
    Bytes::from(body)
}

fn head(addr: SocketAddr, method: &str, name: Option<&str>, length: usize) -> Vec<u8> {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         mcp-protocol-version: 2026-07-28\r\nmcp-method: {method}\r\ncontent-length: {length}\r\n"
    );
    if let Some(name) = name {
        head.push_str(&format!("mcp-name: {name}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// Reads a response's status line and headers, then its `content-length` body; returns the status.
async fn read_status(stream: &mut (impl AsyncRead + Unpin)) -> Option<u16> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    for _ in 0..10_000 {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
            let status = head.split(' ').nth(1)?.parse().ok()?;
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned())
                })
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut have = buffer.len() - end - 4;
            while have < length {
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    break;
                }
                have += n;
            }
            return Some(status);
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    None
}

/// (a) VmRSS per in-flight request of `size` bytes.
async fn memory_per_request(size: usize) {
    let gate = Arc::new(Gate::default());
    let (addr, stop) = start(service(Arc::clone(&gate), Duration::from_secs(30)), Arc::default()).await;
    let body = cap_sized_call(size);
    let head = Bytes::from(head(addr, "tools/call", Some("hold"), body.len()));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = vm_rss_kib();
    let mut clients = Vec::with_capacity(IN_FLIGHT);
    for _ in 0..IN_FLIGHT {
        let (head, body) = (head.clone(), body.clone());
        clients.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.ok()?;
            stream.write_all(&head).await.ok()?;
            stream.write_all(&body).await.ok()?;
            tokio::time::timeout(BOUND, read_status(&mut stream)).await.ok()?
        }));
    }
    let started = Instant::now();
    while gate.arrived.load(Ordering::SeqCst) < IN_FLIGHT && started.elapsed() < BOUND {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let arrived = gate.arrived.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let during = vm_rss_kib();
    gate.release();
    let mut ok = 0;
    for client in clients {
        if let Ok(Some(200)) = client.await {
            ok += 1;
        }
    }
    let _ = stop.send(());
    let delta = during.saturating_sub(before);
    println!("(a) memory per in-flight request, body size {} bytes (cap {MAX_BODY_BYTES})", body.len());
    println!("    in flight: {arrived} of {IN_FLIGHT} reached dispatch; {ok} answered 200 after release");
    println!("    VmRSS before: {before} KiB, while in flight: {during} KiB, delta: {delta} KiB");
    #[allow(clippy::cast_precision_loss)]
    let per = delta as f64 / arrived.max(1) as f64;
    println!("    per in-flight request: {per:.0} KiB = {:.3} MiB", per / 1024.0);
}

/// (b1) HTTP/2, no content-length: bytes the service read and bytes the client sent before the 413.
async fn bytes_before_413_http2() {
    let read = Arc::new(AtomicUsize::new(0));
    let (addr, stop) = start(service(Arc::default(), Duration::from_secs(30)), Arc::clone(&read)).await;
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (sender, connection) = h2::client::handshake(stream).await.expect("h2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut sender = sender.ready().await.expect("ready");
    let request = Request::builder()
        .method("POST")
        .uri(format!("http://{addr}/mcp"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(())
        .expect("request");
    let (response, mut send) = sender.send_request(request, false).expect("send");
    let sent = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&sent);
    // Send 16 KiB DATA frames as flow control grants capacity, up to 8 MiB.
    let sending = tokio::spawn(async move {
        let chunk = Bytes::from(vec![b' '; 16 * 1024]);
        for _ in 0..512 {
            send.reserve_capacity(chunk.len());
            let granted = match std::future::poll_fn(|cx| send.poll_capacity(cx)).await {
                Some(Ok(n)) => n,
                _ => break,
            };
            if send.send_data(chunk.slice(..granted), false).is_err() {
                break;
            }
            counted.fetch_add(granted, Ordering::SeqCst);
        }
    });
    let status = tokio::time::timeout(BOUND, response).await.ok().and_then(Result::ok).map(|r| r.status());
    let sent_at_answer = sent.load(Ordering::SeqCst);
    let read_at_answer = read.load(Ordering::SeqCst);
    sending.abort();
    let _ = stop.send(());
    println!("(b) bytes read before the 413");
    println!("    HTTP/2, streamed, no content-length: status {status:?}");
    println!(
        "      the service read {read_at_answer} bytes (cap {MAX_BODY_BYTES}, cap + one 16 KiB frame = {})",
        MAX_BODY_BYTES + 16 * 1024
    );
    println!("      the client had been granted and had sent {sent_at_answer} bytes when the 413 arrived");
}

/// (b2) HTTP/1.1 declaring 32 MiB: the service reads nothing; the client writes until the 413.
async fn bytes_before_413_http1_declared() {
    let read = Arc::new(AtomicUsize::new(0));
    let (addr, stop) = start(service(Arc::default(), Duration::from_secs(30)), Arc::clone(&read)).await;
    let declared = 32 * 1024 * 1024;
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    writer.write_all(&head(addr, "tools/list", None, declared)).await.expect("head");
    let written = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&written);
    let writing = tokio::spawn(async move {
        let chunk = vec![b' '; 64 * 1024];
        for _ in 0..declared / chunk.len() {
            if writer.write_all(&chunk).await.is_err() {
                break;
            }
            counted.fetch_add(chunk.len(), Ordering::SeqCst);
        }
    });
    let status = tokio::time::timeout(BOUND, read_status(&mut reader)).await.ok().flatten();
    let written_at_answer = written.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    writing.abort();
    let _ = stop.send(());
    println!("    HTTP/1.1, content-length {declared}: status {status:?}");
    println!("      the service read {} bytes", read.load(Ordering::SeqCst));
    println!(
        "      the client had written {written_at_answer} bytes (into socket buffers) when the 413 arrived"
    );
}

/// (c) One HTTP/1.1 drip: milliseconds until the answer, and its status.
async fn drip_http1(deadline: Duration) -> (u128, Option<u16>) {
    let (addr, stop) = start(service(Arc::default(), deadline), Arc::default()).await;
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (mut reader, mut writer) = stream.into_split();
    writer.write_all(&head(addr, "tools/list", None, 1000)).await.expect("head");
    let started = Instant::now();
    let dripping = tokio::spawn(async move {
        for _ in 0..1000 {
            if writer.write_all(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    let status = tokio::time::timeout(BOUND, read_status(&mut reader)).await.ok().flatten();
    let elapsed = started.elapsed().as_millis();
    dripping.abort();
    let _ = stop.send(());
    (elapsed, status)
}

/// (c) One HTTP/2 drip in one-byte DATA frames: milliseconds until the answer, and its status.
async fn drip_http2(deadline: Duration) -> (u128, Option<u16>) {
    let (addr, stop) = start(service(Arc::default(), deadline), Arc::default()).await;
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, connection) = h2::client::handshake(stream).await.expect("h2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut sender = sender.ready().await.expect("ready");
    let request = Request::builder()
        .method("POST")
        .uri(format!("http://{addr}/mcp"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(())
        .expect("request");
    let (response, mut send) = sender.send_request(request, false).expect("send");
    let started = Instant::now();
    let dripping = tokio::spawn(async move {
        for _ in 0..1000 {
            if send.send_data(Bytes::from_static(b" "), false).is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    let status =
        tokio::time::timeout(BOUND, response).await.ok().and_then(Result::ok).map(|r| r.status().as_u16());
    let elapsed = started.elapsed().as_millis();
    dripping.abort();
    let _ = stop.send(());
    (elapsed, status)
}

async fn deadline_timing() {
    println!("(c) 408 timing (client clock, from the end of the request head to the answer)");
    for deadline in [Duration::from_millis(300), Duration::from_millis(1500)] {
        for (label, http2) in [("HTTP/1.1 byte drip", false), ("HTTP/2 one-byte DATA frames", true)] {
            let mut runs = Vec::new();
            for _ in 0..3 {
                let (ms, status) =
                    if http2 { drip_http2(deadline).await } else { drip_http1(deadline).await };
                runs.push(format!("{ms} ms ({})", status.map_or("no answer".into(), |s| s.to_string())));
            }
            println!("    {} ms deadline, {label}: {}", deadline.as_millis(), runs.join(", "));
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Infallible> {
    // A small body first: the fixed cost of one in-flight request (connection, task, buffers).
    memory_per_request(1024).await;
    memory_per_request(MAX_BODY_BYTES).await;
    bytes_before_413_http2().await;
    bytes_before_413_http1_declared().await;
    deadline_timing().await;
    Ok(())
}
