//! `prompts/list` and `prompts/get`.

use serde_json::{Map, Value};
use tracing::Instrument;

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::error::PromptErrorData;
use mcp_kernel_wire::types::GetPromptResult;

use crate::arguments::Arguments;
use crate::cursor::{CursorKind, page, page_where};
use crate::guard::guarded;
use crate::host::{GetPrompt, RequestContext};
use crate::methods::round_trip::input_required;
use crate::methods::{cursor_position, encoded, owned_params};
use crate::server::{Answer, Request, Server, cache_fields};
use crate::snapshot::CompiledPrompt;
use crate::state::Binding;
use crate::visibility::{Listed, Sieve, shown};

impl Server {
    /// A map, not a typed `ListPromptsResult`: the items are encoded once, in the snapshot, and a typed
    /// result would decode and re-encode each of them per request (1.7 times the work).
    pub(crate) fn list_prompts(&self, params: Option<&Value>, context: &RequestContext) -> Answer {
        let after = cursor_position(params, CursorKind::Prompts)?;
        let sorted = &self.inner.snapshot.prompts;
        let size = self.inner.options.page_size();
        let kind = CursorKind::Prompts;
        let items: Vec<Value>;
        let next;
        match self.inner.parts.visibility.as_deref() {
            None => {
                let (page, after) = page(sorted, |p| &p.name, kind, after.as_deref(), size);
                (items, next) = (page.iter().map(|p| p.item.clone()).collect(), after);
            }
            Some(filter) => {
                let sieve = Sieve::new(Some(filter), context);
                let visible = |p: &CompiledPrompt| sieve.shows(Listed::Prompt(&p.name));
                let (page, after) = page_where(sorted, |p| &p.name, visible, kind, after.as_deref(), size);
                (items, next) = (page.into_iter().map(|p| p.item.clone()).collect(), after);
            }
        }
        let mut result = Map::with_capacity(7);
        result.insert("prompts".into(), Value::Array(items));
        if let Some(next) = next {
            result.insert("nextCursor".into(), Value::String(next));
        }
        cache_fields(&mut result, self.inner.options.prompts_cache);
        Ok(Value::Object(result))
    }

    /// `prompts/get`: only a listed prompt is rendered (`protocol.md` [F-5]), refused before any host
    /// renderer runs.
    ///
    /// [F-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub(crate) async fn get_prompt(&self, request: Request<'_>) -> Answer {
        let Request { params, context, .. } = request;
        let mut params = owned_params(params);
        let Some(Value::String(name)) = params.get("name") else {
            return Err(ErrorObject::invalid_params("prompts/get requires a string name"));
        };
        let filter = self.inner.parts.visibility.as_deref();
        let prompt =
            self.inner.snapshot.prompt(name).filter(|p| shown(filter, Listed::Prompt(&p.name), &context));
        let Some(prompt) = prompt else {
            let data = PromptErrorData { name: name.clone(), reason: None };
            return Err(ErrorObject::prompt_error("unknown prompt", data));
        };
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
        let reader = match (&prompt.reader, &self.inner.parts.prompts) {
            (Some(reader), _) | (None, Some(reader)) => reader,
            (None, None) => return Err(ErrorObject::internal()),
        };
        let mut context = context;
        context.retry = input.map(std::sync::Arc::new);
        let get = GetPrompt {
            name: prompt.name.clone(),
            arguments: Arguments::select(prompt.schema.declared_keys(), arguments),
            context,
        };
        let span = tracing::info_span!("mcp.get_prompt", server = %self.inner.options.server_name(), prompt = %prompt.name);
        match guarded(|| reader.get(get)).instrument(span).await {
            Err(_) => {
                tracing::error!("prompt reader panicked; answered -32603");
                Err(ErrorObject::internal())
            }
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
