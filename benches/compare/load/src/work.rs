//! What one measured unit of work is, for `stdio-latency` and `http` (`--method`, `--tool`,
//! `--message-bytes`, `--list`, `--expect-items`, `--uri`): a `tools/call` with a message of a given
//! size, the first page of a list, a walk of every page of it (following `nextCursor`), a
//! `resources/read`, or a `tasks/get` of a task the run created first; the request lines each sends,
//! and the check of each answer.

use serde_json::Value;

use crate::args::Args;
use crate::{MESSAGE, PROTOCOL, short};

/// The largest `--message-bytes`: 16 MiB (a server's own cap refuses far less).
const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// The largest `--expect-items`.
const MAX_ITEMS: u64 = 10_000_000;
/// The most pages one walk may take before it counts as an error (a server whose cursors loop).
pub(crate) const MAX_PAGES: u64 = 100_000;

/// One unit of measured work.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Work {
    /// `tools/call` of `tool` with `message`; the answer's `content[0].text` must be the message.
    Call { tool: String, message: String },
    /// The first page of a list (`list`: `tools` or `templates`): an array of items.
    List { list: ListKind },
    /// Every page of a list, following `nextCursor`; `expect` items in all when given.
    Walk { list: ListKind, expect: Option<u64> },
    /// `resources/read` of `uri`; the answer's `contents[0]` must be text of that uri.
    Read { uri: String },
    /// `tasks/get` of the task `id` (declaring the tasks extension); the answer must be that task,
    /// still `working`. `--method task-get` leaves `id` empty: the run creates the task and sets it.
    TaskGet { id: String },
    /// A `2025-11-25` `tools/call` of `echo` with `hello` (no `_meta`, the legacy version header, no
    /// `Mcp-Method` or `Mcp-Name`, as a `2025-11-25` client sends it), without a session; the answer is
    /// checked as the echo's.
    Legacy,
    /// The same call in the session `id` (its `Mcp-Session-Id`). `--method legacy-session` leaves `id`
    /// empty: the run opens the session (`initialize`, `notifications/initialized`) and sets it.
    LegacySession { id: String },
}

/// The legacy revision a `2025-11-25` client speaks.
pub(crate) const LEGACY_PROTOCOL: &str = "2025-11-25";

/// A paginated list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ListKind {
    /// `tools/list`, items in `tools`.
    Tools,
    /// `resources/templates/list`, items in `resourceTemplates`.
    Templates,
}

impl ListKind {
    /// Reads `--list tools|templates` (tools when absent).
    fn parse(args: &mut Args) -> Result<ListKind, String> {
        match args.take("list").as_deref() {
            None | Some("tools") => Ok(ListKind::Tools),
            Some("templates") => Ok(ListKind::Templates),
            Some(other) => Err(format!("--list: tools or templates, not {other:?}")),
        }
    }

    fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Templates => "resources/templates/list",
        }
    }

    fn field(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Templates => "resourceTemplates",
        }
    }
}

/// What an answer that passed its check leads to.
#[derive(Debug, PartialEq)]
pub(crate) enum Step {
    /// The unit is done; `items` listed (0 for a call or a read).
    Done { items: u64 },
    /// A walk goes on with this cursor; `items` listed on this page.
    Next { cursor: String, items: u64 },
}

/// A deterministic ASCII message of `bytes` bytes (letters and digits: nothing to escape in JSON).
pub(crate) fn message_of(bytes: usize) -> String {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut state: u32 = 0x9e37_79b9;
    (0..bytes)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            char::from(ALPHABET[(state >> 24) as usize % ALPHABET.len()])
        })
        .collect()
}

/// FNV-1a of `bytes`, to name a long text in an error message.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The `_meta` of every stateless request.
fn meta() -> String {
    format!(
        r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{PROTOCOL}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
    )
}

/// The `_meta` of a stateless request that declares the tasks extension.
pub(crate) fn tasks_meta() -> String {
    format!(
        r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{PROTOCOL}","io.modelcontextprotocol/clientCapabilities":{{"extensions":{{"{TASKS_EXTENSION}":{{}}}}}}}}"#
    )
}

/// The tasks extension's name.
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

impl Default for Work {
    /// The echo call of every other mode: `echo` with `hello`.
    fn default() -> Self {
        Work::Call { tool: "echo".to_owned(), message: MESSAGE.to_owned() }
    }
}

impl Work {
    /// Reads `--method call|list|walk|read` and what it takes; the echo call when `--method` is absent.
    pub(crate) fn parse(args: &mut Args) -> Result<Work, String> {
        let method = args.take("method").unwrap_or_else(|| "call".to_owned());
        let work = match method.as_str() {
            "call" => {
                let tool = args.take("tool").unwrap_or_else(|| "echo".to_owned());
                if tool.is_empty() || !tool.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
                {
                    return Err(format!("--tool: letters, digits, '_', '-' and '.' only, not {tool:?}"));
                }
                let message = match args.take("message-bytes") {
                    None => MESSAGE.to_owned(),
                    Some(v) => {
                        let bytes: usize =
                            v.parse().map_err(|_| format!("--message-bytes: not a number: {v:?}"))?;
                        if !(1..=MAX_MESSAGE_BYTES).contains(&bytes) {
                            return Err(format!("--message-bytes must be between 1 and {MAX_MESSAGE_BYTES}"));
                        }
                        message_of(bytes)
                    }
                };
                Work::Call { tool, message }
            }
            "list" => Work::List { list: ListKind::parse(args)? },
            "walk" => {
                let list = ListKind::parse(args)?;
                let expect = match args.take("expect-items") {
                    None => None,
                    Some(v) => Some(
                        v.parse::<u64>()
                            .ok()
                            .filter(|n| *n <= MAX_ITEMS)
                            .ok_or_else(|| format!("--expect-items: 0 to {MAX_ITEMS}, not {v:?}"))?,
                    ),
                };
                Work::Walk { list, expect }
            }
            "read" => Work::Read { uri: args.take("uri").ok_or("--method read needs --uri")? },
            "task-get" => Work::TaskGet { id: String::new() },
            "legacy" => Work::Legacy,
            "legacy-session" => Work::LegacySession { id: String::new() },
            other => {
                return Err(format!(
                    "--method: call, list, walk, read, task-get, legacy or legacy-session, not {other:?}"
                ));
            }
        };
        Ok(work)
    }

    /// The JSON-RPC method of the requests.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Work::Call { .. } | Work::Legacy | Work::LegacySession { .. } => "tools/call",
            Work::List { list } | Work::Walk { list, .. } => list.method(),
            Work::Read { .. } => "resources/read",
            Work::TaskGet { .. } => "tasks/get",
        }
    }

    /// The `Mcp-Name` header of a request, where the method has one.
    pub(crate) fn name_header(&self) -> Option<&str> {
        match self {
            Work::Call { tool, .. } => Some(tool),
            Work::Read { uri } => Some(uri),
            Work::TaskGet { id } => Some(id),
            _ => None,
        }
    }

    /// Whether the requests are `2025-11-25` ones: the legacy version header, no `Mcp-Method`, no
    /// `Mcp-Name`.
    pub(crate) fn legacy(&self) -> bool {
        matches!(self, Work::Legacy | Work::LegacySession { .. })
    }

    /// The `Mcp-Session-Id` the requests carry, if any.
    pub(crate) fn session(&self) -> Option<&str> {
        match self {
            Work::LegacySession { id } => Some(id),
            _ => None,
        }
    }

    /// The request with id `id` (a walk's later pages carry the `cursor`), as one line without its newline.
    pub(crate) fn request(&self, id: u64, cursor: Option<&str>) -> String {
        let meta = meta();
        let method = self.method();
        let params = match self {
            Work::Call { tool, message } => {
                format!(r#"{{{meta},"name":"{tool}","arguments":{{"message":"{message}"}}}}"#)
            }
            Work::List { .. } | Work::Walk { .. } => match cursor {
                None => format!("{{{meta}}}"),
                Some(c) => format!(r#"{{{meta},"cursor":{}}}"#, Value::from(c)),
            },
            Work::Read { uri } => format!(r#"{{{meta},"uri":{}}}"#, Value::from(uri.as_str())),
            Work::TaskGet { id } => format!(r#"{{{},"taskId":{}}}"#, tasks_meta(), Value::from(id.as_str())),
            Work::Legacy | Work::LegacySession { .. } => {
                format!(r#"{{"name":"echo","arguments":{{"message":"{MESSAGE}"}}}}"#)
            }
        };
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
    }

    /// Checks the `result` of an answer that is no error.
    pub(crate) fn check(&self, result: &Value) -> Result<Step, String> {
        match self {
            Work::Legacy | Work::LegacySession { .. } => Work::default().check(result),
            Work::Call { message, .. } => {
                if result.get("isError") == Some(&Value::Bool(true)) {
                    return Err(format!("tool error: {}", short(result)));
                }
                match result.pointer("/content/0/text").and_then(Value::as_str) {
                    Some(text) if text == message => Ok(Step::Done { items: 0 }),
                    Some(text) if message.len() <= 64 => {
                        Err(format!("content[0].text is {text:?}, not {message:?}"))
                    }
                    Some(text) => Err(format!(
                        "content[0].text is {} bytes (FNV-1a {:016x}), not the {}-byte message ({:016x})",
                        text.len(),
                        checksum(text.as_bytes()),
                        message.len(),
                        checksum(message.as_bytes())
                    )),
                    None => Err(format!("result without content[0].text: {}", short(result))),
                }
            }
            Work::List { list } | Work::Walk { list, .. } => {
                let items = result
                    .get(list.field())
                    .and_then(Value::as_array)
                    .ok_or_else(|| format!("result without a {} array: {}", list.field(), short(result)))?;
                let items = items.len() as u64;
                match (self, result.get("nextCursor")) {
                    (Work::Walk { .. }, Some(Value::String(c))) => {
                        Ok(Step::Next { cursor: c.clone(), items })
                    }
                    (Work::Walk { .. }, Some(other)) if !other.is_null() => {
                        Err(format!("nextCursor is not a string: {}", short(other)))
                    }
                    _ if items == 0 && matches!(self, Work::List { .. }) => {
                        Err(format!("the first page lists no {}", list.field()))
                    }
                    _ => Ok(Step::Done { items }),
                }
            }
            Work::Read { uri } => {
                let first = result
                    .pointer("/contents/0")
                    .ok_or_else(|| format!("result without contents[0]: {}", short(result)))?;
                if first.get("uri").and_then(Value::as_str) != Some(uri) {
                    return Err(format!("contents[0].uri is not {uri:?}: {}", short(first)));
                }
                match first.get("text").and_then(Value::as_str) {
                    Some(t) if !t.is_empty() => Ok(Step::Done { items: 0 }),
                    _ => Err(format!("contents[0] has no text: {}", short(first))),
                }
            }
            Work::TaskGet { id } => {
                if result.get("taskId").and_then(Value::as_str) != Some(id) {
                    return Err(format!("not the task {id}: {}", short(result)));
                }
                match result.get("status").and_then(Value::as_str) {
                    Some("working") => Ok(Step::Done { items: 0 }),
                    _ => Err(format!("the task is not working: {}", short(result))),
                }
            }
        }
    }

    /// Checks the total a finished walk listed.
    pub(crate) fn check_total(&self, items: u64) -> Result<(), String> {
        match self {
            Work::Walk { expect: Some(n), list } if *n != items => {
                Err(format!("the walk listed {items} {}, not {n}", list.field()))
            }
            _ => Ok(()),
        }
    }
}

/// Checks one response's envelope: its numeric id if it has one, and its `result` unless it is not a
/// JSON-RPC 2.0 success.
pub(crate) fn envelope(v: &Value) -> (Option<u64>, Result<&Value, String>) {
    let id = v.get("id").and_then(Value::as_u64);
    let verdict = (|| {
        if v.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err("response without \"jsonrpc\":\"2.0\"".to_owned());
        }
        if id.is_none() {
            return Err(format!("response without a numeric id: {}", short(v)));
        }
        if let Some(error) = v.get("error") {
            return Err(format!("error response: {}", short(error)));
        }
        v.get("result").ok_or_else(|| format!("response without result: {}", short(v)))
    })();
    (id, verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(list: &[&str]) -> Result<Work, String> {
        let mut args = Args::parse(&list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()).unwrap();
        let work = Work::parse(&mut args)?;
        args.finish(false)?;
        Ok(work)
    }

    #[test]
    fn options_are_read() {
        assert_eq!(parse(&[]).unwrap(), Work::default());
        assert_eq!(
            parse(&["--method", "call", "--tool", "tool_00001", "--message-bytes", "3"]).unwrap(),
            Work::Call { tool: "tool_00001".into(), message: message_of(3) }
        );
        assert_eq!(parse(&["--method", "list"]).unwrap(), Work::List { list: ListKind::Tools });
        assert_eq!(
            parse(&["--method", "walk", "--list", "templates", "--expect-items", "7"]).unwrap(),
            Work::Walk { list: ListKind::Templates, expect: Some(7) }
        );
        assert_eq!(
            parse(&["--method", "read", "--uri", "a://b"]).unwrap(),
            Work::Read { uri: "a://b".into() }
        );
        assert_eq!(parse(&["--method", "task-get"]).unwrap(), Work::TaskGet { id: String::new() });
        assert_eq!(parse(&["--method", "legacy"]).unwrap(), Work::Legacy);
        assert_eq!(
            parse(&["--method", "legacy-session"]).unwrap(),
            Work::LegacySession { id: String::new() }
        );
        for bad in [
            &["--method", "other"][..],
            &["--method", "read"],
            &["--method", "call", "--tool", "a\"b"],
            &["--method", "call", "--message-bytes", "0"],
            &["--method", "call", "--message-bytes", "16777217"],
            &["--method", "walk", "--list", "prompts"],
            &["--method", "list", "--uri", "a://b"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn messages_are_deterministic_ascii() {
        let m = message_of(100_000);
        assert_eq!(m.len(), 100_000);
        assert!(m.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(m, message_of(100_000));
        assert_eq!(&message_of(10), &m[..10]);
        // Not a run of one letter: every letter and digit occurs.
        assert_eq!(m.bytes().collect::<std::collections::BTreeSet<_>>().len(), 36);
    }

    #[test]
    fn requests_are_json() {
        let call = Work::Call { tool: "echo".into(), message: message_of(2000) };
        let v: Value = serde_json::from_str(&call.request(9, None)).unwrap();
        assert_eq!((v["id"].as_u64(), v["method"].as_str()), (Some(9), Some("tools/call")));
        assert_eq!(v["params"]["arguments"]["message"].as_str().unwrap().len(), 2000);
        let walk = Work::Walk { list: ListKind::Tools, expect: None };
        let v: Value = serde_json::from_str(&walk.request(1, Some("c\"1"))).unwrap();
        assert_eq!(
            (v["params"]["cursor"].as_str(), v["method"].as_str()),
            (Some("c\"1"), Some("tools/list"))
        );
        let read = Work::Read { uri: "bench://t00001/42".into() };
        let v: Value = serde_json::from_str(&read.request(2, None)).unwrap();
        assert_eq!(v["params"]["uri"], "bench://t00001/42");
        assert_eq!(v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], PROTOCOL);
    }

    #[test]
    fn answers_are_checked() {
        let call = Work::Call { tool: "echo".into(), message: message_of(100) };
        assert!(call.check(&json!({"content":[{"type":"text","text": message_of(100)}]})).is_ok());
        let wrong = call.check(&json!({"content":[{"type":"text","text": message_of(99)}]}));
        assert!(wrong.unwrap_err().contains("99 bytes"));
        assert!(call.check(&json!({"content":[], "isError": true})).is_err());

        let walk = Work::Walk { list: ListKind::Tools, expect: Some(3) };
        assert_eq!(
            walk.check(&json!({"tools":[1,2], "nextCursor":"x"})),
            Ok(Step::Next { cursor: "x".into(), items: 2 })
        );
        assert_eq!(walk.check(&json!({"tools":[3]})), Ok(Step::Done { items: 1 }));
        assert!(walk.check_total(3).is_ok() && walk.check_total(2).is_err());
        assert!(walk.check(&json!({"resourceTemplates":[]})).is_err());
        let list = Work::List { list: ListKind::Templates };
        assert_eq!(
            list.check(&json!({"resourceTemplates":[1], "nextCursor":"x"})),
            Ok(Step::Done { items: 1 })
        );
        assert!(list.check(&json!({"resourceTemplates":[]})).is_err());

        let read = Work::Read { uri: "bench://t1/42".into() };
        assert!(read.check(&json!({"contents":[{"uri":"bench://t1/42","text":"bench"}]})).is_ok());
        assert!(read.check(&json!({"contents":[{"uri":"bench://t2/42","text":"bench"}]})).is_err());
        assert!(read.check(&json!({"contents":[]})).is_err());

        let get = Work::TaskGet { id: "t1".into() };
        let v: Value = serde_json::from_str(&get.request(3, None)).unwrap();
        assert_eq!((v["method"].as_str(), v["params"]["taskId"].as_str()), (Some("tasks/get"), Some("t1")));
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"][TASKS_EXTENSION],
            json!({})
        );
        assert_eq!(get.name_header(), Some("t1"));
        assert!(get.check(&json!({"taskId":"t1","status":"working"})).is_ok());
        assert!(get.check(&json!({"taskId":"t2","status":"working"})).is_err());
        assert!(get.check(&json!({"taskId":"t1","status":"completed"})).is_err());

        for legacy in [Work::Legacy, Work::LegacySession { id: "s1".into() }] {
            let v: Value = serde_json::from_str(&legacy.request(5, None)).unwrap();
            assert_eq!(
                (v["method"].as_str(), v["params"]["name"].as_str()),
                (Some("tools/call"), Some("echo"))
            );
            assert_eq!(v["params"]["arguments"]["message"], MESSAGE);
            assert!(v["params"].get("_meta").is_none(), "a 2025-11-25 request carries no _meta");
            assert!(legacy.legacy() && legacy.name_header().is_none());
            assert!(legacy.check(&json!({"content":[{"type":"text","text":"hello"}]})).is_ok());
            assert!(legacy.check(&json!({"content":[{"type":"text","text":"bye"}]})).is_err());
            assert!(
                legacy.check(&json!({"content":[{"type":"text","text":"hello"}],"isError":true})).is_err()
            );
        }
        assert_eq!(Work::LegacySession { id: "s1".into() }.session(), Some("s1"));
        assert_eq!((Work::Legacy.session(), Work::default().legacy()), (None, false));

        let ok = json!({"jsonrpc":"2.0","id":4,"result":{}});
        let (id, result) = envelope(&ok);
        assert_eq!((id, result.is_ok()), (Some(4), true));
        assert!(envelope(&json!({"jsonrpc":"2.0","id":4,"error":{}})).1.is_err());
        assert!(envelope(&json!({"id":4,"result":{}})).1.is_err());
    }
}
