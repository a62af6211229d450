//! A client's answer to a server-to-client request, POSTed to any instance, reaches the instance
//! waiting for it exactly once — and only for the session it was issued to; a wait dropped is
//! forgotten, the pending bound holds across instances, and a wait never hangs: an ended session or a
//! stopped or paused Redis resolves it `None` — while a lost change or wake-up leaves it waiting.

use std::time::{Duration, Instant};

use mcp_kernel_redis::{Redis, RedisSessionStore};
use mcp_kernel_router::notify::{Change, ChangeHub, ChangeKind};
use mcp_kernel_router::sessions::{ReplyWait, SessionError, SessionLimits, SessionStore};
use mcp_kernel_router::tasks::{StoreError, now_ms};
use serde_json::{Value, json};

use crate::support::{config, eventually, instance, raw, server, session, session_limits};

const MINUTE: Duration = Duration::from_secs(60);
/// Long enough for a publication to cross Redis on a loaded machine.
const WITHIN: Duration = Duration::from_secs(2);

fn answer(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"name": "Ada"}}})
}

/// A new session `id` through `store`.
async fn open(store: &RedisSessionStore, id: &str, limits: &SessionLimits) {
    store.create(session(id, Some("alice"), limits.idle), limits).await.unwrap();
}

/// Whether `wait` is still waiting after `for_`.
async fn still_waiting(wait: &mut ReplyWait, for_: Duration) -> bool {
    tokio::time::timeout(for_, wait).await.is_err()
}

/// What `wait` resolves with, within [`WITHIN`].
async fn resolved(wait: ReplyWait) -> Option<Value> {
    tokio::time::timeout(WITHIN, wait).await.expect("resolved in time")
}

async fn pending(redis: &mcp_kernel_test_support::redis::RedisServer, session: &str) -> usize {
    let mut look = raw(redis).await;
    redis::cmd("ZCARD").arg(format!("mcp-kernel:pending:{session}")).query_async(&mut look).await.unwrap()
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn an_answer_posted_to_another_instance_reaches_the_waiting_one_exactly_once() {
    let redis = server();
    let (a, b, c) = (
        instance(config(&redis)).await.session_store(),
        instance(config(&redis)).await.session_store(),
        instance(config(&redis)).await.session_store(),
    );
    let limits = SessionLimits::default();
    open(&a, "s", &limits).await;
    let wait = a.expect("s", "r1", &limits).await.unwrap();
    assert_eq!(pending(&redis, "s").await, 1);
    let sent = Instant::now();
    assert_eq!(b.deliver("s", "r1", answer("r1")).await, Ok(true));
    assert_eq!(resolved(wait).await, Some(answer("r1")), "the whole response, as POSTed to b");
    let crossed = sent.elapsed();
    for (name, store) in [("a", &a), ("b", &b), ("c", &c)] {
        assert_eq!(store.deliver("s", "r1", answer("r1")).await, Ok(false), "{name}: once only");
    }
    assert_eq!(pending(&redis, "s").await, 0);
    // The other way round, and on the waiting instance itself (handed over with no publication).
    let wait = b.expect("s", "r2", &limits).await.unwrap();
    assert_eq!(c.deliver("s", "r2", answer("r2")).await, Ok(true));
    assert_eq!(resolved(wait).await, Some(answer("r2")));
    let wait = a.expect("s", "r3", &limits).await.unwrap();
    assert_eq!(a.deliver("s", "r3", answer("r3")).await, Ok(true));
    assert_eq!(wait.await, Some(answer("r3")));
    eprintln!("an answer crossed from one instance to the waiting one in {crossed:?}");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn an_answer_for_another_sessions_request_an_unknown_id_or_a_second_time_is_refused() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    open(&a, "s1", &limits).await;
    open(&a, "s2", &limits).await;
    let mut wait = a.expect("s1", "r", &limits).await.unwrap();
    assert_eq!(b.deliver("s2", "r", answer("r")).await, Ok(false), "issued to another session");
    assert_eq!(b.deliver("s1", "never-issued", answer("x")).await, Ok(false), "never issued");
    assert_eq!(b.deliver("unknown", "r", answer("r")).await, Ok(false), "no such session");
    assert!(still_waiting(&mut wait, Duration::from_millis(300)).await, "nothing reached the wait");
    assert_eq!(b.deliver("s1", "r", answer("r")).await, Ok(true));
    assert_eq!(resolved(wait).await, Some(answer("r")));
    assert_eq!(b.deliver("s1", "r", answer("r")).await, Ok(false), "a second time");
    // A request id is one session's: the same id waited for in two sessions is two waits.
    let first = a.expect("s1", "same", &limits).await.unwrap();
    let mut second = b.expect("s2", "same", &limits).await.unwrap();
    assert_eq!(a.deliver("s1", "same", answer("1")).await, Ok(true));
    assert_eq!(resolved(first).await, Some(answer("1")));
    assert!(still_waiting(&mut second, Duration::from_millis(200)).await);
    assert_eq!(a.deliver("s2", "same", answer("2")).await, Ok(true));
    assert_eq!(resolved(second).await, Some(answer("2")));
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_dropped_wait_is_forgotten_here_and_in_redis_and_its_answer_refused() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    open(&a, "s", &limits).await;
    let wait = a.expect("s", "r", &limits).await.unwrap();
    let duplicate = a.expect("s", "r", &limits).await.map(drop);
    assert!(matches!(duplicate, Err(SessionError::Store(StoreError::Failed(_)))), "{duplicate:?}");
    let elsewhere = b.expect("s", "r", &limits).await.map(drop);
    assert!(matches!(elsewhere, Err(SessionError::Store(StoreError::Failed(_)))), "{elsewhere:?}");
    assert_eq!(pending(&redis, "s").await, 1);
    drop(wait);
    let forgotten = eventually(WITHIN, || async { pending(&redis, "s").await == 0 }).await;
    assert!(forgotten, "the dropped wait's entry was removed from Redis");
    assert_eq!(b.deliver("s", "r", answer("r")).await, Ok(false), "an answer to a forgotten request");
    let again = a.expect("s", "r", &limits).await.expect("the id may be waited for again");
    assert_eq!(b.deliver("s", "r", answer("r")).await, Ok(true));
    assert_eq!(resolved(again).await, Some(answer("r")));
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn the_pending_bound_holds_across_instances_and_an_answer_or_a_drop_frees_a_place() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = session_limits(16, 100, MINUTE, 2);
    open(&a, "s", &limits).await;
    open(&a, "t", &limits).await;
    let first = a.expect("s", "r1", &limits).await.unwrap();
    let second = b.expect("s", "r2", &limits).await.unwrap();
    for (name, store) in [("a", &a), ("b", &b)] {
        let refused = store.expect("s", "r3", &limits).await.map(drop);
        assert_eq!(refused, Err(SessionError::PendingFull), "{name}: 2 per session");
    }
    let other = a.expect("t", "r1", &limits).await;
    assert!(other.is_ok(), "another session has its own bound");
    assert_eq!(b.deliver("s", "r1", answer("r1")).await, Ok(true));
    assert_eq!(resolved(first).await, Some(answer("r1")));
    let third = a.expect("s", "r3", &limits).await.expect("an answer frees a place");
    drop(second);
    let freed = eventually(WITHIN, || async { b.expect("s", "r4", &limits).await.is_ok() }).await;
    assert!(freed, "a dropped wait frees its place");
    assert_eq!(b.expect("s", "r5", &limits).await.map(drop), Err(SessionError::PendingFull));
    drop(third);
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn ending_a_session_ends_its_waits_on_every_instance_and_no_other_session_s() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let c = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    open(&a, "s", &limits).await;
    open(&a, "kept", &limits).await;
    let on_a = a.expect("s", "r1", &limits).await.unwrap();
    let on_b = b.expect("s", "r2", &limits).await.unwrap();
    let mut kept = b.expect("kept", "r1", &limits).await.unwrap();
    let ended = Instant::now();
    assert_eq!(c.end("s").await, Ok(true));
    assert_eq!(resolved(on_a).await, None, "ended on a");
    assert_eq!(resolved(on_b).await, None, "ended on b");
    let took = ended.elapsed();
    assert!(still_waiting(&mut kept, Duration::from_millis(200)).await, "another session's wait goes on");
    assert_eq!(a.deliver("s", "r1", answer("r1")).await, Ok(false));
    assert_eq!(pending(&redis, "s").await, 0);
    // A wait of a session ended or unknown ends at once.
    let late = a.expect("s", "r3", &limits).await.expect("a wait");
    assert_eq!(tokio::time::timeout(Duration::from_millis(10), late).await, Ok(None));
    assert_eq!(a.deliver("kept", "r1", answer("r1")).await, Ok(true));
    assert_eq!(resolved(kept).await, Some(answer("r1")));
    eprintln!("an end through one instance ended the waits on two others within {took:?}");
}

/// Fills `a`'s publication queue without yielding (one thread: its publishing task cannot run).
fn fill_the_queue(a: &Redis) {
    for n in 0..1024 {
        let uri = format!("notes://{n}");
        a.change_hub().publish(Change::to_everyone(ChangeKind::ResourceUpdated { uri: uri.into() }));
    }
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_lost_change_ends_no_wait_and_an_answer_never_waits_in_the_publication_queue() {
    let redis = server();
    let a = instance(config(&redis)).await;
    let b = instance(config(&redis)).await;
    let limits = SessionLimits::default();
    open(&b.session_store(), "s", &limits).await;
    let mut feed = b.change_hub().try_subscribe().unwrap();
    let mut wait = b.session_store().expect("s", "r", &limits).await.unwrap();
    // A's queue full: its next change is dropped, and b learns of the loss within a beat.
    fill_the_queue(&a);
    a.change_hub().publish(Change::to_everyone(ChangeKind::ToolsListChanged));
    let ended = async { while feed.next().await.is_some() {} };
    tokio::time::timeout(WITHIN, ended).await.expect("b's listen ended: a publication was lost");
    assert!(still_waiting(&mut wait, Duration::from_millis(100)).await, "the wait goes on");
    // Taken and published in one script: it does not queue behind A's changes.
    let delivered = Instant::now();
    assert_eq!(a.session_store().deliver("s", "r", answer("r")).await, Ok(true));
    assert_eq!(resolved(wait).await, Some(answer("r")));
    eprintln!("an answer crossed past a full publication queue in {:?}", delivered.elapsed());
}

/// Whether `outcome` is the store unreachable.
fn unavailable<T>(outcome: &Result<T, SessionError>) -> bool {
    matches!(outcome, Err(SessionError::Store(StoreError::Unavailable(_))))
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_stopped_redis_ends_every_wait_and_refuses_every_operation_as_unavailable_until_it_is_back() {
    let mut redis = server();
    let a = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    open(&a, "s", &limits).await;
    let wait = a.expect("s", "r", &limits).await.unwrap();
    redis.stop();
    assert_eq!(resolved(wait).await, None, "the subscription dropped: the wait ends");
    let asked = Instant::now();
    assert!(unavailable(&a.create(session("t", None, MINUTE), &limits).await));
    assert!(matches!(a.resume("s", Some("alice"), now_ms(), &limits).await, Err(StoreError::Unavailable(_))));
    assert!(unavailable(
        &a.edit("s", mcp_kernel_router::sessions::SessionEdit::LogLevel("x".into()), &limits).await
    ));
    assert!(matches!(a.end("s").await, Err(StoreError::Unavailable(_))));
    assert!(unavailable(&a.expect("s", "r2", &limits).await.map(drop)));
    assert!(matches!(a.deliver("s", "r", answer("r")).await, Err(StoreError::Unavailable(_))));
    assert!(asked.elapsed() < Duration::from_millis(300), "at once: {:?}", asked.elapsed());
    redis.restart().unwrap();
    let back = eventually(Duration::from_secs(5), || async {
        a.create(session("t", None, MINUTE), &limits).await.is_ok()
    })
    .await;
    assert!(back, "served again once Redis is back");
    assert_eq!(
        a.resume("s", Some("alice"), now_ms(), &limits).await,
        Ok(None),
        "a Redis restarted empty lost its sessions"
    );
    let served =
        eventually(Duration::from_secs(5), || async { a.expect("t", "r", &limits).await.is_ok() }).await;
    assert!(served, "waits are served once the subscription is back");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_paused_redis_refuses_every_operation_within_the_response_timeout_and_ends_the_waits() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    open(&a, "s", &limits).await;
    let wait = a.expect("s", "r", &limits).await.unwrap();
    redis.pause().unwrap();
    // The response timeout is 300 ms; the margin covers a loaded machine.
    let bound = Duration::from_millis(700);
    let asked = Instant::now();
    assert!(matches!(a.resume("s", Some("alice"), now_ms(), &limits).await, Err(StoreError::Unavailable(_))));
    assert!(asked.elapsed() <= bound, "{:?}", asked.elapsed());
    let asked = Instant::now();
    assert!(matches!(a.deliver("s", "r", answer("r")).await, Err(StoreError::Unavailable(_))));
    assert!(unavailable(&a.create(session("t", None, MINUTE), &limits).await));
    assert!(asked.elapsed() <= 2 * bound, "{:?}", asked.elapsed());
    // The subscription's ping goes unanswered at the next beat: the wait ends.
    assert_eq!(resolved(wait).await, None);
    redis.resume().unwrap();
    let served = eventually(Duration::from_secs(5), || async {
        a.resume("s", Some("alice"), now_ms(), &limits).await.is_ok_and(|live| live.is_some())
    })
    .await;
    assert!(served, "served again once resumed, the session kept");
}
