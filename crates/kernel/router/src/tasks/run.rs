//! A `tools/call` that may become a task, and the task's run once it has.
//!
//! The decision (SEP-2663 leaves it to the server, per request):
//!
//! | tool's mode | client declared the extension | the handler, within the threshold… | answer |
//! |---|---|---|---|
//! | `Never` | either | — | the ordinary answer |
//! | `Optional` / `Required` | no | — | ordinary (`Optional`), -32021 naming the extension (`Required`, before the handler runs) |
//! | `Optional` | yes | finished | the ordinary answer (an "input required" within a round included) |
//! | `Required` | yes | asked for input within a round | the `InputRequiredResult` (multi-round trips are resolved before a task is created) |
//! | `Required` | yes | finished otherwise | a task, created with that outcome |
//! | either | yes | asked for input outside a round (no sealer) | a task, `input_required` |
//! | either | yes | still running | a task, `working`; the same future runs on |
//!
//! The `CreateTaskResult` is sent only after the store has the task (a `tasks/get` finds it at once).
//! The run then settles each outcome of the handler as a transition: a result (a tool error
//! included) completes the task, a panic or a host fault fails it with -32603, an "input required"
//! puts it in `input_required` until `tasks/update` has answered every request, then runs the handler
//! again with the answers as its [`RetryInput`] — the handler never learns whether it served a retry or
//! a task. A cancellation, the task's time to live or the server's drain ends the run: the handler is
//! told ([`TaskHandle::cancelled`]) and dropped after the cancellation grace.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_util::future::{Either, select};
use serde_json::{Map, Value, json};
use tracing::Instrument;

use mcp_kernel_wire::version::EXTENSION_TASKS;
use mcp_kernel_wire::{ErrorObject, Payload};

use crate::catalog::snapshot::CompiledTool;
use crate::catalog::spec::TaskMode;
use crate::contract::{BoxFuture, Dispatch, RequestContext, ToolCall, ToolOutput};
use crate::methods::tools::{Checked, Outcome, Started};
use crate::request::capability::{askable, well_formed};
use crate::request::guard::guarded;
use crate::request::input::{InputRequired, RetryInput};
use crate::request::responses;
use crate::server::{Routed, Server};
use crate::tasks::handle::TaskHandle;
use crate::tasks::options::millis;
use crate::tasks::record::{TakenInput, TaskRecord, Timing, Transition, now_ms};
use crate::tasks::registry::TaskEngine;
use crate::tasks::store::{LimitReached, TaskWatch};

/// The most rounds of input one task may go through: a host that asks again and again (or hands back
/// only its state, forever) fails its task instead of running without end.
pub const MAX_INPUT_ROUNDS: usize = 1024;

/// `{"extensions": {"io.modelcontextprotocol/tasks": {}}}`: what a request declares to take tasks.
pub(crate) fn tasks_capability() -> Value {
    json!({ "extensions": { EXTENSION_TASKS: {} } })
}

/// Whether the request declared the tasks extension in its client capabilities (an object under
/// `extensions`: `false` or `null` there declares nothing).
pub(crate) fn declares_tasks(context: &RequestContext) -> bool {
    context.era.is_modern()
        && context
            .client_capabilities
            .as_deref()
            .and_then(|declared| declared.get("extensions")?.get(EXTENSION_TASKS))
            .is_some_and(Value::is_object)
}

/// A 128-bit random task id, as 32 hex digits.
fn new_task_id() -> Result<String, ErrorObject> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|_| {
        tracing::error!("the system's random source failed; no task id; answered -32603");
        ErrorObject::internal()
    })?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

impl Server {
    /// The task engine when this call may become a task; -32021 for a tool that runs only as a task,
    /// called by a request that did not declare the extension.
    pub(crate) fn task_path(
        &self,
        tool: &CompiledTool,
        context: &RequestContext,
    ) -> Result<Option<TaskEngine>, ErrorObject> {
        if tool.task_mode == TaskMode::Never {
            return Ok(None);
        }
        let engine = self.task_engine().filter(|_| declares_tasks(context));
        match (engine, tool.task_mode) {
            (None, TaskMode::Required) => Err(ErrorObject::missing_capability(tasks_capability())),
            (engine, _) => Ok(engine),
        }
    }

    /// [`Server::call_maybe_task`]'s future, allocated first (as in `contract.rs`, `Dispatch for F`)
    /// and returned as a `dyn Future`: awaited as its own type, its `poll` was inlined into
    /// `call_tool`'s, and `call_tool`'s stack frame kept room for the task path's locals on every call.
    /// Not inlined itself, or the optimizer, seeing the vtable, could inline that `poll` again
    /// (`docs/performance.md`, "Tenth round").
    #[inline(never)]
    pub(crate) fn call_maybe_task_boxed<'a>(
        &'a self,
        engine: TaskEngine,
        tool: &'a CompiledTool,
        dispatch: Arc<dyn Dispatch>,
        started: Started<'a>,
    ) -> BoxFuture<'a, Routed> {
        let boxed = Box::write(Box::new_uninit(), self.call_maybe_task(engine, tool, dispatch, started));
        Box::into_pin(boxed)
    }

    /// Runs a call that may become a task: see the module's table.
    pub(crate) async fn call_maybe_task(
        &self,
        engine: TaskEngine,
        tool: &CompiledTool,
        dispatch: Arc<dyn Dispatch>,
        started: Started<'_>,
    ) -> Routed {
        let Started { mut call, round, span, pending } = started;
        let handle = TaskHandle::new();
        call.context.task = Some(handle.clone());
        let retry = call.clone();
        let first = run_dispatch(Arc::clone(&dispatch), call, span.clone());
        let threshold = engine.tasks.runtime.sleep(engine.tasks.settings.threshold);
        let era = retry.context.era;
        let (start, record) = match select(first, threshold).await {
            Either::Left((outcome, _)) => {
                let checked = Checked::new(tool, outcome);
                pending.finish(checked.observed());
                let asks = checked.asks_input();
                let ordinary = match tool.task_mode {
                    TaskMode::Required => asks && round.is_some(),
                    _ => !asks || round.is_some(),
                };
                if ordinary {
                    return self.settle_tool(tool, checked, round.as_ref(), &span, era);
                }
                match self.create_task(&engine, &retry.context, &handle).await {
                    Ok(record) => (Start::Settled(checked.into_outcome()), record),
                    Err(refused) if refused.answers_ordinarily() && tool.task_mode != TaskMode::Required => {
                        return self.settle_tool(tool, checked, round.as_ref(), &span, era);
                    }
                    Err(refused) => return Err(refused.into_error()),
                }
            }
            Either::Right(((), first)) => match self.create_task(&engine, &retry.context, &handle).await {
                Ok(record) => {
                    // Reported when answered: the call was answered with its task.
                    pending.finish(crate::trace::observe::DispatchOutcome::Ok);
                    (Start::Running(first), record)
                }
                // Past a task bound, or with the store unreachable, an optional tool is answered as it
                // would be without tasks.
                Err(refused) if refused.answers_ordinarily() && tool.task_mode != TaskMode::Required => {
                    let checked = Checked::new(tool, first.await);
                    pending.finish(checked.observed());
                    return self.settle_tool(tool, checked, round.as_ref(), &span, era);
                }
                Err(refused) => return Err(refused.into_error()),
            },
        };
        let run = TaskRun {
            server: self.clone(),
            engine: engine.clone(),
            id: record.id.clone(),
            handle,
            dispatch,
            retry,
            span,
            rewatch_pause_ms: std::sync::atomic::AtomicU64::new(REWATCH_PAUSE_MS.0),
        };
        let watch = engine.tasks.store.watch_running(&record.id);
        let expires = record.expires_ms();
        // Allocated first, as in `contract.rs` (`Dispatch for F`).
        let running = Box::write(Box::new_uninit(), run.run(start, watch, expires));
        engine.tasks.runtime.spawn(Box::into_pin(running));
        Ok(Payload::Value(record.created()))
    }

    /// Stores a new task for the caller of `context` (its status message, if the handler set one);
    /// past a bound, the error names it.
    async fn create_task(
        &self,
        engine: &TaskEngine,
        context: &RequestContext,
        handle: &TaskHandle,
    ) -> Result<TaskRecord, Refused> {
        let tasks = &engine.tasks;
        let owner = tasks.owner_of(context).map_err(|_| Refused::Failed(ErrorObject::internal()))?;
        let settings = tasks.settings;
        let timing = Timing {
            ttl_ms: settings.ttl.map(millis),
            poll_interval_ms: Some(millis(settings.poll_interval)),
            retention_ms: millis(settings.retention),
        };
        let mut record = TaskRecord::new(new_task_id().map_err(Refused::Failed)?, owner, timing, now_ms());
        record.status_message = handle.pending_message();
        match tasks.store.create(record.clone(), settings.limits).await {
            Ok(Ok(())) => {}
            Ok(Err(limit)) => return Err(Refused::Bound(limit_error(limit))),
            Err(error) if error.is_unavailable() => {
                return Err(Refused::Unavailable(error.to_answer("a new task")));
            }
            Err(error) => return Err(Refused::Failed(error.to_answer("a new task"))),
        }
        tasks.running.insert(&record.id, handle.clone());
        // A message set while the task was being stored is written now.
        if let Some(message) = handle.attach(record.id.clone(), engine.clone())
            && record.status_message.as_deref() != Some(message.as_str())
        {
            engine.spawn_transition(record.id.clone(), Transition::Message(message), now_ms());
        }
        Ok(record)
    }
}

/// Why a call did not become a task.
enum Refused {
    /// A task bound was reached (-32000 naming it).
    Bound(ErrorObject),
    /// The store is unreachable for now (retryable).
    Unavailable(ErrorObject),
    /// The store or the host failed (-32603).
    Failed(ErrorObject),
}

impl Refused {
    /// Whether an optional tool's call is answered as it would be without tasks: past a bound, or
    /// while the store is unreachable, the call that needs no task still gets its answer.
    fn answers_ordinarily(&self) -> bool {
        matches!(self, Refused::Bound(_) | Refused::Unavailable(_))
    }

    fn into_error(self) -> ErrorObject {
        match self {
            Refused::Bound(error) | Refused::Unavailable(error) | Refused::Failed(error) => error,
        }
    }
}

/// -32000 naming the bound a new task would pass.
fn limit_error(limit: LimitReached) -> ErrorObject {
    let message = match limit {
        LimitReached::PerOwner(n) => {
            format!("Too many tasks: this caller runs its limit of {n} tasks; try again when one finishes")
        }
        LimitReached::Total(n) => {
            format!("Too many tasks: the server holds its limit of {n} tasks; try again later")
        }
    };
    ErrorObject::new(-32000, message)
}

/// The handler's future, guarded and inside the dispatch span.
fn run_dispatch(
    dispatch: Arc<dyn Dispatch>,
    call: ToolCall,
    span: tracing::Span,
) -> BoxFuture<'static, Outcome> {
    // Allocated first, as in `contract.rs` (`Dispatch for F`).
    let boxed =
        Box::write(Box::new_uninit(), async move { guarded(|| dispatch.call(call)).await }.instrument(span));
    Box::into_pin(boxed)
}

/// How a task's run starts.
enum Start {
    /// The handler is still running.
    Running(BoxFuture<'static, Outcome>),
    /// The handler finished before the task was created.
    Settled(Outcome),
}

/// One task's run, in the background.
struct TaskRun {
    server: Server,
    engine: TaskEngine,
    id: String,
    handle: TaskHandle,
    dispatch: Arc<dyn Dispatch>,
    /// The call as first made: each round runs it again with its answers.
    retry: ToolCall,
    span: tracing::Span,
    /// The pause before the next watch, in milliseconds: it doubles while the store keeps ending
    /// watches (a shared store that lost its source) and is back at its least after a wake-up that
    /// left the watch alive.
    rewatch_pause_ms: std::sync::atomic::AtomicU64,
}

/// The least and the most pause before a task's run watches its task again.
const REWATCH_PAUSE_MS: (u64, u64) = (50, 2_000);

/// What a look for a round's answers found.
enum Taken {
    /// Every request is answered (`Ready`), or the task is over (`Ended`).
    Input(Woken<RetryInput>),
    /// Not every request is answered yet.
    NotYet,
    /// The store could not be read or written.
    Unread,
}

/// Why a run stopped waiting.
enum Woken<T> {
    /// What it waited for.
    Ready(T),
    /// The task is terminal (cancelled, expired, failed by the drain) or gone.
    Ended,
}

impl TaskRun {
    async fn run(self, start: Start, mut watch: TaskWatch, expires: Option<u64>) {
        let _registered = Registered { running: &self.engine.tasks.running, id: &self.id };
        let ttl = expires.map(|at| at.saturating_sub(now_ms()));
        let mut deadline = match ttl {
            Some(ms) => self.engine.tasks.runtime.sleep(std::time::Duration::from_millis(ms)),
            None => Box::pin(std::future::pending()),
        };
        let mut running = match start {
            Start::Running(future) => future,
            Start::Settled(outcome) => Box::pin(std::future::ready(outcome)),
        };
        let mut rounds = 0usize;
        // A cancellation written between the task's creation and its watch (through another instance)
        // woke nobody: looked at once.
        if self.is_over().await {
            return self.stop(running).await;
        }
        loop {
            let outcome = match self.outlast(&mut running, &mut watch, &mut deadline).await {
                Woken::Ready(outcome) => outcome,
                Woken::Ended => break self.stop(running).await,
            };
            let required = match outcome {
                Ok(Ok(ToolOutput::InputRequired(required))) => required,
                settled => {
                    let transition = self.settled(settled);
                    self.engine.transition(&self.id, transition, now_ms()).await;
                    break;
                }
            };
            rounds += 1;
            let asked = match self.ask(required, rounds).await {
                Ok(asked) => asked,
                Err(transition) => {
                    self.engine.transition(&self.id, transition, now_ms()).await;
                    break;
                }
            };
            let input = match asked {
                Asked::Nothing(state) => RetryInput::new(BTreeMap::new(), state),
                Asked::Requests => match self.answers(&mut watch, &mut deadline).await {
                    Woken::Ready(input) => input,
                    Woken::Ended => break self.handle.cancel(),
                },
            };
            let mut call = self.retry.clone();
            call.context.retry = Some(Arc::new(input));
            running = run_dispatch(Arc::clone(&self.dispatch), call, self.span.clone());
        }
    }

    /// Polls the handler until it finishes, or until the task ends under it.
    async fn outlast(
        &self,
        running: &mut BoxFuture<'static, Outcome>,
        watch: &mut TaskWatch,
        deadline: &mut BoxFuture<'static, ()>,
    ) -> Woken<Outcome> {
        loop {
            // What ended the wait: the handler (its outcome), a wake-up (`Some(alive)`), the deadline.
            let ended = {
                let ended = select(Box::pin(watch.woken()), deadline.as_mut());
                match select(running.as_mut(), ended).await {
                    Either::Left((outcome, _)) => return Woken::Ready(outcome),
                    Either::Right((Either::Left((alive, _)), _)) => Some(alive),
                    Either::Right((Either::Right(((), _)), _)) => None,
                }
            };
            match ended {
                None => {
                    self.expire().await;
                    return Woken::Ended;
                }
                Some(alive) => {
                    // Watched again first, then read: a change written in between wakes the new watch.
                    if alive {
                        self.watch_delivers();
                    } else {
                        self.rewatch(watch).await;
                    }
                    match self.look().await {
                        Some(true) => return Woken::Ended,
                        Some(false) => {}
                        // Unread (the store is unreachable): read again after the next pause, even if
                        // the new watch lives — what woke it, or what was written while no watch
                        // lived, is not known yet.
                        None => *watch = TaskWatch::new(futures_util::stream::empty()),
                    }
                }
            }
        }
    }

    /// Waits for the answers to every outstanding request (recorded by `tasks/update`, here or in
    /// another instance), then takes them.
    async fn answers(
        &self,
        watch: &mut TaskWatch,
        deadline: &mut BoxFuture<'static, ()>,
    ) -> Woken<RetryInput> {
        loop {
            match self.take_input().await {
                Taken::Input(input) => return input,
                Taken::NotYet => {}
                // Unread: looked at again after the next pause, even if the watch lives.
                Taken::Unread => *watch = TaskWatch::new(futures_util::stream::empty()),
            }
            let woken = match select(Box::pin(watch.woken()), deadline.as_mut()).await {
                Either::Left((alive, _)) => Some(alive),
                Either::Right(((), _)) => None,
            };
            match woken {
                None => {
                    self.expire().await;
                    return Woken::Ended;
                }
                Some(alive) => {
                    if alive {
                        self.watch_delivers();
                    } else {
                        // Watched again first (a shared store's lease is held again), then read.
                        self.rewatch(watch).await;
                        if self.is_over().await {
                            return Woken::Ended;
                        }
                    }
                }
            }
        }
    }

    /// The round's answers, once every request is answered; `Ended` when the task is over.
    async fn take_input(&self) -> Taken {
        let taken: Mutex<Option<TakenInput>> = Mutex::new(None);
        let edit = |record: &mut TaskRecord| {
            let input = record.take_input();
            let took = input.is_some();
            *taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = input;
            took
        };
        match self.engine.tasks.store.update(&self.id, &edit).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                return match self.look().await {
                    Some(true) => Taken::Input(Woken::Ended),
                    Some(false) => Taken::NotYet,
                    None => Taken::Unread,
                };
            }
            Err(error) => {
                tracing::error!(%error, "the task store failed while a task waited for input");
                return Taken::Unread;
            }
        }
        let taken = taken.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some((given, state)) = taken else { return Taken::NotYet };
        let keys: BTreeMap<String, String> =
            given.iter().map(|(key, g)| (key.clone(), g.method.clone())).collect();
        let sent: Map<String, Value> = given.into_iter().map(|(key, g)| (key, g.response)).collect();
        // Checked when recorded; a store written by another version is checked again here.
        let responses = responses::asked(sent, &keys).unwrap_or_default();
        Taken::Input(Woken::Ready(RetryInput::new(responses, state)))
    }

    /// A watch the store ended while the task lives on (a shared store lost its connection): watched
    /// again after a pause, so that a store that keeps ending watches is polled, not spun on.
    /// The pause doubles at each watch ended in a row (50 ms up to 2 s), so that a store whose source
    /// is gone for long is asked a few times a minute per task, not twenty times a second.
    async fn rewatch(&self, watch: &mut TaskWatch) {
        use std::sync::atomic::Ordering;
        let pause = self.rewatch_pause_ms.load(Ordering::Relaxed);
        self.rewatch_pause_ms.store((pause * 2).min(REWATCH_PAUSE_MS.1), Ordering::Relaxed);
        self.engine.tasks.runtime.sleep(std::time::Duration::from_millis(pause)).await;
        *watch = self.engine.tasks.store.watch_running(&self.id);
    }

    /// A wake-up left the watch alive: the store delivers again, and the next lost watch is watched
    /// again after the least pause.
    fn watch_delivers(&self) {
        self.rewatch_pause_ms.store(REWATCH_PAUSE_MS.0, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the task is terminal or gone (then the handler is told to stop).
    async fn is_over(&self) -> bool {
        self.look().await == Some(true)
    }

    /// Whether the task is terminal or gone (then the handler is told to stop); `None` when the
    /// store could not be read.
    async fn look(&self) -> Option<bool> {
        let over = match self.engine.tasks.store.read(&self.id).await {
            Ok(Some(record)) => record.status.is_terminal(),
            Ok(None) => true,
            Err(_) => return None,
        };
        if over {
            self.handle.cancel();
        }
        Some(over)
    }

    /// The task outlived its time to live: failed, and its handler told.
    async fn expire(&self) {
        let error = json!({"code": -32603, "message": "the task outlived its time to live"});
        if let Err(failure) = self.engine.tasks.store.expire(&self.id, error, now_ms()).await {
            tracing::error!(error = %failure, "the task store failed to expire a task");
        }
        self.handle.cancel();
    }

    /// Lets a cancelled handler run on for the cancellation grace, then drops it; its outcome is not
    /// stored (the task is terminal already).
    async fn stop(&self, running: BoxFuture<'static, Outcome>) {
        self.handle.cancel();
        let grace = self.engine.tasks.runtime.sleep(self.engine.tasks.settings.cancel_grace);
        let _ = select(running, grace).await;
    }

    /// The transition a finished handler's outcome makes: its result completes the task (a tool error
    /// included), a panic or a host fault fails it.
    fn settled(&self, outcome: Outcome) -> Transition {
        let Some(tool) = self.server.inner.snapshot.tool(&self.retry.name) else {
            return failed(ErrorObject::internal(), "the tool is no longer served");
        };
        let era = self.retry.context.era;
        match self.server.settle_tool(tool, Checked::new(tool, outcome), None, &self.span, era) {
            Ok(payload) => {
                let result = match payload {
                    Payload::Value(value) => self.server.inner.decoration.apply(value),
                    encoded => encoded.to_value(),
                };
                let size = serde_json::to_vec(&result).map_or(usize::MAX, |bytes| bytes.len());
                let limit = self.engine.tasks.settings.max_result_bytes;
                if size > limit {
                    let message = format!("the task's result is larger than the limit of {limit} bytes");
                    return failed(ErrorObject::new(-32603, message.clone()), &message);
                }
                Transition::Completed(result)
            }
            Err(error) => failed(error, "the tool failed with a protocol error"),
        }
    }

    /// Puts the task in `input_required` with the host's requests (the ones the client can answer).
    async fn ask(&self, required: InputRequired, rounds: usize) -> Result<Asked, Transition> {
        if rounds > MAX_INPUT_ROUNDS {
            tracing::error!("a task asked for input more than {MAX_INPUT_ROUNDS} times; failed");
            return Err(failed(ErrorObject::internal(), "the task asked for input too many times"));
        }
        let (requests, state) = required.into_parts();
        if requests.is_empty() && state.is_none() {
            tracing::error!(
                "the host asked for input but gave no input request and no state; the task failed"
            );
            return Err(failed(ErrorObject::internal(), "the tool asked for nothing"));
        }
        if !requests.values().all(well_formed) {
            tracing::error!("the host's elicitation form has no object requestedSchema; the task failed");
            return Err(failed(ErrorObject::internal(), "the tool asked for malformed input"));
        }
        if requests.is_empty() {
            return Ok(Asked::Nothing(state));
        }
        let declared = self.retry.context.client_capabilities.as_deref().unwrap_or(&Value::Null);
        let requests = askable(requests, declared).map_err(|missing| {
            failed(
                ErrorObject::missing_capability(missing),
                "the client cannot answer the tool's input requests",
            )
        })?;
        let mut wire = BTreeMap::new();
        for (key, request) in requests {
            let value = serde_json::to_value(&request)
                .map_err(|_| failed(ErrorObject::internal(), "unencodable input request"))?;
            wire.insert(key, (request.method().to_owned(), value));
        }
        let transition = Transition::InputRequired { requests: wire, state };
        match self.engine.transition(&self.id, transition, now_ms()).await {
            Some(_) => Ok(Asked::Requests),
            // Terminal meanwhile (cancelled): the wait below sees it at once.
            None => Ok(Asked::Requests),
        }
    }
}

/// Takes a task out of the running set however its run ends: a handler whose future panics when it
/// is dropped (after the cancellation grace) unwinds through the run, and must not leave the task
/// counted by the drain for ever.
struct Registered<'a> {
    running: &'a crate::tasks::registry::Running,
    id: &'a str,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.running.remove(self.id);
    }
}

/// What a round asked the client for.
enum Asked {
    /// Requests: wait for their answers.
    Requests,
    /// No request, only the host's state: run again at once.
    Nothing(Option<Vec<u8>>),
}

/// A `failed` transition with the JSON-RPC `error` and a diagnostic message.
fn failed(error: ErrorObject, message: &str) -> Transition {
    let error =
        serde_json::to_value(&error).unwrap_or_else(|_| json!({"code": -32603, "message": "Internal error"}));
    Transition::Failed { error, message: message.to_owned() }
}
