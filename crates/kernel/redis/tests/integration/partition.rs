//! An asymmetric partition: instance A reaches Redis through a relay that the test freezes (its
//! connections stay open, nothing passes either way), while instance B reaches it directly and keeps
//! serving. What A refuses and how fast, what B keeps doing, what becomes of A's running task after
//! the lease, and what a partition that heals within the lease costs.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use mcp_kernel_redis::{INSTANCE_STOPPED, RedisConfig};
use mcp_kernel_router::notify::{Change, ChangeFeed, ChangeHub, ChangeKind};
use mcp_kernel_router::tasks::{
    LimitReached, StoreError, TaskLimits, TaskStatus, TaskStore, Transition, now_ms,
};
use mcp_kernel_test_support::redis::RedisServer;
use mcp_kernel_test_support::relay::Relay;
use serde_json::json;

use crate::support::{LIMITS, config, config_for, eventually, instance, raw, server, task};

/// The response timeout of `support::config`.
const RESPONSE_TIMEOUT: Duration = Duration::from_millis(300);
/// What a loaded machine may add to a bound.
const MARGIN: Duration = Duration::from_millis(400);
/// The longest any step here is waited for.
const SOON: Duration = Duration::from_secs(5);

/// A relay to `redis`, flowing.
async fn relay_to(redis: &RedisServer) -> Relay {
    Relay::start(SocketAddr::from((Ipv4Addr::LOCALHOST, redis.port()))).await.expect("a relay")
}

/// `support::config`'s times, through `relay`.
fn through(relay: &Relay) -> RedisConfig {
    config_for(&format!("redis://{}", relay.address()))
}

/// The next change of `feed`, at most `within`; `Err` when none came (nor the end).
async fn next(
    feed: &mut ChangeFeed,
    within: Duration,
) -> Result<Option<Change>, tokio::time::error::Elapsed> {
    tokio::time::timeout(within, feed.next()).await
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_partitioned_instance_refuses_what_needs_redis_within_the_timeout_while_others_serve() {
    let redis = server();
    let relay = relay_to(&redis).await;
    let a = instance(through(&relay)).await;
    let b = instance(config(&redis)).await;
    let (a_store, b_store) = (a.task_store(), b.task_store());
    let _running = b_store.watch_running("before");
    b_store.create(task("before", Some("alice"), Some(60_000)), LIMITS).await.unwrap().unwrap();
    assert!(a_store.read("before").await.unwrap().is_some(), "A reaches Redis through the relay");
    let mut a_feeds = vec![a.change_hub().try_subscribe().unwrap(), a.change_hub().try_subscribe().unwrap()];
    let mut b_feed = b.change_hub().try_subscribe().unwrap();

    relay.freeze();
    let frozen = Instant::now();
    // What needs Redis is refused as retryable: the first within the response timeout, the next at
    // once (the link is known down).
    let mut waited = Vec::new();
    for attempt in 0..3 {
        let asked = Instant::now();
        let read = a_store.read("before").await;
        assert!(matches!(read, Err(StoreError::Unavailable(_))), "read {attempt}: {read:?}");
        waited.push(asked.elapsed());
    }
    let asked = Instant::now();
    let created = a_store.create(task("on-a", Some("bob"), Some(60_000)), LIMITS).await;
    assert!(matches!(created, Err(StoreError::Unavailable(_))), "{created:?}");
    waited.push(asked.elapsed());
    let asked = Instant::now();
    let edited = a_store.transition("before", Transition::Message("from A".into()), now_ms()).await;
    assert!(matches!(edited, Err(StoreError::Unavailable(_))), "{edited:?}");
    waited.push(asked.elapsed());
    for (n, waited) in waited.iter().enumerate() {
        assert!(*waited <= RESPONSE_TIMEOUT + MARGIN, "operation {n} waited {waited:?}");
    }

    // A's feeds end when its subscription's ping goes unanswered (a beat of 200 ms, then the response
    // timeout); from then on a listen is refused and a watch has ended already.
    for feed in &mut a_feeds {
        let end = next(feed, Duration::from_millis(200) + RESPONSE_TIMEOUT + MARGIN).await;
        assert_eq!(end.expect("ended in time"), None, "the feed ended: its listen ends with its result");
    }
    let feeds_ended = frozen.elapsed();
    assert!(a.change_hub().try_subscribe().is_err(), "a listen is refused while cut off");
    assert!(!a_store.watch("before").woken().await, "a new watch has ended already");

    // B serves throughout: creates, reads, updates, publishes, and hears its own change.
    let served = Instant::now();
    let _during = b_store.watch_running("during");
    assert_eq!(b_store.create(task("during", Some("alice"), Some(60_000)), LIMITS).await, Ok(Ok(())));
    assert_eq!(b_store.read("during").await.unwrap().unwrap().status, TaskStatus::Working);
    let edited = b_store.transition("before", Transition::Message("from B".into()), now_ms()).await;
    assert_eq!(edited.unwrap().unwrap().status_message.as_deref(), Some("from B"));
    b.change_hub().publish(Change::to_everyone(ChangeKind::ToolsListChanged));
    let heard = next(&mut b_feed, SOON).await.expect("B hears its change");
    assert_eq!(heard.map(|change| change.kind), Some(ChangeKind::ToolsListChanged));
    let b_served = served.elapsed();
    assert!(relay.is_frozen(), "all of it while A was still cut off");

    relay.thaw();
    let healed = Instant::now();
    let back = eventually(SOON, || async { a_store.read("during").await.is_ok() }).await;
    assert!(back, "A serves again once healed");
    let a_back = healed.elapsed();
    let record = a_store.read("before").await.unwrap().unwrap();
    assert_eq!(record.status_message.as_deref(), Some("from B"), "A's refused edit was not applied");
    assert!(eventually(SOON, || async { a.change_hub().try_subscribe().is_ok() }).await, "listens again");
    eprintln!(
        "partitioned A: refused in {waited:?}; its feeds ended {feeds_ended:?} after the freeze; B served \
         create, read, update and a change in {b_served:?}; A served again {a_back:?} after healing"
    );
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_task_on_a_partitioned_instance_is_failed_once_its_lease_lapses_and_its_instance_learns_it_after_healing()
 {
    let redis = server();
    let relay = relay_to(&redis).await;
    // A 600 ms lease, renewed every 200 ms.
    let a = instance(through(&relay)).await.task_store();
    let b = instance(config(&redis)).await.task_store();
    let mut running = a.watch_running("t");
    a.create(task("t", Some("alice"), Some(60_000)), LIMITS).await.unwrap().unwrap();

    relay.freeze();
    let frozen = Instant::now();
    assert_eq!(b.read("t").await.unwrap().unwrap().status, TaskStatus::Working, "within the lease");
    let alive = tokio::time::timeout(SOON, running.woken()).await.expect("ended in time");
    assert!(!alive, "A's watch ended (its subscription's ping went unanswered): its run reads again");
    let deadline = Instant::now() + SOON;
    let failed = loop {
        let record = b.read("t").await.unwrap().unwrap();
        if record.status == TaskStatus::Failed {
            break record;
        }
        assert!(Instant::now() < deadline, "B's read failed the task once A's lease lapsed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let failed_after = frozen.elapsed();
    // Renewed at most a beat (200 ms) before the freeze, the lease ran at least 400 ms after it.
    assert!(failed_after >= Duration::from_millis(400), "not before the lease lapsed: {failed_after:?}");
    assert_eq!(failed.status_message.as_deref(), Some(INSTANCE_STOPPED));
    assert_eq!(failed.error, Some(json!({"code": -32603, "message": INSTANCE_STOPPED})));
    let refused = a.transition("t", Transition::Completed(json!({"content": []})), now_ms()).await;
    assert!(matches!(refused, Err(StoreError::Unavailable(_))), "A, still cut off: {refused:?}");

    relay.thaw();
    let healed = Instant::now();
    let back = eventually(SOON, || async { a.read("t").await.is_ok() }).await;
    assert!(back, "A serves again once healed");
    let a_back = healed.elapsed();
    assert_eq!(a.read("t").await.unwrap().unwrap(), failed, "A reads it failed, as B failed it");
    let late = a.transition("t", Transition::Completed(json!({"content": []})), now_ms()).await;
    assert_eq!(late, Ok(None), "A's completion is refused: a terminal status stays");
    let mut watch = a.watch("t");
    b.wake("t");
    let woken = tokio::time::timeout(SOON, watch.woken()).await.expect("woken in time");
    assert!(woken, "A hears wake-ups again");
    // A's heartbeat takes the lease again (its run still holds it, and what it sent while cut off
    // arrives once healed): a failed task stays failed all the same.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(b.read("t").await.unwrap().unwrap(), failed, "nothing overwritten");
    assert_eq!(a.read("t").await.unwrap().unwrap(), failed, "nothing overwritten");
    eprintln!(
        "partitioned A's task failed {failed_after:?} after the freeze; A served {a_back:?} after healing"
    );
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_partition_that_heals_within_the_lease_loses_nothing() {
    let redis = server();
    let relay = relay_to(&redis).await;
    // A 6 s lease, renewed every 2 s: renewed at most 2 s before the freeze, it runs at least 4 s after
    // it, and the freeze lasts until A's subscription ping went unanswered (at most 2.3 s).
    let lease = Duration::from_secs(6);
    let a = instance(through(&relay).lease(lease)).await;
    let b = instance(config(&redis)).await;
    let (a_store, b_store) = (a.task_store(), b.task_store());
    let running = a_store.watch_running("t");
    a_store.create(task("t", Some("alice"), Some(60_000)), LIMITS).await.unwrap().unwrap();
    let mut a_feed = a.change_hub().try_subscribe().unwrap();
    b.change_hub().publish(Change::to_everyone(ChangeKind::PromptsListChanged));
    let heard = next(&mut a_feed, SOON).await.expect("heard before the freeze");
    assert_eq!(heard.map(|change| change.kind), Some(ChangeKind::PromptsListChanged), "A hears B");

    relay.freeze();
    let frozen = Instant::now();
    // B publishes while A is cut off: A's feed must not go on as if it had heard everything.
    let mut b_feed = b.change_hub().try_subscribe().unwrap();
    b.change_hub().publish(Change::to_everyone(ChangeKind::ToolsListChanged));
    let heard = next(&mut b_feed, SOON).await.expect("B hears its change");
    assert_eq!(heard.map(|change| change.kind), Some(ChangeKind::ToolsListChanged));
    let end = next(&mut a_feed, lease / 3 + RESPONSE_TIMEOUT + MARGIN).await.expect("ended in time");
    assert_eq!(end, None, "A's feed ended without the change: its listener knows to listen again");
    let feed_ended = frozen.elapsed();
    relay.thaw();
    let frozen_for = frozen.elapsed();
    assert!(frozen_for < lease - lease / 3, "healed within the lease: {frozen_for:?}");

    assert_eq!(b_store.read("t").await.unwrap().unwrap().status, TaskStatus::Working, "still working");
    let healed = Instant::now();
    let back = eventually(SOON, || async { a.change_hub().try_subscribe().is_ok() }).await;
    assert!(back, "A listens again once healed");
    let mut a_feed = a.change_hub().try_subscribe().unwrap();
    let mut listen = b_store.watch("t");
    let completed = eventually(SOON, || async {
        let done = a_store.transition("t", Transition::Completed(json!({"content": []})), now_ms()).await;
        matches!(done, Ok(Some(_)))
    })
    .await;
    assert!(completed, "A completes its task normally");
    let a_back = healed.elapsed();
    drop(running);
    let woken = tokio::time::timeout(SOON, listen.woken()).await.expect("woken in time");
    assert!(woken, "B's listener hears the completion");
    assert_eq!(b_store.read("t").await.unwrap().unwrap().status, TaskStatus::Completed);
    b.change_hub().publish(Change::to_everyone(ChangeKind::ResourcesListChanged));
    let heard = next(&mut a_feed, SOON).await.expect("heard after healing");
    assert_eq!(heard.map(|change| change.kind), Some(ChangeKind::ResourcesListChanged), "A hears B again");
    eprintln!(
        "a partition of {frozen_for:?} (A's feed ended {feed_ended:?} into it): nothing lost; A listened and \
         completed its task {a_back:?} after healing"
    );
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_creation_refused_while_partitioned_that_lands_once_healed_holds_no_owners_place_past_its_lease() {
    let redis = server();
    let relay = relay_to(&redis).await;
    let a = instance(through(&relay)).await.task_store();
    let b = instance(config(&redis)).await.task_store();
    let look = raw(&redis).await;
    let exists = |key: &'static str| {
        let mut look = look.clone();
        async move { redis::cmd("EXISTS").arg(key).query_async::<i64>(&mut look).await.unwrap() == 1 }
    };
    relay.freeze();
    // The creation leaves A and the relay holds it; A hears nothing back and refuses it as retryable
    // (the router answers retry-later: nobody learns the task's id, nothing runs it).
    let refused = a.create(task("ghost", Some("carol"), Some(60_000)), LIMITS).await;
    assert!(matches!(refused, Err(StoreError::Unavailable(_))), "{refused:?}");
    relay.thaw();
    // Healed, what was held arrives: Redis stores the task after all, with a lease nothing renews.
    let landed = eventually(SOON, || exists("mcp-kernel:task:ghost")).await;
    assert!(landed, "the refused creation was stored once healed");
    let one = TaskLimits::new(1, 64);
    let _next = b.watch_running("next");
    let early = b.create(task("next", Some("carol"), Some(60_000)), one).await;
    assert_eq!(early, Ok(Err(LimitReached::PerOwner(1))), "while its lease is held it may be running");
    let lapsed = eventually(SOON, || async { !exists("mcp-kernel:lease:ghost").await }).await;
    assert!(lapsed, "its lease lapsed (600 ms)");
    let next = b.create(task("next", Some("carol"), Some(60_000)), one).await;
    assert_eq!(next, Ok(Ok(())), "a task that runs nowhere holds no place of its owner's");
    let ghost = b.read("ghost").await.unwrap().unwrap();
    assert_eq!(ghost.status_message.as_deref(), Some(INSTANCE_STOPPED), "read, it is failed as stopped");
    let _again = b.watch_running("again");
    let again = b.create(task("again", Some("carol"), Some(60_000)), one).await;
    assert_eq!(again, Ok(Err(LimitReached::PerOwner(1))), "the bound holds for the tasks that run");
}
