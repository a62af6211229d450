//! Through the router: two servers, one Redis. A task created through server A is read, and
//! cancelled, through server B; A's run learns of the cancellation without polling; a `tasks/get` is
//! one Redis round trip; with Redis paused a task request is refused retry-later, not hung; a legacy
//! session's stream taken over through server B silences the one open through server A.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_kernel_redis::{Redis, RedisSessionStore};
use mcp_kernel_router::notify::{Change, ChangeHub, ChangeKind, Notifications};
use mcp_kernel_router::sessions::{SessionLimits, SessionStore, StoredSession};
use mcp_kernel_router::tasks::{TaskMode, TaskStore, Tasks};
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

use crate::support::{Tokio, config, instance, server};

const MODERN: &str = "2026-07-28";
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// `slow` sleeps `ms` (default 10 s) unless its task is cancelled; `greet` answers at once.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "greet" => Ok(ToolOutput::text("hello")),
        "slow" => {
            let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(10_000);
            let task = call.context.task().cloned();
            let cancelled = async {
                match &task {
                    Some(task) => task.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(ToolOutput::text(format!("slept {ms}"))),
                () = cancelled => Ok(ToolOutput::text("stopped")),
            }
        }
        _ => Err(ToolError::new("unknown")),
    }
}

fn server_over(redis: &Redis) -> Server {
    let schema = json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}});
    let listing = Listing {
        tools: vec![
            ToolSpec::new("greet", Mode::ReadOnly).input_schema(schema.clone()),
            ToolSpec::new("slow", Mode::ReadOnly).task_mode(TaskMode::Optional).input_schema(schema),
        ],
        ..Listing::default()
    };
    let tasks = Tasks::with_store(redis.task_store(), Tokio).threshold(Duration::from_millis(50));
    Server::builder(listing)
        .dispatch(dispatch)
        .tasks(tasks)
        .notifications(Notifications::with_hub(redis.change_hub()))
        .build()
        .expect("a server")
}

fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn send(server: &Server, message: Value) -> Value {
    server.handle(message).await.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

async fn get(server: &Server, id: &str) -> Value {
    send(server, request(2, "tasks/get", json!({"taskId": id}))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_task_created_through_server_a_is_read_and_cancelled_through_server_b() {
    let redis = server();
    let (a, b) = (instance(config(&redis)).await, instance(config(&redis)).await);
    let (server_a, server_b) = (server_over(&a), server_over(&b));
    let created = send(&server_a, request(1, "tools/call", json!({"name": "slow", "arguments": {}}))).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    // Durably created before the answer: B finds it at once, in one round trip.
    let before = b.round_trips();
    let working = get(&server_b, &id).await;
    assert_eq!(b.round_trips() - before, 1, "one Redis round trip per tasks/get");
    assert_eq!(working["result"]["status"], "working", "{working}");
    let cancelled = send(&server_b, request(3, "tasks/cancel", json!({"taskId": id}))).await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    assert_eq!(get(&server_a, &id).await["result"]["status"], "cancelled");
    // A's run was woken through Redis and told its handler: its lease is released, so nothing of A
    // renews it any more; with the task terminal, a read after the lease changes nothing.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(get(&server_b, &id).await["result"]["status"], "cancelled");
    // A plain call needs no task and is answered as usual.
    let greeted = send(&server_b, request(4, "tools/call", json!({"name": "greet", "arguments": {}}))).await;
    assert_eq!(greeted["result"]["content"][0]["text"], "hello");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_task_completes_on_server_a_and_its_result_is_read_through_server_b() {
    let redis = server();
    // A long lease: no heartbeat while the round trips are counted.
    let quiet = || config(&redis).lease(Duration::from_secs(60));
    let (a, b) = (instance(quiet()).await, instance(quiet()).await);
    let (server_a, server_b) = (server_over(&a), server_over(&b));
    let before = a.round_trips() + b.round_trips();
    let id = start_task(&server_a, json!({"ms": 300})).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut gets = 0;
    let done = loop {
        let got = get(&server_b, &id).await;
        gets += 1;
        if got["result"]["status"] != "working" || Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["result"]["content"][0]["text"], "slept 300");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let lifecycle = a.round_trips() + b.round_trips() - before;
    eprintln!("a task's lifecycle through the router: {lifecycle} round trips, {gets} of them tasks/get");
    // Create 1, the run's first look at its task 1, the completion's read and swap 2, its wake-up 1.
    assert_eq!(lifecycle - gets, 5, "{lifecycle} round trips with {gets} gets");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn with_redis_paused_a_task_request_is_refused_retry_later_and_a_plain_call_is_served() {
    let redis = server();
    let a = instance(config(&redis)).await;
    let server_a = server_over(&a);
    redis.pause().unwrap();
    let asked = Instant::now();
    let refused = get(&server_a, "0123456789abcdef0123456789abcdef").await;
    assert!(asked.elapsed() < Duration::from_millis(1_000), "refused within the response timeout (300 ms)");
    assert_eq!(refused["error"]["data"]["retryAfter"], 1, "retryable, not a wrong status: {refused}");
    let greeted = send(&server_a, request(4, "tools/call", json!({"name": "greet", "arguments": {}}))).await;
    assert_eq!(greeted["result"]["content"][0]["text"], "hello");
    redis.resume().unwrap();
}

async fn open_listen(server: &Server, filter: Value) -> mcp_kernel_router::transport::Listen {
    let message = request(9, "subscriptions/listen", json!({"notifications": filter}));
    let envelope = mcp_kernel_router::wire::Envelope::from_value(message).expect("an envelope");
    match server.open_listen(envelope, mcp_kernel_router::transport::Inbound::new()).await {
        Ok(listen) => listen,
        Err(handled) => panic!("refused: {:?}", handled.response.map(|r| r.to_value())),
    }
}

/// Calls `slow` with `arguments` on `server`; the id of the task it became.
async fn start_task(server: &Server, arguments: Value) -> String {
    let created =
        send(server, request(1, "tools/call", json!({"name": "slow", "arguments": arguments}))).await;
    created["result"]["taskId"].as_str().expect("a task").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_listen_whose_read_of_a_woken_task_fails_is_never_left_deaf_to_it() {
    let redis = server();
    // No heartbeat during the test: the command connections' first use after the kill is the reads.
    let quiet = || config(&redis).lease(Duration::from_secs(60));
    let (a, b) = (instance(quiet()).await, instance(quiet()).await);
    let server_a = server_over(&a);
    let id = start_task(&server_a, json!({})).await;
    let mut listen = open_listen(&server_a, json!({"taskIds": [id]})).await;
    // Every command connection is cut (the subscriptions live on): A learns of it at its next command.
    let mut look = crate::support::raw(&redis).await;
    let () = redis::cmd("CLIENT").arg("KILL").arg("TYPE").arg("normal").query_async(&mut look).await.unwrap();
    let store_b = b.task_store();
    let cancelled = crate::support::eventually(Duration::from_secs(2), || async {
        store_b.request_cancel(&id, mcp_kernel_router::tasks::now_ms()).await.is_ok()
    })
    .await;
    assert!(cancelled, "cancelled through B once its connection is back");
    // A's listen was woken, and its read failed: it must still say so, or end.
    let heard = tokio::time::timeout(Duration::from_secs(3), async {
        let mut seen = Vec::new();
        for _ in 0..3 {
            match listen.next().await {
                Some(notification) => seen.push(notification["params"]["status"].clone()),
                None => return (seen, true),
            }
        }
        (seen, false)
    })
    .await;
    let Ok((seen, ended)) = heard else { panic!("the listen stayed open, deaf to its cancelled task") };
    assert!(ended || seen.contains(&json!("cancelled")), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn after_a_pause_longer_than_the_lease_the_running_instance_never_fails_its_own_task() {
    let redis = server();
    let (a, b) = (instance(config(&redis)).await, instance(config(&redis)).await);
    let server_a = server_over(&a);
    let id = start_task(&server_a, json!({})).await;
    // Longer than the lease (600 ms): the lease lapses in Redis's clock (the renewals a's heartbeat
    // sent meanwhile wait in the socket and reach Redis at resume). No client reads meanwhile.
    redis.pause().unwrap();
    tokio::time::sleep(Duration::from_millis(900)).await;
    redis.resume().unwrap();
    tokio::time::sleep(Duration::from_millis(900)).await;
    let store_b = b.task_store();
    let served =
        crate::support::eventually(Duration::from_secs(2), || async { store_b.read(&id).await.is_ok() })
            .await;
    assert!(served);
    let record = store_b.read(&id).await.unwrap().unwrap();
    assert_eq!(record.status, mcp_kernel_router::tasks::TaskStatus::Working, "{record:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn the_running_instance_takes_back_a_lapsed_lease_of_its_live_task_rather_than_fail_it() {
    let redis = server();
    // A 3 s lease: the next beat is a second away.
    let slow_beat = || config(&redis).lease(Duration::from_secs(3));
    let (a, b) = (instance(slow_beat()).await, instance(slow_beat()).await);
    let server_a = server_over(&a);
    let id = start_task(&server_a, json!({})).await;
    // The lease lapses with a's handler alive (a partition that healed: its renewals never arrived),
    // and a's run reads its task again (its subscription dropped meanwhile).
    let mut look = crate::support::raw(&redis).await;
    let () = redis::cmd("DEL").arg(format!("mcp-kernel:lease:{id}")).query_async(&mut look).await.unwrap();
    let _: i64 =
        redis::cmd("CLIENT").arg("KILL").arg("TYPE").arg("pubsub").query_async(&mut look).await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let store_b = b.task_store();
    let served =
        crate::support::eventually(Duration::from_secs(2), || async { store_b.read(&id).await.is_ok() })
            .await;
    assert!(served);
    let record = store_b.read(&id).await.unwrap().unwrap();
    assert_eq!(record.status, mcp_kernel_router::tasks::TaskStatus::Working, "{record:?}");
    let lease: i64 =
        redis::cmd("PTTL").arg(format!("mcp-kernel:lease:{id}")).query_async(&mut look).await.unwrap();
    assert!(lease > 0, "the lease is a's again: {lease}");
}

/// The session `id` of `owner` as `store` resumes it for one request.
async fn stored(store: &RedisSessionStore, id: &str, owner: &str) -> StoredSession {
    let limits = SessionLimits::default();
    let now = mcp_kernel_router::tasks::now_ms();
    let record = store.resume(id, Some(owner), now, &limits).await.expect("reachable").expect("live");
    StoredSession::new(record, Arc::new(store.clone()), limits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_newer_session_stream_through_server_b_silences_server_as_so_a_change_is_delivered_once() {
    let redis = server();
    let (a, b) = (instance(config(&redis)).await, instance(config(&redis)).await);
    let (server_a, server_b) = (server_over(&a), server_over(&b));
    let limits = SessionLimits::default();
    let record = crate::support::session("s", Some("alice"), limits.idle);
    a.session_store().create(record, &limits).await.expect("created");
    let extensions = mcp_kernel_router::Extensions::new;
    let stream = |server: &Server, session| server.session_stream(session, extensions()).expect("a stream");
    let mut on_a = stream(&server_a, stored(&a.session_store(), "s", "alice").await);
    assert_eq!(on_a.take_over().await, Ok(true));
    let list_changed = || Change::to_everyone(ChangeKind::ToolsListChanged);
    a.change_hub().publish(list_changed());
    let first = tokio::time::timeout(Duration::from_secs(2), on_a.next()).await.expect("in time");
    assert_eq!(first.expect("delivered")["method"], "notifications/tools/list_changed", "A's, alone");
    let check_a = on_a.check();
    let mut on_b = stream(&server_b, stored(&b.session_store(), "s", "alice").await);
    assert_eq!(on_b.take_over().await, Ok(true), "B takes the session over");
    assert!(!check_a.holds().await, "A's stream is told so at its next check");
    b.change_hub().publish(list_changed());
    let delivered = tokio::time::timeout(Duration::from_secs(2), on_b.next()).await.expect("in time");
    assert_eq!(delivered.expect("delivered")["method"], "notifications/tools/list_changed");
    let silenced = tokio::time::timeout(Duration::from_secs(2), on_a.next()).await.expect("in time");
    assert_eq!(silenced, None, "A's stream delivers nothing and ends: the change went out once");
    let again = tokio::time::timeout(Duration::from_millis(300), on_b.next()).await;
    assert!(again.is_err(), "and once on B: {again:?}");
}
