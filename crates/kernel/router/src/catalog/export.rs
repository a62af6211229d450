//! The catalog export (docs/connectome.md CB-9): the server's catalog as one JSON document, each tool,
//! resource, template and prompt with what serves it, so that a program outside the server (`connectome
//! declare`) can link each to the code that serves it.

use serde_json::{Map, Value};

use crate::catalog::snapshot::ServedBy;
use crate::catalog::spec::Mode;
use crate::server::Server;

/// The export's `format` member.
pub const CATALOG_FORMAT: &str = "mcp-kernel-catalog";
/// The export's `version` member: the layout below; a reader refuses any other.
pub const CATALOG_VERSION: u64 = 1;

/// `served_by` and, for a typed registration, `handler`, in key order.
fn served(item: &mut Map<String, Value>, served_by: ServedBy) {
    let kind = match served_by {
        ServedBy::Host => "host",
        ServedBy::Untyped => "untyped",
        ServedBy::Typed(handler) => {
            item.insert("handler".to_owned(), Value::from(handler));
            "typed"
        }
    };
    item.insert("served_by".to_owned(), Value::from(kind));
}

/// An object whose members are inserted in sorted order, so that the bytes are the same whether or
/// not serde_json keeps insertion order.
fn object(mut members: Vec<(&str, Value)>) -> Map<String, Value> {
    members.sort_by(|a, b| a.0.cmp(b.0));
    members.into_iter().map(|(key, value)| (key.to_owned(), value)).collect()
}

/// Sorts `items` by the string member `key`, bytewise, and orders each item's members.
fn sorted(mut items: Vec<Map<String, Value>>, key: &str) -> Value {
    let name =
        |item: &Map<String, Value>| item.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    items.sort_by_key(name);
    let ordered = items.into_iter().map(|item| {
        let mut members: Vec<(String, Value)> = item.into_iter().collect();
        members.sort_by(|a, b| a.0.cmp(&b.0));
        Value::Object(members.into_iter().collect())
    });
    Value::Array(ordered.collect())
}

impl Server {
    /// The catalog export (docs/connectome.md CB-9): compact JSON, members in key order, each list
    /// sorted by name (uri, uri template), no trailing newline; the same server gives the same bytes.
    /// `{"format":"mcp-kernel-catalog","prompts":[…],"resource_templates":[…],"resources":[…],
    /// "server":NAME,"tools":[…],"version":1}`; each item names what serves it: `served_by` is `typed`
    /// (registered with its handler through `Tools`, `Resources` or `Prompts`, whose
    /// `std::any::type_name` is `handler`), `untyped` (registered with a plain `Dispatch` or reader of
    /// its own) or `host` (listed in the catalog, served by the server's one dispatch function or
    /// reader); only `typed` names a handler. A tool also has `mode` and, when set, `command_class`.
    /// Per-caller resources (a resource source) are not the catalog's, and are not exported.
    pub fn catalog_export(&self) -> Vec<u8> {
        let snapshot = &self.inner.snapshot;
        let tools = snapshot.tools.iter().map(|tool| {
            let mode = match tool.mode {
                Mode::ReadOnly => "read_only",
                Mode::Proposal => "proposal",
            };
            let mut item = object(vec![("name", Value::from(&*tool.name)), ("mode", Value::from(mode))]);
            if let Some(class) = &tool.command_class {
                item.insert("command_class".to_owned(), Value::from(class.as_str()));
            }
            served(&mut item, tool.served_by);
            item
        });
        let resources = snapshot.resources.iter().map(|resource| {
            let mut item = object(vec![("uri", Value::from(resource.uri.as_str()))]);
            served(&mut item, resource.served_by);
            item
        });
        let templates = snapshot.templates.iter().map(|template| {
            let mut item = object(vec![("uri_template", Value::from(&*template.uri_template))]);
            served(&mut item, template.served_by);
            item
        });
        let prompts = snapshot.prompts.iter().map(|prompt| {
            let mut item = object(vec![("name", Value::from(&*prompt.name))]);
            served(&mut item, prompt.served_by);
            item
        });
        let document = object(vec![
            ("format", Value::from(CATALOG_FORMAT)),
            ("version", Value::from(CATALOG_VERSION)),
            ("server", Value::from(self.inner.options.server_name())),
            ("tools", sorted(tools.collect(), "name")),
            ("resources", sorted(resources.collect(), "uri")),
            ("resource_templates", sorted(templates.collect(), "uri_template")),
            ("prompts", sorted(prompts.collect(), "name")),
        ]);
        // A map of strings, numbers and arrays of them: serialization cannot fail.
        serde_json::to_vec(&Value::Object(document)).unwrap_or_default()
    }
}
