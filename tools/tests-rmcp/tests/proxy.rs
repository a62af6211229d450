//! Many stateless instances behind a real proxy: three `cluster-host` processes behind nginx,
//! configured exactly as `docs/deploy.md` shows (`tests/proxy/nginx.conf`), driven by rmcp's client.
//!
//! The tests that run nginx are ignored in the ordinary run: `cargo xtask edge proxy` runs them, with
//! nginx found at `/usr/sbin/nginx` or `MCP_KERNEL_NGINX`. `--nocapture` prints the counts of the
//! rolling restart. Everything binds 127.0.0.1; every wait is bounded.

#[path = "proxy/client.rs"]
#[allow(dead_code)]
mod client;
#[path = "proxy/cluster.rs"]
#[allow(dead_code)]
mod cluster;
#[allow(dead_code)]
mod common;
#[path = "proxy/load.rs"]
mod load;

use std::collections::BTreeSet;

use client::{call, close, connect, structured};
use cluster::{Cluster, NGINX_CONF, key};
use common::{step, to_json};
use rmcp::ServiceError;
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

/// The deployment guide, whose nginx block must be the tested configuration.
const DEPLOY_MD: &str = include_str!("../../../docs/deploy.md");

/// The text of the one ```nginx block of `markdown`.
fn nginx_block(markdown: &str) -> Option<String> {
    let mut blocks = markdown.split("\n```nginx\n").skip(1);
    let block = blocks.next()?;
    if blocks.next().is_some() {
        return None;
    }
    let (body, _) = block.split_once("\n```\n")?;
    Some(format!("{body}\n"))
}

#[test]
fn the_documented_nginx_configuration_is_the_tested_one() {
    let documented = nginx_block(DEPLOY_MD).expect("docs/deploy.md holds exactly one ```nginx block");
    assert_eq!(
        documented, NGINX_CONF,
        "docs/deploy.md shows tools/tests-rmcp/tests/proxy/nginx.conf verbatim"
    );
}

#[test]
fn the_configuration_is_filled_with_the_addresses_given() {
    let at = |port: u16| std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let conf = cluster::render(at(8080), [at(4001), at(4002), at(4003)]);
    for line in
        ["listen 127.0.0.1:8080;", "server 127.0.0.1:4001 max_fails=0;", "server 127.0.0.1:4003 max_fails=0;"]
    {
        assert!(conf.contains(line), "{line} in\n{conf}");
    }
}

#[test]
fn the_keep_alive_race_is_told_from_other_proxy_errors() {
    let race = "2026/12/02 00:59:17 [error] 7044#7044: *6 upstream prematurely closed connection while reading response header from upstream, client: 127.0.0.1";
    let reset = "[error] 1#1: *2 recv() failed (104: Connection reset by peer) while reading response header from upstream";
    let refused = "[error] 1#1: *7 connect() failed (111: Connection refused) while connecting to upstream";
    assert!(load::is_keep_alive_race(race) && load::is_keep_alive_race(reset));
    assert!(!load::is_keep_alive_race(refused));
    assert!(!load::is_keep_alive_race("[error] 1#1: *11 no live upstreams while connecting to upstream"));
}

/// The JSON-RPC body and headers of a raw `2026-07-28` request through the proxy.
fn raw_call(method: &str, name: Option<&str>, params: Value) -> (Value, Vec<(&'static str, String)>) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", method.to_owned()),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name", name.to_owned()));
    }
    (body, headers)
}

/// Posts `body` to `url` with `headers` (and any `extra`), bounded; the status, headers and body.
async fn post(
    url: &str,
    body: reqwest::Body,
    headers: &[(&str, String)],
) -> (u16, reqwest::header::HeaderMap, String) {
    let http = reqwest::Client::builder().no_proxy().build().expect("reqwest client");
    let mut request = http.post(url).body(body);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = step("POST", request.send()).await;
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, step("response body", response.text()).await)
}

/// Every call rmcp makes through the proxy succeeds, over HTTP/1.1, and more than one instance answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn every_rmcp_call_through_the_proxy_succeeds_over_http_1_1() {
    let cluster = Cluster::start([&key(1), &key(1), &key(1)]).await;
    let (client, harness) = connect(&cluster.url(), Some("alice")).await;
    let mut answered = BTreeSet::new();

    let tools = to_json(&step("tools/list", client.list_all_tools()).await);
    let names: BTreeSet<&str> =
        tools.as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, BTreeSet::from(["confirm", "confirm_twice", "count", "slow", "whoami"]), "{tools}");
    for _ in 0..3 {
        let whoami = structured(&step("whoami", client.call_tool(call("whoami", json!({})))).await);
        assert_eq!(whoami["caller"], "alice", "{whoami}");
        answered.insert(whoami["instance"].as_str().unwrap_or_default().to_owned());
    }
    let confirmed =
        structured(&step("confirm", client.call_tool(call("confirm", json!({"item": "x"})))).await);
    assert_eq!(confirmed["confirmed"], true, "{confirmed}");
    assert_eq!(harness.asked().len(), 1, "one elicitation, answered by the handler");
    let counted = structured(
        &step("count", client.call_tool(call("count", json!({"steps": 2, "interval_ms": 10})))).await,
    );
    assert_eq!(counted["steps"], 2, "{counted}");
    let slept = structured(&step("slow", client.call_tool(call("slow", json!({"ms": 10})))).await);
    assert_eq!(slept["slept_ms"], 10, "{slept}");
    let read = to_json(
        &step("resources/read", client.read_resource(ReadResourceRequestParams::new("cluster://instance")))
            .await,
    );
    let text = read["contents"][0]["text"].as_str().unwrap_or_default();
    assert!(["a", "b", "c"].contains(&text), "{read}");
    for answer in [&confirmed, &counted, &slept] {
        answered.insert(answer["instance"].as_str().unwrap_or_default().to_owned());
    }
    answered.insert(text.to_owned());
    close(client).await;

    eprintln!("instances that answered: {answered:?}");
    assert!(answered.len() > 1, "round-robin spreads the calls: {answered:?}");
    let log = cluster.nginx.access_log();
    assert!(!log.is_empty());
    for line in &log {
        assert!(line.contains("\"POST /mcp HTTP/1.1\" HTTP/1.1 200 "), "{line}");
    }
}

/// The outcome of one whole `confirm` call: who asked, who answered, or the error.
async fn confirm_once(client: &client::Client) -> Result<(String, String), ServiceError> {
    let result =
        tokio::time::timeout(client::CALL, client.call_tool(call("confirm", json!({"item": "rotation"}))))
            .await
            .expect("confirm within its deadline")?;
    let answer = structured(&result);
    assert_eq!(answer["confirmed"], true, "{answer}");
    let field = |name: &str| answer[name].as_str().unwrap_or_default().to_owned();
    Ok((field("asked_by"), field("instance")))
}

/// A `requestState` sealed by one instance opens on another that holds the same key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn a_retry_answered_by_another_instance_with_the_same_keys_succeeds() {
    let cluster = Cluster::start([&key(1), &key(1), &key(1)]).await;
    let (client, harness) = connect(&cluster.url(), None).await;
    let mut crossed = 0;
    for round in 0..3 {
        let (asked_by, answered_by) = confirm_once(&client).await.expect("the retry is accepted");
        let asked = &harness.asked()[round];
        assert_eq!(
            asked,
            &format!("instance {asked_by} asks: confirm rotation?"),
            "the state names who asked"
        );
        eprintln!("round {round}: asked by {asked_by}, answered by {answered_by}");
        crossed += usize::from(asked_by != answered_by);
    }
    close(client).await;
    assert!(crossed > 0, "round-robin sends some retries to another instance");
}

/// The refusal the core gives a `requestState` its sealer cannot open.
fn assert_tampered_state(error: &ServiceError) {
    match error {
        ServiceError::McpError(error) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            assert_eq!(
                error.message, "Invalid params: requestState failed verification for this request",
                "{error:?}"
            );
        }
        other => panic!("expected the tampered-state refusal, got {other:?}"),
    }
}

/// Instances with different keys refuse each other's state, as a tampered one (-32602).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn a_retry_answered_by_an_instance_with_other_keys_is_refused_as_tampered() {
    let cluster = Cluster::start([&key(1), &key(2), &key(3)]).await;
    let (client, _harness) = connect(&cluster.url(), None).await;
    let mut refused = 0;
    for round in 0..3 {
        match confirm_once(&client).await {
            Ok((asked_by, answered_by)) => {
                assert_eq!(asked_by, answered_by, "only the sealing instance opens it")
            }
            Err(error) => {
                eprintln!("round {round}: refused: {error}");
                assert_tampered_state(&error);
                refused += 1;
            }
        }
    }
    close(client).await;
    assert!(refused > 0, "round-robin sends some retries to an instance with another key");
}

/// A key rotation in three rollouts (`HmacSealer`'s "Rotating the key": add, promote, retire), each
/// caught half done — some instances on the new list, some on the one before — never refuses a retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn a_key_rotation_half_rolled_out_never_refuses_a_retry() {
    let (old, new) = (key(1), key(2));
    let (added, promoted) = (format!("{old},{new}"), format!("{new},{old}"));
    let halfway: [[&str; 3]; 3] = [
        [&old, &added, &added],         // adding: `a` knows only the old key
        [&promoted, &promoted, &added], // promoting: `a`, `b` seal with the new key, `c` with the old
        [&new, &new, &promoted],        // retiring: `c` still lists the old key
    ];
    for keys in halfway {
        let cluster = Cluster::start(keys).await;
        let (client, _harness) = connect(&cluster.url(), None).await;
        for _ in 0..6 {
            let (asked_by, answered_by) =
                confirm_once(&client).await.expect("no retry is refused mid-rotation");
            eprintln!(
                "keys {:?}: asked by {asked_by}, answered by {answered_by}",
                keys.map(|k| k.len() / 64)
            );
        }
        close(client).await;
    }
}

/// Progress notifications pass through the proxy as they are sent: the first arrives before the
/// instance sends the last, which it could not if the proxy held the stream back until its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn progress_arrives_through_the_proxy_as_it_is_sent() {
    let cluster = Cluster::start([&key(1), &key(1), &key(1)]).await;
    let (client, harness) = connect(&cluster.url(), None).await;
    let mut params = call("count", json!({"steps": 5, "interval_ms": 200}));
    params.meta = Some(serde_json::from_value(json!({"progressToken": 7})).expect("a progress token"));
    let counted = structured(&step("count", client.call_tool(params)).await);
    assert_eq!(counted["steps"], 5, "{counted}");
    close(client).await;

    let progress = harness.progress();
    for arrived in &progress {
        eprintln!(
            "progress {}: sent at {} ms, arrived at {} ms",
            arrived.progress, arrived.sent_ms, arrived.arrived_ms
        );
    }
    let values: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert_eq!(values, [1.0, 2.0, 3.0, 4.0, 5.0], "every notification, in order");
    let (first, last) = (&progress[0], &progress[4]);
    assert!(last.sent_ms > 0, "the instance stamps each notification");
    assert!(
        first.arrived_ms < last.sent_ms,
        "the first notification arrived ({} ms) before the last was sent ({} ms)",
        first.arrived_ms,
        last.sent_ms
    );
}

/// A call in flight on an instance when it is told to stop completes, through the proxy, and the
/// instance exits cleanly afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn a_call_in_flight_when_its_instance_stops_completes_through_the_proxy() {
    let mut cluster = Cluster::start([&key(1), &key(1), &key(1)]).await;
    let url = cluster.url();
    // Three slow calls at once. Where each lands depends on the order in which the three clients'
    // requests (their discovery first) reach nginx's round-robin turn, so the instance stopped is
    // one seen holding a call once all three are held.
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                let (client, _) = connect(&url, None).await;
                let slept = step("slow", client.call_tool(call("slow", json!({"ms": 3000})))).await;
                close(client).await;
                structured(&slept)
            })
        })
        .collect();
    let in_flight = |h: &Value| h["in_flight"].as_u64().unwrap_or(0);
    let held = cluster
        .wait_all_health("three calls in flight", |docs| docs.iter().map(in_flight).sum::<u64>() == 3)
        .await;
    let holder = held.iter().position(|h| in_flight(h) >= 1).expect("an instance holds a call");
    let stopped = &mut cluster.instances[holder];
    let status = stopped.terminate().await;
    assert!(status.success(), "{} drained and exited cleanly: {status}", stopped.name);
    let mut answered = BTreeSet::new();
    for task in calls {
        let slept = step("slow call", task).await;
        assert_eq!(slept["slept_ms"], 3000, "{slept}");
        answered.insert(slept["instance"].as_str().unwrap_or_default().to_owned());
    }
    let name = stopped.name.clone();
    assert!(answered.contains(&name), "{name} answered the call it held when it was stopped: {answered:?}");
    let draining = stopped.stderr.all();
    assert!(
        draining.iter().any(|l| l.contains("draining (") && !l.contains("draining (0 calls")),
        "{name} drained the calls it held: {draining:?}"
    );
}

/// A rolling restart — each instance in turn stopped (SIGTERM, drained) and started again on its
/// port — under a bounded load through the proxy loses no request: the drain never closes an idle
/// kept-alive connection under nginx (the keep-alive race of `docs/deploy.md`, "Rolling restarts"),
/// and nginx, whose upstream keep-alive timeout is below the instances' idle deadline, closes it first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn a_rolling_restart_under_load_loses_no_request() {
    let mut cluster = Cluster::start([&key(1), &key(1), &key(1)]).await;
    let report = load::rolling_restart(&mut cluster).await;
    println!("{report}");
    assert_eq!(report.failed, 0, "no call failed:\n{report}");
    assert_eq!(report.races, 0, "nginx logged no keep-alive race:\n{report}");
    assert!(report.server_errors.is_empty(), "no 5xx from the proxy:\n{report}");
}

/// nginx as configured caches no MCP answer: a second caller sending the very same bytes never gets
/// the first caller's answer, and the same caller asking twice is answered twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn the_proxy_shares_no_answer_between_callers() {
    let cluster = Cluster::start([&key(1), &key(1), &key(1)]).await;
    let (body, headers) = raw_call("tools/call", Some("whoami"), json!({"name": "whoami", "arguments": {}}));
    let body = body.to_string();
    let mut seen = BTreeSet::new();
    for caller in ["alice", "bob", "alice", "bob"] {
        let mut headers = headers.clone();
        headers.push(("authorization", format!("Bearer {caller}")));
        let (status, _, text) = post(&cluster.url(), body.clone().into(), &headers).await;
        assert_eq!(status, 200, "{text}");
        let answer: Value = serde_json::from_str(&text).expect("a JSON answer");
        let whoami = &answer["result"]["structuredContent"];
        assert_eq!(whoami["caller"], caller, "each caller gets its own answer: {answer}");
        assert!(
            seen.insert((whoami["instance"].to_string(), whoami["seq"].to_string())),
            "a fresh answer: {answer}"
        );
    }

    // `tools/list` says it may be shared for a minute; the HTTP answer carries no freshness of its own,
    // so no HTTP cache may store it (RFC 9110 §9.3.3: a POST answer needs explicit freshness).
    let (body, headers) = raw_call("tools/list", None, json!({}));
    let (status, response_headers, text) = post(&cluster.url(), body.to_string().into(), &headers).await;
    assert_eq!(status, 200, "{text}");
    let listed: Value = serde_json::from_str(&text).expect("a JSON answer");
    assert_eq!(listed["result"]["ttlMs"], 60_000, "{listed}");
    assert_eq!(listed["result"]["cacheScope"], "public", "{listed}");
    for name in ["cache-control", "expires", "x-accel-expires"] {
        assert!(response_headers.get(name).is_none(), "{name} on {response_headers:?}");
    }
}

/// The proxy forwards the client's `Host` and `Origin`, so the instances' DNS-rebinding and origin
/// checks still hold behind it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn the_proxy_forwards_host_and_origin_to_the_instances_checks() {
    let cluster = Cluster::start([&key(1), &key(1), &key(1)]).await;
    let (body, headers) = raw_call("tools/call", Some("whoami"), json!({"name": "whoami", "arguments": {}}));
    let with = |name: &'static str, value: &str| {
        let mut headers = headers.clone();
        headers.push((name, value.to_owned()));
        headers
    };
    let (status, granted, text) =
        post(&cluster.url(), body.to_string().into(), &with("origin", "http://app.localhost")).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        granted.get("access-control-allow-origin").map(|v| v.as_bytes()),
        Some(&b"http://app.localhost"[..])
    );
    let (status, _, text) =
        post(&cluster.url(), body.to_string().into(), &with("origin", "http://evil.example")).await;
    assert_eq!(status, 403, "a foreign Origin is refused by the instance: {text}");
    let (status, _, text) =
        post(&cluster.url(), body.to_string().into(), &with("host", "evil.example")).await;
    assert_eq!(status, 421, "a foreign Host is refused by the instance: {text}");
}

/// A chunked request body (which an instance refuses, 411) reaches the instances whole, with a
/// `Content-Length`: nginx reads the body before it picks an instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn a_chunked_body_reaches_an_instance_with_a_content_length() {
    let cluster = Cluster::start([&key(1), &key(1), &key(1)]).await;
    let (body, headers) = raw_call("tools/call", Some("whoami"), json!({"name": "whoami", "arguments": {}}));
    let status = post_chunked(cluster.instances[0].addr, &body.to_string(), &headers).await;
    assert_eq!(status, 411, "an instance alone refuses a chunked body");
    let status = post_chunked(cluster.nginx.addr, &body.to_string(), &headers).await;
    assert_eq!(status, 200, "through the proxy it is answered");
}

/// Posts `body` to `/mcp` at `addr` in 16-byte chunks over a connection of its own, written by hand
/// (`Transfer-Encoding: chunked`); the answer's status.
async fn post_chunked(addr: std::net::SocketAddr, body: &str, headers: &[(&str, String)]) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut request =
        format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ntransfer-encoding: chunked\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    for chunk in body.as_bytes().chunks(16) {
        request.push_str(&format!("{:x}\r\n{}\r\n", chunk.len(), String::from_utf8_lossy(chunk)));
    }
    request.push_str("0\r\n\r\n");
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        stream.write_all(request.as_bytes()).await?;
        // Up to the end of the status line: a refusing instance closes without reading the body, and
        // the reset that follows may cut the rest of its answer.
        let (mut answer, mut buffer) = (Vec::new(), [0; 1024]);
        while !answer.windows(2).any(|w| w == b"\r\n") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => answer.extend_from_slice(&buffer[..read]),
            }
        }
        Ok::<_, std::io::Error>(answer)
    };
    let answer = String::from_utf8_lossy(&step("a chunked POST", exchange).await).into_owned();
    let status = answer.split(' ').nth(1).and_then(|code| code.parse().ok());
    status.unwrap_or_else(|| panic!("no status line in {answer:?}"))
}
