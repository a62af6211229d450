//! What a CORS preflight costs the server, an ordinary one beside crafted ones, measured side by side
//! (`docs/performance.md`, "Preflight worst case").
//!
//! ```text
//! cargo run --release -p mcp-kernel-http --example preflight_cost
//! ```
//!
//! `in_process`: each preflight is a built `http::Request` handed to `tower::Service::call` on an
//! `McpService` (no socket, no hyper: the head is already parsed), on a current-thread runtime, so the
//! time per call is this thread's CPU time for the service's work alone.
//!
//! `wire_http1`: the same service under `mcp_kernel_http::serve` on 127.0.0.1, on a thread of its own
//! (a current-thread runtime), and one keep-alive HTTP/1.1 connection sending the preflights one after
//! another; the figure is the server thread's CPU time per preflight (from
//! `/proc/<pid>/task/<tid>/schedstat`, in nanoseconds: hyper's parse of the head included, the
//! client's work not). Linux only; skipped where that file is missing.
//!
//! The shapes of `access-control-request-headers`:
//!
//! * `ordinary`: what a browser sends before a `tools/call` with one mirrored argument;
//! * `duplicates`: 63 distinct `mcp-param-*` names, then the last of them repeated up to 60,000 bytes
//!   (the crafted list that once cost 70 ordinary preflights);
//! * `long_names`: 60,000 bytes of distinct 127-byte `mcp-param-*` names, alike but for their last
//!   bytes;
//! * `long_duplicates`: 63 of those, then the last of them repeated up to 60,000 bytes (the most
//!   work the bounded parser can be made to do: every name it looks at is long and hashed);
//! * `commas`: 60,000 bytes of empty names (`,,,,`).
//!
//! Rounds alternate the order of the shapes; each shape's median time per preflight and its ratio to
//! `ordinary` are printed. `--only NAME` runs `ordinary` and that shape alone (for a profiler);
//! `--test` (or `--quick`) makes a short smoke run. `authorize` is counted and must never run: a
//! preflight is answered before it. Everything is bounded in count and stays on 127.0.0.1.

use std::hint::black_box;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http::{HeaderValue, Request, StatusCode};
use http_body_util::Empty;
use mcp_kernel_http::{AllowedOrigins, McpHttp, McpService};
use mcp_kernel_router::{Listing, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tower::{Service, ServiceExt};

/// The origin the service lists.
const ORIGIN: &str = "http://app.example";
/// The size of the crafted `access-control-request-headers` values.
const CRAFTED_BYTES: usize = 60_000;

/// One shape of preflight: its name and its `access-control-request-headers` value.
struct Shape {
    name: &'static str,
    requested: HeaderValue,
}

/// The shapes measured, `ordinary` first.
fn shapes() -> Vec<Shape> {
    let ordinary = "authorization,content-type,mcp-method,mcp-name,mcp-param-region,mcp-protocol-version";
    let mut duplicates: String = (0..63).map(|i| format!("mcp-param-p{i},")).collect();
    while duplicates.len() + "mcp-param-p62,".len() <= CRAFTED_BYTES {
        duplicates.push_str("mcp-param-p62,");
    }
    let mut long_names = String::new();
    for i in 0..CRAFTED_BYTES {
        let name = format!("mcp-param-{i:0>117},");
        if long_names.len() + name.len() > CRAFTED_BYTES {
            break;
        }
        long_names.push_str(&name);
    }
    let mut long_duplicates: String = (0..63).map(|i| format!("mcp-param-{i:0>117},")).collect();
    let last = format!("mcp-param-{:0>117},", 62);
    while long_duplicates.len() + last.len() <= CRAFTED_BYTES {
        long_duplicates.push_str(&last);
    }
    let commas = ",".repeat(CRAFTED_BYTES);
    let value = |text: &str| HeaderValue::from_str(text.trim_end_matches(',')).expect("a header value");
    vec![
        Shape { name: "ordinary", requested: value(ordinary) },
        Shape { name: "duplicates", requested: value(&duplicates) },
        Shape { name: "long_names", requested: value(&long_names) },
        Shape { name: "long_duplicates", requested: value(&long_duplicates) },
        Shape { name: "commas", requested: HeaderValue::from_str(&commas).expect("a header value") },
    ]
}

/// The service: an empty catalog, `ORIGIN` listed, `authorize` counted into `authorized`.
fn service(authorized: Arc<AtomicUsize>) -> McpService {
    let server = Server::builder(Listing::default()).build().expect("an empty catalog");
    McpHttp::builder(server)
        .allowed_origins(AllowedOrigins::list([ORIGIN]))
        .authorize(move |_| {
            authorized.fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .build()
}

/// A preflight as the service receives it.
type Preflight = Request<Empty<bytes::Bytes>>;

/// A preflight from `ORIGIN` asking for `requested`.
fn preflight(requested: &HeaderValue) -> Preflight {
    Request::options("/mcp")
        .header("host", "127.0.0.1:8080")
        .header("origin", ORIGIN)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", requested.clone())
        .body(Empty::new())
        .expect("a request")
}

/// The time per preflight of `calls` preflights of `shape`.
async fn round(service: &mut McpService, shape: &Shape, calls: u32) -> Duration {
    let start = Instant::now();
    for _ in 0..calls {
        let ready = ServiceExt::<Preflight>::ready(service).await.expect("infallible");
        let response = ready.call(black_box(preflight(&shape.requested))).await.expect("infallible");
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{}", shape.name);
        black_box(response);
    }
    start.elapsed() / calls
}

/// A preflight of `shape` as an HTTP/1.1 head.
fn wire_head(shape: &Shape) -> Vec<u8> {
    let mut head = format!(
        "OPTIONS /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\norigin: {ORIGIN}\r\n\
         access-control-request-method: POST\r\naccess-control-request-headers: "
    )
    .into_bytes();
    head.extend_from_slice(shape.requested.as_bytes());
    head.extend_from_slice(b"\r\n\r\n");
    head
}

/// The CPU time the thread whose `schedstat` file is `path` has run, in nanoseconds.
fn thread_cpu(path: &Path) -> Option<Duration> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(Duration::from_nanos(text.split_whitespace().next()?.parse().ok()?))
}

/// Serves a fresh service on 127.0.0.1 from a thread of its own; returns its address, the path of
/// its thread's `schedstat`, and the sender that stops it.
fn wire_server(
    authorized: Arc<AtomicUsize>,
) -> Option<(SocketAddr, PathBuf, tokio::sync::oneshot::Sender<()>)> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        runtime.block_on(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
            let addr = listener.local_addr().expect("an address");
            let task = std::fs::read_link("/proc/thread-self").ok();
            let schedstat = task.map(|task| PathBuf::from("/proc").join(task).join("schedstat"));
            let _ = ready_tx.send((addr, schedstat));
            let stop = async move {
                let _ = stop_rx.await;
            };
            let _ = mcp_kernel_http::serve(listener, service(authorized), stop).await;
        });
    });
    let (addr, schedstat) = ready_rx.recv_timeout(Duration::from_secs(10)).ok()?;
    let schedstat = schedstat.filter(|path| thread_cpu(path).is_some())?;
    Some((addr, schedstat, stop_tx))
}

/// Sends `head` on `stream` and reads the answer's head, which must be a 204.
async fn wire_exchange(stream: &mut TcpStream, head: &[u8], buffer: &mut Vec<u8>) {
    stream.write_all(head).await.expect("write the preflight");
    buffer.clear();
    let mut chunk = [0u8; 4096];
    for _ in 0..1_000 {
        if buffer.ends_with(b"\r\n\r\n") {
            break;
        }
        let n = stream.read(&mut chunk).await.expect("read the answer");
        assert!(n > 0, "the server closed the connection");
        buffer.extend_from_slice(&chunk[..n]);
    }
    assert!(buffer.starts_with(b"HTTP/1.1 204 "), "{}", String::from_utf8_lossy(buffer));
}

/// The server thread's CPU time per preflight of `calls` preflights with `head`.
async fn wire_round(stream: &mut TcpStream, head: &[u8], calls: u32, schedstat: &Path) -> Duration {
    let mut buffer = Vec::with_capacity(4096);
    let before = thread_cpu(schedstat).expect("schedstat");
    for _ in 0..calls {
        wire_exchange(stream, head, &mut buffer).await;
    }
    let after = thread_cpu(schedstat).expect("schedstat");
    after.saturating_sub(before) / calls
}

/// The median of `samples` (not empty).
fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Prints each shape's median and its ratio to the first (`ordinary`).
fn report(label: &str, shapes: &[Shape], times: Vec<Vec<Duration>>) {
    let medians: Vec<Duration> = times.into_iter().map(median).collect();
    let ordinary = medians[0].as_secs_f64();
    for (shape, time) in shapes.iter().zip(&medians) {
        println!(
            "{label}/{:<15} {:>6} bytes  median {:>9.2} µs per preflight  ratio to ordinary {:>6.2}",
            shape.name,
            shape.requested.len(),
            time.as_secs_f64() * 1e6,
            time.as_secs_f64() / ordinary,
        );
    }
}

/// The order of the shapes in round `r`: alternated, so that no shape always runs first on a warmer
/// or cooler machine.
fn order(r: usize, shapes: usize) -> impl Iterator<Item = usize> {
    (0..shapes).map(move |k| if r.is_multiple_of(2) { k } else { shapes - 1 - k })
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test" || a == "--quick");
    // `--only NAME` keeps `ordinary` and that shape (for a profiler).
    let only = std::env::args().skip_while(|a| a != "--only").nth(1);
    let shapes: Vec<Shape> = shapes()
        .into_iter()
        .filter(|shape| only.as_deref().is_none_or(|only| shape.name == "ordinary" || shape.name == only))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let authorized = Arc::new(AtomicUsize::new(0));
    let (count, calls, wire_calls) = if smoke { (3, 5, 5) } else { (31, 400, 200) };

    let mut service = service(Arc::clone(&authorized));
    let times = runtime.block_on(async {
        for shape in &shapes {
            round(&mut service, shape, calls).await;
        }
        let mut times = vec![Vec::new(); shapes.len()];
        for r in 0..count {
            for index in order(r, shapes.len()) {
                times[index].push(round(&mut service, &shapes[index], calls).await);
            }
        }
        times
    });
    report("in_process", &shapes, times);

    let Some((addr, schedstat, stop)) = wire_server(Arc::clone(&authorized)) else {
        println!("wire: skipped (no /proc/<pid>/task/<tid>/schedstat)");
        return;
    };
    let heads: Vec<Vec<u8>> = shapes.iter().map(wire_head).collect();
    let times = runtime.block_on(async {
        let mut stream = TcpStream::connect(addr).await.expect("connect to 127.0.0.1");
        stream.set_nodelay(true).expect("nodelay");
        for head in &heads {
            wire_round(&mut stream, head, wire_calls, &schedstat).await;
        }
        let mut times = vec![Vec::new(); shapes.len()];
        for r in 0..count {
            for index in order(r, shapes.len()) {
                times[index].push(wire_round(&mut stream, &heads[index], wire_calls, &schedstat).await);
            }
        }
        times
    });
    let _ = stop.send(());
    report("wire_http1", &shapes, times);
    assert_eq!(authorized.load(Ordering::Relaxed), 0, "a preflight is answered before authorize");
}
