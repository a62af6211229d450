//! The catalog a host declares: tools, resources (and templates) and prompts.
//!
//! These are plain descriptions. Everything the compiler cannot check about them (repeated names, a
//! template with an expression this package does not claim, a schema the validator cannot enforce) is
//! checked once, when the server is built (see [`crate::ServerBuilder::build`]).

use serde_json::Value;

use mcp_kernel_wire::types::{Annotations, Icon};

/// What a tool does to the world, as the host declares it; it derives the tool's annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// The tool only reads: `readOnlyHint: true`, `idempotentHint: true`, `destructiveHint: false`.
    ReadOnly,
    /// The tool proposes or performs a change: `readOnlyHint: false`, `destructiveHint: true`.
    Proposal,
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
    pub(crate) icons: Vec<Icon>,
    pub(crate) required_client_capabilities: Option<Value>,
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
            icons: Vec::new(),
            required_client_capabilities: None,
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

    /// Icons advertised with the tool.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = icons;
        self
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

    /// The host's classification, if any.
    pub fn class(&self) -> Option<&str> {
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
}

/// What a catalog offers: three required lists, any of which may be empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Capabilities {
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
    fn capabilities(&self) -> Capabilities;
}

impl Catalog for Capabilities {
    fn capabilities(&self) -> Capabilities {
        self.clone()
    }
}
