//! The tasks extension's fixtures (`io.modelcontextprotocol/tasks`, SEP-2663): the tools the suite's
//! ten `tasks-*` scenarios call (`conformance-suite.md` §6b), and the tasks opt-in they run under.
//!
//! The suite runs those scenarios with `2026-07-28` but never scores them; `cargo xtask conformance`
//! scores them as a row of their own. What each fixture must do:
//!
//! | tool | task mode | behaviour |
//! |---|---|---|
//! | `greet` | never | `Hello, {name}!` at once |
//! | `slow_compute` | optional | sleeps `seconds` (`0`: answers at once, no task), then a result; stops when cancelled |
//! | `failing_job` | required | a tool error (`isError`) after about 1 s |
//! | `protocol_error_job` | required | panics after a pause: the task fails with -32603 |
//! | `confirm_delete` | optional | asks for a confirmation once past the threshold (so it is a task by then), then answers |
//! | `multi_input` | optional | asks two questions at once, past the threshold; answers once both are answered |
//! | `test_tool_with_task` | required | asks for `user_name` at once (a multi-round trip, no task), then runs as a task and greets the name |

use std::time::Duration;

use mcp_kernel::router::{InputRequired, RetryInput};
use mcp_kernel::tasks::{TaskMode, Tasks, TokioRuntime};
use mcp_kernel::{Mode, RequestContext, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

/// How long an optional tool may run before its call becomes a task: well under the suite's
/// one-second `slow_compute`, which must become a task.
pub const THRESHOLD: Duration = Duration::from_millis(100);

/// How long the fixtures that ask for input run before they ask: past [`THRESHOLD`], so that the call
/// is a task by then (asked within it, the harness's sealer would make it a multi-round trip).
const PAST_THRESHOLD: Duration = Duration::from_millis(400);

/// The longest `slow_compute` sleeps, whatever it is asked.
const MAX_SECONDS: f64 = 600.0;

/// The names of the fixtures, in the order they are listed.
pub const TOOLS: [&str; 7] = [
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
];

/// The tasks opt-in the harness serves: one store for every server the triggers rebuild.
pub fn opt_in() -> Tasks {
    Tasks::in_process(TokioRuntime).threshold(THRESHOLD)
}

/// The fixtures' specs.
pub fn tools() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, mode: TaskMode, schema: Value| {
        ToolSpec::new(name, Mode::ReadOnly).description(description).input_schema(schema).task_mode(mode)
    };
    let none = json!({"type": "object", "properties": {}});
    vec![
        spec(
            "greet",
            "Greets a name at once; never a task.",
            TaskMode::Never,
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        ),
        spec(
            "slow_compute",
            "Sleeps the given seconds, then reports; a task past 100 ms.",
            TaskMode::Optional,
            json!({"type": "object", "properties": {
                "seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}},
                "required": ["seconds"]}),
        ),
        spec(
            "failing_job",
            "Fails as a tool error after about a second; only as a task.",
            TaskMode::Required,
            none.clone(),
        ),
        spec(
            "protocol_error_job",
            "Panics: its task fails with -32603; only as a task.",
            TaskMode::Required,
            none.clone(),
        ),
        spec(
            "confirm_delete",
            "Asks to confirm a deletion, as a task, then reports the answer.",
            TaskMode::Optional,
            json!({"type": "object", "properties": {"filename": {"type": "string"}}}),
        ),
        spec(
            "multi_input",
            "Asks two questions at once, as a task, then reports both answers.",
            TaskMode::Optional,
            none.clone(),
        ),
        spec(
            "test_tool_with_task",
            "Asks for the user's name, then greets it from a task.",
            TaskMode::Required,
            none,
        ),
    ]
}

/// Whether `name` is one of the fixtures.
pub fn is_fixture(name: &str) -> bool {
    TOOLS.contains(&name)
}

/// Waits `duration`, or less when the call's task is cancelled; `false` when it was.
async fn pause(context: &RequestContext, duration: Duration) -> bool {
    let cancelled = async {
        match context.task() {
            Some(task) => task.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = tokio::time::sleep(duration) => true,
        () = cancelled => false,
    }
}

/// The answer of a call whose task was cancelled under it (the task is terminal: it is not stored).
fn stopped() -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text("Stopped: the task was cancelled."))
}

/// A flat form asking for one property of one type.
fn form(property: &str, kind: &str) -> Value {
    json!({"type": "object", "properties": {property: {"type": kind}}, "required": [property]})
}

/// A field of an accepted elicitation, as text.
fn field(input: &RetryInput, key: &str, name: &str) -> Option<String> {
    input.accepted(key)?.get(name).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
}

/// The fixtures' calls (the caller checks [`is_fixture`] first).
pub async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let context = &call.context;
    let input = context.retry_input();
    match &*call.name {
        "greet" => {
            Ok(ToolOutput::text(format!("Hello, {}!", call.arguments.get_str("name").unwrap_or("world"))))
        }
        "slow_compute" => {
            let seconds = call.arguments.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
            let seconds = if seconds.is_finite() { seconds.clamp(0.0, MAX_SECONDS) } else { 0.0 };
            let label = call.arguments.get_str("label").unwrap_or("unnamed").to_owned();
            if !pause(context, Duration::from_secs_f64(seconds)).await {
                return stopped();
            }
            Ok(ToolOutput::text(format!("Computed {label} in {seconds} s.")))
        }
        "failing_job" => {
            if !pause(context, Duration::from_secs(1)).await {
                return stopped();
            }
            Err(ToolError::new("failing_job always fails, as a tool error"))
        }
        "protocol_error_job" => {
            if !pause(context, PAST_THRESHOLD).await {
                return stopped();
            }
            // A panic, without the panic hook's report on the harness's stderr: the kernel catches it
            // and fails the task with -32603.
            std::panic::resume_unwind(Box::new("protocol_error_job panics on purpose"))
        }
        "confirm_delete" => {
            let filename = call.arguments.get_str("filename").unwrap_or("the file").to_owned();
            match input.and_then(|input| field(input, "confirm", "confirm")) {
                Some(confirmed) if confirmed == "true" => {
                    Ok(ToolOutput::text(format!("Deleted {filename}.")))
                }
                Some(_) => Ok(ToolOutput::text(format!("Kept {filename}."))),
                None if input.is_some() => Ok(ToolOutput::text(format!("Kept {filename}: no confirmation."))),
                None => {
                    if !pause(context, PAST_THRESHOLD).await {
                        return stopped();
                    }
                    let ask = InputRequired::new().elicit(
                        "confirm",
                        format!("Delete {filename}?"),
                        form("confirm", "boolean"),
                    );
                    Ok(ToolOutput::input_required(ask))
                }
            }
        }
        "multi_input" => match input {
            Some(input) => {
                let name = field(input, "name", "name").unwrap_or_else(|| "(no name)".to_owned());
                let go_on = field(input, "go_on", "confirm").unwrap_or_else(|| "(no answer)".to_owned());
                Ok(ToolOutput::text(format!("Answered: name {name}, go on {go_on}.")))
            }
            None => {
                if !pause(context, PAST_THRESHOLD).await {
                    return stopped();
                }
                let ask = InputRequired::new()
                    .elicit("name", "What is your name?", form("name", "string"))
                    .elicit("go_on", "Shall I go on?", form("confirm", "boolean"));
                Ok(ToolOutput::input_required(ask))
            }
        },
        "test_tool_with_task" => match input.and_then(|input| field(input, "user_name", "name")) {
            Some(name) => {
                // Past the threshold: the call that carried the answer becomes a working task.
                if !pause(context, PAST_THRESHOLD).await {
                    return stopped();
                }
                Ok(ToolOutput::text(format!("Hello, {name}! (gathered before the task began)")))
            }
            None => Ok(ToolOutput::input_required(InputRequired::new().elicit(
                "user_name",
                "What is your name?",
                form("name", "string"),
            ))),
        },
        _ => Err(ToolError::new("not a tasks fixture")),
    }
}

#[cfg(test)]
mod tests;
