//! What a build refuses, and the compile steps that find it: the error type every build step returns,
//! the revision-list check, and the schema compilation of tools and prompts. Used by the builder, the
//! snapshot and the typed registries alike, so it depends on none of them.

use std::collections::{HashMap, HashSet};

use mcp_kernel_schema::{CompiledSchema, PromptArg, SchemaError};
use mcp_kernel_wire::ProtocolVersion;

/// A fault in the catalog or the options, found when the server is built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The catalog's `listing()` panicked.
    #[error("the catalog's listing() panicked")]
    CatalogPanicked,
    /// Two tools share a name.
    #[error("tool {0}: the name is listed twice")]
    DuplicateTool(String),
    /// Two resources share a uri.
    #[error("resource {0}: the uri is listed twice")]
    DuplicateResource(String),
    /// Two templates share a uri template.
    #[error("resource template {0}: the template is listed twice")]
    DuplicateTemplate(String),
    /// Two prompts share a name.
    #[error("prompt {0}: the name is listed twice")]
    DuplicatePrompt(String),
    /// A prompt lists an argument name twice.
    #[error("prompt {prompt}: the argument {argument} is listed twice")]
    DuplicatePromptArgument {
        /// The prompt.
        prompt: String,
        /// The repeated argument.
        argument: String,
    },
    /// A template uses an expression this package does not claim, or a bare brace.
    #[error("resource template {template}: {reason}")]
    InvalidTemplate {
        /// The template.
        template: String,
        /// Why.
        reason: String,
    },
    /// A tool's input schema cannot be enforced.
    #[error("tool {tool}: input {error}")]
    ToolSchema {
        /// The tool.
        tool: String,
        /// Why.
        error: SchemaError,
    },
    /// A tool's input schema does not declare `"type": "object"` at its root, as MCP requires.
    #[error("tool {0}: the input schema's root must declare \"type\": \"object\"")]
    ToolSchemaNotObject(String),
    /// A tool's output schema cannot be enforced.
    #[error("tool {tool}: output {error}")]
    OutputSchema {
        /// The tool.
        tool: String,
        /// Why.
        error: SchemaError,
    },
    /// A tool's output schema does not declare `"type": "object"` at its root.
    #[error("tool {0}: the output schema's root must declare \"type\": \"object\"")]
    OutputSchemaNotObject(String),
    /// A tool's `_meta` is not what MCP allows, or a typed tool's input type reads keys its derived
    /// schema does not declare.
    #[error("tool {tool}: {reason}")]
    InvalidTool {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// A typed prompt's derived arguments are not what MCP allows (a field that is not a string).
    #[error("prompt {prompt}: {reason}")]
    InvalidPrompt {
        /// The prompt.
        prompt: String,
        /// Why.
        reason: String,
    },
    /// A tool's required client capabilities are not a JSON object.
    #[error("tool {0}: required client capabilities must be a ClientCapabilities object")]
    InvalidRequiredCapabilities(String),
    /// A prompt's derived argument schema cannot be compiled (an argument name the validator refuses).
    #[error("prompt {prompt}: {error}")]
    PromptSchema {
        /// The prompt.
        prompt: String,
        /// Why.
        error: SchemaError,
    },
    /// A resource's or template's annotations are outside the schema (`priority` must lie in 0..=1).
    #[error("resource {0}: annotations.priority must lie between 0 and 1")]
    InvalidAnnotations(String),
    /// Tools are listed but no dispatch function was given.
    #[error("tools are listed but no dispatch function was given")]
    MissingDispatch,
    /// Resources or templates are listed but no resource reader was given.
    #[error("resources are listed but no resource reader was given")]
    MissingResourceReader,
    /// A resource source was given but no resource reader reads its uris.
    #[error(
        "a resource source was given but no resource reader reads its uris (ServerBuilder::resource_reader)"
    )]
    SourceWithoutReader,
    /// A tool runs only as a task (`TaskMode::Required`) on a server built without tasks: no call of
    /// it could ever be answered.
    #[error(
        "tool {0}: its task mode is Required but the server is built without tasks (ServerBuilder::tasks)"
    )]
    RequiredTaskWithoutTasks(String),
    /// Prompts are listed but no prompt reader was given.
    #[error("prompts are listed but no prompt reader was given")]
    MissingPromptReader,
    /// `supported_versions` is empty or repeats a revision.
    #[error("supported versions must be a non-empty list of distinct revisions")]
    InvalidSupportedVersions,
}

/// Refuses an empty or repeating list of revisions.
pub(crate) fn check_versions(versions: &[ProtocolVersion]) -> Result<(), BuildError> {
    let distinct: HashSet<_> = versions.iter().collect();
    if versions.is_empty() || distinct.len() != versions.len() {
        return Err(BuildError::InvalidSupportedVersions);
    }
    Ok(())
}

/// Compiles a tool's schema, naming the tool in any fault.
pub(crate) fn compile_tool_schema(
    tool: &str,
    schema: &serde_json::Value,
    defer_header_faults: bool,
) -> Result<CompiledSchema, BuildError> {
    if schema.get("type").and_then(serde_json::Value::as_str) != Some("object") {
        return Err(BuildError::ToolSchemaNotObject(tool.to_owned()));
    }
    let compiled = if defer_header_faults {
        mcp_kernel_schema::compile_deferring_header_faults(schema)
    } else {
        mcp_kernel_schema::compile(schema)
    };
    compiled.map_err(|error| BuildError::ToolSchema { tool: tool.to_owned(), error })
}

/// Compiles a tool's output schema, naming the tool in any fault; its root must be an object schema
/// (`2025-11-25` allows nothing else, and one catalog serves both revisions).
pub(crate) fn compile_output_schema(
    tool: &str,
    schema: &serde_json::Value,
) -> Result<CompiledSchema, BuildError> {
    if schema.get("type").and_then(serde_json::Value::as_str) != Some("object") {
        return Err(BuildError::OutputSchemaNotObject(tool.to_owned()));
    }
    mcp_kernel_schema::compile(schema)
        .map_err(|error| BuildError::OutputSchema { tool: tool.to_owned(), error })
}

/// Compiles a prompt's argument schema, refusing repeated argument names.
pub(crate) fn compile_prompt_schema(
    spec: &crate::catalog::spec::PromptSpec,
) -> Result<CompiledSchema, BuildError> {
    let mut seen = HashMap::new();
    for arg in &spec.arguments {
        if seen.insert(arg.name.as_str(), ()).is_some() {
            return Err(BuildError::DuplicatePromptArgument {
                prompt: spec.name.clone(),
                argument: arg.name.clone(),
            });
        }
    }
    let schema = mcp_kernel_schema::prompt_argument_schema(spec.arguments.iter().map(|a| PromptArg {
        name: &a.name,
        description: a.description.as_deref(),
        required: a.required,
    }));
    mcp_kernel_schema::compile(&schema)
        .map_err(|error| BuildError::PromptSchema { prompt: spec.name.clone(), error })
}
