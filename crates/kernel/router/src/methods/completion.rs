//! `completion/complete`: routed here only when the host gave a completer (otherwise -32601).
//!
//! The params are checked first (`ref`, `argument`, `context`), then the reference is looked up in the
//! catalog: a listed prompt and one of its declared arguments, or a listed uri template and one of its
//! variables. Only then does the completer run. Error messages never repeat what the caller sent.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tracing::Instrument;

use mcp_kernel_wire::ErrorObject;

use crate::catalog::visibility::{Listed, shown};
use crate::contract::{Completion, CompletionArgument, CompletionRef, CompletionRequest};
use crate::methods::owned_params;
use crate::request::guard::guarded;
use crate::server::{Answer, Request, Server};

/// The most values one result may carry (`CompleteResult.completion.values`, `maxItems`).
pub(crate) const MAX_VALUES: usize = 100;

const BAD_REF: &str =
    "completion/complete requires ref: {type: \"ref/prompt\", name} or {type: \"ref/resource\", uri}";
const BAD_ARGUMENT: &str = "completion/complete requires argument: {name, value}, both strings";
const BAD_CONTEXT: &str =
    "completion/complete context must be an object whose arguments map names to strings";
const UNKNOWN_PROMPT: &str = "completion/complete ref names no listed prompt";
const UNKNOWN_TEMPLATE: &str = "completion/complete ref names no listed resource template";
const UNKNOWN_ARGUMENT: &str =
    "completion/complete argument is not declared by the prompt or a variable of the template";

/// The caller's `ref`, before it is looked up.
enum WireRef {
    Prompt(String),
    Template(String),
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.remove(key) {
        Some(Value::String(text)) => Some(text),
        _ => None,
    }
}

fn parse_ref(value: Option<Value>) -> Result<WireRef, ErrorObject> {
    let Some(Value::Object(mut reference)) = value else {
        return Err(ErrorObject::invalid_params(BAD_REF));
    };
    let is_prompt = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => true,
        Some("ref/resource") => false,
        _ => return Err(ErrorObject::invalid_params(BAD_REF)),
    };
    let parsed = if is_prompt {
        take_string(&mut reference, "name").map(WireRef::Prompt)
    } else {
        take_string(&mut reference, "uri").map(WireRef::Template)
    };
    parsed.ok_or_else(|| ErrorObject::invalid_params(BAD_REF))
}

fn parse_argument(value: Option<Value>) -> Result<(String, String), ErrorObject> {
    let Some(Value::Object(mut argument)) = value else {
        return Err(ErrorObject::invalid_params(BAD_ARGUMENT));
    };
    match (take_string(&mut argument, "name"), take_string(&mut argument, "value")) {
        (Some(name), Some(value)) => Ok((name, value)),
        _ => Err(ErrorObject::invalid_params(BAD_ARGUMENT)),
    }
}

/// `context.arguments`: absent is empty; every value must be a string.
fn parse_context(value: Option<Value>) -> Result<Map<String, Value>, ErrorObject> {
    let arguments = match value {
        None => return Ok(Map::new()),
        Some(Value::Object(mut context)) => context.remove("arguments"),
        Some(_) => return Err(ErrorObject::invalid_params(BAD_CONTEXT)),
    };
    match arguments {
        None => Ok(Map::new()),
        Some(Value::Object(map)) if map.values().all(Value::is_string) => Ok(map),
        Some(_) => Err(ErrorObject::invalid_params(BAD_CONTEXT)),
    }
}

/// The declared names the caller resolved; undeclared keys are dropped unread.
fn select(declared: &[Arc<str>], mut supplied: Map<String, Value>) -> BTreeMap<String, String> {
    declared
        .iter()
        .filter_map(|key| match supplied.remove(key.as_ref()) {
            Some(Value::String(value)) => Some((key.to_string(), value)),
            _ => None,
        })
        .collect()
}

/// The `CompleteResult` body: at most [`MAX_VALUES`] values; a longer answer is cut, with
/// `hasMore: true`. A `total` is never below the count the completer returned (a completer's smaller
/// figure is raised to it), and a cut answer always carries one.
pub(crate) fn complete_result(completion: Completion) -> Value {
    let Completion { mut values, mut total, mut has_more } = completion;
    let full = u64::try_from(values.len()).unwrap_or(u64::MAX);
    total = total.map(|t| t.max(full));
    if values.len() > MAX_VALUES {
        total = Some(total.unwrap_or(full));
        has_more = Some(true);
        values.truncate(MAX_VALUES);
    }
    let mut body = Map::with_capacity(3);
    body.insert("values".into(), Value::Array(values.into_iter().map(Value::String).collect()));
    if let Some(total) = total {
        body.insert("total".into(), Value::from(total));
    }
    if let Some(has_more) = has_more {
        body.insert("hasMore".into(), Value::Bool(has_more));
    }
    // Room for the modern decoration (`resultType`, `_meta`); not cacheable, so no cache hints. A map,
    // not a typed `CompleteResult`: serializing that copies every value string (5% more work per
    // request with 6 values, 26% with 100), where this moves them.
    let mut result = Map::with_capacity(3);
    result.insert("completion".into(), Value::Object(body));
    Value::Object(result)
}

impl Server {
    pub(crate) async fn complete(&self, request: Request<'_>) -> Answer {
        let Request { params, context, .. } = request;
        let mut params = owned_params(params);
        let wire_ref = parse_ref(params.remove("ref"))?;
        let (name, value) = parse_argument(params.remove("argument"))?;
        let supplied = parse_context(params.remove("context"))?;
        drop(params);
        let snapshot = &self.inner.snapshot;
        let filter = self.inner.injected.visibility.as_deref();
        let (reference, declared) = match wire_ref {
            WireRef::Prompt(name) => {
                let prompt =
                    snapshot.prompt(&name).filter(|p| shown(filter, Listed::Prompt(&p.name), &context));
                let prompt = prompt.ok_or_else(|| ErrorObject::invalid_params(UNKNOWN_PROMPT))?;
                (CompletionRef::Prompt { name: prompt.name.clone() }, prompt.schema.declared_keys())
            }
            WireRef::Template(uri) => {
                let template = snapshot
                    .template(&uri)
                    .filter(|t| shown(filter, Listed::Template(&t.uri_template), &context));
                let template = template.ok_or_else(|| ErrorObject::invalid_params(UNKNOWN_TEMPLATE))?;
                let reference = CompletionRef::ResourceTemplate { uri: template.uri_template.to_string() };
                (reference, template.matcher.variables())
            }
        };
        let Some(declared_name) = declared.iter().find(|key| key.as_ref() == name) else {
            return Err(ErrorObject::invalid_params(UNKNOWN_ARGUMENT));
        };
        let Some(completer) = self.inner.injected.completer.as_ref() else {
            return Err(ErrorObject::method_not_found());
        };
        let request = CompletionRequest {
            argument: CompletionArgument { name: Arc::clone(declared_name), value },
            context_arguments: select(declared, supplied),
            reference,
            context,
        };
        let span = tracing::info_span!("mcp.complete", server = %self.inner.options.server_name());
        match guarded(|| completer.complete(request)).instrument(span).await {
            Err(_) => {
                tracing::error!("completer panicked; answered -32603");
                Err(ErrorObject::internal())
            }
            Ok(Err(refusal)) if refusal.as_input_required().is_some() => {
                // completion/complete may never answer input_required (MCP S-48).
                tracing::error!(
                    "the completer asked for client input, which completion/complete cannot carry; answered -32603"
                );
                Err(ErrorObject::internal())
            }
            Ok(Err(refusal)) => Err(ErrorObject::invalid_params("the completer refused the request")
                .with_data(json!({"reason": refusal.reason()}))),
            Ok(Ok(completion)) => Ok(complete_result(completion)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("v{i}")).collect()
    }

    #[test]
    fn more_than_100_values_are_cut_with_has_more_and_the_full_total() {
        let result = complete_result(Completion::new(values(150)));
        assert_eq!(result["completion"]["values"].as_array().map(Vec::len), Some(100));
        assert_eq!(result["completion"]["total"], json!(150));
        assert_eq!(result["completion"]["hasMore"], json!(true));
    }

    #[test]
    fn a_cut_answer_keeps_a_larger_completer_total_and_never_a_smaller_one() {
        let larger = Completion { values: values(101), total: Some(5000), has_more: Some(false) };
        assert_eq!(complete_result(larger)["completion"]["total"], json!(5000));
        let smaller = Completion { values: values(101), total: Some(3), has_more: None };
        assert_eq!(complete_result(smaller)["completion"]["total"], json!(101));
    }

    #[test]
    fn a_total_below_the_values_sent_is_raised_to_their_count() {
        let understated = Completion { values: values(3), total: Some(1), has_more: None };
        assert_eq!(
            complete_result(understated),
            json!({"completion": {"values": ["v0", "v1", "v2"], "total": 3}})
        );
    }

    #[test]
    fn at_most_100_values_pass_through_unchanged() {
        let exact = complete_result(Completion::new(values(100)));
        assert_eq!(exact["completion"].as_object().map(Map::len), Some(1));
        let hinted = Completion { values: values(2), total: Some(9), has_more: Some(true) };
        assert_eq!(
            complete_result(hinted),
            json!({"completion": {"values": ["v0", "v1"], "total": 9, "hasMore": true}})
        );
    }
}
