//! The Redis user `docs/deploy.md` ("TLS and ACLs") tells an operator to give the instances: limited to
//! the prefix's keys and channels and to the commands the stores send. A whole task lifecycle, a
//! legacy session's and a change across two instances work under it with nothing denied, another
//! prefix is refused to it, and what one working task and one legacy session cost Redis in memory is
//! measured (the figures the deploy guide quotes).

use std::time::Duration;

use mcp_kernel_redis::RedisConfig;
use mcp_kernel_router::notify::{Change, ChangeHub, ChangeKind};
use mcp_kernel_router::sessions::{SessionEdit, SessionLimits, SessionStore};
use mcp_kernel_router::tasks::{LimitReached, TaskLimits, TaskStatus, TaskStore, Transition, now_ms};
use redis::AsyncCommands;
use serde_json::json;

use crate::support::{LIMITS, instance, raw, server, task};

/// The ACL rule of `docs/deploy.md`, for the prefix `app` (the guide writes `<prefix>`).
const ACL_RULE: &str = "on >instance-pw resetkeys ~app:* resetchannels &app:* -@all \
     +get +set +exists +pexpireat +zadd +zcard +zrange +zrem +zremrangebyscore \
     +hget +hmget +hset +del +zscore \
     +eval +evalsha +script|load +publish +subscribe +ping";

fn as_instance_user(server: &mcp_kernel_test_support::redis::RedisServer, prefix: &str) -> RedisConfig {
    RedisConfig::from_url(&format!("redis://instance:instance-pw@127.0.0.1:{}", server.port()))
        .expect("a URL")
        .key_prefix(prefix)
        .response_timeout(Duration::from_millis(500))
        .connect_timeout(Duration::from_millis(1_000))
        .lease(Duration::from_millis(900))
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn the_documented_acl_user_runs_a_whole_lifecycle_with_nothing_denied_and_no_other_prefix() {
    let server = server();
    let mut admin = raw(&server).await;
    let mut setuser = redis::cmd("ACL");
    setuser.arg("SETUSER").arg("instance");
    for word in ACL_RULE.split_whitespace() {
        setuser.arg(word);
    }
    let _: () = setuser.query_async(&mut admin).await.expect("ACL SETUSER");

    let first = instance(as_instance_user(&server, "app")).await;
    let second = instance(as_instance_user(&server, "app")).await;
    let (store_a, store_b) = (first.task_store(), second.task_store());

    // A change through one instance reaches a subscriber of the other.
    let mut feed = second.change_hub().try_subscribe().expect("subscribed");
    first.change_hub().publish(Change::to_everyone(ChangeKind::ToolsListChanged));
    let heard = tokio::time::timeout(Duration::from_secs(3), feed.next()).await.expect("heard in time");
    assert_eq!(heard.map(|change| change.kind), Some(ChangeKind::ToolsListChanged));

    // A task: created, watched while running, cancelled through the other instance, read.
    store_a.create(task("t1", Some("digest"), Some(60_000)), LIMITS).await.unwrap().unwrap();
    let mut watch = store_a.watch_running("t1");
    let cancelled = store_b.request_cancel("t1", now_ms()).await.expect("cancelled").expect("changed");
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    let woken = tokio::time::timeout(Duration::from_secs(3), watch.woken()).await;
    assert_eq!(woken, Ok(true), "the running instance is woken");
    let done = Transition::Completed(json!({"content": []}));
    assert!(store_a.transition("t1", done, now_ms()).await.unwrap().is_none(), "terminal stays terminal");
    assert_eq!(store_b.read("t1").await.unwrap().map(|r| r.status), Some(TaskStatus::Cancelled));
    // A lease renewed by the heartbeat: wait through a few beats.
    store_a.create(task("t2", None, Some(60_000)), LIMITS).await.unwrap().unwrap();
    let _running = store_a.watch_running("t2");
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(store_b.read("t2").await.unwrap().map(|r| r.status), Some(TaskStatus::Working));
    // An owner at its bound: the creation looks for that owner's tasks whose lease lapsed.
    let one = TaskLimits::new(1, 64);
    let refused = store_b.create(task("t3", None, Some(60_000)), one).await;
    assert_eq!(refused, Ok(Err(LimitReached::PerOwner(1))), "t2 runs");

    // A legacy session: created, resumed and edited through either instance, an answer delivered
    // across them, a wait dropped (its entry removed), the session ended with a wait open.
    let (sessions_a, sessions_b) = (first.session_store(), second.session_store());
    let limits = SessionLimits::default();
    sessions_a.create(crate::support::session("s1", Some("digest"), limits.idle), &limits).await.unwrap();
    assert!(sessions_b.resume("s1", Some("digest"), now_ms(), &limits).await.unwrap().is_some());
    let subscribe = SessionEdit::Subscribe("notes://1".into());
    assert_eq!(sessions_b.edit("s1", subscribe, &limits).await, Ok(true));
    let wait = sessions_a.expect("s1", "r1", &limits).await.unwrap();
    assert_eq!(sessions_b.deliver("s1", "r1", json!({"id": "r1", "result": {}})).await, Ok(true));
    let answered = tokio::time::timeout(Duration::from_secs(3), wait).await.expect("answered in time");
    assert_eq!(answered, Some(json!({"id": "r1", "result": {}})));
    drop(sessions_a.expect("s1", "r2", &limits).await.unwrap());
    let open = sessions_b.expect("s1", "r3", &limits).await.unwrap();
    let forgotten = crate::support::eventually(Duration::from_secs(2), || async {
        let pending: usize =
            redis::cmd("ZCARD").arg("app:pending:s1").query_async(&mut raw(&server).await).await.unwrap();
        pending == 1
    })
    .await;
    assert!(forgotten, "the dropped wait's entry was removed");
    assert_eq!(sessions_a.end("s1").await, Ok(true));
    let ended = tokio::time::timeout(Duration::from_secs(3), open).await.expect("ended in time");
    assert_eq!(ended, None);

    let denied: Vec<redis::Value> =
        redis::cmd("ACL").arg("LOG").query_async(&mut admin).await.expect("ACL LOG");
    assert!(denied.is_empty(), "the rule denied something the store sends: {denied:?}");

    // The same user under another prefix: a host that waits for Redis at start is told it may not
    // subscribe there, and a task written there is refused as failed, not as unreachable.
    let refused = mcp_kernel_redis::Redis::connect(as_instance_user(&server, "other")).await;
    let reason = refused.expect_err("no permission on the other prefix's channels").reason;
    assert!(reason.contains("NoPerm"), "{reason}");
    let other = mcp_kernel_redis::Redis::start(as_instance_user(&server, "other"));
    let store = other.task_store();
    let mut refused = None;
    for _ in 0..50 {
        match store.create(task("t3", None, Some(60_000)), LIMITS).await {
            Err(error) if error.is_unavailable() => tokio::time::sleep(Duration::from_millis(20)).await,
            outcome => {
                refused = Some(outcome);
                break;
            }
        }
    }
    assert!(matches!(refused, Some(Err(ref error)) if !error.is_unavailable()), "{refused:?}");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_working_task_costs_redis_under_two_kilobytes() {
    let server = server();
    let mut admin = raw(&server).await;
    let redis = instance(crate::support::config(&server).key_prefix("m")).await;
    let store = redis.task_store();
    let owner = "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4";
    let mut record = task("0123456789abcdef0123456789abcdef", Some(owner), Some(600_000));
    record.status_message = Some("writing 12 notes".into());
    store.create(record, LIMITS).await.unwrap().unwrap();
    let _running = store.watch_running("0123456789abcdef0123456789abcdef");
    let id = "0123456789abcdef0123456789abcdef";
    let mut usage = 0u64;
    for key in [format!("m:task:{id}"), format!("m:lease:{id}")] {
        let bytes: Option<u64> =
            redis::cmd("MEMORY").arg("USAGE").arg(&key).query_async(&mut admin).await.expect("MEMORY USAGE");
        usage += bytes.unwrap_or_else(|| panic!("{key} is stored"));
    }
    // The sorted sets' entries: their growth from one more task of another owner.
    let sets = async |admin: &mut redis::aio::MultiplexedConnection| -> u64 {
        let mut total = 0;
        let keys: Vec<String> = admin.keys("m:*").await.expect("KEYS");
        for key in keys.iter().filter(|key| !key.contains(":task:") && !key.contains(":lease:")) {
            let bytes: Option<u64> =
                redis::cmd("MEMORY").arg("USAGE").arg(key).query_async(admin).await.expect("MEMORY USAGE");
            total += bytes.unwrap_or(0);
        }
        total
    };
    let before = sets(&mut admin).await;
    store
        .create(task("fedcba9876543210fedcba9876543210", Some("other"), Some(600_000)), LIMITS)
        .await
        .unwrap()
        .unwrap();
    let after = sets(&mut admin).await;
    let per_task = usage + after.saturating_sub(before);
    println!(
        "one working task: record and lease {usage} bytes, index entries {} bytes, {per_task} bytes in all",
        after.saturating_sub(before)
    );
    assert!(per_task < 2_048, "a working task costs {per_task} bytes");
}

/// `MEMORY USAGE` of each of `keys`, summed (each must exist).
async fn usage(admin: &mut redis::aio::MultiplexedConnection, keys: &[String]) -> u64 {
    let mut total = 0;
    for key in keys {
        let bytes: Option<u64> =
            redis::cmd("MEMORY").arg("USAGE").arg(key).query_async(admin).await.expect("MEMORY USAGE");
        total += bytes.unwrap_or_else(|| panic!("{key} is stored"));
    }
    total
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_legacy_session_costs_redis_under_one_and_a_half_kilobytes() {
    let server = server();
    let mut admin = raw(&server).await;
    let redis = instance(crate::support::config(&server).key_prefix("m")).await;
    let store = redis.session_store();
    let limits = SessionLimits::default();
    let (owner, other) = (
        "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4",
        "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa5",
    );
    // Ids as a transport mints them: 43 characters (256 random bits, base64url).
    let (first, second) =
        ("Qm9vdHN0cmFwcGVkLXNlc3Npb24taWQtMDAwMDAwMDE", "Qm9vdHN0cmFwcGVkLXNlc3Npb24taWQtMDAwMDAwMDI");
    store.create(crate::support::session(first, Some(owner), limits.idle), &limits).await.unwrap();
    let sets =
        ["m:sessions".to_owned(), format!("m:sessions:client:{owner}"), format!("m:sessions:client:{other}")];
    let before = usage(&mut admin, &sets[..2]).await;
    // The sets' growth from one more session, of another owner: its entry in all, its owner's set.
    store.create(crate::support::session(second, Some(other), limits.idle), &limits).await.unwrap();
    let after = usage(&mut admin, &sets).await;
    let record = usage(&mut admin, &[format!("m:session:{first}")]).await;
    let index = after.saturating_sub(before);
    // One request waiting for its answer: the session's pending set with one entry.
    let _wait = store.expect(first, "srv-0123456789abcdef0123456789abcdef", &limits).await.unwrap();
    let pending = usage(&mut admin, &[format!("m:pending:{first}")]).await;
    let per_session = record + index;
    println!(
        "one legacy session: record {record} bytes, index entries {index} bytes, {per_session} bytes in all; \
         a waiting request {pending} bytes"
    );
    assert!(per_session < 1_536, "a legacy session costs {per_session} bytes");
    assert!(pending < 256, "a waiting request costs {pending} bytes");
}
