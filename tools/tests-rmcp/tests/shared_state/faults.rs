//! The fault tests' bodies (`shared_state.rs` names each rule): Redis restarted empty, Redis paused,
//! a rolling restart, and the password through all of it.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResponse, TaskStatus};
use rmcp::service::{Subscription, SubscriptionEnd};
use serde_json::{Value, json};

use crate::client::{Client, close, connect_with};
use crate::raw::{self, Answer};
use crate::setup::{PAUSED_LEASE, Shared, TIMEOUT, nonce};
use crate::tasks::{self, Seen, is_possible_history, listen_tasks, start_job, until_status};
use crate::{ARRIVES, changes, hears_touch, listen, touch};

/// How long an outage lasts in these tests.
const OUTAGE: Duration = Duration::from_millis(1500);
/// The most a listen is tried again while Redis comes back, 100 ms apart.
const RELISTEN_TRIES: usize = 100;

/// Waits (bounded) for `subscription` to end, and checks that it ended with its completion result.
async fn ends_gracefully(subscription: &mut Subscription, what: &str) {
    let started = Instant::now();
    loop {
        let next = tokio::time::timeout(ARRIVES, subscription.next()).await;
        match next.unwrap_or_else(|_| panic!("{what}: still open {ARRIVES:?} after the fault")) {
            Ok(None) => break,
            // A change announced just before the fault may still arrive first.
            Ok(Some(_)) => assert!(started.elapsed() < ARRIVES, "{what}: never ends"),
            Err(error) => panic!("{what}: ended with an error: {error:?}"),
        }
    }
    assert!(
        matches!(subscription.end(), Some(SubscriptionEnd::Graceful(_))),
        "{what}: {:?}",
        subscription.end()
    );
}

/// Opens a change listen on `client`, trying again (bounded) while it is refused.
async fn listen_again(client: &Client, what: &str) -> Subscription {
    let mut last = None;
    for _ in 0..RELISTEN_TRIES {
        match tokio::time::timeout(crate::common::STEP, client.listen(changes())).await {
            Ok(Ok(subscription)) => return subscription,
            Ok(Err(error)) => last = Some(format!("{error:?}")),
            Err(_) => last = Some("timed out".to_owned()),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: no listen acknowledged in {RELISTEN_TRIES} tries; last: {last:?}")
}

/// Calls `chore {ms: 300}` (a task only if it can be stored) and checks how it was answered: with a
/// task when `as_task`, else with its result, ordinarily, within its time and the response timeout.
async fn chore(client: &Client, as_task: bool) {
    let started = Instant::now();
    let called =
        crate::step("tools/call chore", client.call_tool_once(crate::call("chore", json!({"ms": 300}))))
            .await;
    match called {
        CallToolResponse::Task(created) if as_task => assert_eq!(created.task.status, TaskStatus::Working),
        CallToolResponse::Complete(result) if !as_task => {
            assert_eq!(crate::structured(&result)["ms"], 300, "{result:?}");
            let took = started.elapsed();
            assert!(took < Duration::from_millis(300) + TIMEOUT + Duration::from_millis(1500), "{took:?}");
        }
        other => panic!("chore answered {other:?} (a task expected: {as_task})"),
    }
}

/// Serves a plain tool call at once.
async fn whoami(client: &Client) {
    let started = Instant::now();
    let whoami = client.call_tool(crate::call("whoami", json!({})));
    let whoami = crate::structured(&crate::step("whoami", whoami).await);
    assert_eq!(whoami["caller"], "alice", "{whoami}");
    assert!(started.elapsed() < Duration::from_secs(2), "served at once without Redis");
}

/// Reads every task in `ids` once through `client` into `seen`; errors (Redis away) are skipped.
async fn read_all(client: &Client, ids: &[String], seen: &Seen) {
    for id in ids {
        if let Ok(task) = tasks::get(client, id).await {
            seen.record(id, &task);
        }
    }
}

/// See `redis_restarted_empty_ends_every_listen_and_no_task_shows_a_status_it_never_had`.
pub async fn redis_restarted_empty(shared: &mut Shared) {
    let mut clients = Vec::new();
    for index in 0..3 {
        clients.push(connect_with(&shared.direct(index), Some("alice"), true).await);
    }
    let (proxied, _) = connect_with(&shared.url(), Some("alice"), true).await;
    let seen = Seen::default();
    let done = start_job(&proxied, 0, false).await;
    until_status(&proxied, &done, "completed", &seen).await;
    let ids = vec![done, start_job(&proxied, 1_000, false).await, start_job(&proxied, 600_000, false).await];
    let mut listens = Vec::new();
    let mut task_listens = Vec::new();
    for (client, harness) in &clients {
        listens.push(listen(client).await);
        task_listens.push(listen_tasks(client, harness, &[&ids[1], &ids[2]]).await);
    }
    read_all(&proxied, &ids, &seen).await;
    chore(&proxied, true).await;

    shared.redis.stop();
    let stopped = Instant::now();
    for (n, subscription) in listens.iter_mut().enumerate() {
        ends_gracefully(subscription, &format!("the change listen on instance {n}")).await;
    }
    for (n, listen) in task_listens.into_iter().enumerate() {
        let ended = tokio::time::timeout(ARRIVES, listen.answer).await;
        let ended = ended.unwrap_or_else(|_| panic!("the task listen on instance {n} is still open"));
        ended.expect("the listen's task").unwrap_or_else(|e| panic!("task listen {n} ended with {e:?}"));
    }
    eprintln!("every listen ended within {:?} of Redis stopping", stopped.elapsed());
    // Down: what needs Redis is refused at once, retryable; the rest is served, a call that would
    // have become a task included.
    let urls = [shared.url(), shared.direct(0), shared.direct(1), shared.direct(2)];
    let mut slowest = Duration::ZERO;
    for url in &urls {
        for (what, answer) in needing_redis(url, "alice", &ids[2], true).await {
            refused_promptly(&answer, &format!("Redis down: {what} via {url}"));
            slowest = slowest.max(answer.took);
        }
    }
    eprintln!("Redis down: every request that needs it refused 503 within {slowest:?}");
    whoami(&proxied).await;
    chore(&proxied, false).await;
    while stopped.elapsed() < OUTAGE {
        read_all(&proxied, &ids, &seen).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    shared.restart_redis_empty();

    // Listened again on every instance, each hears the next change.
    let mut again = Vec::new();
    for (n, (client, _)) in clients.iter().enumerate() {
        again.push(listen_again(client, &format!("instance {n}")).await);
    }
    touch(&proxied).await;
    for (n, subscription) in again.iter_mut().enumerate() {
        hears_touch(subscription, &format!("the new listen on instance {n}")).await;
    }
    for _ in 0..10 {
        read_all(&proxied, &ids, &seen).await;
    }
    for (_, harness) in &clients {
        seen.record_notifications(&harness.statuses());
    }
    // The handler of the task Redis forgot was told to stop: no call is in flight on any instance.
    for instance in &shared.cluster.instances {
        instance.wait_health("the forgotten task's handler stopped", |h| h["in_flight"] == 0).await;
    }
    for (id, statuses) in seen.all() {
        assert!(is_possible_history(&statuses), "task {id} was shown {statuses:?}");
    }
    eprintln!("statuses seen: {:?}", seen.all());
    // A new task after the restart runs, through any instance.
    let fresh = start_job(&proxied, 0, false).await;
    until_status(&clients[1].0, &fresh, "completed", &seen).await;
    drop((listens, again));
    close(proxied).await;
    for (client, _) in clients {
        close(client).await;
    }
}

/// Checks that `answer` is the prompt, retryable refusal of a request that needed Redis.
fn refused_promptly(answer: &Answer, what: &str) {
    assert_eq!(answer.status, 503, "{what}: {answer:?}");
    assert_eq!(answer.retry_after.as_deref(), Some("1"), "{what}: {answer:?}");
    let body: Value = serde_json::from_str(&answer.body).unwrap_or_else(|_| panic!("{what}: {answer:?}"));
    assert_eq!(body["error"]["code"], -32603, "{what}: {body}");
    assert_eq!(body["error"]["data"], json!({"retryAfter": 1}), "{what}: {body}");
    let margin = Duration::from_millis(1500);
    assert!(answer.took < TIMEOUT + margin, "{what}: refused after {:?} (timeout {TIMEOUT:?})", answer.took);
}

/// The requests that need Redis, raw, through `url` for the task `id`: `tasks/get`, a call of the
/// task-only `job`, and (with `listening`) a listen.
async fn needing_redis(url: &str, token: &str, id: &str, listening: bool) -> Vec<(&'static str, Answer)> {
    let job = json!({"name": "job", "arguments": {"ms": 0}});
    let mut answers = vec![
        ("tasks/get", raw::post(url, token, "tasks/get", json!({"taskId": id})).await),
        ("tools/call job", raw::post(url, token, "tools/call", job).await),
    ];
    if listening {
        let listen = json!({"notifications": {"resourcesListChanged": true}});
        answers.push(("subscriptions/listen", raw::post(url, token, "subscriptions/listen", listen).await));
    }
    answers
}

/// The longest an instance takes to notice that Redis stopped answering its subscription: its ping
/// goes out at each heartbeat (a third of the lease) and is given the response timeout.
fn notices_within() -> Duration {
    PAUSED_LEASE / 3 + TIMEOUT + Duration::from_millis(2000)
}

/// See `redis_paused_refuses_what_needs_it_promptly_and_serves_the_rest`.
pub async fn redis_paused(shared: &Shared) {
    let (proxied, _) = connect_with(&shared.url(), Some("alice"), true).await;
    let id = start_job(&proxied, 600_000, false).await;
    let mut clients = Vec::new();
    for index in 0..3 {
        clients.push(connect_with(&shared.direct(index), Some("alice"), true).await);
    }
    let mut listens = Vec::new();
    for (client, _) in &clients {
        listens.push(listen(client).await);
    }
    let urls = [shared.url(), shared.direct(0), shared.direct(1), shared.direct(2)];
    shared.redis.pause().expect("SIGSTOP redis-server");
    let paused = Instant::now();
    // A request that reads or writes Redis waits at most the response timeout.
    for url in &urls {
        for (what, answer) in needing_redis(url, "alice", &id, false).await {
            eprintln!("paused, {what} via {url}: {} in {:?}", answer.status, answer.took);
            refused_promptly(&answer, &format!("{what} via {url}"));
        }
    }
    // The listens open when Redis stopped answering end with their completion result once their
    // instance's subscription ping goes unanswered; from then on a listen is refused at once.
    for (n, subscription) in listens.iter_mut().enumerate() {
        ends_gracefully(subscription, &format!("the listen on instance {n}")).await;
    }
    let noticed = paused.elapsed();
    eprintln!("every open listen ended {noticed:?} after the pause");
    assert!(noticed < notices_within(), "the listens ended {noticed:?} after the pause");
    for url in &urls {
        for (what, answer) in needing_redis(url, "alice", &id, true).await {
            eprintln!("paused, {what} via {url}: {} in {:?}", answer.status, answer.took);
            refused_promptly(&answer, &format!("{what} via {url}"));
        }
    }
    for _ in 0..6 {
        whoami(&proxied).await;
    }
    chore(&proxied, false).await;
    let pause = paused.elapsed();
    eprintln!("paused for {pause:?}");
    assert!(pause < PAUSED_LEASE, "the pause ({pause:?}) is shorter than the lease");
    shared.redis.resume().expect("SIGCONT redis-server");
    let resumed = Instant::now();
    let mut served = None;
    while resumed.elapsed() < Duration::from_secs(10) {
        let answers = needing_redis(&shared.url(), "alice", &id, true).await;
        if answers.iter().all(|(_, answer)| answer.status == 200) {
            served = Some(answers);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let served = served.expect("served again within 10 s of the resume");
    eprintln!("served again {:?} after the resume", resumed.elapsed());
    let task: Value = serde_json::from_str(&served[0].1.body).expect("tasks/get answer");
    assert_eq!(task["result"]["status"], "working", "the task is still working: {task}");
    drop(listens);
    close(proxied).await;
    for (client, _) in clients {
        close(client).await;
    }
}

/// What the rolling restart saw.
#[derive(Debug, Default)]
pub struct Report {
    /// Tasks started, and those whose result was read.
    pub started: usize,
    /// Tasks completed, by the instance that ran them.
    pub completed_by: std::collections::BTreeMap<String, usize>,
    /// Listens that ended with their completion result (each then listened again).
    pub graceful_ends: usize,
    /// One line per restart.
    pub restarts: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "rolling restart with listens and tasks: {} tasks started", self.started)?;
        writeln!(f, "  completed, by runner: {:?}", self.completed_by)?;
        writeln!(f, "  listens ended with their completion result (and renewed): {}", self.graceful_ends)?;
        for restart in &self.restarts {
            writeln!(f, "  restart: {restart}")?;
        }
        Ok(())
    }
}

/// How many tasks are started before the restarts and while each instance restarts.
const TASKS_PER_ROUND: usize = 6;
/// How long each of them runs.
const TASK_MS: u64 = 1_500;

/// A listener that listens again whenever its listen ends, counting the ends, until told to stop.
fn keep_listening(client: Arc<Client>, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<usize> {
    tokio::spawn(async move {
        let mut ends = 0;
        for _ in 0..50 {
            let mut subscription = listen_again(&client, "a kept listener").await;
            loop {
                if stop.load(Ordering::SeqCst) {
                    return ends;
                }
                match tokio::time::timeout(Duration::from_millis(200), subscription.next()).await {
                    Err(_) | Ok(Ok(Some(_))) => continue,
                    Ok(Ok(None)) => {
                        let end = subscription.end();
                        assert!(matches!(end, Some(SubscriptionEnd::Graceful(_))), "ended {end:?}");
                        ends += 1;
                        break;
                    }
                    Ok(Err(error)) => panic!("a listen ended with an error: {error:?}"),
                }
            }
        }
        panic!("a listener renewed its listen 50 times")
    })
}

/// See `a_rolling_restart_with_listens_open_and_tasks_running_loses_no_result`.
pub async fn rolling_restart(shared: &mut Shared) -> Report {
    let mut report = Report::default();
    let stop = Arc::new(AtomicBool::new(false));
    let mut listeners = Vec::new();
    for _ in 0..3 {
        let (client, _) = connect_with(&shared.url(), Some("alice"), true).await;
        listeners.push(keep_listening(Arc::new(client), Arc::clone(&stop)));
    }
    let (proxied, _) = connect_with(&shared.url(), Some("alice"), true).await;
    let mut ids = Vec::new();
    for _ in 0..TASKS_PER_ROUND {
        ids.push(start_job(&proxied, TASK_MS, false).await);
    }
    let url = shared.url();
    for index in 0..3 {
        let started = Instant::now();
        let instance = &mut shared.cluster.instances[index];
        // Tasks are started through the proxy while the instance drains, and plain calls, each on a new
        // connection (so that every nginx worker gets some), go on until it has exited: the proxy's
        // pooled connections to it are used, told to close, and closed, so the drain does not wait
        // out the proxy's keep-alive timeout ("Rolling restarts" in `docs/deploy.md`).
        let exited = AtomicBool::new(false);
        let terminating = async {
            let status = instance.terminate().await;
            exited.store(true, Ordering::SeqCst);
            status
        };
        let (status, more) = tokio::join!(terminating, async {
            let mut more = Vec::new();
            for _ in 0..TASKS_PER_ROUND {
                more.push(start_job(&proxied, TASK_MS, false).await);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            for _ in 0..1_000 {
                if exited.load(Ordering::SeqCst) {
                    break;
                }
                let whoami = json!({"name": "whoami", "arguments": {}});
                let answer = raw::post(&url, "alice", "tools/call", whoami).await;
                assert_eq!(answer.status, 200, "a plain call during the drain: {answer:?}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            more
        });
        assert!(status.success(), "the instance drained and exited cleanly: {status}");
        ids.extend(more);
        let drained = started.elapsed();
        instance.restart().await;
        instance.wait_health("healthy after its restart", |_| true).await;
        report.restarts.push(format!(
            "{}: drained in {drained:?}, back after {:?}",
            instance.name,
            started.elapsed()
        ));
    }
    report.started = ids.len();
    let seen = Seen::default();
    for id in &ids {
        let done = until_status(&proxied, id, "completed", &seen).await;
        let runner = done["result"]["structuredContent"]["instance"].as_str().unwrap_or("?").to_owned();
        *report.completed_by.entry(runner).or_default() += 1;
    }
    stop.store(true, Ordering::SeqCst);
    for listener in listeners {
        report.graceful_ends += crate::step("a kept listener", listener).await;
    }
    for (id, statuses) in seen.all() {
        assert!(is_possible_history(&statuses), "task {id}: {statuses:?}");
        assert_eq!(statuses.last().map(String::as_str), Some("completed"), "task {id}: {statuses:?}");
    }
    assert!(report.graceful_ends >= 3, "each drain ended the listens it held: {report}");
    close(proxied).await;
    report
}

/// See `the_redis_password_is_in_no_log_and_no_error_body`.
pub async fn password_stays_secret(shared: &mut Shared) {
    let wrong = format!("wrong-{}", nonce());
    let mut extra =
        vec![shared.extra_instance("d", &wrong, false).await, shared.extra_instance("e", &wrong, true).await];
    let mut bodies = Vec::new();
    let (proxied, _) = connect_with(&shared.url(), Some("alice"), true).await;
    let id = start_job(&proxied, 600_000, false).await;
    let urls = [shared.url(), shared.direct(0), shared.direct(1), shared.direct(2)];
    let refused = |answers: Vec<(&str, Answer)>, bodies: &mut Vec<String>| {
        for (_, answer) in answers {
            bodies.push(answer.body);
        }
    };
    for instance in &extra {
        let url = format!("http://{}/mcp", instance.addr);
        for (what, answer) in needing_redis(&url, "alice", &id, true).await {
            assert_eq!(
                answer.status, 503,
                "{what} on {}, whose password is wrong: {answer:?}",
                instance.name
            );
            bodies.push(answer.body);
        }
    }
    shared.redis.pause().expect("SIGSTOP");
    for url in &urls {
        refused(needing_redis(url, "alice", &id, true).await, &mut bodies);
    }
    shared.redis.resume().expect("SIGCONT");
    shared.redis.stop();
    for url in &urls {
        refused(needing_redis(url, "alice", &id, true).await, &mut bodies);
    }
    tokio::time::sleep(OUTAGE).await;
    shared.restart_redis_empty();
    let restarted = Instant::now();
    while restarted.elapsed() < Duration::from_secs(10) {
        let answer = raw::post(&shared.url(), "alice", "tasks/get", json!({"taskId": id})).await;
        bodies.push(answer.body);
        if answer.status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    close(proxied).await;
    let mut output = shared.output();
    for instance in &mut extra {
        output.extend(instance.stderr.all());
        output.extend(instance.stdout.all());
    }
    let redis_lines = output.iter().filter(|line| line.to_lowercase().contains("redis")).count();
    assert!(redis_lines > 0, "the instances logged the faults: {output:?}");
    assert!(bodies.iter().any(|body| body.contains("retryAfter")), "the refusals were read: {bodies:?}");
    for secret in [&shared.password, &wrong] {
        for line in &output {
            assert!(!line.contains(secret.as_str()), "a password in the output: {line}");
        }
        for body in &bodies {
            assert!(!body.contains(secret.as_str()), "a password in an answer: {body}");
        }
    }
    eprintln!(
        "{} lines of output ({redis_lines} about Redis) and {} answers: no password",
        output.len(),
        bodies.len()
    );
}
