//! The in-process session store's tests: its bounds (per client, in all, expired sessions counted no
//! more), its idle expiry, its edits, and the server-to-client requests waiting on a session.

use std::time::Duration;

use futures_util::FutureExt;
use serde_json::{Value, json};

use super::*;

const HOUR: Duration = Duration::from_secs(3600);

fn limits(per_owner: usize, total: usize, pending: usize) -> SessionLimits {
    SessionLimits::new(per_owner, total, HOUR, pending)
}

fn session(id: &str, owner: Option<&str>) -> SessionRecord {
    SessionRecord::new(id, owner.map(str::to_owned), "2025-11-25", json!({"elicitation": {}}), now_ms(), HOUR)
}

/// A session that expired a second ago.
fn expired(id: &str, owner: Option<&str>) -> SessionRecord {
    let long_ago = now_ms() - 2_000;
    SessionRecord::new(
        id,
        owner.map(str::to_owned),
        "2025-11-25",
        json!({}),
        long_ago,
        Duration::from_secs(1),
    )
}

fn create(
    store: &InProcessSessionStore,
    record: SessionRecord,
    limits: &SessionLimits,
) -> Result<(), SessionError> {
    store.create(record, limits).now_or_never().expect("ready")
}

/// Session `id` resumed by `owner`.
fn resume_as(
    store: &InProcessSessionStore,
    id: &str,
    owner: Option<&str>,
    now: u64,
    limits: &SessionLimits,
) -> Option<SessionRecord> {
    store.resume(id, owner, now, limits).now_or_never().expect("ready").expect("in process")
}

/// Session `id` resumed by alice.
fn resume(
    store: &InProcessSessionStore,
    id: &str,
    now: u64,
    limits: &SessionLimits,
) -> Option<SessionRecord> {
    resume_as(store, id, Some("alice"), now, limits)
}

fn edit(
    store: &InProcessSessionStore,
    id: &str,
    edit: SessionEdit,
    limits: &SessionLimits,
) -> Result<bool, SessionError> {
    store.edit(id, edit, limits).now_or_never().expect("ready")
}

fn deliver(store: &InProcessSessionStore, session: &str, request: &str, message: Value) -> bool {
    store.deliver(session, request, message).now_or_never().expect("ready").expect("in process")
}

fn expect(
    store: &InProcessSessionStore,
    session: &str,
    request: &str,
    limits: &SessionLimits,
) -> Result<ReplyWait, SessionError> {
    store.expect(session, request, limits).now_or_never().expect("ready")
}

#[test]
fn one_principal_holds_at_most_its_bound_and_another_is_still_admitted() {
    let store = InProcessSessionStore::new();
    let bounds = limits(16, 10_000, 16);
    for n in 0..16 {
        create(&store, session(&format!("a{n}"), Some("alice")), &bounds).expect("within alice's bound");
    }
    assert_eq!(create(&store, session("a16", Some("alice")), &bounds), Err(SessionError::OwnerFull));
    create(&store, session("b0", Some("bob")), &bounds).expect("bob is not starved by alice");
    assert!(store.end("a3").now_or_never().unwrap().unwrap(), "alice ends one");
    create(&store, session("a16", Some("alice")), &bounds).expect("and gets its place back");
    assert_eq!(store.len(), 17);
}

#[test]
fn the_store_holds_at_most_its_total_and_sessions_of_nobody_count_against_it_alone() {
    let store = InProcessSessionStore::new();
    let bounds = limits(2, 5, 16);
    for n in 0..4 {
        create(&store, session(&format!("n{n}"), None), &bounds).expect("nobody's: the total alone");
    }
    create(&store, session("a0", Some("alice")), &bounds).expect("the fifth");
    assert_eq!(create(&store, session("b0", Some("bob")), &bounds), Err(SessionError::Full));
    assert_eq!(create(&store, session("n4", None), &bounds), Err(SessionError::Full));
    assert_eq!(store.len(), 5, "nothing live was evicted");
}

#[test]
fn sessions_of_no_principal_are_counted_per_client_and_one_past_its_bound_starves_no_other() {
    let store = InProcessSessionStore::new();
    let bounds = SessionLimits::default();
    let of = |id: &str, client: &str| session(id, None).counted_as(Some(client.to_owned()));
    for n in 0..bounds.per_owner {
        create(&store, of(&format!("a{n}"), "net-a"), &bounds).expect("within the client's bound");
    }
    assert_eq!(create(&store, of("a16", "net-a"), &bounds), Err(SessionError::OwnerFull), "the 17th");
    create(&store, of("b0", "net-b"), &bounds).expect("a second client is still admitted");
    create(&store, session("n0", None), &bounds).expect("a session counted under no key: the total");
    assert!(store.end("a3").now_or_never().unwrap().unwrap(), "the first client ends one");
    create(&store, of("a16", "net-a"), &bounds).expect("and gets its place back");
    assert_eq!(store.len(), 18);
}

#[test]
fn a_session_is_counted_by_its_quota_and_by_its_owner_only_when_it_has_none() {
    let store = InProcessSessionStore::new();
    let bounds = limits(2, 100, 16);
    let of = |id: &str, quota: &str| session(id, Some("alice")).counted_as(Some(quota.to_owned()));
    create(&store, of("q0", "q"), &bounds).expect("stored");
    create(&store, of("q1", "q"), &bounds).expect("stored");
    assert_eq!(create(&store, of("q2", "q"), &bounds), Err(SessionError::OwnerFull));
    create(&store, session("o0", Some("alice")), &bounds).expect("counted under alice, not q");
    create(&store, session("o1", Some("alice")), &bounds).expect("stored");
    assert_eq!(create(&store, session("o2", Some("alice")), &bounds), Err(SessionError::OwnerFull));
    assert_eq!(of("x", "q").counted_key(), Some("q"));
    assert_eq!(session("x", Some("alice")).counted_key(), Some("alice"));
    assert_eq!(session("x", None).counted_key(), None);
}

#[test]
fn expired_sessions_do_not_count_against_either_bound() {
    let store = InProcessSessionStore::new();
    let bounds = limits(1, 2, 16);
    store.create_now(expired("old1", Some("alice")), &bounds).expect("stored");
    store.create_now(expired("old2", Some("bob")), &bounds).expect("stored (swept on the next create)");
    create(&store, session("new1", Some("alice")), &bounds).expect("alice's expired session is gone");
    create(&store, session("new2", Some("bob")), &bounds).expect("and the total counts live sessions");
    assert_eq!(store.len(), 2);
    assert!(resume(&store, "old1", now_ms(), &bounds).is_none());
}

#[test]
fn resume_pushes_the_idle_expiry_and_an_idle_session_ends() {
    let store = InProcessSessionStore::new();
    let idle = Duration::from_millis(1_000);
    let bounds = SessionLimits::new(16, 100, idle, 16);
    let start = now_ms();
    let record = SessionRecord::new("s", Some("alice".into()), "2025-11-25", json!({}), start, idle);
    create(&store, record, &bounds).expect("stored");
    let resumed = resume(&store, "s", start + 900, &bounds).expect("used within its idle time");
    assert_eq!(resumed.expires_at_ms, start + 1_900, "pushed to now + idle");
    assert!(resume(&store, "s", start + 1_800, &bounds).is_some(), "still live: the expiry moved");
    assert!(resume(&store, "s", start + 2_800, &bounds).is_none(), "a full idle period unused: gone");
    assert!(store.is_empty(), "and removed");
    assert!(resume(&store, "never", start, &bounds).is_none());
}

#[test]
fn another_principals_resume_is_none_and_keeps_nothing_alive() {
    let store = InProcessSessionStore::new();
    let idle = Duration::from_millis(1_000);
    let bounds = SessionLimits::new(16, 100, idle, 16);
    let start = now_ms();
    for (id, owner) in [("s", Some("alice".to_owned())), ("n", None)] {
        let record = SessionRecord::new(id, owner, "2025-11-25", json!({}), start, idle);
        create(&store, record, &bounds).expect("stored");
    }
    for (id, owner) in [("s", Some("bob")), ("s", None), ("n", Some("alice"))] {
        assert_eq!(resume_as(&store, id, owner, start + 900, &bounds), None, "{id} as {owner:?}");
    }
    assert!(resume(&store, "s", start + 1_100, &bounds).is_none(), "expired on time: nothing pushed it");
    assert!(resume_as(&store, "n", None, start + 1_100, &bounds).is_none(), "nobody's alike");
    assert!(store.is_empty());
}

#[test]
fn subscriptions_and_the_log_level_are_kept_within_the_subscription_bound() {
    let store = InProcessSessionStore::new();
    let bounds = limits(16, 100, 16);
    create(&store, session("s", Some("alice")), &bounds).expect("stored");
    for n in 0..bounds.subscriptions {
        assert_eq!(edit(&store, "s", SessionEdit::Subscribe(format!("test://{n}")), &bounds), Ok(true));
    }
    let one_more = SessionEdit::Subscribe("test://past".into());
    assert_eq!(edit(&store, "s", one_more, &bounds), Err(SessionError::SubscriptionsFull));
    let again = SessionEdit::Subscribe("test://0".into());
    assert_eq!(edit(&store, "s", again, &bounds), Ok(true), "a uri held already is no new one");
    assert_eq!(edit(&store, "s", SessionEdit::Unsubscribe("test://0".into()), &bounds), Ok(true));
    assert_eq!(edit(&store, "s", SessionEdit::Subscribe("test://past".into()), &bounds), Ok(true));
    assert_eq!(edit(&store, "s", SessionEdit::LogLevel("debug".into()), &bounds), Ok(true));
    let record = resume(&store, "s", now_ms(), &bounds).expect("live");
    assert_eq!(record.subscriptions.len(), bounds.subscriptions);
    assert!(record.subscriptions.contains("test://past") && !record.subscriptions.contains("test://0"));
    assert_eq!(record.log_level.as_deref(), Some("debug"));
    assert_eq!(edit(&store, "gone", SessionEdit::LogLevel("info".into()), &bounds), Ok(false));
}

#[test]
fn subscriptions_are_bounded_in_bytes_as_well_as_in_number() {
    let store = InProcessSessionStore::new();
    let mut bounds = limits(16, 100, 16);
    bounds.subscription_bytes = 100;
    create(&store, session("s", Some("alice")), &bounds).expect("stored");
    let uri = |n: usize| format!("test://{n}{}", "x".repeat(40));
    assert_eq!(edit(&store, "s", SessionEdit::Subscribe(uri(1)), &bounds), Ok(true));
    assert_eq!(edit(&store, "s", SessionEdit::Subscribe(uri(2)), &bounds), Ok(true), "96 bytes held");
    let third = SessionEdit::Subscribe(uri(3));
    assert_eq!(edit(&store, "s", third.clone(), &bounds), Err(SessionError::SubscriptionsFull));
    assert_eq!(
        edit(&store, "s", SessionEdit::Subscribe("a://b".into()), &bounds),
        Err(SessionError::SubscriptionsFull),
        "past 100 bytes by one"
    );
    assert_eq!(edit(&store, "s", SessionEdit::Subscribe("a://".into()), &bounds), Ok(true), "exactly 100");
    assert_eq!(edit(&store, "s", SessionEdit::Subscribe(uri(2)), &bounds), Ok(true), "held already");
    assert_eq!(edit(&store, "s", SessionEdit::Unsubscribe(uri(1)), &bounds), Ok(true));
    assert_eq!(edit(&store, "s", third, &bounds), Ok(true), "room came back");
}

#[test]
fn an_answer_reaches_only_the_wait_of_its_own_session_and_only_once() {
    let store = InProcessSessionStore::new();
    let bounds = limits(16, 100, 16);
    create(&store, session("s1", Some("alice")), &bounds).expect("stored");
    create(&store, session("s2", Some("alice")), &bounds).expect("stored");
    let wait = expect(&store, "s1", "r1", &bounds).expect("registered");
    let answer = json!({"jsonrpc": "2.0", "id": "r1", "result": {"action": "accept"}});
    assert!(!deliver(&store, "s2", "r1", answer.clone()), "issued to another session");
    assert!(!deliver(&store, "s1", "guessed", answer.clone()), "never issued");
    assert!(deliver(&store, "s1", "r1", answer.clone()), "its own");
    assert!(!deliver(&store, "s1", "r1", answer.clone()), "already answered");
    assert_eq!(wait.now_or_never(), Some(Some(answer)));
}

#[test]
fn pending_requests_are_bounded_per_session_and_a_dropped_wait_is_forgotten() {
    let store = InProcessSessionStore::new();
    let bounds = limits(16, 100, 16);
    create(&store, session("s", Some("alice")), &bounds).expect("stored");
    create(&store, session("t", Some("alice")), &bounds).expect("stored");
    let waits: Vec<_> =
        (0..16).map(|n| expect(&store, "s", &format!("r{n}"), &bounds).expect("within")).collect();
    assert_eq!(expect(&store, "s", "r16", &bounds).err(), Some(SessionError::PendingFull));
    let other = expect(&store, "t", "r0", &bounds).expect("another session has its own bound");
    assert_eq!(store.pending("s"), 16);
    drop(waits);
    assert_eq!(store.pending("s"), 0, "every dropped wait was forgotten");
    assert!(!deliver(&store, "s", "r3", json!({})), "a forgotten request takes no answer");
    let again = expect(&store, "s", "r16", &bounds).expect("room again");
    drop((again, other));
}

#[tokio::test]
async fn ending_a_session_ends_its_waits_and_a_wait_on_an_unknown_session_ends_at_once() {
    let store = InProcessSessionStore::new();
    let bounds = limits(16, 100, 16);
    create(&store, session("s", Some("alice")), &bounds).expect("stored");
    let wait = expect(&store, "s", "r1", &bounds).expect("registered");
    assert!(store.end("s").await.expect("in process"));
    assert!(!store.end("s").await.expect("in process"), "ended once");
    assert_eq!(tokio::time::timeout(HOUR, wait).await.expect("ends at once"), None);
    let orphan = expect(&store, "gone", "r1", &bounds).expect("a wait");
    assert_eq!(orphan.now_or_never(), Some(None));
    assert!(resume(&store, "s", now_ms(), &bounds).is_none(), "404 from now on");
}

#[test]
fn a_request_id_registered_again_replaces_the_older_wait() {
    let store = InProcessSessionStore::new();
    let bounds = limits(16, 100, 1);
    create(&store, session("s", None), &bounds).expect("stored");
    let first = expect(&store, "s", "r", &bounds).expect("registered");
    let second = expect(&store, "s", "r", &bounds).expect("the same id: no new place taken");
    assert_eq!(first.now_or_never(), Some(None), "the older wait ends (and forgets nothing of the newer)");
    assert_eq!(store.pending("s"), 1);
    assert!(deliver(&store, "s", "r", json!(1)));
    assert_eq!(second.now_or_never(), Some(Some(json!(1))));
}
