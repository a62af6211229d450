//! The session store across instances: create, resume, edit and end through any instance, the bounds
//! at their exact numbers (raced too), the idle expiry as Redis's own, one round trip per resume, and
//! hostile or corrupted data.

use std::time::Duration;

use mcp_kernel_redis::Redis;
use mcp_kernel_router::sessions::{SessionEdit, SessionError, SessionLimits, SessionStore};
use mcp_kernel_router::tasks::{StoreError, now_ms};
use serde_json::json;

use crate::support::{config, eventually, instance, raw, server, session, session_limits};

const MINUTE: Duration = Duration::from_secs(60);

fn subscribe(uri: &str) -> SessionEdit {
    SessionEdit::Subscribe(uri.to_owned())
}

fn failed<T: std::fmt::Debug>(result: &Result<T, SessionError>) -> bool {
    matches!(result, Err(SessionError::Store(StoreError::Failed(_))))
}

/// Every key of the Redis, sorted.
async fn keys(redis: &mcp_kernel_test_support::redis::RedisServer) -> Vec<String> {
    let mut look = raw(redis).await;
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(&mut look).await.unwrap();
    keys.sort();
    keys
}

async fn query<T: redis::FromRedisValue>(
    redis: &mcp_kernel_test_support::redis::RedisServer,
    command: &mut redis::Cmd,
) -> T {
    let mut look = raw(redis).await;
    command.query_async(&mut look).await.unwrap()
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_session_created_through_one_instance_is_resumed_edited_and_ended_through_another() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    let record = session("s1", Some("alice"), limits.idle);
    assert_eq!(a.create(record.clone(), &limits).await, Ok(()));
    let now = now_ms();
    let resumed =
        b.resume("s1", Some("alice"), now, &limits).await.unwrap().expect("live through the other instance");
    let mut expected = record.clone();
    expected.expires_at_ms = now + limits.idle.as_millis() as u64;
    assert_eq!(resumed, expected, "the record as created, its expiry pushed");
    assert_eq!(b.edit("s1", subscribe("file:///a"), &limits).await, Ok(true));
    assert_eq!(a.edit("s1", subscribe("file:///b"), &limits).await, Ok(true));
    assert_eq!(a.edit("s1", SessionEdit::LogLevel("debug".into()), &limits).await, Ok(true));
    assert_eq!(b.edit("s1", SessionEdit::Unsubscribe("file:///a".into()), &limits).await, Ok(true));
    let read = a.resume("s1", Some("alice"), now_ms(), &limits).await.unwrap().unwrap();
    assert_eq!(read.subscriptions, ["file:///b".to_owned()].into());
    assert_eq!(read.log_level.as_deref(), Some("debug"));
    assert_eq!(read.client_capabilities, record.client_capabilities);
    assert!(failed(&a.create(record.clone(), &limits).await), "an id stored already is refused");
    assert_eq!(b.end("s1").await, Ok(true));
    assert_eq!(a.resume("s1", Some("alice"), now_ms(), &limits).await, Ok(None));
    assert_eq!(a.edit("s1", SessionEdit::LogLevel("info".into()), &limits).await, Ok(false));
    assert_eq!(a.end("s1").await, Ok(false));
    assert_eq!(keys(&redis).await, Vec::<String>::new(), "an ended session leaves nothing behind");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn concurrent_edits_from_two_instances_lose_nothing_and_subscriptions_stay_bounded() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let mut limits = SessionLimits::default();
    limits.subscriptions = 20;
    a.create(session("s", None, MINUTE), &limits).await.unwrap();
    let mut handles = Vec::new();
    for n in 0..20 {
        let store = if n % 2 == 0 { a.clone() } else { b.clone() };
        handles.push(tokio::spawn(async move {
            store.edit("s", subscribe(&format!("file:///{n}")), &limits).await
        }));
    }
    for handle in handles {
        assert_eq!(handle.await.unwrap(), Ok(true), "every edit applied");
    }
    let read = b.resume("s", None, now_ms(), &limits).await.unwrap().unwrap();
    assert_eq!(read.subscriptions.len(), 20, "the compare-and-swap lost no concurrent edit");
    let refused = a.edit("s", subscribe("file:///one-more"), &limits).await;
    assert_eq!(refused, Err(SessionError::SubscriptionsFull));
    assert_eq!(b.edit("s", subscribe("file:///3"), &limits).await, Ok(true), "one held already is no more");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn the_bounds_hold_across_two_instances_at_their_exact_numbers_and_a_second_owner_is_admitted() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = session_limits(2, 3, MINUTE, 4);
    let create = |store: &mcp_kernel_redis::RedisSessionStore, id: &str, owner: Option<&str>| {
        let (store, record) = (store.clone(), session(id, owner, MINUTE));
        async move { store.create(record, &limits).await }
    };
    assert_eq!(create(&a, "a1", Some("alice")).await, Ok(()));
    assert_eq!(create(&b, "a2", Some("alice")).await, Ok(()));
    assert_eq!(create(&a, "a3", Some("alice")).await, Err(SessionError::OwnerFull), "2 per owner");
    assert_eq!(create(&b, "a3", Some("alice")).await, Err(SessionError::OwnerFull), "on either instance");
    assert_eq!(create(&b, "b1", Some("bob")).await, Ok(()), "another owner is admitted");
    assert_eq!(create(&a, "b2", Some("bob")).await, Err(SessionError::Full), "3 in all");
    assert_eq!(create(&a, "n1", None).await, Err(SessionError::Full));
    assert_eq!(b.end("a1").await, Ok(true));
    assert_eq!(create(&a, "b2", Some("bob")).await, Ok(()), "an ended session frees its place");
    assert_eq!(create(&b, "a3", Some("alice")).await, Err(SessionError::Full));
    for (id, owner) in [("a1", "alice"), ("a3", "alice"), ("b3", "bob")] {
        let resumed = a.resume(id, Some(owner), now_ms(), &limits).await;
        assert_eq!(resumed, Ok(None), "{id}: refused, nothing stored");
    }

    // Raced: twelve creations at once, half through each instance.
    let race = |limits: SessionLimits, owner: fn(usize) -> String, prefix: &'static str| {
        let (a, b) = (a.clone(), b.clone());
        async move {
            let mut handles = Vec::new();
            for n in 0..12 {
                let store = if n % 2 == 0 { a.clone() } else { b.clone() };
                let record = session(&format!("{prefix}{n}"), Some(&owner(n)), MINUTE);
                handles.push(tokio::spawn(async move { store.create(record, &limits).await }));
            }
            let mut outcomes = Vec::new();
            for handle in handles {
                outcomes.push(handle.await.unwrap());
            }
            outcomes
        }
    };
    let raced = race(session_limits(3, 100, MINUTE, 4), |_| "carol".into(), "c").await;
    assert_eq!(raced.iter().filter(|outcome| outcome.is_ok()).count(), 3, "{raced:?}");
    assert!(raced.iter().all(|outcome| matches!(outcome, Ok(()) | Err(SessionError::OwnerFull))));
    let raced = race(session_limits(3, 12, MINUTE, 4), |n| format!("owner{n}"), "d").await;
    assert_eq!(raced.iter().filter(|outcome| outcome.is_ok()).count(), 12 - 3 - 3, "{raced:?}");
    assert!(raced.iter().all(|outcome| matches!(outcome, Ok(()) | Err(SessionError::Full))));
}

/// A session with neither an owner nor a quota (a transport that names no client): the total alone.
#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn sessions_of_no_principal_and_no_client_count_against_the_total_only() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = session_limits(2, 5, MINUTE, 4);
    for n in 0..4 {
        let store = if n % 2 == 0 { &a } else { &b };
        let created = store.create(session(&format!("n{n}"), None, MINUTE), &limits).await;
        assert_eq!(created, Ok(()), "n{n}: past the per-owner bound of 2, within the total of 5");
    }
    assert_eq!(a.create(session("a1", Some("alice"), MINUTE), &limits).await, Ok(()), "the fifth");
    let past = b.create(session("n4", None, MINUTE), &limits).await;
    assert_eq!(past, Err(SessionError::Full), "the total holds for sessions of nobody too");
    assert_eq!(a.create(session("b1", Some("bob"), MINUTE), &limits).await, Err(SessionError::Full));
    let stored = keys(&redis).await;
    assert!(stored.iter().all(|key| !key.contains("nobody")), "no set of nobody's sessions: {stored:?}");
    assert_eq!(b.end("n0").await, Ok(true));
    assert_eq!(a.create(session("n4", None, MINUTE), &limits).await, Ok(()), "an ended one frees its place");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn an_idle_session_expires_in_redis_itself_each_resume_pushes_it_and_an_expired_one_counts_no_more() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let idle = Duration::from_millis(800);
    let limits = session_limits(1, 10, idle, 4);
    let record = session("e1", Some("alice"), idle);
    a.create(record.clone(), &limits).await.unwrap();
    let expiry_of = |key: &str| redis::cmd("PEXPIRETIME").arg(key).clone();
    let at: u64 = query(&redis, &mut expiry_of("mcp-kernel:session:e1")).await;
    assert_eq!(at, record.expires_at_ms, "PEXPIREAT at the idle expiry");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let now = now_ms();
    let resumed = b.resume("e1", Some("alice"), now, &limits).await.unwrap().expect("live");
    assert_eq!(resumed.expires_at_ms, now + 800);
    let at: u64 = query(&redis, &mut expiry_of("mcp-kernel:session:e1")).await;
    assert_eq!(at, now + 800, "pushed in Redis");
    for set in ["mcp-kernel:sessions", "mcp-kernel:sessions:client:alice"] {
        let score: u64 = query(&redis, redis::cmd("ZSCORE").arg(set).arg("e1")).await;
        assert_eq!(score, now + 800, "{set}: the bound's entry is pushed too");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(now_ms() > record.expires_at_ms, "past the first expiry");
    assert!(
        a.resume("e1", Some("alice"), now_ms(), &limits).await.unwrap().is_some(),
        "alive: it was resumed"
    );
    let refused = b.create(session("e2", Some("alice"), idle), &limits).await;
    assert_eq!(refused, Err(SessionError::OwnerFull), "a live session counts");
    let gone = eventually(Duration::from_secs(3), || async {
        !query::<bool>(&redis, redis::cmd("EXISTS").arg("mcp-kernel:session:e1")).await
    })
    .await;
    assert!(gone, "Redis expired the key itself");
    assert_eq!(a.resume("e1", Some("alice"), now_ms(), &limits).await, Ok(None), "expired");
    assert_eq!(a.edit("e1", subscribe("file:///x"), &limits).await, Ok(false));
    assert_eq!(
        b.create(session("e2", Some("alice"), idle), &limits).await,
        Ok(()),
        "an expired one counts no more"
    );
    let owners: Vec<String> =
        query(&redis, redis::cmd("ZRANGE").arg("mcp-kernel:sessions:client:alice").arg(0).arg(-1)).await;
    assert_eq!(owners, ["e2"], "swept from the owner's set");
    let gone =
        eventually(Duration::from_secs(3), || async { keys(&redis).await == ["mcp-kernel:sessions"] }).await;
    assert!(gone, "the owner's set expires with its last session: {:?}", keys(&redis).await);
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn another_principals_resume_is_none_and_leaves_the_expiry_as_it_was() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = session_limits(4, 10, MINUTE, 4);
    a.create(session("s", Some("alice"), MINUTE), &limits).await.unwrap();
    a.create(session("n", None, MINUTE), &limits).await.unwrap();
    // Every expiry and score a resume pushes.
    let expiries = || async {
        let mut found: Vec<u64> = Vec::new();
        for id in ["s", "n"] {
            found
                .push(query(&redis, redis::cmd("PEXPIRETIME").arg(format!("mcp-kernel:session:{id}"))).await);
            found.push(query(&redis, redis::cmd("ZSCORE").arg("mcp-kernel:sessions").arg(id)).await);
        }
        found
            .push(query(&redis, redis::cmd("ZSCORE").arg("mcp-kernel:sessions:client:alice").arg("s")).await);
        found.push(query(&redis, redis::cmd("PEXPIRETIME").arg("mcp-kernel:sessions:client:alice")).await);
        found
    };
    let before = expiries().await;
    // Half a minute on: a resume of the owner's would push every one of them.
    let later = now_ms() + 30_000;
    for (id, owner) in [("s", Some("bob")), ("s", None), ("n", Some("alice")), ("s", Some("not valid"))] {
        assert_eq!(b.resume(id, owner, later, &limits).await, Ok(None), "{id} as {owner:?}: unknown");
    }
    assert_eq!(expiries().await, before, "PEXPIRETIME and every score as they were");
    let resumed = a.resume("s", Some("alice"), later, &limits).await.unwrap().expect("alice's own");
    assert_eq!(resumed.expires_at_ms, later + 60_000);
    let at: u64 = query(&redis, redis::cmd("PEXPIRETIME").arg("mcp-kernel:session:s")).await;
    assert_eq!(at, later + 60_000, "the owner's resume pushes it");
    assert!(b.resume("n", None, later, &limits).await.unwrap().is_some(), "nobody's, by nobody");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_resume_is_one_round_trip_and_an_invalid_id_none() {
    let redis = server();
    // A long lease: no heartbeat during the measures.
    let a: Redis = instance(config(&redis).lease(Duration::from_secs(60))).await;
    let store = a.session_store();
    let limits = SessionLimits::default();
    let mut trips = vec![a.round_trips()];
    let step = |trips: &mut Vec<u64>| trips.push(a.round_trips());
    store.create(session("s", Some("alice"), limits.idle), &limits).await.unwrap();
    step(&mut trips);
    store.resume("s", Some("alice"), now_ms(), &limits).await.unwrap().unwrap();
    step(&mut trips);
    assert_eq!(store.resume("unknown", Some("alice"), now_ms(), &limits).await, Ok(None));
    step(&mut trips);
    assert_eq!(store.edit("s", subscribe("file:///a"), &limits).await, Ok(true));
    step(&mut trips);
    assert_eq!(store.edit("s", subscribe("file:///a"), &limits).await, Ok(true));
    step(&mut trips);
    assert_eq!(store.resume("not valid", Some("alice"), now_ms(), &limits).await, Ok(None));
    step(&mut trips);
    assert_eq!(store.end("s").await, Ok(true));
    step(&mut trips);
    let costs: Vec<u64> = trips.windows(2).map(|pair| pair[1] - pair[0]).collect();
    assert_eq!(
        costs,
        [1, 1, 1, 2, 1, 0, 1],
        "create, resume, resume of an unknown id, edit (read and swap), an edit changing nothing \
         (read), an invalid id (nothing sent), end (its notice published by its script)"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        a.round_trips(),
        trips[trips.len() - 1],
        "end's notice to the other instances left in its script"
    );
}

/// Session ids a client may send in `Mcp-Session-Id`, valid (visible ASCII) but shaped like key parts.
fn tricky_ids() -> Vec<String> {
    let ids = [
        "x:pending",
        "sessions",
        "sessions:client:alice",
        "*",
        "?",
        "[a-z]",
        "{tag}",
        "}{",
        "a:b",
        ":",
        "::",
        "../q:session:t",
        "q:session:t",
        "%ff%00",
        r"\x00",
        r#""quoted""#,
        r"back\slash",
        "pending:x",
    ];
    let mut ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    ids.push("z".repeat(128));
    ids
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn hostile_session_ids_reach_their_own_keys_and_invalid_ones_reach_redis_not_at_all() {
    let redis = server();
    let p = instance(config(&redis).key_prefix("p")).await;
    let q = instance(config(&redis).key_prefix("q")).await;
    let (ps, qs) = (p.session_store(), q.session_store());
    let limits = session_limits(64, 1024, MINUTE, 4);
    qs.create(session("t", Some("alice"), MINUTE), &limits).await.unwrap();
    let q_before = qs.resume("t", Some("alice"), now_ms(), &limits).await.unwrap().unwrap();
    let ids = tricky_ids();
    for id in &ids {
        assert_eq!(
            ps.resume(id, Some("alice"), now_ms(), &limits).await,
            Ok(None),
            "{id:?}: nothing stored under it yet"
        );
        assert_eq!(ps.create(session(id, Some("alice"), MINUTE), &limits).await, Ok(()), "{id:?}");
    }
    for (n, id) in ids.iter().enumerate() {
        assert_eq!(
            ps.resume(id, Some("alice"), now_ms(), &limits).await.unwrap().map(|r| r.id),
            Some(id.clone())
        );
        assert_eq!(ps.edit(id, SessionEdit::LogLevel(format!("l{n}")), &limits).await, Ok(true), "{id:?}");
    }
    for (n, id) in ids.iter().enumerate() {
        let read = ps.resume(id, Some("alice"), now_ms(), &limits).await.unwrap().unwrap();
        assert_eq!(read.log_level, Some(format!("l{n}")), "{id:?}: its own edit, no other's");
    }
    let session_keys = keys(&redis).await.into_iter().filter(|key| key.starts_with("p:session:")).count();
    assert_eq!(session_keys, ids.len(), "one key per id: {:?}", keys(&redis).await);
    assert_eq!(
        qs.resume("t", Some("alice"), now_ms(), &limits).await.unwrap().unwrap().log_level,
        q_before.log_level
    );
    for id in &ids {
        assert_eq!(ps.end(id).await, Ok(true), "{id:?}");
    }
    assert_eq!(
        qs.resume("t", Some("alice"), now_ms(), &limits).await.unwrap().unwrap().id,
        "t",
        "q's session is untouched"
    );
    assert!(keys(&redis).await.iter().all(|key| key.starts_with("q:")), "{:?}", keys(&redis).await);

    // Not visible ASCII, or too long: never a key part, never a round trip.
    let invalid = ["", " ", "a b", "new\nline", "cr\r\n", "nul\0", "é✓", "tab\t", "\x7f"].map(str::to_owned);
    let before = p.round_trips();
    for id in invalid.iter().chain(std::iter::once(&"z".repeat(129))) {
        assert_eq!(ps.resume(id, Some("alice"), now_ms(), &limits).await, Ok(None), "{id:?}");
        assert_eq!(ps.edit(id, subscribe("file:///x"), &limits).await, Ok(false), "{id:?}");
        assert_eq!(ps.end(id).await, Ok(false), "{id:?}");
        assert_eq!(ps.deliver("s", id, json!({})).await, Ok(false), "{id:?} as a request id");
        assert_eq!(ps.deliver(id, "r", json!({})).await, Ok(false), "{id:?}");
        assert!(failed(&ps.expect("s", id, &limits).await.map(drop)), "{id:?} as a request id");
        assert!(failed(&ps.create(session(id, None, MINUTE), &limits).await), "{id:?}");
    }
    let bad_owner = ps.create(session("fine", Some("an owner with spaces"), MINUTE), &limits).await;
    assert!(failed(&bad_owner));
    let bad_client = session("fine", None, MINUTE).counted_as(Some("a client with spaces".into()));
    assert!(failed(&ps.create(bad_client, &limits).await));
    assert_eq!(p.round_trips(), before, "nothing was sent");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_session_record_corrupted_by_someone_else_is_answered_failed_and_the_connection_serves_on() {
    let redis = server();
    let store = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    store.create(session("good", Some("bob"), MINUTE), &limits).await.unwrap();
    let bytes: Vec<u8> = query(&redis, redis::cmd("HGET").arg("mcp-kernel:session:good").arg("record")).await;
    let () = query(&redis, redis::cmd("SET").arg("mcp-kernel:session:text").arg("not a hash")).await;
    let () = query(&redis, redis::cmd("HSET").arg("mcp-kernel:session:copy").arg("record").arg(&bytes)).await;
    let () =
        query(&redis, redis::cmd("HSET").arg("mcp-kernel:session:shape").arg("record").arg(r#"{"id":7}"#))
            .await;
    let () =
        query(&redis, redis::cmd("HSET").arg("mcp-kernel:session:json").arg("record").arg("{secret")).await;
    for id in ["text", "copy", "shape", "json"] {
        let resumed = store.resume(id, None, now_ms(), &limits).await;
        assert!(matches!(resumed, Err(StoreError::Failed(_))), "{id}: {resumed:?}");
        if let Err(StoreError::Failed(text)) = resumed {
            assert!(!text.contains("secret"), "the error quotes nothing of the record: {text}");
        }
        assert!(failed(&store.edit(id, subscribe("file:///x"), &limits).await), "{id}: edit");
        assert!(store.resume("good", Some("bob"), now_ms(), &limits).await.unwrap().is_some(), "after {id}");
    }
    let good: Vec<u8> = query(&redis, redis::cmd("HGET").arg("mcp-kernel:session:good").arg("record")).await;
    assert_eq!(good, bytes, "bob's session was not written through the copy");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn redis_holds_the_owners_digest_and_nothing_of_the_principal_nor_publishes_it() {
    use futures_util::StreamExt;
    use sha2::{Digest, Sha256};
    let redis = server();
    let principal = "alice@example.com";
    let digest: String =
        Sha256::digest(principal.as_bytes()).iter().map(|byte| format!("{byte:02x}")).collect();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut listener = client.get_async_pubsub().await.unwrap();
    listener.psubscribe("mcp-kernel:*").await.unwrap();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    a.create(session("s", Some(&digest), limits.idle), &limits).await.unwrap();
    b.edit("s", subscribe("notes://1"), &limits).await.unwrap();
    b.edit("s", SessionEdit::LogLevel("debug".into()), &limits).await.unwrap();
    let wait = a.expect("s", "r", &limits).await.unwrap();
    b.deliver("s", "r", json!({"jsonrpc": "2.0", "id": "r", "result": {"roots": []}})).await.unwrap();
    assert!(tokio::time::timeout(Duration::from_secs(2), wait).await.unwrap().is_some());
    let _open = a.expect("s", "r2", &limits).await.unwrap();

    // Everything stored under the prefix, as text.
    let mut look = raw(&redis).await;
    let mut stored = String::new();
    for key in keys(&redis).await {
        let kind: String = redis::cmd("TYPE").arg(&key).query_async(&mut look).await.unwrap();
        let values: Vec<String> = match kind.as_str() {
            "hash" => redis::cmd("HGETALL").arg(&key).query_async(&mut look).await.unwrap(),
            "zset" => redis::cmd("ZRANGE").arg(&key).arg(0).arg(-1).query_async(&mut look).await.unwrap(),
            other => panic!("{key}: a {other} the store never writes"),
        };
        stored.push_str(&format!("{key} {values:?}\n"));
    }
    let record: serde_json::Value = serde_json::from_str(
        &redis::cmd("HGET")
            .arg("mcp-kernel:session:s")
            .arg("record")
            .query_async::<String>(&mut look)
            .await
            .unwrap(),
    )
    .unwrap();
    let mut fields: Vec<&str> = record.as_object().unwrap().keys().map(String::as_str).collect();
    fields.sort_unstable();
    let expected =
        ["clientCapabilities", "expiresAtMs", "id", "logLevel", "owner", "protocolVersion", "subscriptions"];
    assert_eq!(fields, expected, "what the legacy protocol needs, and the owner");
    assert_eq!(record["owner"], json!(digest));
    assert!(stored.contains(&digest), "the digest names the owner: {stored}");
    assert!(!stored.contains(principal) && !stored.contains("alice"), "{stored}");

    // Everything published: the answer and the end, never the owner.
    assert_eq!(a.end("s").await, Ok(true));
    let mut messages = listener.on_message();
    let mut published = Vec::new();
    // Beats go on: listen for a bounded time.
    let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
    while let Ok(Some(message)) = tokio::time::timeout_at(deadline, messages.next()).await {
        published.push(String::from_utf8_lossy(message.get_payload_bytes()).into_owned());
    }
    assert!(published.iter().any(|text| text.contains("roots")), "the answer was published: {published:?}");
    assert!(published.iter().any(|text| text.contains("ended")), "the end was published: {published:?}");
    for text in &published {
        assert!(!text.contains(&digest) && !text.contains("alice"), "{text}");
    }
}
