//! `export_notes`: the slow tool, run as a task (the tasks extension, `io.modelcontextprotocol/tasks`).
//!
//! It writes the caller's notes as one document, Markdown or plain text. Its mode is
//! [`TaskMode::Optional`]: the kernel decides per call whether it becomes a task, and the handler stays
//! an ordinary async function. What a client sees depends on what it declared:
//!
//! - **Tasks and elicitation.** Before writing anything, the handler asks which format
//!   (`ToolOutput::input_required` with one form). This server has no request-state sealer, so the
//!   question cannot travel as an ordinary multi-round trip: the call becomes a task at once, and
//!   `tasks/get` shows it `input_required` with the form. The client answers with `tasks/update`;
//!   the handler runs again with the answer in `cx.retry_input()`, sets its status message and writes.
//! - **Tasks, no elicitation.** Nothing is asked: Markdown. Writing takes longer than the threshold,
//!   so the call becomes a task (`working`) once the threshold has passed, and the same future runs on.
//! - **No tasks** (the extension not declared, or a `2025-11-25` client). Nothing is asked either, and
//!   the call is answered as usual, once the export is written.
//!
//! An export of no notes is answered at once, as usual: within the threshold, no task is made.
//!
//! Writing is a pause standing for slow work ([`Pace::pause`]), raced against the task's cancellation:
//! a `tasks/cancel` (or the task's time to live) ends it early, and nothing is written. Tasks are owned
//! by their caller (`Tasks::owner` in `host`, the same name that keys their listeners): another caller's task is
//! answered exactly as one that does not exist.

use std::time::Duration;

use mcp_kernel::tasks::{DEFAULT_THRESHOLD, TaskMode};
use mcp_kernel::{InputRequired, Mode, RequestContext, ToolError, ToolOutput, ToolSpec};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::host::Caller;
use crate::store::{Note, Store};

/// The tool's name.
pub const EXPORT: &str = "export_notes";

/// The key of the format question, in the input request and in its answer.
const FORMAT: &str = "format";

/// How long writing an export takes, by default (it stands for slow work).
pub const DEFAULT_PAUSE: Duration = Duration::from_secs(2);

/// How slow an export is, and how long a call may run before it becomes a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// How long writing an export takes (`NOTES_EXPORT_PAUSE_MS`, default 2 s).
    pub pause: Duration,
    /// How long a call may run before it becomes a task (`NOTES_TASK_THRESHOLD_MS`, default 500 ms).
    pub threshold: Duration,
}

impl Default for Pace {
    fn default() -> Self {
        Self { pause: DEFAULT_PAUSE, threshold: DEFAULT_THRESHOLD }
    }
}

impl Pace {
    /// The defaults, with `NOTES_EXPORT_PAUSE_MS` and `NOTES_TASK_THRESHOLD_MS` in place of each one
    /// that is set (tests set them to run fast).
    pub fn from_env() -> Result<Self, String> {
        let millis = |name: &str, default: Duration| match std::env::var(name) {
            Err(_) => Ok(default),
            Ok(value) => value
                .trim()
                .parse()
                .map(Duration::from_millis)
                .map_err(|_| format!("{name} is a number of milliseconds, not {value:?}")),
        };
        let defaults = Self::default();
        Ok(Self {
            pause: millis("NOTES_EXPORT_PAUSE_MS", defaults.pause)?,
            threshold: millis("NOTES_TASK_THRESHOLD_MS", defaults.threshold)?,
        })
    }
}

/// `export_notes`'s spec: read-only, and a task when the client takes tasks and it takes long.
pub fn spec() -> ToolSpec {
    ToolSpec::new(EXPORT, Mode::ReadOnly)
        .description("Export your notes as one document (slow: a client that takes tasks gets a task).")
        .task_mode(TaskMode::Optional)
}

/// `export_notes`'s arguments.
#[derive(Deserialize, JsonSchema)]
pub struct ExportNotes {
    /// The document's heading (default "Notes").
    title: Option<String>,
}

/// The formats an export is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Markdown,
    Plain,
}

/// Exports the caller's notes: see the module.
pub async fn export(
    store: &Store,
    pace: Pace,
    args: ExportNotes,
    cx: RequestContext,
) -> Result<ToolOutput, ToolError> {
    let notes = store.owned_by(&cx.caller::<Caller>()?.0);
    let title = args.title.unwrap_or_else(|| "Notes".to_owned());
    if notes.is_empty() {
        return Ok(ToolOutput::text(format!("# {title}\n\nYou have no notes.\n")));
    }
    // `Some` when this call is, or may become, a task: the client declared the extension.
    let task = cx.task();
    let format = match cx.retry_input() {
        // The run after the client answered the question below.
        Some(input) => match input.accepted(FORMAT).and_then(|form| form.get(FORMAT)) {
            Some(chosen) if chosen == "markdown" => Format::Markdown,
            Some(chosen) if chosen == "plain" => Format::Plain,
            Some(other) => return Err(ToolError::new(format!("export: unknown format {other}"))),
            None => return Err(ToolError::new("export declined: nothing was written")),
        },
        // The first run: ask before writing anything, inside a task, a client that can answer a form.
        None => match task {
            Some(task) if can_answer_a_form(&cx) => {
                task.set_status_message("waiting for the export's format");
                return Ok(ToolOutput::input_required(format_question(notes.len())));
            }
            _ => Format::Markdown,
        },
    };
    if let Some(task) = task {
        task.set_status_message(format!("writing {}", counted(notes.len())));
    }
    // The slow part, raced against the task's cancellation (outside a task, nothing cancels it).
    let cancelled = async {
        match task {
            Some(task) => task.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = tokio::time::sleep(pace.pause) => Ok(ToolOutput::text(document(format, &title, &notes))),
        () = cancelled => {
            // Not stored (the task is already `cancelled`): the handler only stops early.
            tracing::info!("export cancelled before it was written");
            Err(ToolError::new("export cancelled: nothing was written"))
        }
    }
}

/// The export itself: a heading, then each note (with its tags, in Markdown).
fn document(format: Format, title: &str, notes: &[Note]) -> String {
    let mut document = match format {
        Format::Markdown => format!("# {title}\n"),
        Format::Plain => format!("{title}\n"),
    };
    for note in notes {
        match format {
            Format::Markdown => {
                document.push_str(&format!("\n## {}\n\n{}\n", note.title, note.body));
                if !note.tags.is_empty() {
                    document.push_str(&format!("\ntags: {}\n", note.tags.join(", ")));
                }
            }
            Format::Plain => document.push_str(&format!("\n{}\n{}\n", note.title, note.body)),
        }
    }
    document
}

/// The one question: which format, as a form (`elicitation/create`) with a single choice.
fn format_question(notes: usize) -> InputRequired {
    let form = json!({
        "type": "object",
        "properties": {
            FORMAT: {"type": "string", "title": "Format", "enum": ["markdown", "plain"], "default": "markdown"}
        },
        "required": [FORMAT]
    });
    let message = format!("Export your {} in which format?", counted(notes));
    InputRequired::new().elicit(FORMAT, message, form)
}

/// "1 note", "2 notes".
fn counted(notes: usize) -> String {
    if notes == 1 { "1 note".to_owned() } else { format!("{notes} notes") }
}

/// Whether the request declared form elicitation (`elicitation: {}` means form only).
fn can_answer_a_form(cx: &RequestContext) -> bool {
    let declared = cx.client_capabilities.as_deref().and_then(|c| c.get("elicitation"));
    declared
        .and_then(|modes| modes.as_object())
        .is_some_and(|modes| modes.is_empty() || modes.contains_key("form"))
}
