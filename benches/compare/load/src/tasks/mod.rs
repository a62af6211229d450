//! The tasks extension: what `stdio-latency --method task-get` creates before its clock starts (`http`'s
//! tasks are made by module `held`), and the two modes of their own, `tasks-memory` (module `memory`: the
//! server's memory per live task, or per held call of the same tool) and `tasks-notify` (module
//! `notify`: the time from a task's completion until a listener reads its `notifications/tasks`), and
//! `tasks-trips` (module `trips`: the trips to a shared store per `tasks/get` and per task).
//!
//! Every task is made by a `tools/call` of the server's `wait` tool (`{"ms": N}`, task mode
//! optional), which waits N ms, or until its task is cancelled, and answers the server's clock at its
//! return: microseconds since the Unix epoch, as text. Server and generator share the machine's clock,
//! so the answer says when the handler returned.

mod memory;
mod notify;
mod trips;

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::Full;
use hyper::Request;
use serde_json::Value;

use crate::work::tasks_meta;
use crate::{PROTOCOL, short};

pub(crate) use memory::run as memory;
pub(crate) use notify::run as notify;
pub(crate) use trips::run as trips;

/// The tool that waits (and may become a task).
pub(crate) const WAIT: &str = "wait";
/// How long the tasks of a `tasks/get` or memory run wait (ms): longer than any run may last, and
/// the kernel's default time to live.
pub(crate) const LONG_WAIT_MS: u64 = 600_000;
/// The most tasks one run creates.
pub(crate) const MAX_TASKS: usize = 100_000;

/// A `tools/call` of `wait` for `ms` with id `id`, declaring the tasks extension when `declared`.
pub(crate) fn wait_body(id: u64, ms: u64, declared: bool) -> String {
    let meta = if declared {
        tasks_meta()
    } else {
        format!(
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{PROTOCOL}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
        )
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{meta},"name":"{WAIT}","arguments":{{"ms":{ms}}}}}}}"#
    )
}

/// The HTTP request of [`wait_body`], with the standard MCP headers.
pub(crate) fn wait_request(
    authority: &str,
    path: &str,
    id: u64,
    ms: u64,
    declared: bool,
) -> Request<Full<Bytes>> {
    Request::post(path)
        .header("host", authority)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL)
        .header("mcp-method", "tools/call")
        .header("mcp-name", WAIT)
        .body(Full::new(Bytes::from(wait_body(id, ms, declared))))
        .expect("a valid request")
}

/// The task id of the response with id `id` if it is a `CreateTaskResult` of a `working` task.
pub(crate) fn created_task(message: &Value, id: u64) -> Result<String, String> {
    let (got, result) = crate::work::envelope(message);
    let result = result?;
    if got != Some(id) {
        return Err(format!("answer for id {got:?} to request {id}"));
    }
    if result.get("resultType").and_then(Value::as_str) != Some("task") {
        return Err(format!("the call did not become a task: {}", short(result)));
    }
    if result.get("status").and_then(Value::as_str) != Some("working") {
        return Err(format!("a new task that is not working: {}", short(result)));
    }
    match result.get("taskId").and_then(Value::as_str) {
        Some(task) if !task.is_empty() => Ok(task.to_owned()),
        _ => Err(format!("a task without a taskId: {}", short(result))),
    }
}

/// The server's clock in a result of `wait`: `content[0].text`, microseconds since the Unix epoch.
pub(crate) fn stamp_of(result: &Value) -> Option<u64> {
    result.pointer("/content/0/text").and_then(Value::as_str).and_then(|text| text.parse().ok())
}

/// This machine's clock, in microseconds since the Unix epoch.
pub(crate) fn unix_micros() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(0))
}

/// The microseconds from `stamp` to `read`, on the shared clock (0 if the clock stepped back).
pub(crate) fn micros_between(stamp: u64, read: u64) -> u32 {
    u32::try_from(read.saturating_sub(stamp)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_wait_call_declares_the_extension_only_when_asked() {
        let declared: Value = serde_json::from_str(&wait_body(4, 250, true)).unwrap();
        assert_eq!(
            (declared["params"]["name"].as_str(), declared["params"]["arguments"]["ms"].as_u64()),
            (Some(WAIT), Some(250))
        );
        let capabilities = &declared["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/tasks"], json!({}));
        let plain: Value = serde_json::from_str(&wait_body(4, 0, false)).unwrap();
        assert_eq!(plain["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"], json!({}));
    }

    #[test]
    fn only_a_working_task_of_the_request_is_created() {
        let created =
            json!({"jsonrpc":"2.0","id":3,"result":{"resultType":"task","taskId":"ab","status":"working"}});
        assert_eq!(created_task(&created, 3), Ok("ab".to_owned()));
        assert!(created_task(&created, 4).is_err(), "another request's answer");
        let answered = json!({"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}});
        assert!(created_task(&answered, 3).is_err(), "an ordinary answer");
        let done =
            json!({"jsonrpc":"2.0","id":3,"result":{"resultType":"task","taskId":"ab","status":"completed"}});
        assert!(created_task(&done, 3).is_err());
    }

    #[test]
    fn the_stamp_is_read_from_the_text() {
        assert_eq!(
            stamp_of(&json!({"content":[{"type":"text","text":"1733390000123456"}]})),
            Some(1_733_390_000_123_456)
        );
        assert_eq!(stamp_of(&json!({"content":[{"type":"text","text":"soon"}]})), None);
        assert_eq!(micros_between(10, 25), 15);
        assert_eq!(micros_between(25, 10), 0);
    }
}
