//! `prompts/list` and `prompts/get`.

use serde_json::{Map, Value};
use tracing::Instrument;

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::error::PromptErrorData;
use mcp_kernel_wire::types::GetPromptResult;

use crate::catalog::visibility::{Listed, shown};
use crate::contract::{GetPrompt, RequestContext};
use crate::methods::list::ListOf;
use crate::methods::round_trip::input_required;
use crate::methods::{encoded, owned_params};
use crate::request::arguments::Arguments;
use crate::request::cursor::CursorKind;
use crate::request::guard::guarded;
use crate::sealing::state::Binding;
use crate::server::{Answer, Request, Server};
use crate::session::bridge::bridge;

/// The answer to a `prompts/get` naming a prompt that is not listed (or hidden from the caller).
fn unknown_prompt(name: &str) -> ErrorObject {
    let data = PromptErrorData { name: name.to_owned(), reason: None };
    ErrorObject::prompt_error("unknown prompt", data)
}

impl Server {
    pub(crate) fn list_prompts(&self, params: Option<&Value>, context: &RequestContext) -> Answer {
        let sorted = &self.inner.snapshot.prompts;
        let hints = self.inner.options.prompts_cache;
        let list = ListOf { sorted, kind: CursorKind::Prompts, field: "prompts", hints };
        self.list_page(params, context, list, |p| &p.name, |p| &p.item, |p| Listed::Prompt(&p.name))
    }

    /// `prompts/get`: only a listed prompt is rendered (`protocol.md` [F-5]), refused before any host
    /// renderer runs.
    ///
    /// [F-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub(crate) async fn get_prompt(&self, request: Request<'_>) -> Answer {
        let Request { params, context, client, .. } = request;
        let mut params = owned_params(params);
        let Some(Value::String(name)) = params.get("name") else {
            return Err(ErrorObject::invalid_params("prompts/get requires a string name"));
        };
        let filter = self.inner.injected.visibility.as_deref();
        let prompt =
            self.inner.snapshot.prompt(name).filter(|p| shown(filter, Listed::Prompt(&p.name), &context));
        let Some(prompt) = prompt else { return Err(unknown_prompt(name)) };
        let arguments = params.remove("arguments").unwrap_or_else(|| Value::Object(Map::new()));
        let round = self.round(&context, || Binding::prompt(&prompt.name, &arguments));
        let input = match &round {
            Some(round) => round.read_retry(&mut params)?,
            None => None,
        };
        drop(params);
        // An argument the prompt does not declare is refused without naming it: a prompt error's body
        // carries the prompt's name and nothing else the caller wrote.
        let declared = prompt.schema.declared_keys();
        let undeclared = arguments.as_object().map_or(0, |sent| {
            sent.keys().filter(|key| !declared.iter().any(|d| d.as_ref() == key.as_str())).count()
        });
        let check = match undeclared {
            0 => prompt
                .schema
                .validate(&arguments)
                .map_err(|violation| format!("invalid arguments: {violation}")),
            1 => Err("invalid arguments: one argument is not one the prompt declares".to_owned()),
            n => Err(format!("invalid arguments: {n} arguments are not ones the prompt declares")),
        };
        if let Err(reason) = check {
            let data = PromptErrorData {
                name: prompt.name.to_string(),
                reason: Some(Value::String(reason.clone())),
            };
            return Err(ErrorObject::prompt_error(&reason, data));
        }
        let Value::Object(arguments) = arguments else { return Err(ErrorObject::internal()) };
        let reader = match (&prompt.reader, &self.inner.injected.prompts) {
            (Some(reader), _) | (None, Some(reader)) => reader,
            (None, None) => return Err(ErrorObject::internal()),
        };
        let bridged = bridge(&context, client.as_ref());
        let mut context = context;
        context.retry = input.map(std::sync::Arc::new);
        let get = GetPrompt {
            name: prompt.name.clone(),
            arguments: Arguments::select(prompt.schema.declared_keys(), arguments),
            context,
        };
        let span = tracing::info_span!("mcp.get_prompt", server = %self.inner.options.server_name(), prompt = %prompt.name);
        let outcome = match bridged {
            None => guarded(|| reader.get(get)).instrument(span).await,
            // A legacy client asked through its channel: the renderer runs again with its answers.
            Some(bridge) => {
                let attempt = |retry| {
                    let mut get = get.clone();
                    get.context.retry = retry;
                    guarded(move || reader.get(get)).instrument(span.clone())
                };
                bridge.run(attempt).await.map_err(|stopped| stopped.error)?
            }
        };
        match outcome {
            Err(_) => {
                tracing::error!("prompt reader panicked; answered -32603");
                Err(ErrorObject::internal())
            }
            // A `NoCaller`: answered exactly as a prompt that is not listed.
            Ok(Err(refusal)) if refusal.answers_as_unlisted() => Err(unknown_prompt(&prompt.name)),
            Ok(Err(refusal)) => match refusal.into_input_required() {
                Ok(required) => input_required(round.as_ref(), required),
                Err(refusal) => {
                    let reason = Some(refusal.reason().clone());
                    let data = PromptErrorData { name: prompt.name.to_string(), reason };
                    Err(ErrorObject::prompt_error("prompt cannot be rendered", data))
                }
            },
            Ok(Ok(output)) => encoded(&GetPromptResult {
                result_type: None,
                description: output.description,
                messages: output.messages,
                meta: None,
            }),
        }
    }
}
