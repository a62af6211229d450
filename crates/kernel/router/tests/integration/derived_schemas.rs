//! Derived schemas (feature `schemars`): `Tools::add_derived`, `Tools::add_derived_input` and
//! `Prompts::add_derived` advertise exactly what schemars generates (draft 2020-12), go through the
//! same build refusals as hand-written schemas, and agree with serde on `Option<T>` fields.
#![cfg(feature = "schemars")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::*;
use mcp_kernel_router::prompts::{PromptArgument, PromptOutput, PromptSpec, Prompts};
use mcp_kernel_router::schema::SchemaError;
use mcp_kernel_router::wire::types::{ContentBlock, PromptMessage, Role};
use mcp_kernel_router::{
    BuildError, Listing, Mode, ReaderError, RequestContext, Server, ToolError, ToolSpec, Tools,
};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What schemars itself writes for `T` as an input (draft 2020-12, what serde reads), as compact JSON.
fn generated<T: JsonSchema>() -> String {
    let schema =
        SchemaSettings::draft2020_12().for_deserialize().into_generator().into_root_schema_for::<T>();
    serde_json::to_string(&schema).unwrap()
}

/// What schemars writes for `T` as an output (what serde writes), as compact JSON.
fn generated_output<T: JsonSchema>() -> String {
    let schema = SchemaSettings::draft2020_12().for_serialize().into_generator().into_root_schema_for::<T>();
    serde_json::to_string(&schema).unwrap()
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
/// A search over notes.
struct Search {
    /// What to look for.
    query: String,
    /// At most this many hits.
    limit: Option<u8>,
    /// Only hits of this kind.
    filter: Option<Filter>,
}

#[derive(Deserialize, Serialize, JsonSchema)]
struct Filter {
    kind: Kind,
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Note,
    Task,
}

#[derive(Serialize, JsonSchema)]
struct Hits {
    hits: Vec<Hit>,
    total: u32,
}

#[derive(Serialize, JsonSchema)]
struct Hit {
    id: u64,
    title: String,
}

/// What the handler saw of the optional fields.
#[derive(Serialize, JsonSchema)]
struct Seen {
    query: String,
    limit_is_none: bool,
    filter_is_none: bool,
}

fn search_tools() -> Tools {
    Tools::new()
        .add_derived(
            ToolSpec::new("search", Mode::ReadOnly),
            |args: Search, _cx: RequestContext| async move {
                let hits = vec![Hit { id: 42, title: args.query }];
                Ok::<_, ToolError>(Hits { total: 1, hits })
            },
        )
        .add_derived(ToolSpec::new("seen", Mode::ReadOnly), |args: Search, _cx: RequestContext| async move {
            Ok::<_, ToolError>(Seen {
                query: args.query,
                limit_is_none: args.limit.is_none(),
                filter_is_none: args.filter.is_none(),
            })
        })
        .add_derived_input(
            ToolSpec::new("text", Mode::ReadOnly),
            |args: Search, _cx: RequestContext| async move {
                Ok::<_, ToolError>(format!("searched {}", args.query))
            },
        )
}

fn server_of(tools: Tools) -> Server {
    Server::builder(Listing::new()).tools(tools).build().expect("the derived tools build")
}

fn build(tools: Tools) -> Result<Server, BuildError> {
    Server::builder(Listing::new()).tools(tools).build()
}

fn call(name: &str, arguments: Value) -> Value {
    modern(1, "tools/call", json!({"name": name, "arguments": arguments}))
}

#[tokio::test]
async fn derived_schemas_are_advertised_byte_for_byte_as_schemars_writes_them() {
    let server = server_of(search_tools());
    for request in [modern(1, "tools/list", json!({})), bare(1, "tools/list", json!({}))] {
        let list = send(&server, request).await;
        let tools = list["result"]["tools"].as_array().unwrap();
        let compact = |value: &Value| serde_json::to_string(value).unwrap();
        assert_eq!(compact(&tools[0]["inputSchema"]), generated::<Search>());
        assert_eq!(compact(&tools[0]["outputSchema"]), generated_output::<Hits>());
        assert_eq!(compact(&tools[1]["outputSchema"]), generated_output::<Seen>());
        assert_eq!(compact(&tools[2]["inputSchema"]), generated::<Search>());
        assert!(tools[2].get("outputSchema").is_none(), "add_derived_input derives no output schema");
    }
    // The expected side is a real draft 2020-12 document with local definitions, not a trivial one.
    let expected: Value = serde_json::from_str(&generated::<Search>()).unwrap();
    assert_eq!(expected["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert!(expected["$defs"].get("Filter").is_some(), "{expected}");
}

#[tokio::test]
async fn add_derived_replaces_the_schemas_the_spec_set() {
    let spec = ToolSpec::new("search", Mode::ReadOnly)
        .input_schema(json!({"type": "object"}))
        .output_schema(json!({"type": "object"}));
    let tools = Tools::new().add_derived(spec, |_: Search, _cx: RequestContext| async {
        Ok::<_, ToolError>(Hits { hits: vec![], total: 0 })
    });
    let list = send(&server_of(tools), modern(1, "tools/list", json!({}))).await;
    let tool = &list["result"]["tools"][0];
    assert_eq!(serde_json::to_string(&tool["inputSchema"]).unwrap(), generated::<Search>());
    assert_eq!(serde_json::to_string(&tool["outputSchema"]).unwrap(), generated_output::<Hits>());
}

#[tokio::test]
async fn a_derived_output_is_sent_as_structured_content_and_its_json_text() {
    let server = server_of(search_tools());
    let r = send(&server, call("search", json!({"query": "rust"}))).await;
    assert_eq!(r["result"]["isError"], false, "{r}");
    let expected = json!({"hits": [{"id": 42, "title": "rust"}], "total": 1});
    assert_eq!(r["result"]["structuredContent"], expected);
    assert_eq!(first_text(&r), serde_json::to_string(&expected).unwrap());
    let r = send(&server, call("text", json!({"query": "rust"}))).await;
    assert_eq!(first_text(&r), "searched rust");
    assert!(r["result"].get("structuredContent").is_none(), "{r}");
}

#[tokio::test]
async fn option_fields_may_be_omitted_or_null_and_reach_the_handler_as_none() {
    let server = server_of(search_tools());
    for arguments in [
        json!({"query": "q"}),
        json!({"query": "q", "limit": null}),
        json!({"query": "q", "filter": null}),
        json!({"query": "q", "limit": null, "filter": null}),
    ] {
        let r = send(&server, call("seen", arguments.clone())).await;
        assert_eq!(
            r["result"]["structuredContent"],
            json!({"query": "q", "limit_is_none": true, "filter_is_none": true}),
            "{arguments}: {r}"
        );
    }
    let r = send(&server, call("seen", json!({"query": "q", "limit": 3, "filter": {"kind": "task"}}))).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"query": "q", "limit_is_none": false, "filter_is_none": false})
    );
    // `null` for a field that is not optional is the schema's refusal, before the handler.
    // (An error result of a tool with an output schema carries no structured content: read the text.)
    let r = send(&server, call("seen", json!({"query": null}))).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(first_text(&r), "seen: invalid arguments: arguments.query must be of type string", "{r}");
    // The derived schema bounds what serde would refuse (a u8 above 255) before serde sees it.
    let r = send(&server, call("seen", json!({"query": "q", "limit": 300}))).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(first_text(&r), "seen: invalid arguments: arguments.limit must be <= 255");
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Counted {
    #[schemars(with = "String")]
    count: u32,
}

#[tokio::test]
async fn a_derived_schema_that_admits_what_serde_refuses_is_a_tool_error_naming_the_field_not_the_value() {
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    let tools = Tools::new().add_derived_input(
        ToolSpec::new("count", Mode::ReadOnly),
        move |args: Counted, _cx: RequestContext| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ToolError>(format!("{args:?}")) }
        },
    );
    let server = server_of(tools);
    let list = send(&server, modern(1, "tools/list", json!({}))).await;
    assert_eq!(list["result"]["tools"][0]["inputSchema"]["properties"]["count"]["type"], "string");
    for request in [
        call("count", json!({"count": "secret-twelve"})),
        bare(1, "tools/call", json!({"name": "count", "arguments": {"count": "secret-twelve"}})),
    ] {
        let r = send(&server, request).await;
        assert_eq!(r["result"]["isError"], true, "a tool error, never a JSON-RPC error or a panic: {r}");
        assert_eq!(
            r["result"]["structuredContent"],
            json!({"error": {"tool": "count", "reason": "invalid arguments: argument count does not have the form the tool reads"}})
        );
        assert!(!r.to_string().contains("secret-twelve"), "{r}");
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[derive(Serialize, JsonSchema)]
struct Misdeclared {
    #[schemars(with = "String")]
    total: u32,
}

#[tokio::test]
async fn a_derived_output_schema_is_enforced_like_a_hand_written_one() {
    let tools = Tools::new()
        .add_derived(ToolSpec::new("lies", Mode::ReadOnly), |_: Search, _cx: RequestContext| async {
            Ok::<_, ToolError>(Misdeclared { total: 7 })
        });
    let r = send(&server_of(tools), call("lies", json!({"query": "q"}))).await;
    assert_eq!(r, json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}));
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[allow(dead_code)]
struct Lookahead {
    #[schemars(pattern("(?=a)b"))]
    text: String,
}

#[test]
fn a_derived_schema_the_validator_refuses_is_a_build_error() {
    let input = Tools::new()
        .add_derived(ToolSpec::new("in", Mode::ReadOnly), |_: Lookahead, _cx: RequestContext| async {
            Ok::<_, ToolError>(Hits { hits: vec![], total: 0 })
        });
    let err = build(input).unwrap_err();
    assert!(
        matches!(&err, BuildError::ToolSchema { tool, error: SchemaError::UnsupportedPattern { .. } } if tool == "in"),
        "{err:?}"
    );
    let output = Tools::new()
        .add_derived(ToolSpec::new("out", Mode::ReadOnly), |_: Search, _cx: RequestContext| async {
            Ok::<_, ToolError>(Lookahead { text: "b".into() })
        });
    let err = build(output).unwrap_err();
    assert!(
        matches!(&err, BuildError::OutputSchema { tool, error: SchemaError::UnsupportedPattern { .. } } if tool == "out"),
        "{err:?}"
    );
    let input_only = Tools::new().add_derived_input(
        ToolSpec::new("only", Mode::ReadOnly),
        |_: Lookahead, _cx: RequestContext| async { Ok::<_, ToolError>("") },
    );
    assert!(matches!(build(input_only).unwrap_err(), BuildError::ToolSchema { .. }));
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "op")]
#[allow(dead_code)]
enum Operation {
    Add { x: u32 },
    Remove { y: u32 },
}

#[test]
fn a_derived_schema_whose_root_is_not_an_object_is_a_build_error() {
    let handler = |_: u32, _cx: RequestContext| async { Ok::<_, ToolError>(Hits { hits: vec![], total: 0 }) };
    assert_eq!(
        build(Tools::new().add_derived(ToolSpec::new("num", Mode::ReadOnly), handler)).unwrap_err(),
        BuildError::ToolSchemaNotObject("num".into())
    );
    let number_out = |_: Search, _cx: RequestContext| async { Ok::<_, ToolError>(7_u32) };
    assert_eq!(
        build(Tools::new().add_derived(ToolSpec::new("n_out", Mode::ReadOnly), number_out)).unwrap_err(),
        BuildError::OutputSchemaNotObject("n_out".into())
    );
    let list_out =
        |_: Search, _cx: RequestContext| async { Ok::<_, ToolError>(vec![Hit { id: 1, title: "t".into() }]) };
    assert_eq!(
        build(Tools::new().add_derived(ToolSpec::new("list_out", Mode::ReadOnly), list_out)).unwrap_err(),
        BuildError::OutputSchemaNotObject("list_out".into())
    );
    let text_in = |_: String, _cx: RequestContext| async { Ok::<_, ToolError>("") };
    assert_eq!(
        build(Tools::new().add_derived_input(ToolSpec::new("text_in", Mode::ReadOnly), text_in)).unwrap_err(),
        BuildError::ToolSchemaNotObject("text_in".into())
    );
    // A tagged enum is an object on the wire, but schemars writes `oneOf` with no root `type`.
    let tagged = |_: Operation, _cx: RequestContext| async { Ok::<_, ToolError>("") };
    assert_eq!(
        build(Tools::new().add_derived_input(ToolSpec::new("tagged", Mode::ReadOnly), tagged)).unwrap_err(),
        BuildError::ToolSchemaNotObject("tagged".into())
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Summarize {
    /// What to summarize.
    topic: String,
    /// The tone of the summary.
    style: Option<String>,
}

fn rendered(text: String) -> PromptOutput {
    PromptOutput {
        description: None,
        messages: vec![PromptMessage::new(Role::User, ContentBlock::text(text))],
    }
}

fn summarize_prompts() -> Prompts {
    let spec = PromptSpec::new("summarize")
        .description("Summarize a topic.")
        .argument(PromptArgument::new("declared_by_hand").required(true));
    Prompts::new().add_derived(spec, |args: Summarize, _cx: RequestContext| async move {
        Ok::<_, ReaderError>(rendered(format!("{} / {:?}", args.topic, args.style)))
    })
}

#[tokio::test]
async fn a_derived_prompt_declares_its_arguments_from_the_struct() {
    let server = Server::builder(Listing::new()).prompts(summarize_prompts()).build().unwrap();
    let list = send(&server, modern(1, "prompts/list", json!({}))).await;
    assert_eq!(
        list["result"]["prompts"][0],
        json!({
            "name": "summarize",
            "description": "Summarize a topic.",
            "arguments": [
                {"name": "topic", "description": "What to summarize.", "required": true},
                {"name": "style", "description": "The tone of the summary.", "required": false}
            ]
        }),
        "the struct's fields, in order, replace the arguments the spec declared"
    );
    let get =
        |arguments: Value| modern(1, "prompts/get", json!({"name": "summarize", "arguments": arguments}));
    let r = send(&server, get(json!({"topic": "rust"}))).await;
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "rust / None", "{r}");
    let r = send(&server, get(json!({"topic": "rust", "style": "terse"}))).await;
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "rust / Some(\"terse\")");
    let r = send(&server, get(json!({"style": "terse"}))).await;
    assert_eq!(code(&r), -32602, "the derived required argument is enforced: {r}");
    assert_eq!(r["error"]["data"]["reason"], "invalid arguments: arguments.topic is required");
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct NotStrings {
    topic: String,
    count: u32,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct OptionalNumber {
    count: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct ListOfStrings {
    tags: Vec<String>,
}

fn prompt_build_error<A>() -> BuildError
where
    A: serde::de::DeserializeOwned + JsonSchema + Send + 'static,
{
    let prompts = Prompts::new().add_derived(PromptSpec::new("p"), |_: A, _cx: RequestContext| async {
        Ok::<_, ReaderError>(PromptOutput::default())
    });
    Server::builder(Listing::new()).prompts(prompts).build().unwrap_err()
}

#[test]
fn a_derived_prompt_field_that_is_not_a_string_is_invalid_prompt() {
    for (err, field) in [
        (prompt_build_error::<NotStrings>(), "count"),
        (prompt_build_error::<OptionalNumber>(), "count"),
        (prompt_build_error::<ListOfStrings>(), "tags"),
    ] {
        assert!(
            matches!(&err, BuildError::InvalidPrompt { prompt, reason } if prompt == "p" && reason.contains(field)),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("prompt p: "), "{err}");
    }
    assert!(matches!(prompt_build_error::<String>(), BuildError::InvalidPrompt { .. }), "not a struct");
}

#[tokio::test]
async fn a_derived_output_schema_describes_what_serde_writes_so_skipped_fields_are_optional() {
    #[derive(Deserialize, JsonSchema)]
    struct Add {
        tags: Vec<String>,
    }
    #[derive(Serialize, JsonSchema)]
    struct Added {
        id: u64,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tags: Vec<String>,
    }
    let tools = Tools::new()
        .add_derived(ToolSpec::new("add", Mode::Proposal), |args: Add, _cx: RequestContext| async move {
            Ok::<_, ToolError>(Added { id: 1, tags: args.tags })
        });
    let server = Server::builder(Listing::new()).tools(tools).build().unwrap();
    let listed = send(&server, modern(1, "tools/list", json!({}))).await;
    let output = &listed["result"]["tools"][0]["outputSchema"];
    assert_eq!(output["required"], json!(["id"]), "a field serde may skip is not required: {output}");
    for tags in [json!([]), json!(["a"])] {
        let answer =
            send(&server, modern(2, "tools/call", json!({"name": "add", "arguments": {"tags": tags}}))).await;
        assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
        assert_eq!(answer["result"]["structuredContent"]["id"], json!(1), "{answer}");
    }
}

#[test]
fn a_derived_input_that_reads_undeclared_keys_is_refused_when_built() {
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Open {
        name: String,
        #[serde(flatten)]
        rest: std::collections::HashMap<String, Value>,
    }
    let tools = Tools::new().add_derived_input(
        ToolSpec::new("open", Mode::ReadOnly),
        |_: Open, _cx: RequestContext| async move { Ok::<_, ToolError>("never") },
    );
    let error = Server::builder(Listing::new()).tools(tools).build().unwrap_err();
    assert!(matches!(&error, BuildError::InvalidTool { tool, .. } if tool == "open"), "{error:?}");
    assert!(error.to_string().contains("declared properties only"), "{error}");
    let map = Tools::new().add_derived_input(
        ToolSpec::new("map", Mode::ReadOnly),
        |_: std::collections::HashMap<String, String>, _cx: RequestContext| async move {
            Ok::<_, ToolError>("never")
        },
    );
    assert!(matches!(
        Server::builder(Listing::new()).tools(map).build(),
        Err(BuildError::InvalidTool { .. })
    ));
}
