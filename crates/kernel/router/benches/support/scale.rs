//! Catalogs of a given size for the `catalog/*` benches — `n` templates, `n` tools — and the requests
//! they time: a read of a uri that one template near the end of the match order takes, the first page
//! of `tools/list`, every page of it (following `nextCursor`), and a call of a tool near the end.
#![allow(dead_code, reason = "only core.rs times these paths; host_api.rs times tools/call alone")]

use mcp_kernel_router::resources::{ReadResource, ResourceTemplateSpec};
use mcp_kernel_router::wire::types::ResourceContents;
use mcp_kernel_router::{
    Listing, Mode, ReaderError, Server, ServerBuilder, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

use super::one_call;

/// The catalog sizes timed.
pub const SIZES: [usize; 3] = [10, 1_000, 10_000];

/// `params._meta` of a `2026-07-28` request, as JSON text.
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// How the templates of a catalog begin.
#[derive(Debug, Clone, Copy)]
pub enum Prefixes {
    /// Each with its own literal prefix (`bench://kind00042/item/{id}`), as most catalogs have.
    Own,
    /// All with the same literal prefix, an expression at once after it
    /// (`bench://{tenant}/kind00042/{id}`): the index narrows them through its sets.
    Shared,
}

/// Template `i` of a catalog.
fn template(prefixes: Prefixes, i: usize) -> String {
    match prefixes {
        Prefixes::Own => format!("bench://kind{i:05}/item/{{id}}"),
        Prefixes::Shared => format!("bench://{{tenant}}/kind{i:05}/{{id}}"),
    }
}

/// `n` templates, served by a reader that answers at once; `linear`: reads try every template in
/// turn (the scan before the template index), for the side-by-side bench.
pub fn templates_server(n: usize, prefixes: Prefixes, linear: bool) -> Server {
    let mut listing = Listing::new();
    for i in 0..n {
        listing.resources.push(ResourceTemplateSpec::new(template(prefixes, i), format!("kind {i}")).into());
    }
    let builder = Server::builder(listing).resource_reader(|read: ReadResource| {
        std::future::ready(Ok::<_, ReaderError>(vec![ResourceContents::text(read.uri, "body text")]))
    });
    let builder: ServerBuilder =
        if linear { mcp_kernel_router::fuzzing::linear_template_scan(builder) } else { builder };
    builder.build().expect("bench templates")
}

/// A `2026-07-28` `resources/read` of a uri only the second-to-last template of `n` matches.
pub fn read_near_the_end(n: usize, prefixes: Prefixes) -> Vec<u8> {
    let uri = template(prefixes, n.saturating_sub(2)).replace("{id}", "42").replace("{tenant}", "acme");
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{{META},"uri":"{uri}"}}}}"#)
        .into_bytes()
}

/// `n` tools with a small input schema each, dispatched to a no-op.
pub fn tools_server(n: usize) -> Server {
    let mut listing = Listing::new();
    for i in 0..n {
        listing.tools.push(
            ToolSpec::new(format!("tool_{i:05}"), Mode::ReadOnly)
                .description(format!("Tool number {i}."))
                .input_schema(json!({
                    "type": "object",
                    "properties": {"message": {"type": "string"}},
                    "required": ["message"],
                    "additionalProperties": false
                })),
        );
    }
    Server::builder(listing)
        .dispatch(|_: ToolCall| std::future::ready(Ok::<_, ToolError>(ToolOutput::text("ok"))))
        .build()
        .expect("bench tools")
}

/// A `2026-07-28` `tools/list`, from `cursor` when given.
pub fn tools_list(cursor: Option<&str>) -> Vec<u8> {
    let cursor = cursor.map(|c| format!(r#","cursor":{}"#, Value::from(c))).unwrap_or_default();
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}{cursor}}}}}"#).into_bytes()
}

/// Every page of `tools/list`, following `nextCursor` until a page has none: the tools seen.
pub fn tools_list_full_walk(server: &Server) -> usize {
    let mut cursor: Option<String> = None;
    let mut seen = 0;
    loop {
        let page: Value = serde_json::from_slice(&one_call(server, &tools_list(cursor.as_deref()))).unwrap();
        seen += page["result"]["tools"].as_array().map_or(0, Vec::len);
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return seen,
        }
    }
}

/// A `2026-07-28` `tools/call` of the second-to-last of `n` tools.
pub fn call_near_the_end(n: usize) -> Vec<u8> {
    let name = format!("tool_{:05}", n.saturating_sub(2));
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{META},"name":"{name}","arguments":{{"message":"hello"}}}}}}"#
    )
    .into_bytes()
}
