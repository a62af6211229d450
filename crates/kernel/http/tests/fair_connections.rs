//! Fair shares of the connection slots: a client is its address prefix, and when every slot is held
//! the client holding the most gives one up to a smaller one (`serve/limits.rs`).
//!
//! In a test binary of its own: the attack at the default arithmetic holds 4,096 HTTP/2 connections
//! (over 8,000 descriptors, both ends being this process), which would crowd the timing of any other
//! test. All traffic is on 127.0.0.x: 127.0.0.2 … stand in for other peers.

#[path = "integration/support/mod.rs"]
mod support;

use std::convert::Infallible;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::ops::RangeInclusive;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use mcp_kernel_http::{
    AddressPrefixes, ClientNetwork, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_PEER, PeerAddr,
    ServeOptions,
};
use serde_json::{Value, json};
use support::edge::{connect_from, loopback};
use support::*;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The bound of the attack at the default arithmetic: opening 4,096 HTTP/2 connections in a debug
/// build takes seconds, the probes a few more.
const ATTACK_BOUND: Duration = Duration::from_secs(240);
/// The legitimate client's probes during the attack, each on a fresh connection.
const PROBES: usize = 20;
/// The bound of one probe: connect, request, answer.
const PROBE_BOUND: Duration = Duration::from_secs(5);
/// How long a newcomer closed at accept may take to see its connection closed.
const AT_ACCEPT: Duration = Duration::from_secs(2);

/// The tests of this binary run one at a time: the attack's thousands of connections would crowd the
/// timing of the others (a newcomer "admitted at once", not after a 1.5 s call).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn start_with(options: ServeOptions) -> Running {
    serve_with(builder().authorize(|_| Ok(())).build(), options).await
}

/// Makes sure this process may hold `needed` descriptors, raising the soft limit within the hard one;
/// `Err` says why it cannot (the test then skips, saying so).
fn descriptors_for(needed: u64) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        // `None` is no limit.
        if limit.current.is_none_or(|soft| soft >= needed) {
            return Ok(());
        }
        if let Some(hard) = limit.maximum.filter(|hard| *hard < needed) {
            return Err(format!(
                "it needs {needed} open files and the hard limit is {hard} (raise it: ulimit -Hn {needed})"
            ));
        }
        setrlimit(Resource::Nofile, Rlimit { current: Some(needed), maximum: limit.maximum })
            .map_err(|error| format!("raising the soft open-file limit to {needed} failed: {error}"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(format!("it needs {needed} open files, and reads and raises the limit on Linux only"))
    }
}

/// A `POST /mcp` of `message` over HTTP/1.1, head and body.
fn raw_post(addr: SocketAddr, message: &Value) -> Vec<u8> {
    let body = bytes(message);
    let mut fields: Vec<(String, String)> = headers_for(message)
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), value.to_str().expect("ASCII").to_owned()))
        .collect();
    fields.push(("content-length".to_owned(), body.len().to_string()));
    let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    let mut request = raw_head("POST", addr, &fields);
    request.extend_from_slice(&body);
    request
}

fn tools_list() -> Value {
    request(1, "tools/list", json!({}))
}

/// One request on an HTTP/1.1 connection, its response read whole.
async fn exchange_h1(stream: &mut TcpStream, addr: SocketAddr, message: &Value) -> RawResponse {
    stream.write_all(&raw_post(addr, message)).await.expect("write the request");
    read_raw_response(stream).await
}

/// An HTTP/1.1 connection from `127.0.0.{source}` that has completed one `tools/list`, kept alive.
async fn kept_alive(addr: SocketAddr, source: u8) -> TcpStream {
    let mut stream = connect_from(loopback(source), addr).await.expect("connect");
    let reply = exchange_h1(&mut stream, addr, &tools_list()).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("connection"), None, "kept alive: {reply:?}");
    stream
}

/// An HTTP/2 connection from `source` (the `h2` crate) and the task driving it, which ends when the
/// connection does.
async fn h2_from(
    source: IpAddr,
    addr: SocketAddr,
) -> Result<(h2::client::SendRequest<Bytes>, JoinHandle<()>), String> {
    let stream = connect_from(source, addr).await.map_err(|error| format!("connect: {error}"))?;
    let (sender, connection) =
        h2::client::handshake(stream).await.map_err(|error| format!("handshake: {error}"))?;
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok((sender, driver))
}

/// Sends `message` on an HTTP/2 connection and reads the response whole: its status.
async fn h2_exchange(
    sender: &h2::client::SendRequest<Bytes>,
    addr: SocketAddr,
    message: &Value,
) -> Result<StatusCode, String> {
    let failed = |error: h2::Error| error.to_string();
    let mut sender = sender.clone().ready().await.map_err(failed)?;
    let (response, mut body) =
        sender.send_request(h2_request(addr, headers_for(message)), false).map_err(failed)?;
    body.send_data(bytes(message), true).map_err(failed)?;
    let response = response.await.map_err(failed)?;
    let status = response.status();
    let mut body = response.into_body();
    for _ in 0..10_000 {
        match body.data().await {
            None => return Ok(status),
            Some(chunk) => {
                let _ = body.flow_control().release_capacity(chunk.map_err(failed)?.len());
            }
        }
    }
    Err("an endless response".to_owned())
}

/// The legitimate client: one `tools/list` on a fresh connection from `source`, which is then closed.
async fn probe(addr: SocketAddr, source: IpAddr, proto: Proto) -> Result<StatusCode, String> {
    match proto {
        Proto::H1 => {
            let mut stream = connect_from(source, addr).await.map_err(|error| format!("connect: {error}"))?;
            let reply = exchange_h1(&mut stream, addr, &tools_list()).await;
            StatusCode::from_u16(reply.status).map_err(|error| error.to_string())
        }
        Proto::H2 => {
            let (sender, driver) = h2_from(source, addr).await?;
            let status = h2_exchange(&sender, addr, &tools_list()).await;
            // With its last handle gone the client closes the connection; the server sees it end.
            drop(sender);
            let _ = tokio::time::timeout(Duration::from_secs(2), driver).await;
            status
        }
    }
}

/// One of the attacker's connections.
struct Held {
    from: u8,
    _sender: h2::client::SendRequest<Bytes>,
    driver: JoinHandle<()>,
}

/// The attacker: HTTP/2 connections from several loopback addresses, each of which completed a
/// request (so none is closed for saying nothing), held open.
struct Attack {
    addr: SocketAddr,
    held: Vec<Held>,
    /// The sources of connections the server has closed, to be opened again.
    lost: Vec<u8>,
}

/// One attacker connection from `127.0.0.{from}` that completed a `tools/list`.
async fn attacker_connection(addr: SocketAddr, from: u8) -> Result<Held, String> {
    let opened = tokio::time::timeout(Duration::from_secs(10), async {
        let (sender, driver) = h2_from(loopback(from), addr).await?;
        match h2_exchange(&sender, addr, &tools_list()).await? {
            StatusCode::OK => Ok(Held { from, _sender: sender, driver }),
            status => Err(format!("answered {status}")),
        }
    })
    .await;
    opened.unwrap_or_else(|_| Err("no answer within 10 s".to_owned()))
}

impl Attack {
    /// `per_source` connections from each of `sources` (127.0.0.n), 64 being opened at a time.
    async fn open(addr: SocketAddr, sources: RangeInclusive<u8>, per_source: usize) -> Attack {
        let wanted: Vec<u8> = sources.flat_map(|n| std::iter::repeat_n(n, per_source)).collect();
        let opened: Vec<Result<Held, String>> = futures_util::stream::iter(wanted)
            .map(|from| attacker_connection(addr, from))
            .buffer_unordered(64)
            .collect()
            .await;
        let mut held = Vec::with_capacity(opened.len());
        for connection in opened {
            held.push(connection.unwrap_or_else(|error| panic!("an attacker connection: {error}")));
        }
        Attack { addr, held, lost: Vec::new() }
    }

    /// Forgets the connections the server has closed; how many there were.
    fn reap(&mut self) -> usize {
        let before = self.held.len();
        let lost = &mut self.lost;
        self.held.retain(|held| {
            let closed = held.driver.is_finished();
            if closed {
                lost.push(held.from);
            }
            !closed
        });
        before - self.held.len()
    }

    /// Waits (within `within`) until the server has closed at least one more connection.
    async fn one_closed_within(&mut self, within: Duration) -> bool {
        let until = Instant::now() + within;
        while Instant::now() < until {
            if self.reap() > 0 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }

    /// Opens again, from the same sources, the connections the server closed, until none has been
    /// closed for 200 ms: every slot is held again. A connection opened back before its lost one has
    /// ended on the server is closed at accept (its source still holds its share) and is retried.
    async fn take_back(&mut self) {
        let mut quiet = 0;
        for _ in 0..1_000 {
            self.reap();
            match self.lost.pop() {
                Some(from) => {
                    quiet = 0;
                    match attacker_connection(self.addr, from).await {
                        Ok(held) => self.held.push(held),
                        Err(_) => {
                            self.lost.push(from);
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    }
                }
                None if quiet >= 4 => return,
                None => {
                    quiet += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        panic!("the attacker could not take its slots back: {} still lost", self.lost.len());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legitimate_client_is_served_while_eight_addresses_hold_every_slot_at_the_defaults() {
    // Both ends of every connection, the connections on their way out, and room for the rest.
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let needed = 2 * (DEFAULT_MAX_CONNECTIONS as u64 + 256) + 512;
    if let Err(why) = descriptors_for(needed) {
        eprintln!(
            "SKIPPED a_legitimate_client_is_served_while_eight_addresses_hold_every_slot_at_the_defaults: {why}"
        );
        return;
    }
    let attack = async {
        assert_eq!((DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_PEER), (4_096, 512));
        let server = start_with(ServeOptions::default()).await;
        let started = Instant::now();
        // 127.0.0.2 ..= 127.0.0.9, 512 each: every one of the 4,096 slots.
        let mut attack = Attack::open(server.addr, 2..=9, DEFAULT_MAX_CONNECTIONS_PER_PEER).await;
        let opened = started.elapsed();
        assert_eq!(attack.held.len(), DEFAULT_MAX_CONNECTIONS);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            attack.reap(),
            0,
            "the server closed none of the attacker's connections while slots were free"
        );
        let mut times = Vec::with_capacity(PROBES);
        for round in 0..PROBES {
            let proto = if round % 2 == 0 { Proto::H1 } else { Proto::H2 };
            let sent = Instant::now();
            let answered = tokio::time::timeout(PROBE_BOUND, probe(server.addr, loopback(20), proto)).await;
            let status = answered.unwrap_or_else(|_| {
                panic!("probe {round} ({proto:?}) was not answered within {PROBE_BOUND:?}")
            });
            assert_eq!(status, Ok(StatusCode::OK), "probe {round} ({proto:?})");
            times.push(sent.elapsed());
            // Its slot was the attacker's: one of the attacker's connections was told to close.
            assert!(
                attack.one_closed_within(Duration::from_secs(5)).await,
                "probe {round}: no attacker connection was closed, so the slots were not all held"
            );
            // The attacker takes it back: every slot is held again for the next probe.
            attack.take_back().await;
            assert_eq!(attack.held.len(), DEFAULT_MAX_CONNECTIONS, "after probe {round}");
        }
        times.sort();
        let (p50, p99) = (times[times.len() / 2], times[(times.len() * 99 / 100).min(times.len() - 1)]);
        eprintln!(
            "4,096 attacker connections opened in {opened:?}; {PROBES} probes all 200: p50 {p50:?}, p99 {p99:?}; \
             {:?} in all",
            started.elapsed()
        );
        drop(attack);
    };
    tokio::time::timeout(ATTACK_BOUND, attack)
        .await
        .expect("the attack test did not finish within its bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomer_from_a_biggest_holder_is_closed_at_accept_while_every_slot_is_held() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    bounded(async {
        let server = start_with(ServeOptions::new().max_connections(8)).await;
        let mut held = Vec::new();
        for source in [2, 3] {
            for _ in 0..4 {
                held.push(kept_alive(server.addr, source).await);
            }
        }
        for source in [2, 3] {
            let mut newcomer =
                connect_from(loopback(source), server.addr).await.expect("the kernel accepts the handshake");
            assert!(
                closed_within(&mut newcomer, AT_ACCEPT).await,
                "127.0.0.{source} holds 4, as many as anyone: its newcomer is closed at accept"
            );
        }
        // Nobody was told to close for them.
        for stream in &mut held {
            assert!(!closed_within(stream, Duration::from_millis(50)).await, "a held connection was closed");
        }
        // A client holding fewer is served, and one of the biggest holders' connections goes.
        let reply = probe(server.addr, loopback(4), Proto::H1).await;
        assert_eq!(reply, Ok(StatusCode::OK));
        let mut closed = 0;
        for stream in &mut held {
            closed += usize::from(closed_within(stream, Duration::from_millis(300)).await);
        }
        assert_eq!(closed, 1, "one connection of a biggest holder made room");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomer_evicts_the_longest_idle_connection_of_the_biggest_holder() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    bounded(async {
        let server = start_with(ServeOptions::new().max_connections(4)).await;
        let pause = Duration::from_millis(100);
        // 127.0.0.2 holds three, 127.0.0.3 one: every slot.
        let mut biggest = Vec::new();
        for _ in 0..3 {
            biggest.push(kept_alive(server.addr, 2).await);
            tokio::time::sleep(pause).await;
        }
        let _other = kept_alive(server.addr, 3).await;
        tokio::time::sleep(pause).await;
        // The oldest is used again: now the second has been idle the longest.
        let reply = exchange_h1(&mut biggest[0], server.addr, &tools_list()).await;
        assert_eq!(reply.status, 200);
        tokio::time::sleep(pause).await;
        assert_eq!(probe(server.addr, loopback(4), Proto::H1).await, Ok(StatusCode::OK));
        assert!(
            closed_within(&mut biggest[1], AT_ACCEPT).await,
            "the longest-idle connection of the biggest holder was told to close"
        );
        for kept in [0, 2] {
            assert!(
                !closed_within(&mut biggest[kept], Duration::from_millis(200)).await,
                "connection {kept} was closed"
            );
        }
        let reply = exchange_h1(&mut biggest[0], server.addr, &tools_list()).await;
        assert_eq!(reply.status, 200, "the others still serve: {reply:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_told_to_close_with_a_request_in_flight_finishes_it() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    bounded(async {
        for proto in BOTH {
            let server = start_with(ServeOptions::new().max_connections(2)).await;
            let slow = request(7, "tools/call", json!({"name": "slow", "arguments": {"ms": 1_500}}));
            // 127.0.0.2 holds both slots, each with a call in flight: none is idle, the oldest goes.
            let mut oldest_h1 = None;
            let mut oldest_h2 = None;
            match proto {
                Proto::H1 => {
                    let mut stream = connect_from(loopback(2), server.addr).await.expect("connect");
                    stream.write_all(&raw_post(server.addr, &slow)).await.expect("write");
                    oldest_h1 = Some(stream);
                }
                Proto::H2 => {
                    let (sender, driver) = h2_from(loopback(2), server.addr).await.expect("h2");
                    let call = {
                        let (sender, addr, slow) = (sender.clone(), server.addr, slow.clone());
                        tokio::spawn(async move { h2_exchange(&sender, addr, &slow).await })
                    };
                    oldest_h2 = Some((sender, driver, call));
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            let mut newer = connect_from(loopback(2), server.addr).await.expect("connect");
            newer.write_all(&raw_post(server.addr, &slow)).await.expect("write");
            tokio::time::sleep(Duration::from_millis(200)).await;
            let sent = Instant::now();
            assert_eq!(probe(server.addr, loopback(4), Proto::H1).await, Ok(StatusCode::OK));
            assert!(sent.elapsed() < Duration::from_millis(1_000), "admitted at once, not after the calls");
            if let Some(mut stream) = oldest_h1 {
                let reply = read_raw_response(&mut stream).await;
                assert_eq!(reply.status, 200, "{reply:?}");
                assert_eq!(reply.json()["result"]["structuredContent"]["slept"], 1_500, "{reply:?}");
                assert_eq!(
                    reply.header("connection"),
                    Some("close"),
                    "the answer says it is the last: {reply:?}"
                );
                assert!(closed_within(&mut stream, AT_ACCEPT).await, "and the connection closes after it");
            }
            if let Some((sender, driver, call)) = oldest_h2 {
                let status = call.await.expect("joined");
                assert_eq!(status, Ok(StatusCode::OK), "the stream in flight is served to its end");
                drop(sender);
                let ended = tokio::time::timeout(AT_ACCEPT, driver).await;
                assert!(ended.is_ok(), "and the connection closes after it (GOAWAY)");
            }
            let reply = read_raw_response(&mut newer).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.header("connection"), None, "the newer connection was not told: {reply:?}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shorter_ipv4_prefix_makes_neighbouring_addresses_one_client() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    bounded(async {
        for (prefixes, one_client) in
            [(AddressPrefixes::new(24, 64), true), (AddressPrefixes::default(), false)]
        {
            let options = ServeOptions::new().max_connections_per_peer(2).client_prefixes(prefixes);
            let server = start_with(options).await;
            let _two = kept_alive(server.addr, 2).await;
            let _three = kept_alive(server.addr, 3).await;
            let mut four =
                connect_from(loopback(4), server.addr).await.expect("the kernel accepts the handshake");
            if one_client {
                assert!(
                    closed_within(&mut four, AT_ACCEPT).await,
                    "127.0.0.2, .3 and .4 are one /24 client, whose share of 2 is held"
                );
            } else {
                let reply = exchange_h1(&mut four, server.addr, &tools_list()).await;
                assert_eq!(reply.status, 200, "each address is its own client by default: {reply:?}");
            }
        }
    })
    .await;
}

/// Serves a service that answers each request with its `ClientNetwork` and `PeerAddr`, as text.
fn serve_echo(listener: TcpListener, options: ServeOptions) -> tokio::sync::oneshot::Sender<()> {
    let service = tower::service_fn(|request: Request<hyper::body::Incoming>| async move {
        let extensions = request.extensions();
        let network = extensions.get::<ClientNetwork>().map(ToString::to_string).unwrap_or_default();
        let peer = extensions.get::<PeerAddr>().map(|peer| peer.0.ip().to_string()).unwrap_or_default();
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(format!("{network} {peer}")))))
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = stopped.await;
    };
    tokio::spawn(mcp_kernel_http::serve_with(listener, service, shutdown, options));
    stop
}

/// What the echo service at `addr` says to a request from `source`.
async fn echoed(addr: SocketAddr, source: IpAddr) -> String {
    let mut stream = connect_from(source, addr).await.expect("connect");
    stream.write_all(&raw_head("GET", addr, &[])).await.expect("write");
    let reply = read_raw_response(&mut stream).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    String::from_utf8(reply.body).expect("text")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_puts_the_clients_network_in_every_request_beside_the_peer_address() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    bounded(async {
        for (prefixes, expected) in [
            (AddressPrefixes::default(), "127.0.0.5/32 127.0.0.5"),
            (AddressPrefixes::new(24, 64), "127.0.0.0/24 127.0.0.5"),
        ] {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("address");
            let _stop = serve_echo(listener, ServeOptions::new().client_prefixes(prefixes));
            assert_eq!(echoed(addr, loopback(5)).await, expected);
        }
        // Over IPv6 the client is the peer's /64 (one address here: ::1 is the only IPv6 loopback;
        // the grouping of a /64 is pinned in the unit tests of `client.rs` and `serve/limits.rs`).
        match TcpListener::bind("[::1]:0").await {
            Ok(listener) => {
                let addr = listener.local_addr().expect("address");
                let _stop = serve_echo(listener, ServeOptions::new());
                assert_eq!(echoed(addr, IpAddr::V6(Ipv6Addr::LOCALHOST)).await, "::/64 ::1");
            }
            Err(error) => eprintln!("the IPv6 part skipped: this machine has no ::1 ({error})"),
        }
    })
    .await;
}
