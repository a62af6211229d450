//! Many instances, one state: three `cluster-host` instances sharing change notifications and tasks
//! through one real Redis, behind nginx (round-robin, the `docs/deploy.md` configuration), driven by
//! rmcp's client — and the faults a deployment meets: an instance killed, Redis restarted empty,
//! Redis paused (a partition, as the instances see it), a rolling restart; and who may read what.
//!
//! A request that must reach one named instance goes to it directly (`Shared::direct`), the rest
//! through the proxy. Every test starts its own `redis-server` (a free 127.0.0.1 port, a temporary
//! directory, a password of its own) and its own cluster; everything binds 127.0.0.1, and every wait
//! and loop is bounded in count and time. Ignored in the ordinary run: `cargo xtask edge redis` runs
//! them, with nginx at `/usr/sbin/nginx` (or `MCP_KERNEL_NGINX`) and redis-server at
//! `/usr/bin/redis-server` (or `MCP_KERNEL_REDIS_SERVER`).

#[path = "proxy/client.rs"]
#[allow(dead_code)]
mod client;
#[path = "proxy/cluster.rs"]
#[allow(dead_code)]
mod cluster;
#[allow(dead_code)]
mod common;
#[path = "shared_state/faults.rs"]
mod faults;
#[path = "shared_state/raw.rs"]
mod raw;
#[path = "shared_state/setup.rs"]
#[allow(dead_code)]
mod setup;
#[path = "shared_state/tasks.rs"]
mod tasks;

use std::time::{Duration, Instant};

use client::{Client, call, close, connect_with, structured};
use common::step;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::Subscription;
use serde_json::{Value, json};
use setup::{LEASE, Shared, nonce};
use tasks::{Seen, answer, cancel, get, listen_tasks, start_job, until, until_status};

/// How long a notification may take to arrive once its change is made.
const ARRIVES: Duration = Duration::from_secs(10);

/// The filter every change listen asks for: list changes, and the one resource's updates.
fn changes() -> SubscriptionFilter {
    SubscriptionFilter::builder().resources_list_changed().resource_subscription("cluster://instance").build()
}

/// Opens a change listen on `client` and checks that all of it is acknowledged.
async fn listen(client: &Client) -> Subscription {
    let subscription = step("subscriptions/listen", client.listen(changes())).await;
    assert_eq!(subscription.acknowledged(), &changes(), "everything asked is honoured");
    subscription
}

/// Waits (bounded) for the two notifications one `touch` makes: the list change and the update.
async fn hears_touch(subscription: &mut Subscription, listener: &str) {
    let (mut listed, mut updated) = (false, false);
    for _ in 0..2 {
        let next = tokio::time::timeout(ARRIVES, subscription.next()).await;
        let next = next.unwrap_or_else(|_| panic!("{listener}: no notification within {ARRIVES:?}"));
        match next.expect("a well-formed notification") {
            Some(ServerNotification::ResourceListChangedNotification(_)) => listed = true,
            Some(ServerNotification::ResourceUpdatedNotification(update)) => {
                assert_eq!(update.params.uri, "cluster://instance");
                updated = true;
            }
            other => panic!("{listener}: not asked for: {other:?}"),
        }
    }
    assert!(listed && updated, "{listener}: a list change and an update");
}

/// Calls `touch` and returns the instance that served it.
async fn touch(client: &Client) -> String {
    let touched = structured(&step("touch", client.call_tool(call("touch", json!({})))).await);
    touched["instance"].as_str().unwrap_or_default().to_owned()
}

/// Connects `token` to each instance directly, declaring tasks: `a`, `b`, `c`.
async fn one_per_instance(shared: &Shared, token: &str) -> Vec<(Client, client::Harness)> {
    let mut clients = Vec::new();
    for index in 0..3 {
        clients.push(connect_with(&shared.direct(index), Some(token), true).await);
    }
    clients
}

/// A listen held on one instance hears a change made through another, and through the proxy any
/// listener hears any change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn a_listen_on_one_instance_hears_a_change_made_through_another() {
    let shared = Shared::start().await;
    let clients = one_per_instance(&shared, "alice").await;
    let mut listens = Vec::new();
    for (client, _) in &clients {
        listens.push(listen(client).await);
    }
    for (made, (client, _)) in clients.iter().enumerate() {
        assert_eq!(touch(client).await, ["a", "b", "c"][made], "the touch is made on its own instance");
        for (held, subscription) in listens.iter_mut().enumerate() {
            hears_touch(subscription, &format!("listen on {} of a touch on {}", held, made)).await;
        }
    }

    // Through the proxy: the listens and the touches land wherever round-robin sends them.
    let (proxied, _) = connect_with(&shared.url(), Some("alice"), true).await;
    let mut through_proxy = vec![listen(&proxied).await, listen(&proxied).await];
    let mut touched_on = Vec::new();
    for _ in 0..3 {
        touched_on.push(touch(&proxied).await);
        for (n, subscription) in through_proxy.iter_mut().enumerate() {
            hears_touch(subscription, &format!("proxied listen {n}")).await;
        }
    }
    eprintln!("touches through the proxy served by {touched_on:?}");
    drop((listens, through_proxy));
    close(proxied).await;
    for (client, _) in clients {
        close(client).await;
    }
}

/// A task created through `a` is polled through `b`, answered through `c` and completes; another,
/// created through `b`, is polled through `c` and cancelled through `a`, and its runner on `b`
/// stops. A listener naming them on each instance hears every status, to the terminal one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn a_task_is_read_answered_and_cancelled_through_any_instance_and_heard_on_every_one() {
    let shared = Shared::start().await;
    let clients = one_per_instance(&shared, "alice").await;
    let listeners = one_per_instance(&shared, "alice").await;
    let [(a, _), (b, _), (c, _)] = &clients[..] else { unreachable!() };
    let seen = Seen::default();

    let asked = start_job(a, 300, true).await;
    let mut listens = Vec::new();
    for (listener, harness) in &listeners {
        listens.push(listen_tasks(listener, harness, &[&asked]).await);
    }
    let waiting = until_status(b, &asked, "input_required", &seen).await;
    assert_eq!(waiting["statusMessage"], "asking on a", "{waiting}");
    assert_eq!(waiting["inputRequests"]["go"]["params"]["message"], "instance a asks: go on?", "{waiting}");
    answer(c, &asked).await;
    let done = until_status(b, &asked, "completed", &seen).await;
    let result = &done["result"]["structuredContent"];
    assert_eq!(result, &json!({"instance": "a", "ms": 300, "answered": true}), "{done}");
    assert_eq!(tasks::get(c, &asked).await.expect("read through c")["result"], done["result"]);

    let running = start_job(b, 60_000, false).await;
    for (listener, harness) in &listeners {
        listens.push(listen_tasks(listener, harness, &[&running]).await);
    }
    let working = until(c, &running, "running", &seen, |t| t["statusMessage"] == "running on b").await;
    assert_eq!(working["status"], "working", "{working}");
    cancel(a, &running).await;
    let cancelled = until_status(c, &running, "cancelled", &seen).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    // The runner on b learnt of the cancellation written through a: its handler stopped.
    let b_instance = &shared.cluster.instances[1];
    b_instance.wait_health("the cancelled job stopped", |h| h["in_flight"] == 0).await;

    // Every listener, on every instance, heard both tasks to their end, and its listen completed.
    for ((_, harness), name) in listeners.iter().zip(["a", "b", "c"]) {
        let asked_heard = tasks::heard(harness, &asked, "completed").await;
        assert!(asked_heard.iter().any(|s| s == "input_required"), "on {name}: {asked_heard:?}");
        assert_eq!(asked_heard.last().map(String::as_str), Some("completed"), "on {name}: {asked_heard:?}");
        let running_heard = tasks::heard(harness, &running, "cancelled").await;
        assert_eq!(
            running_heard.last().map(String::as_str),
            Some("cancelled"),
            "on {name}: {running_heard:?}"
        );
    }
    for listen in listens {
        let ended = tokio::time::timeout(ARRIVES, listen.answer).await;
        let ended = ended.expect("a listen whose tasks all ended completes").expect("the listen's task");
        ended.expect("the listen's completion result");
    }
    let later = get(a, &running).await.expect("read through a");
    assert_eq!(later["status"], "cancelled", "still cancelled: {later}");
    for (client, _) in clients.into_iter().chain(listeners) {
        close(client).await;
    }
}

/// The instance running a task is killed (SIGKILL, no drain): once its lease lapses, the task reads
/// `failed` with a reason through another instance — well before its time to live — and a listener
/// on another instance hears it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn a_task_whose_instance_is_killed_reads_failed_once_its_lease_lapses() {
    let mut shared = Shared::start().await;
    let (proxied, _) = connect_with(&shared.url(), Some("alice"), true).await;
    let seen = Seen::default();
    let id = start_job(&proxied, 600_000, false).await;
    let running = until(&proxied, &id, "running", &seen, |t| {
        t["statusMessage"].as_str().is_some_and(|m| m.starts_with("running on "))
    })
    .await;
    let runner = running["statusMessage"].as_str().and_then(|m| m.strip_prefix("running on ")).unwrap_or("");
    let index = ["a", "b", "c"].iter().position(|name| *name == runner).expect("a runner named");
    let other = (index + 1) % 3;
    let (survivor, heard) = connect_with(&shared.direct(other), Some("alice"), true).await;
    let listen = listen_tasks(&survivor, &heard, &[&id]).await;

    shared.cluster.instances[index].kill().await;
    let killed = Instant::now();
    let failed = until_status(&survivor, &id, "failed", &seen).await;
    let took = killed.elapsed();
    eprintln!("killed {runner}; the task read failed {took:?} later (lease {LEASE:?}): {failed}");
    assert!(failed["statusMessage"].as_str().is_some_and(|m| !m.is_empty()), "a reason: {failed}");
    assert!(failed["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "an error: {failed}");
    assert!(took < LEASE * 3 + Duration::from_secs(2), "failed soon after the lease: {took:?}");
    assert!(took < Duration::from_secs(60), "well before its time to live (600 s)");
    let ended = tokio::time::timeout(ARRIVES, listen.answer).await.expect("the listen completes");
    ended.expect("the listen's task").expect("the listen's completion result");
    let statuses = tasks::heard(&heard, &id, "failed").await;
    assert_eq!(statuses.last().map(String::as_str), Some("failed"), "the listener heard: {statuses:?}");
    assert_eq!(seen.all()[&id], ["working", "failed"], "never any other status");
    close(survivor).await;
    close(proxied).await;
}

/// Redis stopped (SIGKILL) and started again, empty, under open listens: every listen ends with its
/// completion result, each client listens again once Redis is back and hears the next change, and
/// no task is ever shown a status it never had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn redis_restarted_empty_ends_every_listen_and_no_task_shows_a_status_it_never_had() {
    let mut shared = Shared::start().await;
    faults::redis_restarted_empty(&mut shared).await;
}

/// Redis paused (SIGSTOP: connections stay open, nothing is answered, as in a partition): what needs
/// it — `tasks/get`, a listen, a call of a task-only tool — is refused 503 with `retry-after` within
/// the configured response timeout, and plain tool calls go on being served; resumed, it is all
/// served again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn redis_paused_refuses_what_needs_it_promptly_and_serves_the_rest() {
    let shared = Shared::start_with_lease(setup::PAUSED_LEASE).await;
    faults::redis_paused(&shared).await;
}

/// A rolling restart (each instance in turn: SIGTERM, drained, started again) with listens open and
/// tasks running loses no task's result: every task started completes, and its result is read
/// through the proxy; every listen that ends, ends with its completion result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn a_rolling_restart_with_listens_open_and_tasks_running_loses_no_result() {
    let mut shared = Shared::start().await;
    let report = faults::rolling_restart(&mut shared).await;
    println!("{report}");
}

/// Bob, through another instance than the one alice used, is told her task does not exist in exactly
/// the bytes an unknown task gets (`tasks/get`, `tasks/update`, `tasks/cancel`); and what Redis holds
/// carries neither bearer token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn another_principals_task_is_unknown_byte_for_byte_and_redis_holds_no_token() {
    let shared = Shared::start().await;
    let (alice_token, bob_token) = (format!("alice-token-{}", nonce()), format!("bob-token-{}", nonce()));
    let (alice, _) = connect_with(&shared.direct(0), Some(&alice_token), true).await;
    let id = start_job(&alice, 600_000, true).await;
    until_status(&alice, &id, "input_required", &Seen::default()).await;
    let unknown = "0123456789abcdef0123456789abcdef";
    for (index, url) in [shared.direct(1), shared.direct(2), shared.url()].iter().enumerate() {
        for (method, extra) in [
            ("tasks/get", json!({})),
            (
                "tasks/update",
                json!({"inputResponses": {"go": {"action": "accept", "content": {"ok": true}}}}),
            ),
            ("tasks/cancel", json!({})),
        ] {
            let ask = |task: &str| {
                let mut params = extra.clone();
                params["taskId"] = json!(task);
                raw::post(url, &bob_token, method, params)
            };
            let (hers, none) = (ask(&id).await, ask(unknown).await);
            assert_eq!((hers.status, &hers.body), (none.status, &none.body), "{method} via {index}");
            let error: Value = serde_json::from_str(&hers.body).expect("a JSON-RPC answer");
            assert_eq!(error["error"]["code"], -32602, "{method} via {index}: {}", hers.body);
        }
    }
    let hers = raw::post(&shared.direct(2), &alice_token, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(hers.status, 200, "alice reads her task through c: {}", hers.body);
    assert!(hers.body.contains("input_required"), "bob's attempts changed nothing: {}", hers.body);

    let mut redis = raw::Resp::connect(shared.redis.port(), &shared.password).await;
    let (keys, values) = redis.dump(&shared.prefix).await;
    let keys_bytes: Vec<Vec<u8>> = keys.iter().map(|k| k.clone().into_bytes()).collect();
    assert!(raw::occurs(&id, &keys_bytes) || raw::occurs(&id, &values), "the task is stored: {keys:?}");
    for token in [&alice_token, &bob_token] {
        assert!(!raw::occurs(token, &values) && !raw::occurs(token, &keys_bytes), "{token} stored");
    }
    eprintln!("{} keys under the prefix, {} values read, no token among them", keys.len(), values.len());
    close(alice).await;
}

/// The Redis password — given through the environment (`a`, `b`) or in the URL (`c`), and a wrong
/// one given to two more instances — is in no instance's output and no error body, through Redis
/// paused, stopped, restarted and refusing the wrong password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn the_redis_password_is_in_no_log_and_no_error_body() {
    let mut shared = Shared::start().await;
    faults::password_stays_secret(&mut shared).await;
}
