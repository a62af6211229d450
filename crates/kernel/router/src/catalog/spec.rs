//! The catalog a host declares: tools, resources (and templates) and prompts.
//!
//! These are plain descriptions. Everything the compiler cannot check about them (repeated names, a
//! template with an expression this package does not claim, a schema the validator cannot enforce) is
//! checked once, when the server is built (see [`crate::ServerBuilder::build`]).

use serde_json::{Map, Value};

use mcp_kernel_wire::types::{Annotations, Icon, ToolAnnotations};

/// What a tool does to the world, as the host declares it; it derives the tool's annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// The tool only reads: `readOnlyHint: true`, `idempotentHint: true`, `destructiveHint: false`.
    ReadOnly,
    /// The tool proposes or performs a change: `readOnlyHint: false`, `destructiveHint: true`.
    Proposal,
}

/// Whether a call of a tool may become a task (the tasks extension, `2026-07-28`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskMode {
    /// Never: every call is answered as it finishes.
    #[default]
    Never,
    /// The kernel decides per call: one that has not finished within the threshold
    /// ([`Tasks::threshold`](crate::tasks::Tasks::threshold)) becomes a task, for a client that
    /// declared the extension.
    Optional,
    /// Every call becomes a task; a client that did not declare the extension is refused -32021.
    Required,
}

/// One tool the host offers.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub(crate) name: String,
    pub(crate) mode: Mode,
    pub(crate) command_class: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) input_schema: Option<Value>,
    pub(crate) output_schema: Option<Value>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) required_client_capabilities: Option<Value>,
    pub(crate) task_mode: TaskMode,
    /// Field-by-field overrides of what `mode` derives.
    pub(crate) hints: ToolAnnotations,
    pub(crate) meta: Option<Map<String, Value>>,
}

impl ToolSpec {
    /// A tool named `name` with the given mode, no description and the open empty input schema.
    pub fn new(name: impl Into<String>, mode: Mode) -> Self {
        Self {
            name: name.into(),
            mode,
            command_class: None,
            title: None,
            description: None,
            input_schema: None,
            output_schema: None,
            icons: Vec::new(),
            required_client_capabilities: None,
            task_mode: TaskMode::Never,
            hints: ToolAnnotations::default(),
            meta: None,
        }
    }

    /// The host's own classification of the tool; carried, never interpreted by this package.
    pub fn command_class(mut self, class: impl Into<String>) -> Self {
        self.command_class = Some(class.into());
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The description advertised in `tools/list`.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The JSON Schema (draft 2020-12) advertised by `tools/list` and enforced by `tools/call`.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// The JSON Schema (draft 2020-12, `"type": "object"` at its root) of the tool's
    /// `structuredContent`: advertised by `tools/list`, and every result the tool returns is checked
    /// against it before it is sent (a result that breaks it, or has no structured content, is a host
    /// fault answered -32603).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Icons advertised with the tool.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = icons;
        self
    }

    /// `annotations.title`: a display name for the tool's annotations (the tool's own `title` wins
    /// where both are shown).
    pub fn annotations_title(mut self, title: impl Into<String>) -> Self {
        self.hints.title = Some(title.into());
        self
    }

    /// Overrides `readOnlyHint` (derived from the mode otherwise).
    pub fn read_only_hint(mut self, hint: bool) -> Self {
        self.hints.read_only_hint = Some(hint);
        self
    }

    /// Overrides `destructiveHint` (derived from the mode otherwise).
    pub fn destructive_hint(mut self, hint: bool) -> Self {
        self.hints.destructive_hint = Some(hint);
        self
    }

    /// Overrides `idempotentHint` (derived from the mode otherwise).
    pub fn idempotent_hint(mut self, hint: bool) -> Self {
        self.hints.idempotent_hint = Some(hint);
        self
    }

    /// Overrides `openWorldHint` (`false` otherwise: the tool reaches only what the host owns).
    pub fn open_world_hint(mut self, hint: bool) -> Self {
        self.hints.open_world_hint = Some(hint);
        self
    }

    /// Whether a call of this tool may become a task (the tasks extension; default
    /// [`TaskMode::Never`]). Takes effect on a server built with
    /// [`ServerBuilder::tasks`](crate::ServerBuilder::tasks).
    pub fn task_mode(mut self, mode: TaskMode) -> Self {
        self.task_mode = mode;
        self
    }

    /// The tool's `_meta` object, advertised verbatim in `tools/list`.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The annotations `tools/list` advertises: the mode's hints, then each override.
    pub fn annotations(&self) -> ToolAnnotations {
        let read_only = self.mode == Mode::ReadOnly;
        let hints = &self.hints;
        ToolAnnotations {
            title: hints.title.clone(),
            read_only_hint: Some(hints.read_only_hint.unwrap_or(read_only)),
            destructive_hint: Some(hints.destructive_hint.unwrap_or(!read_only)),
            idempotent_hint: Some(hints.idempotent_hint.unwrap_or(read_only)),
            open_world_hint: Some(hints.open_world_hint.unwrap_or(false)),
        }
    }

    /// The input schema as given (`None`: the open empty object schema).
    pub fn get_input_schema(&self) -> Option<&Value> {
        self.input_schema.as_ref()
    }

    /// The output schema as given.
    pub fn get_output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// Client capabilities (a `ClientCapabilities` object) a call needs; a request that does not
    /// declare them is refused with -32021 before dispatch.
    pub fn requires_client_capabilities(mut self, capabilities: Value) -> Self {
        self.required_client_capabilities = Some(capabilities);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The host's classification, if any (set by [`ToolSpec::command_class`]).
    pub fn get_command_class(&self) -> Option<&str> {
        self.command_class.as_deref()
    }
}

/// One concrete resource the host offers.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceSpec {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) size: Option<u64>,
    pub(crate) annotations: Option<Annotations>,
    pub(crate) icons: Vec<Icon>,
}

/// Optional descriptive fields shared by resources and templates.
macro_rules! descriptive_setters {
    ($t:ty) => {
        impl $t {
            /// A human-readable title.
            pub fn title(mut self, title: impl Into<String>) -> Self {
                self.title = Some(title.into());
                self
            }

            /// A description.
            pub fn description(mut self, description: impl Into<String>) -> Self {
                self.description = Some(description.into());
                self
            }

            /// The MIME type of what a read returns.
            pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
                self.mime_type = Some(mime_type.into());
                self
            }

            /// Audience, priority and last-modified hints.
            pub fn annotations(mut self, annotations: Annotations) -> Self {
                self.annotations = Some(annotations);
                self
            }

            /// Icons.
            pub fn icons(mut self, icons: Vec<Icon>) -> Self {
                self.icons = icons;
                self
            }
        }
    };
}

descriptive_setters!(ResourceSpec);
descriptive_setters!(ResourceTemplateSpec);

impl ResourceSpec {
    /// A resource at `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: Vec::new(),
        }
    }

    /// The size in bytes of the raw content.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// The resource's uri.
    pub fn uri(&self) -> &str {
        &self.uri
    }
}

/// A family of resources named by an RFC 6570 template (only `{var}` and `{+var}` are claimed).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceTemplateSpec {
    pub(crate) uri_template: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) annotations: Option<Annotations>,
    pub(crate) icons: Vec<Icon>,
}

impl ResourceTemplateSpec {
    /// A template such as `weather://place/{name}`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: Vec::new(),
        }
    }

    /// The template text.
    pub fn uri_template(&self) -> &str {
        &self.uri_template
    }
}

/// A resource or a template: the catalog's `resources` list holds both kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceEntry {
    /// A concrete resource.
    Resource(ResourceSpec),
    /// A uri template.
    Template(ResourceTemplateSpec),
}

impl From<ResourceSpec> for ResourceEntry {
    fn from(spec: ResourceSpec) -> Self {
        ResourceEntry::Resource(spec)
    }
}

impl From<ResourceTemplateSpec> for ResourceEntry {
    fn from(spec: ResourceTemplateSpec) -> Self {
        ResourceEntry::Template(spec)
    }
}

/// One argument a prompt takes (always a string on the wire).
#[derive(Debug, Clone, PartialEq)]
pub struct PromptArgument {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
}

impl PromptArgument {
    /// An optional argument named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), title: None, description: None, required: false }
    }

    /// Marks the argument required.
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// A description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// One prompt the host offers.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptSpec {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) arguments: Vec<PromptArgument>,
}

impl PromptSpec {
    /// A prompt named `name` with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), title: None, description: None, icons: Vec::new(), arguments: Vec::new() }
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// A description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = icons;
        self
    }

    /// Adds an argument.
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same prompt with exactly `arguments`.
    #[cfg(feature = "schemars")]
    pub(crate) fn replace_arguments(mut self, arguments: Vec<PromptArgument>) -> Self {
        self.arguments = arguments;
        self
    }
}

/// What a catalog lists: its tools, resources (and templates) and prompts, any of which may be empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    /// Tools, in the order `tools/list` advertises them.
    pub tools: Vec<ToolSpec>,
    /// Resources and uri templates, in one list.
    pub resources: Vec<ResourceEntry>,
    /// Prompts.
    pub prompts: Vec<PromptSpec>,
}

/// The host's catalog: what it offers. It is read once, when the server is built.
pub trait Catalog {
    /// The tools, resources and prompts on offer.
    fn listing(&self) -> Listing;
}

impl Catalog for Listing {
    fn listing(&self) -> Listing {
        self.clone()
    }
}

impl Listing {
    /// An empty listing: a host whose tools, resources and prompts are all registered typed
    /// ([`crate::Tools`], [`crate::resources::Resources`], [`crate::prompts::Prompts`]) starts from it.
    pub fn new() -> Self {
        Self::default()
    }
}
