//! Full tool metadata in `tools/list`: title, description, icons, `_meta`, `annotations.title` and every
//! hint; the hints the `Mode` derives are overridden field by field.

use crate::support::*;
use mcp_kernel_router::wire::types::{Icon, IconTheme, ToolAnnotations};
use mcp_kernel_router::{
    Listing, Mode, RequestContext, Server, ToolCall, ToolError, ToolOutput, ToolSpec, Tools,
};
use serde_json::{Map, Value, json};

fn meta() -> Map<String, Value> {
    let value = json!({"com.example/owner": "team-a", "com.example/limits": {"rpm": 60, "tags": ["x"]}});
    value.as_object().cloned().unwrap()
}

fn icons() -> Vec<Icon> {
    let mut dark = Icon::new("https://example.com/dark.png");
    dark.mime_type = Some("image/png".into());
    dark.sizes = Some(vec!["48x48".into(), "96x96".into()]);
    dark.theme = Some(IconTheme::Dark);
    vec![Icon::new("data:image/svg+xml;base64,PHN2Zy8+"), dark]
}

fn rich() -> ToolSpec {
    ToolSpec::new("rich", Mode::ReadOnly)
        .title("Rich tool")
        .description("Has every field.")
        .input_schema(json!({"type": "object", "properties": {"q": {"type": "string"}}}))
        .output_schema(json!({"type": "object"}))
        .icons(icons())
        .annotations_title("Rich (annotations)")
        .read_only_hint(false)
        .destructive_hint(true)
        .idempotent_hint(false)
        .open_world_hint(true)
        .meta(meta())
}

fn expected_rich() -> Value {
    json!({
        "name": "rich",
        "title": "Rich tool",
        "description": "Has every field.",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "outputSchema": {"type": "object"},
        "annotations": {
            "title": "Rich (annotations)",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true
        },
        "icons": [
            {"src": "data:image/svg+xml;base64,PHN2Zy8+"},
            {"src": "https://example.com/dark.png", "mimeType": "image/png", "sizes": ["48x48", "96x96"], "theme": "dark"}
        ],
        "_meta": {"com.example/owner": "team-a", "com.example/limits": {"rpm": 60, "tags": ["x"]}}
    })
}

async fn dispatch(_: ToolCall) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::Json(json!({})))
}

fn listed(tools: Vec<ToolSpec>) -> Server {
    Server::builder(Listing { tools, ..Listing::default() }).dispatch(dispatch).build().unwrap()
}

async fn tools_of(server: &Server, request: Value) -> Vec<Value> {
    send(server, request).await["result"]["tools"].as_array().cloned().unwrap()
}

#[tokio::test]
async fn every_hint_the_annotations_title_meta_icons_and_title_are_advertised() {
    let server = listed(vec![rich()]);
    for request in [
        modern(1, "tools/list", json!({})),
        legacy(1, "tools/list", json!({})),
        bare(1, "tools/list", json!({})),
    ] {
        let tools = tools_of(&server, request).await;
        assert_eq!(tools[0], expected_rich());
        // `_meta` is verbatim, key order included.
        assert_eq!(
            serde_json::to_string(&tools[0]["_meta"]).unwrap(),
            serde_json::to_string(&meta()).unwrap()
        );
    }
}

#[tokio::test]
async fn a_typed_tool_advertises_the_same_metadata() {
    let tools = Tools::new().add(rich(), |_: Value, _cx: RequestContext| async { Ok::<_, ToolError>("") });
    let server = Server::builder(Listing::new()).tools(tools).build().unwrap();
    assert_eq!(tools_of(&server, modern(1, "tools/list", json!({}))).await[0], expected_rich());
}

#[tokio::test]
async fn absent_metadata_is_omitted_and_the_mode_derives_every_hint() {
    let server = listed(vec![ToolSpec::new("bare", Mode::ReadOnly), ToolSpec::new("change", Mode::Proposal)]);
    let tools = tools_of(&server, modern(1, "tools/list", json!({}))).await;
    assert_eq!(
        tools[0],
        json!({
            "name": "bare",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": true},
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
        })
    );
    assert_eq!(
        tools[1]["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false})
    );
}

type Override = fn(ToolSpec, bool) -> ToolSpec;

#[tokio::test]
async fn each_override_changes_its_own_hint_and_leaves_the_mode_derived_others() {
    let overrides: [(&str, Override); 4] = [
        ("readOnlyHint", ToolSpec::read_only_hint),
        ("destructiveHint", ToolSpec::destructive_hint),
        ("idempotentHint", ToolSpec::idempotent_hint),
        ("openWorldHint", ToolSpec::open_world_hint),
    ];
    for mode in [Mode::ReadOnly, Mode::Proposal] {
        let derived = listed(vec![ToolSpec::new("t", mode)]);
        let derived = tools_of(&derived, modern(1, "tools/list", json!({}))).await[0]["annotations"].clone();
        for (field, set) in overrides {
            for value in [true, false] {
                let spec = set(ToolSpec::new("t", mode), value);
                let mut expected = derived.clone();
                expected[field] = Value::Bool(value);
                let server = listed(vec![spec.clone()]);
                let advertised =
                    tools_of(&server, modern(1, "tools/list", json!({}))).await[0]["annotations"].clone();
                assert_eq!(advertised, expected, "{mode:?} {field}={value}");
                let typed: ToolAnnotations = serde_json::from_value(advertised).unwrap();
                assert_eq!(spec.annotations(), typed, "ToolSpec::annotations is what is advertised");
            }
        }
    }
}

#[tokio::test]
async fn the_annotations_title_is_separate_from_the_tools_title() {
    let server = listed(vec![
        ToolSpec::new("a", Mode::ReadOnly).annotations_title("Shown in annotations"),
        ToolSpec::new("b", Mode::ReadOnly).title("Shown as title"),
    ]);
    let tools = tools_of(&server, modern(1, "tools/list", json!({}))).await;
    assert_eq!(tools[0]["annotations"]["title"], "Shown in annotations");
    assert!(tools[0].get("title").is_none(), "{}", tools[0]);
    assert_eq!(tools[1]["title"], "Shown as title");
    assert!(tools[1]["annotations"].get("title").is_none(), "{}", tools[1]);
}

#[test]
fn a_meta_key_outside_the_mcp_key_format_or_in_a_reserved_prefix_is_refused() {
    use mcp_kernel_router::BuildError;
    for (key, why) in [
        ("io.modelcontextprotocol/ui", "reserved"),
        ("dev.mcp/x", "reserved"),
        ("1com.example/x", "prefix"),
        ("com.example/-x", "name"),
    ] {
        let mut meta = serde_json::Map::new();
        meta.insert(key.to_owned(), serde_json::json!(true));
        let listing =
            Listing { tools: vec![ToolSpec::new("t", Mode::ReadOnly).meta(meta)], ..Listing::default() };
        let error = Server::builder(listing)
            .dispatch(|_call: mcp_kernel_router::ToolCall| async {
                Ok::<_, mcp_kernel_router::ToolError>(mcp_kernel_router::ToolOutput::text(""))
            })
            .build()
            .unwrap_err();
        assert!(
            matches!(&error, BuildError::InvalidTool { tool, reason } if tool == "t" && reason.contains(why)),
            "{key}: {error:?}"
        );
    }
}
