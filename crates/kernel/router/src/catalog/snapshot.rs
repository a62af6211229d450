//! The compiled catalog: indexes by name and uri, sorted lists, compiled schemas and the list items
//! already encoded. Built once per server; never rebuilt or re-checked on a request.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use mcp_kernel_schema::CompiledSchema;
use mcp_kernel_wire::types::{
    Prompt, PromptArgument as WirePromptArgument, Resource, ResourceTemplate, Tool,
};

use crate::catalog::compile::{
    BuildError, compile_output_schema, compile_prompt_schema, compile_tool_schema,
};
use crate::catalog::spec::{
    Listing, PromptSpec, ResourceEntry, ResourceSpec, ResourceTemplateSpec, ToolSpec,
};
use crate::catalog::template::{TemplateMatch, UriTemplate};
use crate::catalog::template_index::TemplateIndex;
use crate::catalog::visibility::Listed;
use crate::contract::{Dispatch, PromptReader, ResourceReader};

/// The items a host registered with their own handlers (`Tools`, `Resources`, `Prompts`).
#[derive(Default)]
pub(crate) struct Registered {
    pub(crate) tools: Vec<crate::catalog::registry::tools::Registered>,
    pub(crate) resources: Vec<crate::catalog::registry::resources::Registered>,
    pub(crate) prompts: Vec<crate::catalog::registry::prompts::Registered>,
    /// Faults a registry found while registering (a derived schema MCP does not allow).
    pub(crate) faults: Vec<BuildError>,
}

/// What serves a catalog item, as the catalog export says it (`served_by`, docs/connectome.md CB-9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServedBy {
    /// Listed in the host's catalog and served by its one dispatch function (or reader): `host`.
    Host,
    /// Registered with a plain `Dispatch` or reader of its own: `untyped`.
    Untyped,
    /// Registered typed: the handler's `std::any::type_name`.
    Typed(&'static str),
}

/// One tool, compiled.
pub(crate) struct CompiledTool {
    pub(crate) name: Arc<str>,
    /// The spec's mode and command class (the catalog export's).
    pub(crate) mode: crate::catalog::spec::Mode,
    pub(crate) command_class: Option<String>,
    pub(crate) served_by: ServedBy,
    pub(crate) schema: CompiledSchema,
    /// The output schema every `structuredContent` is checked against.
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) required_capabilities: Option<Value>,
    /// Whether a call may become a task.
    pub(crate) task_mode: crate::catalog::spec::TaskMode,
    /// The tool's own handler (a registered tool); `None`: the host's dispatch function.
    pub(crate) handler: Option<Arc<dyn Dispatch>>,
    /// The observer's recorder for this tool, bound once when the server is built; `None`: calls are
    /// reported to the observer by event (or not at all, without an observer).
    pub(crate) recorder: Option<Arc<dyn crate::trace::observe::DispatchRecorder>>,
}

/// One listed resource.
pub(crate) struct CompiledResource {
    pub(crate) uri: String,
    pub(crate) item: Value,
    /// The resource's own reader; `None`: the host's resource reader.
    pub(crate) reader: Option<Arc<dyn ResourceReader>>,
    pub(crate) served_by: ServedBy,
}

/// One listed template with its matcher.
pub(crate) struct CompiledTemplate {
    pub(crate) uri_template: Arc<str>,
    pub(crate) matcher: UriTemplate,
    pub(crate) item: Value,
    /// The template's own reader; `None`: the host's resource reader.
    pub(crate) reader: Option<Arc<dyn ResourceReader>>,
    pub(crate) served_by: ServedBy,
}

/// One listed prompt with its argument schema.
pub(crate) struct CompiledPrompt {
    pub(crate) name: Arc<str>,
    pub(crate) schema: CompiledSchema,
    pub(crate) item: Value,
    /// The prompt's own renderer; `None`: the host's prompt reader.
    pub(crate) reader: Option<Arc<dyn PromptReader>>,
    pub(crate) served_by: ServedBy,
}

/// Where a `resources/read` uri leads.
pub(crate) enum Located<'a> {
    /// A listed resource.
    Resource(&'a CompiledResource),
    /// A listed template, with the uri's decoded variables.
    Template(&'a CompiledTemplate, TemplateMatch),
}

/// A tool's position by its name. The names are the host's, never a caller's, so the table cannot be
/// filled to collide: a fast seeded hash (foldhash) serves every call's lookup, 219 instructions a
/// `tools/call` where SipHash's took 522 (`docs/performance.md`, "Ninth round").
pub(crate) type ToolIndex = HashMap<Arc<str>, usize, foldhash::fast::RandomState>;

/// The whole compiled catalog.
pub(crate) struct Snapshot {
    pub(crate) tools: Vec<CompiledTool>,
    pub(crate) tool_index: ToolIndex,
    /// The items of `tools/list`'s `tools` array, encoded, in catalog order (one per tool).
    pub(crate) tools_list: Vec<Box<RawValue>>,
    /// Sorted by uri, bytewise.
    pub(crate) resources: Vec<CompiledResource>,
    /// Sorted by uri template, bytewise.
    pub(crate) templates: Vec<CompiledTemplate>,
    /// The order templates are tried in for a read (most specific first, `UriTemplate::specificity`,
    /// then bytewise), with the prefix index that narrows a read to the templates it could match.
    pub(crate) template_index: TemplateIndex,
    /// Reads try every template in turn, as before the index: the baseline its benchmark and property
    /// tests compare against.
    #[cfg(feature = "fuzzing")]
    pub(crate) linear_template_scan: bool,
    /// Sorted by name, bytewise.
    pub(crate) prompts: Vec<CompiledPrompt>,
}

fn encode<T: serde::Serialize>(item: &T) -> Value {
    // The wire types hold only strings, numbers and JSON values: serialization cannot fail.
    serde_json::to_value(item).unwrap_or(Value::Null)
}

fn non_empty<T>(items: &[T]) -> Option<Vec<T>>
where
    T: Clone,
{
    (!items.is_empty()).then(|| items.to_vec())
}

/// A tool's list item, encoded once: a list writes the bytes, never a value built per request.
fn tool_item(spec: &ToolSpec, schema: &Value) -> Result<Box<RawValue>, BuildError> {
    let item = Tool {
        name: spec.name.clone(),
        title: spec.title.clone(),
        description: spec.description.clone(),
        input_schema: schema.clone(),
        output_schema: spec.output_schema.clone(),
        annotations: Some(spec.annotations()),
        icons: non_empty(&spec.icons),
        execution: None,
        meta: spec.meta.clone(),
    };
    // The wire types hold only strings, numbers and JSON values: serialization cannot fail.
    serde_json::value::to_raw_value(&item)
        .map_err(|_| BuildError::InvalidTool { tool: spec.name.clone(), reason: "it does not encode".into() })
}

/// A resource's list item: the catalog's, encoded once, and a resource source's, per request.
pub(crate) fn resource_item(spec: &ResourceSpec) -> Value {
    encode(&Resource {
        uri: spec.uri.clone(),
        name: spec.name.clone(),
        title: spec.title.clone(),
        description: spec.description.clone(),
        mime_type: spec.mime_type.clone(),
        size: spec.size,
        annotations: spec.annotations.clone(),
        icons: non_empty(&spec.icons),
        meta: None,
    })
}

fn template_item(spec: &ResourceTemplateSpec) -> Value {
    encode(&ResourceTemplate {
        uri_template: spec.uri_template.clone(),
        name: spec.name.clone(),
        title: spec.title.clone(),
        description: spec.description.clone(),
        mime_type: spec.mime_type.clone(),
        annotations: spec.annotations.clone(),
        icons: non_empty(&spec.icons),
        meta: None,
    })
}

fn prompt_item(spec: &PromptSpec) -> Value {
    let arguments: Vec<WirePromptArgument> = spec
        .arguments
        .iter()
        .map(|a| WirePromptArgument {
            name: a.name.clone(),
            title: a.title.clone(),
            description: a.description.clone(),
            required: Some(a.required),
        })
        .collect();
    encode(&Prompt {
        name: spec.name.clone(),
        title: spec.title.clone(),
        description: spec.description.clone(),
        icons: non_empty(&spec.icons),
        arguments: non_empty(&arguments),
        meta: None,
    })
}

/// True when the annotations' priority, if any, lies in 0..=1 as the schema requires.
pub(crate) fn annotations_in_range(annotations: Option<&mcp_kernel_wire::types::Annotations>) -> bool {
    let priority = annotations.and_then(|a| a.priority.as_ref()).map(|p| p.as_f64());
    match priority {
        None => true,
        Some(p) => p.is_some_and(|p| (0.0..=1.0).contains(&p)),
    }
}

/// The compiled tools: in declaration order, indexed by name, with their `tools/list` items.
struct CompiledTools {
    tools: Vec<CompiledTool>,
    index: ToolIndex,
    items: Vec<Box<RawValue>>,
}

/// One item to compile: its spec, its own handler (`None`: the host's) and what serves it.
type Declared<T, H> = (T, Option<Arc<H>>, ServedBy);

/// Listed items first, then the registered ones with their handlers (and what serves each).
fn declared<T, H>(
    listed: Vec<T>,
    registered: Vec<(T, H, Option<&'static str>)>,
) -> Vec<(T, Option<H>, ServedBy)> {
    let served = |link: Option<&'static str>| link.map_or(ServedBy::Untyped, ServedBy::Typed);
    listed
        .into_iter()
        .map(|item| (item, None, ServedBy::Host))
        .chain(registered.into_iter().map(|(item, h, link)| (item, Some(h), served(link))))
        .collect()
}

/// Checks and compiles the tools: unique names, input and output schemas (with the `x-mcp-header`
/// annotations, faults deferred when asked), `_meta` key names, required client capabilities.
fn compile_tools(
    tool_specs: Vec<Declared<ToolSpec, dyn Dispatch>>,
    defer_header_faults: bool,
) -> Result<CompiledTools, BuildError> {
    let mut tools = Vec::with_capacity(tool_specs.len());
    let mut tool_index = ToolIndex::with_capacity_and_hasher(tool_specs.len(), Default::default());
    let mut items = Vec::with_capacity(tool_specs.len());
    for (spec, handler, served_by) in tool_specs {
        let spec = &spec;
        let name: Arc<str> = Arc::from(spec.name.as_str());
        if tool_index.insert(Arc::clone(&name), tools.len()).is_some() {
            return Err(BuildError::DuplicateTool(spec.name.clone()));
        }
        let default_schema = mcp_kernel_schema::default_input_schema();
        let schema_value = spec.input_schema.as_ref().unwrap_or(&default_schema);
        let schema = compile_tool_schema(&spec.name, schema_value, defer_header_faults)?;
        let output = match &spec.output_schema {
            Some(schema) => Some(compile_output_schema(&spec.name, schema)?),
            None => None,
        };
        if let Some((key, why)) = spec
            .meta
            .iter()
            .flatten()
            .find_map(|(key, _)| crate::request::meta_keys::fault(key).map(|why| (key, why)))
        {
            let key: String = key.chars().take(64).collect();
            let reason = format!("_meta key {key:?}: {why}");
            return Err(BuildError::InvalidTool { tool: spec.name.clone(), reason });
        }
        if let Some(caps) = &spec.required_client_capabilities
            && !caps.is_object()
        {
            return Err(BuildError::InvalidRequiredCapabilities(spec.name.clone()));
        }
        items.push(tool_item(spec, schema_value)?);
        tools.push(CompiledTool {
            name,
            mode: spec.mode,
            command_class: spec.command_class.clone(),
            served_by,
            schema,
            output,
            required_capabilities: spec.required_client_capabilities.clone(),
            task_mode: spec.task_mode,
            handler,
            recorder: None,
        });
    }
    Ok(CompiledTools { tools, index: tool_index, items })
}

/// Checks and compiles the resources and templates: annotations in range, parsable uri templates, no
/// uri (or uri template) twice; each list sorted by its key.
fn compile_resources(
    entries: Vec<Declared<ResourceEntry, dyn ResourceReader>>,
) -> Result<(Vec<CompiledResource>, Vec<CompiledTemplate>), BuildError> {
    let mut resources = Vec::new();
    let mut templates = Vec::new();
    for (entry, reader, served_by) in entries {
        match &entry {
            ResourceEntry::Resource(spec) if !annotations_in_range(spec.annotations.as_ref()) => {
                return Err(BuildError::InvalidAnnotations(spec.uri.clone()));
            }
            ResourceEntry::Template(spec) if !annotations_in_range(spec.annotations.as_ref()) => {
                return Err(BuildError::InvalidAnnotations(spec.uri_template.clone()));
            }
            ResourceEntry::Resource(spec) => resources.push(CompiledResource {
                uri: spec.uri.clone(),
                item: resource_item(spec),
                reader,
                served_by,
            }),
            ResourceEntry::Template(spec) => {
                let matcher = UriTemplate::parse(&spec.uri_template).map_err(|e| {
                    BuildError::InvalidTemplate { template: spec.uri_template.clone(), reason: e.to_string() }
                })?;
                templates.push(CompiledTemplate {
                    uri_template: Arc::from(spec.uri_template.as_str()),
                    matcher,
                    item: template_item(spec),
                    reader,
                    served_by,
                });
            }
        }
    }
    resources.sort_by(|a, b| a.uri.as_bytes().cmp(b.uri.as_bytes()));
    if let Some(pair) = resources.windows(2).find(|w| w[0].uri == w[1].uri) {
        return Err(BuildError::DuplicateResource(pair[0].uri.clone()));
    }
    templates.sort_by(|a, b| a.uri_template.as_bytes().cmp(b.uri_template.as_bytes()));
    if let Some(pair) = templates.windows(2).find(|w| w[0].uri_template == w[1].uri_template) {
        return Err(BuildError::DuplicateTemplate(pair[0].uri_template.to_string()));
    }
    Ok((resources, templates))
}

/// Checks and compiles the prompts: their argument schemas, no name twice; sorted by name.
fn compile_prompts(
    prompt_specs: Vec<Declared<PromptSpec, dyn PromptReader>>,
) -> Result<Vec<CompiledPrompt>, BuildError> {
    let mut prompts = Vec::with_capacity(prompt_specs.len());
    for (spec, reader, served_by) in prompt_specs {
        let schema = compile_prompt_schema(&spec)?;
        prompts.push(CompiledPrompt {
            name: Arc::from(spec.name.as_str()),
            schema,
            item: prompt_item(&spec),
            reader,
            served_by,
        });
    }
    prompts.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    if let Some(pair) = prompts.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(BuildError::DuplicatePrompt(pair[0].name.to_string()));
    }
    Ok(prompts)
}

impl Snapshot {
    /// Checks and compiles a catalog, one primitive after the other (tools, resources, prompts): the
    /// listing's items first, then the registered ones.
    pub(crate) fn compile(
        listing: Listing,
        registered: Registered,
        defer_header_faults: bool,
    ) -> Result<Self, BuildError> {
        let Listing { tools, resources, prompts } = listing;
        let tools = declared(tools, registered.tools);
        let entries = declared(resources, registered.resources);
        let prompts = declared(prompts, registered.prompts);
        let CompiledTools { tools, index: tool_index, items } = compile_tools(tools, defer_header_faults)?;
        let (resources, templates) = compile_resources(entries)?;
        let prompts = compile_prompts(prompts)?;
        let template_index = TemplateIndex::build(templates.iter().map(|t| &t.matcher));
        Ok(Self {
            tools,
            tool_index,
            tools_list: items,
            resources,
            templates,
            template_index,
            #[cfg(feature = "fuzzing")]
            linear_template_scan: false,
            prompts,
        })
    }

    /// The compiled tool named `name`.
    pub(crate) fn tool(&self, name: &str) -> Option<&CompiledTool> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    /// The compiled prompt named `name`.
    pub(crate) fn prompt(&self, name: &str) -> Option<&CompiledPrompt> {
        self.prompts
            .binary_search_by(|p| p.name.as_bytes().cmp(name.as_bytes()))
            .ok()
            .map(|i| &self.prompts[i])
    }

    /// The listed template whose uri template is exactly `uri_template`.
    pub(crate) fn template(&self, uri_template: &str) -> Option<&CompiledTemplate> {
        self.templates
            .binary_search_by(|t| t.uri_template.as_bytes().cmp(uri_template.as_bytes()))
            .ok()
            .map(|i| &self.templates[i])
    }

    /// The listed resource `uri` names, or the most specific listed template that matches it (fewest
    /// `{+var}`, then most literal text, then bytewise), with its variables; only items `shown` admits
    /// are considered, so a uri a hidden item would take is located as if that item were not listed.
    pub(crate) fn locate(&self, uri: &str, shown: impl Fn(Listed<'_>) -> bool) -> Option<Located<'_>> {
        if let Ok(i) = self.resources.binary_search_by(|r| r.uri.as_bytes().cmp(uri.as_bytes()))
            && shown(Listed::Resource(&self.resources[i].uri))
        {
            return Some(Located::Resource(&self.resources[i]));
        }
        #[cfg(feature = "fuzzing")]
        if self.linear_template_scan {
            return self.first_match(self.template_index.all(), uri, &shown);
        }
        self.first_match(self.template_index.candidates(uri), uri, &shown)
    }

    /// The first of `tried` (template indices, in match order) that matches `uri` and that `shown`
    /// admits. The filter is asked only about templates that match, so the index, which leaves out
    /// only templates that cannot match, asks it the same questions in the same order as a full scan.
    fn first_match(
        &self,
        tried: impl Iterator<Item = usize>,
        uri: &str,
        shown: &impl Fn(Listed<'_>) -> bool,
    ) -> Option<Located<'_>> {
        tried.map(|i| &self.templates[i]).find_map(|t| {
            let variables = t.matcher.captures(uri)?;
            if !shown(Listed::Template(&t.uri_template)) {
                return None;
            }
            Some(Located::Template(t, TemplateMatch::new(Arc::clone(&t.uri_template), variables)))
        })
    }
}
