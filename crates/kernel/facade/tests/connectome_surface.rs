//! The connectome surface (docs/connectome.md §H): reads answer the canonical bytes byte-identical to
//! the file exports, the tool answers them verbatim with their hash, neither changes the package's
//! state, and adding the surface changes the five advertising methods by exactly the added entries.
#![cfg(feature = "connectome")]

use futures_util::FutureExt;
use mcp_kernel::connectome::graph::declared::Declared;
use mcp_kernel::connectome::graph::{Algorithm, Diff, Graph};
use mcp_kernel::connectome::observe::Collector;
use mcp_kernel::connectome::{self, Surface, Which};
use mcp_kernel::prompts::PromptSpec;
use mcp_kernel::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel::wire::types::ResourceContents;
use mcp_kernel::{Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn own_catalog() -> Listing {
    Listing {
        tools: vec![ToolSpec::new("echo", Mode::ReadOnly).command_class("observe").input_schema(json!({
            "type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": false
        }))],
        resources: vec![
            ResourceSpec::new("host://a", "a").into(),
            ResourceTemplateSpec::new("host://item/{id}", "item").into(),
        ],
        prompts: vec![PromptSpec::new("greet")],
    }
}

fn with_surface(mut capabilities: Listing) -> Listing {
    capabilities.tools.push(connectome::tool_spec());
    capabilities.resources.extend(connectome::resources());
    capabilities
}

fn declared() -> Graph {
    Declared::builder("host")
        .catalog(connectome::declared_catalog(&with_surface(own_catalog())))
        .tool_module("echo", "host::tools")
        .build()
        .expect("declared builds")
        .graph
}

fn window() -> Value {
    json!({"started_at": "2026-11-30T00:00:00Z", "ended_at": "2026-11-30T01:00:00Z"})
}

fn surface(collector: &Collector) -> Surface {
    Surface::new().declared(declared()).observed(collector.clone()).window(window)
}

/// A host with `capabilities`, its dispatch and reader routing the surface's parts to `surface`.
fn server(capabilities: Listing, collector: &Collector, surface: Surface) -> Server {
    let (for_dispatch, for_reader) = (surface.clone(), surface);
    Server::builder(capabilities)
        .server_name("host")
        .observe_dispatch(collector.clone())
        .dispatch(move |call: ToolCall| {
            let answer = match &*call.name {
                connectome::TOOL_NAME => for_dispatch.call(&call.arguments),
                _ => ToolOutput::json(&json!({"echo": call.arguments.get_str("text")})),
            };
            std::future::ready(answer)
        })
        .resource_reader(move |request: ReadResource| {
            let answer = match for_reader.read(&request.uri) {
                Some(answer) => answer.map_err(|e| ReaderError::new(e.to_string())),
                None => Ok(vec![ResourceContents::text(&request.uri, "host")]),
            };
            std::future::ready(answer)
        })
        .prompt_reader(|_| {
            std::future::ready(Err::<mcp_kernel::prompts::PromptOutput, _>(ReaderError::new("none")))
        })
        .build()
        .expect("server builds")
}

fn handle(server: &Server, line: &str) -> Value {
    let message = mcp_kernel::wire::read_message(line.as_bytes()).expect("a valid request");
    let handled = server.handle(Value::Object(message)).now_or_never().expect("the host answers at once");
    serde_json::from_slice(&handled.response.expect("a response").to_bytes()).expect("json")
}

fn request(id: u64, method: &str, params: &str) -> String {
    let params = if params.is_empty() { format!("{{{META}}}") } else { format!("{{{META},{params}}}") };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

fn started() -> Collector {
    let collector = Collector::new();
    collector.start();
    collector
}

#[test]
fn lists_three_read_only_json_resources_sorted_by_uri() {
    let uris: Vec<String> = connectome::resources()
        .into_iter()
        .map(|entry| match entry {
            mcp_kernel::resources::ResourceEntry::Resource(spec) => spec.uri().to_owned(),
            mcp_kernel::resources::ResourceEntry::Template(_) => panic!("no templates"),
        })
        .collect();
    assert_eq!(uris, ["connectome://declared", "connectome://diff", "connectome://observed"]);
}

#[test]
fn read_answers_the_canonical_bytes_byte_identical_to_the_exports() {
    let collector = started();
    let surface = surface(&collector);
    let host = server(with_surface(own_catalog()), &collector, surface.clone());
    handle(&host, &request(1, "tools/call", r#""name":"echo","arguments":{"text":"hi"}"#));

    let observed = collector.snapshot().expect("running");
    let expected = [
        (Which::Declared, declared().to_canonical_bytes(Algorithm::Sha256).unwrap()),
        (Which::Observed, observed.to_canonical_bytes(Algorithm::Sha256).unwrap()),
        (Which::Diff, Diff::run(&declared(), &observed, &window()).unwrap().encode(Algorithm::Sha256)),
    ];
    for (which, bytes) in expected {
        let answer = handle(&host, &request(2, "resources/read", &format!(r#""uri":"{}""#, which.uri())));
        let contents = &answer["result"]["contents"][0];
        assert_eq!(contents["uri"], which.uri());
        assert_eq!(contents["mimeType"], "application/json");
        assert_eq!(contents["text"].as_str().unwrap().as_bytes(), bytes.as_slice(), "{which:?}");
    }
}

#[test]
fn call_answers_the_bytes_verbatim_and_their_hash_keyed_by_the_algorithm() {
    let collector = started();
    for algorithm in Algorithm::ALL {
        let surface = surface(&collector).algorithm(algorithm);
        let host = server(with_surface(own_catalog()), &collector, surface.clone());
        let answer = handle(
            &host,
            &request(1, "tools/call", r#""name":"connectome","arguments":{"graph":"declared"}"#),
        );
        let structured = &answer["result"]["structuredContent"];
        let bytes = declared().to_canonical_bytes(algorithm).unwrap();
        assert_eq!(structured["graph"], "declared");
        assert_eq!(structured["bytes"].as_str().unwrap().as_bytes(), bytes.as_slice());
        assert_eq!(structured[algorithm.name()], declared().hash_hex(algorithm).unwrap());
        assert_eq!(structured.as_object().unwrap().len(), 3, "graph, bytes and the hash only");
    }
}

#[test]
fn a_graph_outside_the_enum_is_refused_before_dispatch() {
    let collector = started();
    let host = server(with_surface(own_catalog()), &collector, surface(&collector));
    let answer =
        handle(&host, &request(1, "tools/call", r#""name":"connectome","arguments":{"graph":"secrets"}"#));
    assert_eq!(answer["result"]["isError"], true);
    assert!(collector.rows().unwrap().is_empty(), "a call refused by the schema never reaches dispatch");
}

#[test]
fn read_and_call_leave_the_package_state_unchanged() {
    let collector = started();
    let surface = surface(&collector);
    let host = server(with_surface(own_catalog()), &collector, surface.clone());
    handle(&host, &request(1, "tools/call", r#""name":"echo","arguments":{"text":"hi"}"#));
    let rows = collector.rows().unwrap();
    let declared_bytes = surface.bytes(Which::Declared).unwrap();
    for which in [Which::Declared, Which::Observed, Which::Diff] {
        surface.read(which.uri()).expect("ours").expect("readable");
        surface.answer(which).expect("answerable");
        // A read over the wire is not a dispatch either.
        handle(&host, &request(2, "resources/read", &format!(r#""uri":"{}""#, which.uri())));
    }
    assert_eq!(collector.rows().unwrap(), rows);
    assert_eq!(surface.bytes(Which::Declared).unwrap(), declared_bytes);
}

#[test]
fn the_tool_called_through_dispatch_is_recorded_like_any_call() {
    let collector = started();
    let host = server(with_surface(own_catalog()), &collector, surface(&collector));
    for id in 1..=3 {
        handle(&host, &request(id, "tools/call", r#""name":"connectome","arguments":{"graph":"observed"}"#));
    }
    let rows = collector.rows().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].count, 3);
}

#[test]
fn missing_parts_are_refused_by_name() {
    let empty = Surface::new();
    for which in [Which::Declared, Which::Observed, Which::Diff] {
        assert!(matches!(empty.bytes(which), Err(connectome::SurfaceError::Missing(_))));
    }
    assert!(empty.read("host://a").is_none(), "a uri that is not the surface's falls through");
    let not_started = Surface::new().observed(Collector::new());
    assert!(matches!(not_started.bytes(Which::Observed), Err(connectome::SurfaceError::Observed(_))));
}

#[test]
fn adding_the_surface_changes_the_advertising_methods_by_exactly_the_added_entries() {
    let collector = started();
    let before = server(own_catalog(), &collector, surface(&collector));
    let after = server(with_surface(own_catalog()), &collector, surface(&collector));
    let methods =
        ["server/discover", "tools/list", "resources/list", "resources/templates/list", "prompts/list"];
    for method in methods {
        let (mut old, mut new) =
            (handle(&before, &request(1, method, "")), handle(&after, &request(1, method, "")));
        match method {
            "tools/list" => {
                let added = new["result"]["tools"].as_array_mut().unwrap().pop().unwrap();
                assert_eq!(added["name"], "connectome");
                assert_eq!(
                    added["annotations"],
                    json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
                );
            }
            "resources/list" => {
                // The list is in uri order, so the added entries are taken out wherever they fall.
                let list = new["result"]["resources"].as_array_mut().unwrap();
                let added: Vec<Value> = list
                    .extract_if(.., |r| r["uri"].as_str().unwrap().starts_with("connectome://"))
                    .collect();
                let uris: Vec<&str> = added.iter().map(|r| r["uri"].as_str().unwrap()).collect();
                assert_eq!(uris, ["connectome://declared", "connectome://diff", "connectome://observed"]);
            }
            "server/discover" => {
                let keys = |v: &Value| {
                    v["result"]["capabilities"].as_object().unwrap().keys().cloned().collect::<Vec<_>>()
                };
                assert_eq!(
                    keys(&new),
                    ["tools", "resources", "prompts"],
                    "no connectome capability is claimed"
                );
            }
            _ => {}
        }
        strip_volatile(&mut old);
        strip_volatile(&mut new);
        assert_eq!(old, new, "{method}");
    }
}

/// Nothing volatile is in these answers today; kept so the comparison names what it ignores.
fn strip_volatile(_answer: &mut Value) {}

#[test]
fn declared_catalog_carries_every_listed_part() {
    let catalog = connectome::declared_catalog(&with_surface(own_catalog()));
    let tools: Vec<(&str, &str)> = catalog.tools.iter().map(|t| (t.name.as_str(), t.mode.as_str())).collect();
    assert_eq!(tools, [("echo", "read_only"), ("connectome", "read_only")]);
    assert_eq!(
        catalog.resources,
        ["host://a", "connectome://declared", "connectome://diff", "connectome://observed"]
    );
    assert_eq!(catalog.resource_templates, ["host://item/{id}"]);
    assert_eq!(catalog.prompts, ["greet"]);
}

#[test]
fn tool_errors_name_the_reason_not_the_input() {
    const MARKER: &str = "PAYLOAD-MARKER-7f3a";
    // A host whose copy of the tool admits any argument, so the marker reaches `Surface::call`.
    let permissive =
        ToolSpec::new(connectome::TOOL_NAME, Mode::ReadOnly).input_schema(json!({"type": "object"}));
    let collector = started();
    let mut capabilities = own_catalog();
    capabilities.tools.push(permissive);
    let host = server(capabilities, &collector, surface(&collector));
    for arguments in [
        format!(r#"{{"graph":"{MARKER}"}}"#),
        format!(r#"{{"graph":["{MARKER}"]}}"#),
        format!(r#"{{"{MARKER}":1}}"#),
    ] {
        let answer = handle(
            &host,
            &request(1, "tools/call", &format!(r#""name":"connectome","arguments":{arguments}"#)),
        );
        assert_eq!(answer["result"]["isError"], true, "{arguments}");
        assert!(!answer.to_string().contains(MARKER), "the answer echoes the input: {answer}");
    }
    let calls: u64 = collector.rows().unwrap().iter().map(|r| r.count).sum();
    assert_eq!(calls, 3, "each call reached dispatch, so the marker reached `Surface::call`");
    let error: ToolError = Surface::new().answer(Which::Declared).unwrap_err();
    assert!(format!("{error:?}").contains("missing declared"));
}
