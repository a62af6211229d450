//! `tools/list` and `tools/call`.

use std::sync::Arc;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tracing::Instrument;

use mcp_kernel_wire::{ErrorObject, Payload};

use crate::catalog::snapshot::CompiledTool;
use crate::catalog::visibility::{Listed, Sieve, shown};
use crate::contract::{Era, RequestContext, ToolCall, ToolOutput};
use crate::methods::owned_params;
use crate::methods::round_trip::{Round, input_required};
use crate::methods::tool_result::{Content, ToolResult};
use crate::options::CacheHints;
use crate::request::arguments::Arguments;
use crate::request::capability::declares;
use crate::request::decoration::Decoration;
use crate::request::guard::guarded;
use crate::request::input::RetryInput;
use crate::sealing::state::Binding;
use crate::server::{Request, Routed, Server, append_cache_fields};
use crate::session::bridge::bridge;
use crate::trace::SpanSite;
use crate::trace::observe::{DispatchOutcome, PendingDispatch};

/// The text of a tool error: a string as is, an object as `k: v, …`, anything else as JSON.
fn error_text(reason: &Value) -> String {
    match reason {
        Value::String(text) => text.clone(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}: {s}"),
                other => format!("{k}: {other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// "Advertised = enforced", turned around: a tool with an output schema must return structured
/// content that the schema admits (MCP: servers MUST). Anything else is a host fault: the reason, for
/// the log; the caller gets -32603 and nothing more.
fn output_fault(tool: &CompiledTool, outcome: &ToolOutput) -> Option<String> {
    let schema = tool.output.as_ref()?;
    let structured = match outcome {
        ToolOutput::Json(value) => Some(value),
        ToolOutput::Content { structured, .. } => structured.as_ref(),
        ToolOutput::InputRequired(_) => return None,
    };
    let Some(value) = structured else { return Some("it returned no structured content".to_owned()) };
    let violation = schema.validate_value(value).err()?;
    // The validator writes its paths from `arguments`; here the instance is the structured content.
    let reason = violation.to_string();
    let reason =
        reason.strip_prefix("arguments").map_or(reason.clone(), |rest| format!("structuredContent{rest}"));
    Some(format!("its structured content breaks the output schema: {reason}"))
}

impl Server {
    /// Encoded straight to bytes: each item was encoded once, in the snapshot, so a list copies bytes
    /// rather than deep-cloning and re-encoding every tool's value per request.
    pub(crate) fn list_tools(&self, context: &RequestContext) -> Routed {
        let snapshot = &self.inner.snapshot;
        let items = &snapshot.tools_list;
        let hints = self.inner.options.tools_cache;
        let decoration = context.era.is_modern().then_some(&self.inner.decoration);
        // Without a filter the snapshot's items are written as they are, with no list built first.
        let encoded = match self.inner.injected.visibility.as_deref() {
            None => serde_json::value::to_raw_value(&ToolList { tools: items.as_slice(), hints, decoration }),
            Some(filter) => {
                let sieve = Sieve::new(Some(filter), context);
                let visible = snapshot.tools.iter().zip(items);
                let shown: Vec<&RawValue> = visible
                    .filter(|(tool, _)| sieve.shows(Listed::Tool(&tool.name)))
                    .map(|(_, item)| &**item)
                    .collect();
                serde_json::value::to_raw_value(&ToolList { tools: shown.as_slice(), hints, decoration })
            }
        };
        encoded.map(Payload::from).map_err(|_| ErrorObject::internal())
    }

    /// `tools/call`: only a listed tool is called (`protocol.md` [F-5]), with the outcomes of [B-9] and the
    /// one dispatch span of [B-14].
    ///
    /// [B-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    /// [B-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    /// [F-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub(crate) async fn call_tool(&self, request: Request<'_>) -> Routed {
        let Request { params, context, tool_shown, trace, client, .. } = request;
        let mut params = owned_params(params);
        let Some(Value::String(name)) = mcp_kernel_wire::message::member(&params, "name") else {
            return Err(ErrorObject::invalid_params("tools/call requires a string name"));
        };
        let tool = self.inner.snapshot.tool(name);
        let visibility = self.inner.injected.visibility.as_deref();
        // The filter decides once per request: a transport that asked already (for the headers) says so.
        let visible = |t: &CompiledTool| match &tool_shown {
            Some((asked, answer)) if **asked == *t.name => *answer,
            _ => shown(visibility, Listed::Tool(&t.name), &context),
        };
        let Some(tool) = tool.filter(|t| visible(t)) else {
            return Err(ErrorObject::unknown_tool());
        };
        if let Some(required) = &tool.required_capabilities {
            let declared = context.client_capabilities.as_deref().unwrap_or(&Value::Null);
            if !declares(declared, required) {
                return Err(ErrorObject::missing_capability(required.clone()));
            }
        }
        // A tool that runs only as a task is refused to a client that cannot take one, before anything
        // else is read.
        let task_engine = self.task_path(tool, &context)?;
        // Taken without a hash: `params` is read for nothing but a retry's members, then dropped.
        let arguments = match mcp_kernel_wire::message::take_member(&mut params, "arguments") {
            None => Value::Object(Map::new()),
            Some(arguments @ Value::Object(_)) => arguments,
            // Not a CallToolRequest: a protocol error, not a tool error (tools.mdx, error handling).
            Some(_) => return Err(ErrorObject::invalid_params("tools/call arguments must be an object")),
        };
        let round = self.round(&context, || Binding::tool(&tool.name, &arguments));
        let input = match &round {
            Some(round) => round.read_retry(&mut params)?,
            None => None,
        };
        drop(params);
        // An error result carries no structured content when the tool declares an output schema: its
        // `{error}` object would break the schema the tool advertises.
        let error_structure = |structured: Value| tool.output.is_none().then_some(structured);
        if let Err(violation) = tool.schema.validate(&arguments) {
            let reason = format!("invalid arguments: {violation}");
            let text = format!("{}: {reason}", tool.name);
            let structured = json!({"error": {"tool": &*tool.name, "reason": reason}});
            let structured = error_structure(structured);
            let content = Content::Text(&text);
            return ToolResult { content, structured: structured.as_ref(), is_error: true }
                .encode(context.era, &self.inner.decoration);
        }
        let Value::Object(arguments) = arguments else { return Err(ErrorObject::internal()) };
        let dispatch = match (&tool.handler, &self.inner.injected.dispatch) {
            (Some(handler), _) => handler,
            (None, Some(dispatch)) => dispatch,
            (None, None) => return Err(ErrorObject::internal()),
        };
        let era = context.era;
        let mut call_context = context.clone();
        call_context.retry = input.map(std::sync::Arc::new);
        let call = ToolCall {
            name: tool.name.clone(),
            arguments: Arguments::select(tool.schema.declared_keys(), arguments),
            context: call_context,
        };
        let site = SpanSite { server: self.inner.options.server_name(), era };
        let span = trace.dispatch_span(site, &tool.name);
        let pending = PendingDispatch::start(
            self.inner.injected.observer.as_deref(),
            tool.recorder.as_deref(),
            self.inner.options.server_name(),
            &tool.name,
            span.clone(),
        );
        if let Some(engine) = task_engine {
            let dispatch = std::sync::Arc::clone(dispatch);
            let started = Started { call, round, span, pending };
            return self.call_maybe_task_boxed(engine, tool, dispatch, started).await;
        }
        let outcome = match bridge(&context, client.as_ref()) {
            None => guarded(|| dispatch.call(call)).instrument(span.clone()).await,
            // A legacy client asked through its channel: the call is made again with its answers.
            Some(bridge) => {
                let attempt = |retry: Option<Arc<RetryInput>>| {
                    let mut call = call.clone();
                    call.context.retry = retry;
                    guarded(move || dispatch.call(call)).instrument(span.clone())
                };
                // Allocated first, as above.
                match Box::into_pin(Box::write(Box::new_uninit(), bridge.run(attempt))).await {
                    Ok(outcome) => outcome,
                    Err(stopped) => {
                        // The last call asked for input, as a modern one may: a result, unless the
                        // host asked for what cannot be asked.
                        let fault =
                            if stopped.host_fault { DispatchOutcome::Fault } else { DispatchOutcome::Ok };
                        pending.finish(fault);
                        return Err(stopped.error);
                    }
                }
            }
        };
        let checked = Checked::new(tool, outcome);
        pending.finish(checked.observed());
        self.settle_tool(tool, checked, round.as_ref(), &span, era)
    }

    /// The answer to a finished dispatch ([B-9]) in `era`: the result, the tool error, "input
    /// required" within a round, or -32603 for a host fault (logged under `span`).
    ///
    /// [B-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub(crate) fn settle_tool(
        &self,
        tool: &CompiledTool,
        checked: Checked,
        round: Option<&Round<'_>>,
        span: &tracing::Span,
        era: Era,
    ) -> Routed {
        let Checked { outcome, fault } = checked;
        let decoration = &self.inner.decoration;
        if let Some(reason) = fault {
            tracing::error!(parent: span, tool = %tool.name, %reason, "the tool's result breaks its declared output schema; answered -32603");
            return Err(ErrorObject::internal());
        }
        // An error result carries no structured content when the tool declares an output schema.
        let error_structure = |structured: Value| tool.output.is_none().then_some(structured);
        match outcome {
            Err(_) => {
                tracing::error!(parent: span, "dispatch panicked; answered -32603");
                Err(ErrorObject::internal())
            }
            Ok(Ok(ToolOutput::Json(value))) => {
                let text = serde_json::to_string(&value).map_err(|_| ErrorObject::internal())?;
                let content = Content::Text(&text);
                ToolResult { content, structured: Some(&value), is_error: false }.encode(era, decoration)
            }
            Ok(Ok(ToolOutput::Content { blocks, structured })) => {
                let content = Content::Blocks(&blocks);
                ToolResult { content, structured: structured.as_ref(), is_error: false }
                    .encode(era, decoration)
            }
            Ok(Ok(ToolOutput::InputRequired(required))) => {
                input_required(round, required).map(Payload::Value)
            }
            Ok(Err(error)) => {
                let reason = error.reason().clone();
                let text = error_text(&reason);
                let structured = error_structure(json!({"error": reason}));
                let content = Content::Text(&text);
                ToolResult { content, structured: structured.as_ref(), is_error: true }
                    .encode(era, decoration)
            }
        }
    }
}

/// A dispatch's outcome: the host's answer, or its panic.
pub(crate) type Outcome =
    Result<Result<ToolOutput, crate::contract::ToolError>, crate::request::guard::Panicked>;

/// A call whose dispatch is about to start, as the task path takes it over.
pub(crate) struct Started<'a> {
    pub(crate) call: ToolCall,
    pub(crate) round: Option<Round<'a>>,
    pub(crate) span: tracing::Span,
    pub(crate) pending: PendingDispatch<'a>,
}

/// A finished dispatch, its structured content checked against the tool's output schema once (the
/// observer's outcome and the answer both read the one check).
pub(crate) struct Checked {
    outcome: Outcome,
    /// Why the result breaks the output schema, if it does (a host fault).
    fault: Option<String>,
}

impl Checked {
    /// Checks `outcome` of `tool`.
    pub(crate) fn new(tool: &CompiledTool, outcome: Outcome) -> Self {
        let fault = match &outcome {
            Ok(Ok(output)) => output_fault(tool, output),
            _ => None,
        };
        Self { outcome, fault }
    }

    /// What the observer is told.
    pub(crate) fn observed(&self) -> DispatchOutcome {
        match (&self.outcome, &self.fault) {
            (Ok(Ok(_)), Some(_)) => DispatchOutcome::Fault,
            (Ok(Ok(_)), None) => DispatchOutcome::Ok,
            (Ok(Err(_)), _) => DispatchOutcome::Error,
            (Err(_), _) => DispatchOutcome::Panic,
        }
    }

    /// Whether the host asked for the client's input.
    pub(crate) fn asks_input(&self) -> bool {
        matches!(self.outcome, Ok(Ok(ToolOutput::InputRequired(_))))
    }

    /// The outcome itself.
    pub(crate) fn into_outcome(self) -> Outcome {
        self.outcome
    }
}

/// `ListToolsResult`'s members in wire order: `tools`, the cache hints, then the era's decoration.
struct ToolList<'a, T> {
    tools: &'a [T],
    hints: CacheHints,
    decoration: Option<&'a Decoration>,
}

impl<T: Serialize> Serialize for ToolList<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("tools", self.tools)?;
        append_cache_fields(&mut map, self.hints)?;
        if let Some(decoration) = self.decoration {
            decoration.append(&mut map)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_text_renders_maps_as_pairs() {
        assert_eq!(error_text(&json!("boom")), "boom");
        assert_eq!(error_text(&json!({"a": "x", "b": 2, "c": [1]})), "a: x, b: 2, c: [1]");
        assert_eq!(error_text(&json!(3)), "3");
    }
}
