//! The catalog export (docs/connectome.md CB-9): every item with what serves it — the handler's type
//! name for a typed registration (a `fn` item's path, a closure's `…::{{closure}}`, with or without a
//! state), `untyped` for a plain dispatch of its own, `host` for an item of the catalog the server's
//! one dispatch serves — in key order and sorted by name, the same bytes for the same server.

use mcp_kernel_router::prompts::{PromptOutput, PromptSpec, Prompts};
use mcp_kernel_router::resources::{ResourceSpec, ResourceTemplateSpec, Resources};
use mcp_kernel_router::wire::types::ResourceContents;
use mcp_kernel_router::{
    CATALOG_FORMAT, CATALOG_VERSION, Listing, Mode, ReaderError, RequestContext, Server, ToolCall, ToolError,
    ToolOutput, ToolSpec, Tools,
};
use serde_json::{Value, json};

#[derive(serde::Deserialize)]
struct Empty {}

async fn echo(_args: Empty, _cx: RequestContext) -> Result<String, ToolError> {
    Ok("echo".to_owned())
}

async fn index(_cx: RequestContext) -> Result<Vec<ResourceContents>, ReaderError> {
    Ok(vec![ResourceContents::text("r://index", "")])
}

async fn plain(_call: ToolCall) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text("plain"))
}

fn server() -> Server {
    let tools = Tools::new()
        .add(ToolSpec::new("echo", Mode::ReadOnly), echo)
        .add(ToolSpec::new("b_closure", Mode::Proposal).command_class("write"), |_: Empty, _cx| async {
            Ok::<_, ToolError>("b")
        })
        .add_dispatch(ToolSpec::new("a_untyped", Mode::ReadOnly), plain);
    let stated = Tools::with_state(7_u32).add(ToolSpec::new("stated", Mode::ReadOnly), stated_tool);
    let resources = Resources::new()
        .add(ResourceSpec::new("r://index", "index"), index)
        .template(ResourceTemplateSpec::new("r://note/{id}", "note"), |found, _cx| async move {
            Ok(vec![ResourceContents::text(found.uri(), "")])
        });
    let prompts = Prompts::new().add(PromptSpec::new("brief"), |_: Empty, _cx| async {
        Ok::<_, ReaderError>(PromptOutput { description: None, messages: vec![] })
    });
    let listing = Listing { tools: vec![ToolSpec::new("listed", Mode::ReadOnly)], ..Listing::default() };
    Server::builder(listing)
        .server_name("exported")
        .dispatch(plain)
        .tools(tools)
        .tools(stated)
        .resources(resources)
        .prompts(prompts)
        .build()
        .unwrap()
}

async fn stated_tool(_state: u32, _args: Empty, _cx: RequestContext) -> Result<String, ToolError> {
    Ok("stated".to_owned())
}

#[test]
fn cb9_every_item_names_what_serves_it() {
    let bytes = server().catalog_export();
    let document: Value = serde_json::from_slice(&bytes).unwrap();
    let closure = "integration::catalog_export::server::{{closure}}";
    let expected = json!({
        "format": CATALOG_FORMAT,
        "prompts": [{"handler": closure, "name": "brief", "served_by": "typed"}],
        "resource_templates": [{"handler": closure, "served_by": "typed", "uri_template": "r://note/{id}"}],
        "resources": [{"handler": "integration::catalog_export::index", "served_by": "typed", "uri": "r://index"}],
        "server": "exported",
        "tools": [
            {"mode": "read_only", "name": "a_untyped", "served_by": "untyped"},
            {"command_class": "write", "handler": closure, "mode": "proposal", "name": "b_closure", "served_by": "typed"},
            {"handler": "integration::catalog_export::echo", "mode": "read_only", "name": "echo", "served_by": "typed"},
            {"mode": "read_only", "name": "listed", "served_by": "host"},
            // With a state, the handler is the host's function, not the registry's wrapper.
            {"handler": "integration::catalog_export::stated_tool", "mode": "read_only", "name": "stated", "served_by": "typed"},
        ],
        "version": CATALOG_VERSION,
    });
    assert_eq!(document, expected);
}

#[test]
fn cb9_the_bytes_are_compact_in_key_order_and_stable() {
    let bytes = server().catalog_export();
    assert_eq!(bytes, server().catalog_export());
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.starts_with(r#"{"format":"mcp-kernel-catalog","prompts":[{"handler":"#), "{text}");
    assert!(text.ends_with(r#""version":1}"#), "{text}");
    assert!(!text.contains(": ") && !text.contains('\n'), "{text}");
    let reencoded = serde_json::to_string(&serde_json::from_str::<Value>(&text).unwrap()).unwrap();
    assert_eq!(reencoded, text, "members in key order at every depth");
}
