//! One listen stream: its own HTTP/1.1 connection, a `subscriptions/listen` POST asking for
//! `toolsListChanged`, the acknowledgment checked, then every event read until the stream is dropped:
//! keep-alive comments counted, each `notifications/tools/list_changed` timed as it is read.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::sse::{Item, SseReader};
use crate::report::Errors;
use crate::{PROTOCOL, short};

/// The subscription id's key in `_meta`.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
pub(crate) const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
pub(crate) const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";

/// What every stream reports to.
pub(crate) struct Shared {
    /// Keep-alive comment lines read, by every stream.
    pub(crate) keepalives: AtomicU64,
    /// Streams the server ended (its completion result, or the end of the body).
    pub(crate) ended: AtomicU64,
    /// Each `tools/list_changed` read: (stream index, when it was read).
    pub(crate) changes: mpsc::UnboundedSender<(usize, Instant)>,
    /// Errors after the acknowledgment.
    pub(crate) errors: Mutex<Errors>,
}

impl Shared {
    fn error(&self, message: String) {
        self.errors.lock().unwrap_or_else(std::sync::PoisonError::into_inner).add(message);
    }
}

/// The listen request with id `id`: a `2026-07-28` `subscriptions/listen` for tools list changes.
fn listen_request(authority: &str, path: &str, id: u64) -> Request<Full<Bytes>> {
    let body = format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"subscriptions/listen","params":{{"_meta":{{"#,
            r#""io.modelcontextprotocol/protocolVersion":"{}","io.modelcontextprotocol/clientCapabilities":{{}}}},"#,
            r#""notifications":{{"toolsListChanged":true}}}}}}"#
        ),
        id, PROTOCOL
    );
    Request::post(path)
        .header("host", authority)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL)
        .header("mcp-method", "subscriptions/listen")
        .body(Full::new(Bytes::from(body)))
        .expect("a valid request")
}

/// Whether `event` is a notification `method` tagged with the listen id `id`.
pub(crate) fn is_tagged(event: &Value, method: &str, id: u64) -> bool {
    event["jsonrpc"] == "2.0"
        && event["method"] == method
        && event["params"]["_meta"][SUBSCRIPTION_ID].as_u64() == Some(id)
}

/// Checks the stream's first event: the acknowledgment of `id`, honouring `toolsListChanged`.
pub(crate) fn check_acknowledgment(event: &Value, id: u64) -> Result<(), String> {
    if !is_tagged(event, ACKNOWLEDGED, id) {
        return Err(format!("the first event is no acknowledgment of listen {id}: {}", short(event)));
    }
    if event["params"]["notifications"]["toolsListChanged"] != true {
        return Err(format!("the acknowledgment does not honour toolsListChanged: {}", short(event)));
    }
    Ok(())
}

/// Aborts the connection's driver when the stream is dropped (its task ended or was aborted), which
/// closes the connection.
pub(crate) struct Driver(JoinHandle<()>);

impl From<JoinHandle<()>> for Driver {
    fn from(driver: JoinHandle<()>) -> Self {
        Driver(driver)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Opens the connection and sends the listen; the response, if it is an event stream, and the
/// connection's driver.
async fn open(authority: &str, path: &str, id: u64) -> Result<(Incoming, Driver), String> {
    open_stream(authority, listen_request(authority, path, id)).await
}

/// Opens a connection and sends the listen `request` on it; the response, if it is an event stream,
/// and the connection's driver.
pub(crate) async fn open_stream(
    authority: &str,
    request: Request<Full<Bytes>>,
) -> Result<(Incoming, Driver), String> {
    let (mut sender, driver) = crate::http::http1_connection(authority).await?;
    let driver = Driver(driver);
    sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
    let response = sender.send_request(request).await.map_err(|e| format!("listen: {e}"))?;
    let status = response.status();
    let event_stream = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if status != hyper::StatusCode::OK || !event_stream {
        let body = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        return Err(format!(
            "listen answered HTTP {status} without a stream: {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        ));
    }
    Ok((response.into_body(), driver))
}

/// One stream, `index` of the run, with the listen id `index + 1`: opened, its acknowledgment sent
/// to `acked` (or why not), then read until the server ends it or the task is aborted.
pub(crate) async fn listen(
    authority: String,
    path: String,
    index: usize,
    acked: oneshot::Sender<Result<(), String>>,
    shared: std::sync::Arc<Shared>,
) {
    let id = index as u64 + 1;
    let (mut body, _driver) = match open(&authority, &path, id).await {
        Ok(opened) => opened,
        Err(e) => {
            let _ = acked.send(Err(e));
            return;
        }
    };
    let mut reader = SseReader::default();
    let mut acked = Some(acked);
    loop {
        let bytes = match body.frame().await {
            None => break,
            Some(Err(e)) => {
                let message = format!("reading the stream: {e}");
                match acked.take() {
                    Some(acked) => drop(acked.send(Err(message))),
                    None => shared.error(message),
                }
                return;
            }
            Some(Ok(frame)) => match frame.into_data() {
                Ok(bytes) => bytes,
                Err(_) => continue,
            },
        };
        let items = match reader.push(&bytes) {
            Ok(items) => items,
            Err(e) => {
                match acked.take() {
                    Some(acked) => drop(acked.send(Err(e))),
                    None => shared.error(e),
                }
                return;
            }
        };
        for item in items {
            let data = match item {
                Item::Comment => {
                    shared.keepalives.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                Item::Event(data) => data,
            };
            let read_at = Instant::now();
            let event: Value = match serde_json::from_str(&data) {
                Ok(event) => event,
                Err(_) => {
                    shared.error(format!("an event is no JSON: {}", &data[..data.len().min(200)]));
                    continue;
                }
            };
            if let Some(acked) = acked.take() {
                let verdict = check_acknowledgment(&event, id);
                let failed = verdict.is_err();
                let _ = acked.send(verdict);
                if failed {
                    return;
                }
            } else if is_tagged(&event, TOOLS_LIST_CHANGED, id) {
                let _ = shared.changes.send((index, read_at));
            } else if event["id"].as_u64() == Some(id) && event.get("result").is_some() {
                // The completion result: the server ended the stream.
                break;
            } else {
                shared.error(format!("an unexpected event on listen {id}: {}", short(&event)));
            }
        }
    }
    match acked {
        Some(acked) => drop(acked.send(Err("the stream ended before its acknowledgment".into()))),
        None => drop(shared.ended.fetch_add(1, Ordering::Relaxed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_listen_request_asks_for_tools_list_changes() {
        let request = listen_request("127.0.0.1:1", "/mcp", 7);
        assert_eq!(request.headers()["mcp-method"], "subscriptions/listen");
        assert_eq!(request.headers()["mcp-protocol-version"], PROTOCOL);
    }

    #[test]
    fn acknowledgments_and_changes_are_checked_by_their_tag() {
        let ack = json!({"jsonrpc":"2.0","method":ACKNOWLEDGED,
            "params":{"_meta":{SUBSCRIPTION_ID:7},"notifications":{"toolsListChanged":true}}});
        assert!(check_acknowledgment(&ack, 7).is_ok());
        assert!(check_acknowledgment(&ack, 8).is_err(), "another stream's tag");
        let empty = json!({"jsonrpc":"2.0","method":ACKNOWLEDGED,"params":{"_meta":{SUBSCRIPTION_ID:7},"notifications":{}}});
        assert!(check_acknowledgment(&empty, 7).is_err(), "nothing honoured");
        let change =
            json!({"jsonrpc":"2.0","method":TOOLS_LIST_CHANGED,"params":{"_meta":{SUBSCRIPTION_ID:7}}});
        assert!(is_tagged(&change, TOOLS_LIST_CHANGED, 7));
        assert!(!is_tagged(&change, TOOLS_LIST_CHANGED, 6));
    }
}
