//! The task store across instances: create, read and update, the bounds, the compare-and-swap, the
//! wake-ups, the leases, the expiry and the round trips.

use std::time::{Duration, Instant};

use mcp_kernel_redis::INSTANCE_STOPPED;
use mcp_kernel_router::tasks::{LimitReached, TaskLimits, TaskStatus, TaskStore, Transition, now_ms};
use serde_json::json;

use crate::support::{LIMITS, config, eventually, instance, raw, server, task};

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_task_created_through_one_instance_is_read_and_updated_through_another() {
    let redis = server();
    let a = instance(config(&redis)).await.task_store();
    let b = instance(config(&redis)).await.task_store();
    let _running = a.watch_running("t1");
    assert_eq!(a.create(task("t1", Some("alice"), Some(60_000)), LIMITS).await, Ok(Ok(())));
    let read = b.read("t1").await.unwrap().expect("stored, readable from the other instance");
    assert_eq!((read.status, read.owner.as_deref()), (TaskStatus::Working, Some("alice")));
    let edited = b.transition("t1", Transition::Message("halfway".into()), now_ms()).await.unwrap();
    assert_eq!(edited.unwrap().status_message.as_deref(), Some("halfway"));
    assert_eq!(a.read("t1").await.unwrap().unwrap().status_message.as_deref(), Some("halfway"));
    assert_eq!(b.read("unknown").await, Ok(None));
    let nothing = |_: &mut mcp_kernel_router::tasks::TaskRecord| false;
    assert_eq!(a.update("t1", &nothing).await, Ok(None), "an edit that changes nothing writes nothing");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn concurrent_updates_from_two_instances_lose_nothing() {
    let redis = server();
    let a = instance(config(&redis)).await.task_store();
    let b = instance(config(&redis)).await.task_store();
    let _running = a.watch_running("t");
    a.create(task("t", None, None), LIMITS).await.unwrap().unwrap();
    let writes = 20;
    let mut handles = Vec::new();
    for n in 0..writes {
        let store = if n % 2 == 0 { a.clone() } else { b.clone() };
        handles.push(tokio::spawn(async move {
            store.transition("t", Transition::Message(format!("m{n}")), now_ms()).await
        }));
    }
    for handle in handles {
        assert!(handle.await.unwrap().unwrap().is_some(), "every edit applied");
    }
    let record = b.read("t").await.unwrap().unwrap();
    assert_eq!(record.revision, writes, "the compare-and-swap lost no concurrent edit");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn the_bounds_hold_across_two_instances_and_nothing_is_evicted() {
    let redis = server();
    let a = instance(config(&redis)).await.task_store();
    let b = instance(config(&redis)).await.task_store();
    let limits = TaskLimits::new(2, 3);
    let _leases: Vec<_> = ["a1", "a2", "b1", "a3", "c1"].iter().map(|id| a.watch_running(id)).collect();
    assert_eq!(a.create(task("a1", Some("alice"), None), limits).await, Ok(Ok(())));
    assert_eq!(b.create(task("a2", Some("alice"), None), limits).await, Ok(Ok(())));
    assert_eq!(a.create(task("a3", Some("alice"), None), limits).await, Ok(Err(LimitReached::PerOwner(2))));
    assert_eq!(b.create(task("b1", Some("bob"), None), limits).await, Ok(Ok(())));
    assert_eq!(a.create(task("c1", Some("carol"), None), limits).await, Ok(Err(LimitReached::Total(3))));
    for id in ["a1", "a2", "b1"] {
        assert!(b.read(id).await.unwrap().is_some(), "{id} was not evicted");
    }
    // A finished task frees its owner's place at once, but stays in the store's count until removed.
    b.transition("a1", Transition::Cancelled, now_ms()).await.unwrap().unwrap();
    let bigger = TaskLimits::new(2, 4);
    assert_eq!(a.create(task("a3", Some("alice"), None), bigger).await, Ok(Ok(())));
    assert_eq!(a.create(task("c1", Some("carol"), None), bigger).await, Ok(Err(LimitReached::Total(4))));
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_removed_task_frees_its_places_at_the_next_create() {
    let redis = server();
    let a = instance(config(&redis)).await.task_store();
    let limits = TaskLimits::new(1, 1);
    let _leases = (a.watch_running("short"), a.watch_running("next"));
    a.create(task("short", Some("alice"), Some(200)), limits).await.unwrap().unwrap();
    assert_eq!(a.create(task("next", Some("alice"), None), limits).await, Ok(Err(LimitReached::Total(1))));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(a.read("short").await, Ok(None), "expired with its key");
    assert_eq!(a.create(task("next", Some("alice"), None), limits).await, Ok(Ok(())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_terminal_status_is_never_overwritten_by_racing_instances() {
    let redis = server();
    let a = instance(config(&redis)).await.task_store();
    let b = instance(config(&redis)).await.task_store();
    let ids: Vec<String> = (0..40).map(|n| format!("race{n}")).collect();
    let _leases: Vec<_> = ids.iter().map(|id| a.watch_running(id)).collect();
    for id in &ids {
        a.create(task(id, Some("alice"), None), LIMITS).await.unwrap().unwrap();
    }
    let mut races = Vec::new();
    for id in &ids {
        let (a, b, complete_id, cancel_id) = (a.clone(), b.clone(), id.clone(), id.clone());
        let complete = tokio::spawn(async move {
            a.transition(&complete_id, Transition::Completed(json!({"content": []})), now_ms()).await
        });
        let cancel = tokio::spawn(async move { b.request_cancel(&cancel_id, now_ms()).await });
        races.push((id.clone(), complete, cancel));
    }
    let (mut completed, mut cancelled) = (0, 0);
    for (id, complete, cancel) in races {
        let completed_by_a = complete.await.unwrap().unwrap();
        let cancelled_by_b = cancel.await.unwrap().unwrap();
        assert!(completed_by_a.is_some() != cancelled_by_b.is_some(), "{id}: exactly one transition won");
        let stored = a.read(&id).await.unwrap().unwrap();
        let winner = completed_by_a.or(cancelled_by_b).unwrap();
        assert_eq!(stored, winner, "{id}: the stored record is the winner's, untouched by the loser");
        match stored.status {
            TaskStatus::Completed => completed += 1,
            TaskStatus::Cancelled => cancelled += 1,
            other => panic!("{id}: {other:?}"),
        }
        // Nobody overwrites it afterwards either.
        let late =
            b.transition(&id, Transition::Failed { error: json!({}), message: "late".into() }, now_ms());
        assert_eq!(late.await, Ok(None));
    }
    eprintln!("races: {completed} completed first, {cancelled} cancelled first");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_wake_reaches_a_watcher_on_another_instance_without_polling() {
    let redis = server();
    let a = instance(config(&redis)).await;
    let b = instance(config(&redis)).await.task_store();
    let store = a.task_store();
    let mut watch = store.watch_running("t");
    store.create(task("t", None, None), LIMITS).await.unwrap().unwrap();
    // Idle for five beats (200 ms each): what A sends is its heartbeat alone — the subscription's ping
    // and one renewal of its one lease per beat — never a read of the task.
    let before = a.round_trips();
    let idle = Instant::now();
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let beats = idle.elapsed().as_millis() as u64 / 200 + 1;
    let idle_trips = a.round_trips() - before;
    assert!(idle_trips <= 2 * beats, "{idle_trips} round trips in {beats} beats while idle");
    let woken = Instant::now();
    b.request_cancel("t", now_ms()).await.unwrap().unwrap();
    let alive = tokio::time::timeout(Duration::from_secs(2), watch.woken()).await.expect("woken in time");
    assert!(alive);
    eprintln!(
        "idle: {idle_trips} round trips in {beats} beats; wake-up across instances in {:?}",
        woken.elapsed()
    );
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_task_whose_lease_lapsed_is_failed_by_the_next_read_with_the_reason() {
    let redis = server();
    let b = instance(config(&redis)).await.task_store();
    {
        let a = instance(config(&redis)).await.task_store();
        let _running = a.watch_running("orphan");
        a.create(task("orphan", Some("alice"), Some(60_000)), LIMITS).await.unwrap().unwrap();
        // The instance stops: its heartbeat with it.
    }
    assert_eq!(b.read("orphan").await.unwrap().unwrap().status, TaskStatus::Working, "the lease still runs");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let failed = b.read("orphan").await.unwrap().unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.status_message.as_deref(), Some(INSTANCE_STOPPED));
    assert_eq!(failed.error, Some(json!({"code": -32603, "message": INSTANCE_STOPPED})));
    assert_eq!(b.read("orphan").await.unwrap().unwrap(), failed, "failed once, then read as stored");
    // Its owner's place is free again.
    let _next = b.watch_running("next");
    assert_eq!(b.create(task("next", Some("alice"), None), TaskLimits::new(1, 10)).await, Ok(Ok(())));
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_running_instance_keeps_its_lease_with_the_heartbeat() {
    let redis = server();
    // A 1.5 s lease (a beat every 500 ms): three beats may be late before it lapses.
    let a = instance(config(&redis).lease(Duration::from_millis(1_500))).await.task_store();
    let b = instance(config(&redis)).await.task_store();
    let running = a.watch_running("t");
    a.create(task("t", None, None), LIMITS).await.unwrap().unwrap();
    // A plain watch (a listen's) holds no lease.
    let _listen = b.watch("t");
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(b.read("t").await.unwrap().unwrap().status, TaskStatus::Working, "renewed");
    }
    drop(running);
    tokio::time::sleep(Duration::from_millis(1_700)).await;
    assert_eq!(b.read("t").await.unwrap().unwrap().status, TaskStatus::Failed, "lapsed once released");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_tasks_expiry_is_its_removal_deadline_as_pexpireat() {
    let redis = server();
    let a = instance(config(&redis)).await.task_store();
    let mut look = raw(&redis).await;
    let _leases = (a.watch_running("ttl"), a.watch_running("forever"));
    let record = task("ttl", None, Some(60_000));
    let deadline = record.remove_after_ms.unwrap();
    a.create(record, LIMITS).await.unwrap().unwrap();
    let at: i64 = redis::cmd("PEXPIRETIME").arg("mcp-kernel:task:ttl").query_async(&mut look).await.unwrap();
    assert_eq!(at as u64, deadline, "the key expires at the record's removal deadline");
    a.transition("ttl", Transition::Message("m".into()), now_ms()).await.unwrap().unwrap();
    let at: i64 = redis::cmd("PEXPIRETIME").arg("mcp-kernel:task:ttl").query_async(&mut look).await.unwrap();
    assert_eq!(at as u64, deadline, "an update keeps the expiry");
    a.create(task("forever", None, None), LIMITS).await.unwrap().unwrap();
    let ttl: i64 = redis::cmd("PTTL").arg("mcp-kernel:task:forever").query_async(&mut look).await.unwrap();
    assert_eq!(ttl, -1, "a task with no time to live has no expiry");
    let lease: i64 = redis::cmd("PTTL").arg("mcp-kernel:lease:ttl").query_async(&mut look).await.unwrap();
    assert!((1..=600).contains(&lease), "the lease expires within its length: {lease}");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_read_is_one_round_trip_and_a_lifecycle_five() {
    let redis = server();
    // A long lease: no heartbeat during the measure.
    let a = instance(config(&redis).lease(Duration::from_secs(60))).await;
    let store = a.task_store();
    let _running = store.watch_running("t");
    let start = a.round_trips();
    store.create(task("t", None, Some(60_000)), LIMITS).await.unwrap().unwrap();
    let created = a.round_trips();
    store.read("t").await.unwrap().unwrap();
    let read = a.round_trips();
    store.transition("t", Transition::Completed(json!({"content": []})), now_ms()).await.unwrap().unwrap();
    let done = eventually(Duration::from_secs(1), || {
        let trips = a.round_trips();
        async move { trips > read + 2 }
    })
    .await;
    assert!(done, "the wake-up was published");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let end = a.round_trips();
    assert_eq!((created - start, read - created), (1, 1), "create and read: one round trip each");
    assert_eq!(end - start, 5, "create 1, read 1, completion 2 (read, swap), its wake-up 1");
    eprintln!("round trips: create {}, read {}, lifecycle {}", created - start, read - created, end - start);
}
