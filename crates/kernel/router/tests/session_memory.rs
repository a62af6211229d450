//! What one legacy session costs in the in-process store, measured: 20,000 sessions as the HTTP
//! transport keeps them (a 32-digit id, the 64-digit digest of a principal, the revision, the
//! capabilities of a typical client, no subscription yet), and this process's resident memory before
//! and after (`/proc/self/status`; this binary holds this one test, so nothing else allocates). Then
//! each session subscribed to two uris and given a log level. `docs/http.md` ("Legacy sessions")
//! quotes the figures: keep the two in step.

use std::time::Duration;

use futures_util::FutureExt;
use serde_json::json;

use mcp_kernel_router::sessions::{
    InProcessSessionStore, SessionEdit, SessionLimits, SessionRecord, SessionStore, new_session_id,
    principal_digest,
};
use mcp_kernel_router::tasks::now_ms;

/// The sessions stored.
const SESSIONS: usize = 20_000;

/// The bound on one session's cost, in bytes (the measured figure is well below it).
const BOUND_PER_SESSION: u64 = 2048;

/// This process's resident memory, in bytes.
fn resident() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").trim().parse().ok())
        .expect("VmRSS");
    kib * 1024
}

#[test]
fn a_stored_session_costs_well_under_two_kibibytes() {
    if !std::path::Path::new("/proc/self/status").exists() {
        return;
    }
    let limits = SessionLimits::new(SESSIONS, SESSIONS, Duration::from_secs(3600), 16);
    let store = InProcessSessionStore::new();
    let capabilities = json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {"listChanged": true}});
    let owners: Vec<String> = (0..SESSIONS).map(|n| principal_digest(&format!("user-{n}"))).collect();
    let ids: Vec<String> = (0..SESSIONS).map(|_| new_session_id().expect("an id")).collect();
    let before = resident();
    for (id, owner) in ids.iter().zip(&owners) {
        let record = SessionRecord::new(
            id.clone(),
            Some(owner.clone()),
            "2025-11-25",
            capabilities.clone(),
            now_ms(),
            limits.idle,
        );
        store.create(record, &limits).now_or_never().expect("ready").expect("within the bounds");
    }
    let created = resident();
    for id in &ids {
        for edit in [
            SessionEdit::Subscribe("notes://note/1".into()),
            SessionEdit::Subscribe("notes://index".into()),
            SessionEdit::LogLevel("info".into()),
        ] {
            assert_eq!(store.edit(id, edit, &limits).now_or_never().expect("ready"), Ok(true));
        }
    }
    let edited = resident();
    let per_session = created.saturating_sub(before) / SESSIONS as u64;
    let per_edited = edited.saturating_sub(before) / SESSIONS as u64;
    println!(
        "a stored session: {per_session} bytes; with two subscriptions and a log level: {per_edited} bytes"
    );
    assert_eq!(store.len(), SESSIONS);
    assert!(per_session < BOUND_PER_SESSION, "{per_session} bytes a session");
    assert!(per_edited < BOUND_PER_SESSION, "{per_edited} bytes an edited session");
}
