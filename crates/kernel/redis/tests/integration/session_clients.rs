//! Sessions counted per client across instances: a session of no principal counted against its
//! client's quota (over HTTP a digest of its address prefix) holds that client to the per-client
//! bound on every instance, at the default 16 and raced, while a second client is still admitted; the
//! quota only counts, the owner alone binds.

use mcp_kernel_router::sessions::{SessionError, SessionLimits, SessionRecord, SessionStore, network_digest};
use mcp_kernel_router::tasks::now_ms;

use crate::support::{config, instance, raw, server, session};

/// A session of no principal, counted against the client `network`.
fn anonymous(id: &str, network: &str, limits: &SessionLimits) -> SessionRecord {
    session(id, None, limits.idle).counted_as(Some(network_digest(network)))
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn sessions_of_no_principal_are_16_per_client_across_two_instances_and_a_second_client_is_admitted() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    assert_eq!((limits.per_owner, limits.total), (16, 10_000), "the documented defaults");
    let (here, there) = ("192.0.2.7/32", "192.0.2.8/32");
    for n in 0..16 {
        let store = if n % 2 == 0 { &a } else { &b };
        assert_eq!(store.create(anonymous(&format!("h{n}"), here, &limits), &limits).await, Ok(()), "h{n}");
    }
    for store in [&a, &b] {
        let past = store.create(anonymous("h16", here, &limits), &limits).await;
        assert_eq!(past, Err(SessionError::OwnerFull), "the 17th, on either instance");
    }
    assert_eq!(b.create(anonymous("t0", there, &limits), &limits).await, Ok(()), "a second client");
    let resumed = a.resume("h3", None, now_ms(), &limits).await.unwrap().expect("its own: nobody's");
    assert_eq!(resumed.quota, Some(network_digest(here)));
    assert_eq!(a.resume("h3", Some("alice"), now_ms(), &limits).await, Ok(None), "a principal's: not");
    assert_eq!(b.end("h3").await, Ok(true));
    assert_eq!(a.create(anonymous("h16", here, &limits), &limits).await, Ok(()), "its place came back");

    // What Redis holds: the client's set under the digest, never the address; no owner in the hash.
    let mut look = raw(&redis).await;
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(&mut look).await.unwrap();
    let set = format!("mcp-kernel:sessions:client:{}", network_digest(here));
    assert!(keys.contains(&set), "{keys:?}");
    assert!(keys.iter().all(|key| !key.contains("192.0.2")), "no address in a key: {keys:?}");
    let held: usize = redis::cmd("ZCARD").arg(&set).query_async(&mut look).await.unwrap();
    assert_eq!(held, 16);
    let mut fields: Vec<String> =
        redis::cmd("HKEYS").arg("mcp-kernel:session:h0").query_async(&mut look).await.unwrap();
    fields.sort();
    assert_eq!(fields, ["clients", "record"], "counted against its client, bound to nobody");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn raced_creations_of_one_client_through_two_instances_admit_exactly_its_bound() {
    let redis = server();
    let a = instance(config(&redis)).await.session_store();
    let b = instance(config(&redis)).await.session_store();
    let limits = SessionLimits::default();
    let mut handles = Vec::new();
    for n in 0..40 {
        let store = if n % 2 == 0 { a.clone() } else { b.clone() };
        let record = anonymous(&format!("r{n}"), "198.51.100.0/24", &limits);
        handles.push(tokio::spawn(async move { store.create(record, &limits).await }));
    }
    let mut outcomes = Vec::new();
    for handle in handles {
        outcomes.push(handle.await.unwrap());
    }
    assert_eq!(outcomes.iter().filter(|outcome| outcome.is_ok()).count(), 16, "{outcomes:?}");
    assert!(outcomes.iter().all(|outcome| matches!(outcome, Ok(()) | Err(SessionError::OwnerFull))));
    let other = anonymous("o0", "198.51.101.0/24", &limits);
    assert_eq!(b.create(other, &limits).await, Ok(()), "the next /24 is another client");
}
