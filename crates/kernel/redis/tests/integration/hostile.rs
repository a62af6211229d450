//! Hostile ids and hostile data: a task id reaches its own keys and no other, and a record someone
//! else wrote into Redis (not JSON, of another shape, of another type, naming another task, huge) is
//! answered `StoreError::Failed` — never a panic, never a write elsewhere, never a broken connection.

use std::time::Duration;

use mcp_kernel_router::tasks::{StoreError, TaskStatus, TaskStore, Transition, now_ms};
use serde_json::json;

use crate::support::{LIMITS, config, instance, raw, server, task};

/// Ids a client may send (the router looks up any string of at most 128 bytes) or a host may make.
fn hostile_ids() -> Vec<String> {
    let mut ids: Vec<String> = [
        "a:b",
        "*",
        "?",
        "[a-z]",
        "{tag}",
        "}{",
        "new\nline",
        "cr\r\nLF",
        "nul\0byte",
        "../q:task:t",
        "x:lease:y",
        "lease:t",
        "task:t",
        ":",
        "::",
        "",
        " ",
        "\\x00\\xff",
        "é✓🦀",
        "%ff%00",
        "p:task:t",
    ]
    .iter()
    .map(|id| id.to_string())
    .collect();
    ids.push("z".repeat(128));
    ids.push("é".repeat(64));
    ids
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn hostile_task_ids_reach_their_own_keys_and_nothing_of_another_task_or_prefix() {
    let redis = server();
    let p = instance(config(&redis).key_prefix("p")).await;
    let q = instance(config(&redis).key_prefix("q")).await;
    let (ps, qs) = (p.task_store(), q.task_store());
    let _q_lease = qs.watch_running("t");
    qs.create(task("t", Some("alice"), None), LIMITS).await.unwrap().unwrap();
    let q_before = qs.read("t").await.unwrap().unwrap();
    let ids = hostile_ids();
    let _leases: Vec<_> = ids.iter().map(|id| ps.watch_running(id)).collect();
    for id in &ids {
        assert_eq!(ps.read(id).await, Ok(None), "{id:?}: nothing stored under it yet");
        assert_eq!(ps.create(task(id, Some("alice"), Some(60_000)), LIMITS).await, Ok(Ok(())), "{id:?}");
    }
    for (n, id) in ids.iter().enumerate() {
        let read = ps.read(id).await.unwrap().unwrap_or_else(|| panic!("{id:?} not found"));
        assert_eq!(read.id, *id);
        let edited = ps.transition(id, Transition::Message(format!("m{n}")), now_ms()).await.unwrap();
        assert_eq!(edited.unwrap().status_message, Some(format!("m{n}")), "{id:?}");
    }
    // Each task kept its own edit: no id wrote another's record.
    for (n, id) in ids.iter().enumerate() {
        let read = ps.read(id).await.unwrap().unwrap();
        assert_eq!((read.revision, read.status_message), (1, Some(format!("m{n}"))), "{id:?}");
    }
    // Ending the one named like another prefix's task leaves that task as it was.
    ps.transition("../q:task:t", Transition::Cancelled, now_ms()).await.unwrap().unwrap();
    ps.transition("p:task:t", Transition::Cancelled, now_ms()).await.unwrap().unwrap();
    assert_eq!(qs.read("t").await.unwrap().unwrap(), q_before, "q's task is untouched");
    assert_eq!(qs.read("../q:task:t").await, Ok(None), "and q does not see p's");
    let mut look = raw(&redis).await;
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query_async(&mut look).await.unwrap();
    let (mut p_tasks, mut p_leases) = (0, 0);
    for key in &keys {
        let text = String::from_utf8_lossy(key);
        assert!(text.starts_with("p:") || text.starts_with("q:"), "a key outside both prefixes: {text:?}");
        p_tasks += usize::from(text.starts_with("p:task:"));
        p_leases += usize::from(text.starts_with("p:lease:"));
    }
    assert_eq!((p_tasks, p_leases), (ids.len(), ids.len()), "one record and one lease per id: {keys:?}");
    let stored: Vec<Vec<u8>> =
        redis::cmd("ZRANGE").arg("p:tasks").arg(0).arg(-1).query_async(&mut look).await.unwrap();
    assert_eq!(stored.len(), ids.len());
    // A wake-up names one task exactly: no pattern, no prefix match.
    let mut exact = ps.watch("*");
    let mut other = ps.watch("a:b");
    q.task_store().wake("*");
    ps.wake("*");
    assert!(tokio::time::timeout(Duration::from_secs(2), exact.woken()).await.unwrap());
    assert!(
        tokio::time::timeout(Duration::from_millis(200), other.woken()).await.is_err(),
        "a:b was not woken"
    );
}

async fn set(redis: &mcp_kernel_test_support::redis::RedisServer, key: &str, value: &[u8]) {
    let mut look = raw(redis).await;
    let () = redis::cmd("SET").arg(key).arg(value).query_async(&mut look).await.unwrap();
}

fn failed<T: std::fmt::Debug>(result: Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::Failed(_)))
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_record_corrupted_by_someone_else_is_answered_failed_and_the_connection_serves_on() {
    let redis = server();
    let a = instance(config(&redis)).await;
    let store = a.task_store();
    let _lease = store.watch_running("good");
    store.create(task("good", None, None), LIMITS).await.unwrap().unwrap();
    let mut look = raw(&redis).await;
    set(&redis, "mcp-kernel:task:text", b"not json at all {").await;
    set(&redis, "mcp-kernel:task:shape", br#"{"id": "shape", "status": 7}"#).await;
    set(&redis, "mcp-kernel:task:binary", &[0xff, 0xfe, 0x00, 0x80]).await;
    set(&redis, "mcp-kernel:task:status", br#"{"id":"status","status":"exploded"}"#).await;
    let () = redis::cmd("HSET")
        .arg("mcp-kernel:task:hash")
        .arg("f")
        .arg("v")
        .query_async(&mut look)
        .await
        .unwrap();
    let () = redis::cmd("RPUSH").arg("mcp-kernel:task:list").arg("v").query_async(&mut look).await.unwrap();
    // Big, and not JSON past its first byte.
    let mut huge = vec![b'['; 1];
    huge.extend(std::iter::repeat_n(b'x', 8 << 20));
    set(&redis, "mcp-kernel:task:huge", &huge).await;
    for id in ["text", "shape", "binary", "status", "hash", "list", "huge"] {
        assert!(failed(store.read(id).await), "{id}: read");
        assert!(failed(store.transition(id, Transition::Cancelled, now_ms()).await), "{id}: transition");
        let answers = [("k".to_owned(), json!({}))].into();
        assert!(failed(store.record_input(id, answers, now_ms()).await), "{id}: input");
        assert_eq!(store.read("good").await.unwrap().unwrap().status, TaskStatus::Working, "after {id}");
    }
    // The error says where, never what: no part of the record is quoted.
    let Err(StoreError::Failed(text)) = store.read("text").await else { unreachable!() };
    assert!(!text.contains("json at all"), "{text}");
    // The store's own sets of another type refuse a create, as a failure, not an outage.
    let () = redis::cmd("DEL").arg("mcp-kernel:tasks").query_async(&mut look).await.unwrap();
    set(&redis, "mcp-kernel:tasks", b"a string").await;
    let _next = store.watch_running("next");
    assert!(failed(store.create(task("next", None, None), LIMITS).await));
    assert_eq!(store.read("good").await.unwrap().unwrap().status, TaskStatus::Working);
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_record_stored_under_another_tasks_id_is_refused_and_writes_nothing_elsewhere() {
    let redis = server();
    let store = instance(config(&redis)).await.task_store();
    let _lease = store.watch_running("victim");
    store.create(task("victim", Some("bob"), None), LIMITS).await.unwrap().unwrap();
    let mut look = raw(&redis).await;
    // Someone copies bob's record under another id, byte for byte.
    let bytes: Vec<u8> =
        redis::cmd("GET").arg("mcp-kernel:task:victim").query_async(&mut look).await.unwrap();
    set(&redis, "mcp-kernel:task:copy", &bytes).await;
    let () = redis::cmd("SET").arg("mcp-kernel:lease:copy").arg("x").query_async(&mut look).await.unwrap();
    assert!(failed(store.read("copy").await), "a record naming another task is not this one");
    assert!(failed(store.transition("copy", Transition::Cancelled, now_ms()).await));
    let victim = store.read("victim").await.unwrap().unwrap();
    assert_eq!((victim.status, victim.revision), (TaskStatus::Working, 0), "bob's task was not written");
}
