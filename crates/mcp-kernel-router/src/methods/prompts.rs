//! `prompts/list` and `prompts/get`.

use serde_json::{Map, Value};
use tracing::Instrument;

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::error::PromptErrorData;

use crate::arguments::Arguments;
use crate::cursor::{CursorKind, page};
use crate::guard::guarded;
use crate::host::GetPrompt;
use crate::methods::round_trip::input_required;
use crate::methods::{cursor_position, owned_params};
use crate::server::{Answer, Request, Server, cache_fields};
use crate::state::Binding;

impl Server {
    pub(crate) fn list_prompts(&self, params: Option<&Value>) -> Answer {
        let after = cursor_position(params, CursorKind::Prompts)?;
        let sorted = &self.inner.snapshot.prompts;
        let size = self.inner.options.page_size();
        let (items, next) = page(sorted, |p| &p.name, CursorKind::Prompts, after.as_deref(), size);
        let mut result = Map::with_capacity(7);
        result.insert("prompts".into(), Value::Array(items.iter().map(|p| p.item.clone()).collect()));
        if let Some(next) = next {
            result.insert("nextCursor".into(), Value::String(next));
        }
        cache_fields(&mut result, self.inner.options.prompts_cache);
        Ok(Value::Object(result))
    }

    pub(crate) async fn get_prompt(&self, request: Request<'_>) -> Answer {
        let Request { params, context, .. } = request;
        let mut params = owned_params(params);
        let Some(Value::String(name)) = params.get("name") else {
            return Err(ErrorObject::invalid_params("prompts/get requires a string name"));
        };
        let Some(prompt) = self.inner.snapshot.prompt(name) else {
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
        if let Err(violation) = prompt.schema.validate(&arguments) {
            let reason = format!("invalid arguments: {violation}");
            let data = PromptErrorData {
                name: prompt.name.to_string(),
                reason: Some(Value::String(reason.clone())),
            };
            return Err(ErrorObject::prompt_error(&reason, data));
        }
        let Value::Object(arguments) = arguments else { return Err(ErrorObject::internal()) };
        let Some(reader) = self.inner.parts.prompts.as_ref() else { return Err(ErrorObject::internal()) };
        let get = GetPrompt {
            name: prompt.name.clone(),
            arguments: Arguments::select(prompt.schema.declared_keys(), arguments),
            context,
            input,
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
            Ok(Ok(output)) => {
                let mut result = Map::with_capacity(6);
                if let Some(description) = output.description {
                    result.insert("description".into(), Value::String(description));
                }
                let messages = serde_json::to_value(&output.messages).map_err(|_| ErrorObject::internal())?;
                result.insert("messages".into(), messages);
                Ok(Value::Object(result))
            }
        }
    }
}
