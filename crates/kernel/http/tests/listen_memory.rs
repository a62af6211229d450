//! Listeners that stop reading cost the server a bounded amount of memory: measured on a server in a
//! process of its own (this test binary, started again as the server), through `/proc/<pid>/status`.
//!
//! The server serves the fixture's notifications (through a hub deep enough never to fall behind, so
//! that the streams' own queues are what is tested) and a tool, `publish`, that announces `count` tool
//! list changes, paced (a millisecond every sixty-four) so that the server writes what it can between
//! them. Forty listeners — twenty over HTTP/1.1 with a 4 KiB receive buffer, twenty HTTP/2 streams
//! whose window they never reopen — read their acknowledgment and nothing more while 20,000 changes
//! are announced (about 2.4 MB of events each, 96 MB in all were they all kept). The server's resident
//! memory may grow by a generous bound, not by the changes; each listener, reading again, finds the
//! notifications its stream held, then the completion result; a fresh listener is served as before.

#[path = "integration/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use mcp_kernel_http::{AllowedOrigins, McpHttp, ServeOptions};
use mcp_kernel_router::notify::{InProcessHub, Notifications};
use mcp_kernel_router::{Mode, ToolCall, ToolError, ToolOutput, ToolSpec};
use support::edge::loopback;
use support::*;

/// Set in the environment of the server process.
const SERVER_PROCESS: &str = "MCP_KERNEL_HTTP_LISTEN_MEMORY_SERVER";

/// The changes announced while the listeners do not read.
const CHANGES: u64 = 20_000;

/// How much the server's resident memory may grow while they do not read.
const GROWTH_BOUND_KIB: u64 = 24 * 1024;

/// The test binary, started again as the server (the ignored test below), killed when dropped.
struct ServerProcess {
    child: Child,
    addr: SocketAddr,
}

impl ServerProcess {
    fn start() -> Self {
        let exe = std::env::current_exe().expect("this test binary");
        let mut child = Command::new(exe)
            .args(["--exact", "serves_the_memory_test_as_a_process_of_its_own", "--ignored", "--nocapture"])
            .args(["--test-threads", "1"])
            .env(SERVER_PROCESS, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server process");
        let stdout = child.stdout.take().expect("its stdout");
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // The test harness may have written the test's name on the same line.
                if let Some((_, addr)) = line.split_once("listening on ") {
                    let _ = sender.send(addr.trim().parse::<SocketAddr>().expect("an address"));
                }
            }
        });
        let addr = receiver.recv_timeout(Duration::from_secs(30)).expect("the server's address");
        Self { child, addr }
    }

    /// The server's resident memory, in KiB.
    fn rss_kib(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("its status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches(" kB").trim().parse().ok())
            .expect("VmRSS")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A connection from 127.0.0.1 with a 4 KiB receive buffer.
async fn small_window(addr: SocketAddr) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.set_recv_buffer_size(4096).expect("a small receive buffer");
    let stream = socket.connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
}

fn publish(id: i64, count: u64) -> Value {
    request(id, "tools/call", json!({"name": "publish", "arguments": {"count": count}}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listeners_that_stop_reading_are_ended_and_the_servers_memory_stays_bounded() {
    tokio::time::timeout(Duration::from_secs(120), async {
        let server = ServerProcess::start();
        let addr = server.addr;
        let filter = json!({"toolsListChanged": true});
        // Warm the server up: one call, one listen read to its end.
        assert_eq!(post_message(addr, Proto::H1, &publish(1, 1)).await.status, 200);

        let mut silent = Vec::new();
        for n in 0..20 {
            let message = listen_request(n, filter.clone());
            let mut listen = open_h1(small_window(addr).await, addr, &message, listen_headers()).await;
            assert_acknowledgment(&listen.next_message().await.expect("acknowledged"), &json!(n), &filter);
            silent.push(listen);
        }
        for connection in 0..2 {
            let sender = h2_connect_patient(addr).await;
            for n in 0..10 {
                let id = 100 + connection * 10 + n;
                let message = listen_request(id, filter.clone());
                let mut listen = open_h2(sender.clone(), addr, &message, listen_headers()).await;
                assert_acknowledgment(
                    &listen.next_message().await.expect("acknowledged"),
                    &json!(id),
                    &filter,
                );
                silent.push(listen);
            }
        }
        let before = server.rss_kib();
        let started = std::time::Instant::now();
        let flood = publish(2, CHANGES);
        let reply = connect(addr, Proto::H1)
            .await
            .try_send(addr, "/mcp", http::Method::POST, headers_for(&flood), bytes(&flood))
            .await
            .expect("the publishing call");
        assert_eq!(reply.status, 200, "{reply:?}");
        eprintln!("published {CHANGES} changes in {:?}", started.elapsed());
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = server.rss_kib();
        eprintln!(
            "server VmRSS: {before} KiB before, {after} KiB after {CHANGES} changes to 40 silent listeners"
        );
        assert!(
            after.saturating_sub(before) < GROWTH_BOUND_KIB,
            "the server grew by {} KiB (bound {GROWTH_BOUND_KIB} KiB)",
            after.saturating_sub(before)
        );

        // Reading again (all at once: ten of them share each HTTP/2 connection's window), each finds
        // what its stream held, then the completion, then the end.
        let mut reading = tokio::task::JoinSet::new();
        for (n, mut listen) in silent.into_iter().enumerate() {
            reading.spawn(async move { (n, listen.messages_until_cut(Duration::from_secs(20)).await) });
        }
        while let Some(read) = reading.join_next().await {
            let (n, (messages, cut)) = read.expect("a reader");
            assert!(!cut, "stream {n} ended, it was not cut: {} messages", messages.len());
            let (last, notifications) = messages.split_last().expect("at least the completion");
            assert_eq!(last["result"]["resultType"], "complete", "stream {n}: {last}");
            assert!((notifications.len() as u64) < CHANGES, "cut off: {} of {CHANGES}", notifications.len());
            assert!(notifications.iter().all(|m| m["method"] == "notifications/tools/list_changed"));
        }

        // A listener that reads is served as before.
        let message = listen_request("fresh", filter.clone());
        let mut fresh = open_listen_from(loopback(2), addr, Proto::H2, &message, listen_headers()).await;
        assert_acknowledgment(&fresh.next_message().await.expect("acknowledged"), &json!("fresh"), &filter);
        assert_eq!(post_message(addr, Proto::H1, &publish(3, 1)).await.status, 200);
        let change = fresh.next_message().await.expect("the change");
        assert_eq!(change["method"], "notifications/tools/list_changed");
    })
    .await
    .expect("within two minutes");
}

/// The server of the test above, when started by it; returns at once otherwise.
#[test]
#[ignore = "the server process of `listeners_that_stop_reading_are_ended_and_the_servers_memory_stays_bounded`"]
fn serves_the_memory_test_as_a_process_of_its_own() {
    if std::env::var_os(SERVER_PROCESS).is_none() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        // A hub deep enough never to fall behind here: what bounds a silent listener is its stream's
        // queue, not the hub.
        let notifications = Notifications::with_hub(InProcessHub::with_capacity(2 * CHANGES as usize));
        let notifier = notifications.notifier();
        let mut listing = catalog();
        listing.tools.push(ToolSpec::new("publish", Mode::ReadOnly).input_schema(json!({
            "type": "object",
            "properties": {"count": {"type": "integer", "minimum": 0, "maximum": 1_000_000}},
            "required": ["count"]
        })));
        let server = mcp_kernel_router::Server::builder(listing)
            .dispatch(move |call: ToolCall| {
                let notifier = notifier.clone();
                async move {
                    if &*call.name != "publish" {
                        return Err(ToolError::new("not in this server"));
                    }
                    let count = call.arguments.get("count").and_then(Value::as_u64).unwrap_or(0);
                    for n in 0..count {
                        notifier.tools_list_changed();
                        if n % 64 == 63 {
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                    }
                    ToolOutput::json(&json!({"published": count}))
                }
            })
            .resource_reader(read_resource)
            .prompt_reader(get_prompt)
            .defer_header_annotation_faults(true)
            .notifications(notifications)
            .build()
            .expect("the server builds");
        let service = McpHttp::builder(server)
            .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
            .authorize(|_| Ok(()))
            .max_listens_per_client(64)
            .build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        println!("listening on {}", listener.local_addr().expect("the address"));
        // Until the test closes this process's stdin (or kills it).
        let stdin_closed = tokio::task::spawn_blocking(|| {
            let mut sink = Vec::new();
            let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        });
        let shutdown = async move {
            let _ = stdin_closed.await;
        };
        let _ = mcp_kernel_http::serve_with(listener, service, shutdown, ServeOptions::new()).await;
    });
}

/// How much one idle listen stream may cost the server, HTTP/2 stream and connection share included.
const IDLE_STREAM_BOUND_KIB: u64 = 24;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_listen_streams_cost_the_server_a_bounded_amount_each() {
    tokio::time::timeout(Duration::from_secs(120), async {
        let server = ServerProcess::start();
        let addr = server.addr;
        let filter = json!({"toolsListChanged": true});
        assert_eq!(post_message(addr, Proto::H1, &publish(1, 1)).await.status, 200);
        let before = server.rss_kib();
        // 1,008 streams: 63 HTTP/2 connections of 16, from 32 addresses (within the share of each).
        let mut held = Vec::with_capacity(1_008);
        for connection in 0..63u8 {
            let sender = h2_connect_from(loopback(10 + connection / 2), addr).await;
            for _ in 0..16 {
                let id = held.len();
                let mut listen =
                    open_h2(sender.clone(), addr, &listen_request(id, filter.clone()), listen_headers())
                        .await;
                assert_acknowledgment(
                    &listen.next_message().await.expect("acknowledged"),
                    &json!(id),
                    &filter,
                );
                held.push(listen);
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let after = server.rss_kib();
        let each = after.saturating_sub(before) / held.len() as u64;
        eprintln!(
            "server VmRSS: {before} KiB before, {after} KiB with {} idle listens: {each} KiB each",
            held.len()
        );
        assert!(
            each <= IDLE_STREAM_BOUND_KIB,
            "{each} KiB per idle listen stream (bound {IDLE_STREAM_BOUND_KIB})"
        );
        // Each is still told of a change.
        assert_eq!(post_message(addr, Proto::H1, &publish(2, 1)).await.status, 200);
        for listen in held.iter_mut().step_by(50) {
            assert_eq!(
                listen.next_message().await.expect("a change")["method"],
                "notifications/tools/list_changed"
            );
        }
    })
    .await
    .expect("within two minutes");
}
