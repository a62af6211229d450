//! What an `http` run holds on the server before its clock starts: live tasks (`--live-tasks`, and
//! one per connection for `--method task-get`) and open `2025-11-25` sessions (`--open-sessions`, and
//! one per connection for `--method legacy-session`), each made over `PARALLEL` keep-alive
//! connections at once and checked.
//!
//! A session is opened as a `2025-11-25` client opens one: `initialize` without a version header,
//! whose answer must be 200 with an `Mcp-Session-Id` and `protocolVersion` `2025-11-25`, then
//! `notifications/initialized` with that id and the version header, answered 202.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1::SendRequest;
use serde_json::Value;
use tokio::time::timeout;

use crate::http::{http_message, http1_connection};
use crate::short;
use crate::tasks::{LONG_WAIT_MS, MAX_TASKS, created_task, wait_request};
use crate::work::{LEGACY_PROTOCOL, envelope};

/// Connections the tasks or sessions are made over at once.
const PARALLEL: usize = 32;
/// The most sessions one run opens.
pub(crate) const MAX_SESSIONS: usize = 100_000;
/// How long one task's creation, or one session's opening, may take.
const EACH_TIMEOUT: Duration = Duration::from_secs(10);

/// What is made.
#[derive(Clone, Copy)]
enum Kind {
    /// A task of `wait` (`LONG_WAIT_MS`), `working`.
    Task,
    /// A `2025-11-25` session, initialized.
    Session,
}

/// `count` tasks that wait `LONG_WAIT_MS`, `working`; their ids, in order of their index.
pub(crate) async fn tasks(authority: &str, path: &str, count: usize) -> Result<Vec<String>, String> {
    if count > MAX_TASKS {
        return Err(format!("at most {MAX_TASKS} tasks"));
    }
    make(authority, path, count, Kind::Task).await
}

/// `count` open `2025-11-25` sessions; their ids, in order of their index.
pub(crate) async fn sessions(authority: &str, path: &str, count: usize) -> Result<Vec<String>, String> {
    if count > MAX_SESSIONS {
        return Err(format!("at most {MAX_SESSIONS} sessions"));
    }
    make(authority, path, count, Kind::Session).await
}

/// Makes `count` of `kind`: item `i` on worker `i % PARALLEL`, each worker on its own connection.
async fn make(authority: &str, path: &str, count: usize, kind: Kind) -> Result<Vec<String>, String> {
    let workers = PARALLEL.min(count);
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let (authority, path) = (authority.to_owned(), path.to_owned());
            tokio::spawn(async move {
                let (mut sender, driver) = http1_connection(&authority).await?;
                let mut made = Vec::new();
                for index in (w..count).step_by(workers) {
                    let id = index as u64 + 1;
                    let one = async {
                        match kind {
                            Kind::Task => create_task(&mut sender, &authority, &path, id).await,
                            Kind::Session => open_session(&mut sender, &authority, &path, id).await,
                        }
                    };
                    let item = match timeout(EACH_TIMEOUT, one).await {
                        Ok(item) => item,
                        Err(_) => Err(format!("no answer within {EACH_TIMEOUT:?}")),
                    };
                    match item {
                        Ok(item) => made.push((index, item)),
                        Err(e) => {
                            driver.abort();
                            return Err(e);
                        }
                    }
                }
                driver.abort();
                Ok::<_, String>(made)
            })
        })
        .collect();
    let mut all = Vec::with_capacity(count);
    for handle in handles {
        all.extend(handle.await.map_err(|e| format!("worker: {e}"))??);
    }
    all.sort_by_key(|(index, _)| *index);
    Ok(all.into_iter().map(|(_, item)| item).collect())
}

async fn create_task(
    sender: &mut SendRequest<Full<Bytes>>,
    authority: &str,
    path: &str,
    id: u64,
) -> Result<String, String> {
    sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
    let request = wait_request(authority, path, id, LONG_WAIT_MS, true);
    let message = http_message(sender.send_request(request).await, id).await.map_err(|(e, _)| e)?;
    created_task(&message, id).map_err(|e| format!("creating a task: {e}"))
}

/// The `initialize` of a `2025-11-25` client, with id `id`.
pub(crate) fn initialize_body(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{LEGACY_PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"bench-load","version":"0"}}}}}}"#
    )
}

/// The notification that ends a `2025-11-25` handshake.
pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The session id of an `initialize` answer with id `id`: 200, an `Mcp-Session-Id`, and a result
/// naming the legacy revision.
pub(crate) fn opened_session(session: Option<&str>, message: &Value, id: u64) -> Result<String, String> {
    let (got, result) = envelope(message);
    let result = result?;
    if got != Some(id) {
        return Err(format!("answer for id {got:?} to initialize {id}"));
    }
    if result.get("protocolVersion").and_then(Value::as_str) != Some(LEGACY_PROTOCOL) {
        return Err(format!("initialize did not agree on {LEGACY_PROTOCOL}: {}", short(result)));
    }
    match session {
        Some(session) if !session.is_empty() && session.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(session.to_owned())
        }
        Some(session) => Err(format!("a malformed Mcp-Session-Id: {session:?}")),
        None => Err("initialize answered without an Mcp-Session-Id (are sessions on?)".to_owned()),
    }
}

/// One `2025-11-25` request of `body` on `sender`, with the session header when given.
fn legacy_post(authority: &str, path: &str, session: Option<&str>, body: String) -> Request<Full<Bytes>> {
    let mut builder = Request::post(path)
        .header("host", authority)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        builder = builder.header("mcp-protocol-version", LEGACY_PROTOCOL).header("mcp-session-id", session);
    }
    builder.body(Full::new(Bytes::from(body))).expect("a valid request")
}

async fn open_session(
    sender: &mut SendRequest<Full<Bytes>>,
    authority: &str,
    path: &str,
    id: u64,
) -> Result<String, String> {
    sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
    let response = sender
        .send_request(legacy_post(authority, path, None, initialize_body(id)))
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    let session = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let message = http_message(Ok(response), id).await.map_err(|(e, _)| format!("initialize: {e}"))?;
    let session = opened_session(session.as_deref(), &message, id)?;
    sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
    let response = sender
        .send_request(legacy_post(authority, path, Some(&session), INITIALIZED.to_owned()))
        .await
        .map_err(|e| format!("notifications/initialized: {e}"))?;
    let status = response.status();
    let body = response.into_body().collect().await.map_err(|e| format!("reading the body: {e}"))?.to_bytes();
    if status != hyper::StatusCode::ACCEPTED {
        return Err(format!(
            "notifications/initialized: HTTP {status}, not 202: {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        ));
    }
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_handshake_is_a_2025_11_25_clients() {
        let v: Value = serde_json::from_str(&initialize_body(7)).unwrap();
        assert_eq!((v["id"].as_u64(), v["method"].as_str()), (Some(7), Some("initialize")));
        assert_eq!(v["params"]["protocolVersion"], LEGACY_PROTOCOL);
        let n: Value = serde_json::from_str(INITIALIZED).unwrap();
        assert_eq!((n.get("id"), n["method"].as_str()), (None, Some("notifications/initialized")));
    }

    #[test]
    fn a_session_opens_only_with_an_id_and_the_legacy_revision() {
        let ok = json!({"jsonrpc":"2.0","id":3,"result":{"protocolVersion":"2025-11-25","capabilities":{}}});
        assert_eq!(opened_session(Some("ab12"), &ok, 3), Ok("ab12".to_owned()));
        assert!(opened_session(None, &ok, 3).unwrap_err().contains("without an Mcp-Session-Id"));
        assert!(opened_session(Some(""), &ok, 3).is_err());
        assert!(opened_session(Some("a b"), &ok, 3).is_err());
        assert!(opened_session(Some("ab12"), &ok, 4).is_err(), "another request's answer");
        let modern = json!({"jsonrpc":"2.0","id":3,"result":{"protocolVersion":"2026-07-28"}});
        assert!(opened_session(Some("ab12"), &modern, 3).is_err());
        let error = json!({"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"x"}});
        assert!(opened_session(Some("ab12"), &error, 3).is_err());
    }
}
