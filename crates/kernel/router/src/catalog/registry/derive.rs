//! Schemas derived from the handler's types (feature `schemars`).
//!
//! The derived schema is a plain JSON value: it is compiled and refused exactly as a hand-written one
//! would be (when the server is built) and advertised verbatim. schemars writes draft 2020-12, with a
//! `$schema` and a `title`, and local `$defs` for nested types, all of which the validator enforces.
//!
//! `Option<T>` fields: schemars leaves them out of `required` and admits `null` for them
//! (`"type": ["string", "null"]`), and serde reads both an absent field and `null` as `None`, so the
//! schema advertised and the handler agree: the caller may omit the argument or send `null`.

use std::future::Future;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::catalog::compile::BuildError;
use crate::catalog::registry::tools::{IntoToolOutput, Json, Tools};
use crate::catalog::spec::{PromptArgument, PromptSpec, ToolSpec};
use crate::contract::{RequestContext, ToolError};

/// Which side of serde a derived schema describes.
#[derive(Clone, Copy)]
pub(crate) enum Contract {
    /// What the handler reads (arguments): a field with a default is optional.
    Reads,
    /// What the handler writes (results): a field serde may skip (`skip_serializing_if`) is optional,
    /// one it always skips is absent, so every value the type serializes to passes the schema.
    Writes,
}

/// The draft 2020-12 schema of `T`, as schemars serializes it (its keyword order: `$schema`, `title`,
/// `description`, then the rest; `Schema::to_value` would keep the order the keywords were inserted).
pub(crate) fn schema_of<T: JsonSchema>(contract: Contract) -> Value {
    let settings = SchemaSettings::draft2020_12();
    let settings = match contract {
        Contract::Reads => settings.for_deserialize(),
        Contract::Writes => settings.for_serialize(),
    };
    let schema = settings.into_generator().into_root_schema_for::<T>();
    serde_json::to_value(&schema).unwrap_or_else(|_| schema.to_value())
}

/// A derived input schema's fault: a type that reads keys its schema does not declare (a map, or a
/// `#[serde(flatten)]` map) would never receive them, since a handler is given the declared keys only.
pub(crate) fn input_fault(schema: &Value) -> Option<String> {
    match schema.get("additionalProperties") {
        None | Some(Value::Bool(false)) => None,
        Some(_) => Some(
            "the input type reads keys its schema does not declare (a map or a #[serde(flatten)] map); \
             a typed handler receives the declared properties only"
                .to_owned(),
        ),
    }
}

// The module is already behind `schemars`; the `#[cfg]` on each method repeats it so that the docs of a
// crate re-exporting `Tools` (the facade) show the feature too: a `cfg_attr(docsrs, …)` is expanded when
// this crate is compiled, without `docsrs`, and only the `#[cfg]` reaches them.
impl Tools {
    /// A tool whose input schema is derived from `In` (what serde reads) and whose output schema from
    /// `Out` (what serde writes): the handler's success is sent as `structuredContent` and checked
    /// against the derived schema. Schemas the spec already set are replaced. An `In` that reads keys
    /// its schema does not declare (a map, a `#[serde(flatten)]` map) is a [`BuildError::InvalidTool`]
    /// when the server is built: a typed handler receives the declared properties only.
    #[cfg(feature = "schemars")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
    pub fn add_derived<In, Out, F, Fut>(self, spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(In, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        In: DeserializeOwned + JsonSchema + 'static,
        Out: Serialize + JsonSchema + Send + 'static,
    {
        self.add_derived_linked(spec, handler, std::any::type_name::<F>())
    }

    /// [`Tools::add_derived`], recording `handler_type` as the function that serves the tool.
    #[cfg(feature = "schemars")]
    pub(crate) fn add_derived_linked<In, Out, F, Fut>(
        self,
        spec: ToolSpec,
        handler: F,
        handler_type: &'static str,
    ) -> Self
    where
        F: Fn(In, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        In: DeserializeOwned + JsonSchema + 'static,
        Out: Serialize + JsonSchema + Send + 'static,
    {
        let input = schema_of::<In>(Contract::Reads);
        if let Some(reason) = input_fault(&input) {
            return self.refuse(BuildError::InvalidTool { tool: spec.name().to_owned(), reason });
        }
        let spec = spec.input_schema(input).output_schema(schema_of::<Out>(Contract::Writes));
        // The handler's future made where the wrapper's is (no local moved into a block of its own).
        let wrapped =
            move |input: In, cx| futures_util::FutureExt::map(handler(input, cx), |out| out.map(Json));
        self.add_linked(spec, wrapped, handler_type)
    }

    /// A tool whose input schema is derived from `In`; its output is whatever the handler returns
    /// (text, content blocks). An output schema the spec set by hand stays, and is enforced.
    #[cfg(feature = "schemars")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
    pub fn add_derived_input<In, Out, F, Fut>(self, spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(In, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        In: DeserializeOwned + JsonSchema + 'static,
        Out: IntoToolOutput + 'static,
    {
        self.add_derived_input_linked(spec, handler, std::any::type_name::<F>())
    }

    /// [`Tools::add_derived_input`], recording `handler_type` as the function that serves the tool.
    #[cfg(feature = "schemars")]
    pub(crate) fn add_derived_input_linked<In, Out, F, Fut>(
        self,
        spec: ToolSpec,
        handler: F,
        handler_type: &'static str,
    ) -> Self
    where
        F: Fn(In, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        In: DeserializeOwned + JsonSchema + 'static,
        Out: IntoToolOutput + 'static,
    {
        let input = schema_of::<In>(Contract::Reads);
        if let Some(reason) = input_fault(&input) {
            return self.refuse(BuildError::InvalidTool { tool: spec.name().to_owned(), reason });
        }
        self.add_linked(spec.input_schema(input), handler, handler_type)
    }
}

/// The prompt arguments `A`'s schema declares: each property a string (or an optional one), in the
/// schema's order, required as the schema says. A property of another type is refused by name.
pub(crate) fn prompt_arguments_of<A: JsonSchema>() -> Result<Vec<PromptArgument>, String> {
    let schema = schema_of::<A>(Contract::Reads);
    if input_fault(&schema).is_some() {
        return Err(
            "the arguments type reads keys it does not declare (a map or a #[serde(flatten)] map)".to_owned()
        );
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return match schema.get("type").and_then(Value::as_str) {
            Some("object") => Ok(Vec::new()),
            _ => Err("prompt arguments must be derived from a struct with named fields".to_owned()),
        };
    };
    properties
        .iter()
        .map(|(name, property)| {
            if !is_string_schema(property) {
                return Err(format!(
                    "prompt argument {name} must be a string (prompt arguments are strings)"
                ));
            }
            let rules = property.as_object().into_iter().flat_map(|p| p.keys());
            if let Some(rule) = rules.into_iter().find(|k| !ANNOTATIONS.contains(&k.as_str())) {
                return Err(format!(
                    "prompt argument {name} carries the rule {rule}, which a prompt's arguments cannot advertise \
                     (they are names, descriptions and required flags); check it in the renderer"
                ));
            }
            let mut argument = PromptArgument::new(name.clone()).required(required.contains(&name.as_str()));
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                argument = argument.description(description);
            }
            if let Some(title) = property.get("title").and_then(Value::as_str) {
                argument = argument.title(title);
            }
            Ok(argument)
        })
        .collect()
}

/// The keywords a derived prompt argument may carry: its type and annotations. Anything else (`enum`,
/// `pattern`, `minLength`, …) is a rule the prompt would enforce without advertising it.
const ANNOTATIONS: [&str; 9] =
    ["type", "description", "title", "default", "examples", "deprecated", "format", "$comment", "readOnly"];

/// `"type": "string"` or `"type": ["string", "null"]`.
fn is_string_schema(property: &Value) -> bool {
    match property.get("type") {
        Some(Value::String(kind)) => kind == "string",
        Some(Value::Array(kinds)) => {
            kinds.iter().any(|k| k == "string") && kinds.iter().all(|k| k == "string" || k == "null")
        }
        _ => false,
    }
}

/// The spec with `A`'s arguments in place of any it declared.
pub(crate) fn with_derived_arguments<A: JsonSchema>(
    spec: PromptSpec,
) -> Result<PromptSpec, (String, String)> {
    let name = spec.name().to_owned();
    let arguments = prompt_arguments_of::<A>().map_err(|reason| (name, reason))?;
    Ok(spec.replace_arguments(arguments))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Summarize {
        /// What to summarize.
        topic: String,
        style: Option<String>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct NotStrings {
        count: u32,
    }

    #[test]
    fn prompt_arguments_follow_the_struct() {
        let arguments = prompt_arguments_of::<Summarize>().unwrap();
        let names: Vec<(&str, bool)> = arguments.iter().map(|a| (a.name.as_str(), a.required)).collect();
        assert_eq!(names, [("topic", true), ("style", false)]);
        assert_eq!(arguments[0].description.as_deref(), Some("What to summarize."));
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Ruled {
        #[schemars(length(max = 3))]
        short: String,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Flattened {
        topic: String,
        #[serde(flatten)]
        rest: std::collections::HashMap<String, String>,
    }

    #[test]
    fn a_prompt_argument_with_a_rule_it_cannot_advertise_is_refused_by_name() {
        let reason = prompt_arguments_of::<Ruled>().unwrap_err();
        assert!(reason.contains("short") && reason.contains("maxLength"), "{reason}");
        let reason = prompt_arguments_of::<Flattened>().unwrap_err();
        assert!(reason.contains("does not declare"), "{reason}");
    }

    #[test]
    fn a_prompt_argument_that_is_not_a_string_is_refused_by_name() {
        let reason = prompt_arguments_of::<NotStrings>().unwrap_err();
        assert!(reason.contains("count"), "{reason}");
    }
}
