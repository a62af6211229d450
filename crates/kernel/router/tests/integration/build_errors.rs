//! The builder refuses every catalog fault the compiler cannot see, naming it (protocol.md F-1 to F-3).

use mcp_kernel_router::prompts::{PromptArgument, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel_router::wire::types::ResourceContents;
use mcp_kernel_router::{
    BuildError, Catalog, Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::json;

async fn dispatch(_: ToolCall) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text(""))
}

async fn reader(_: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    Ok(vec![])
}

fn build(c: Listing) -> Result<Server, BuildError> {
    Server::builder(c)
        .dispatch(dispatch)
        .resource_reader(reader)
        .prompt_reader(|_: mcp_kernel_router::prompts::GetPrompt| async {
            Ok(mcp_kernel_router::prompts::PromptOutput::default())
        })
        .build()
}

fn tools(t: Vec<ToolSpec>) -> Listing {
    Listing { tools: t, ..Default::default() }
}

#[test]
fn refuses_a_repeated_tool_name() {
    let err = build(tools(vec![ToolSpec::new("a", Mode::ReadOnly), ToolSpec::new("a", Mode::Proposal)]))
        .unwrap_err();
    assert_eq!(err, BuildError::DuplicateTool("a".into()));
    assert_eq!(err.to_string(), "tool a: the name is listed twice");
}

#[test]
fn refuses_repeated_uris_templates_prompts_and_prompt_arguments() {
    let r = |u: &str| ResourceSpec::new(u, "n").into();
    let t = |u: &str| ResourceTemplateSpec::new(u, "n").into();
    let c = Listing { resources: vec![r("x://a"), r("x://a")], ..Default::default() };
    assert_eq!(build(c).unwrap_err(), BuildError::DuplicateResource("x://a".into()));
    let c = Listing { resources: vec![t("x://{a}"), t("x://{a}"), r("x://{a}")], ..Default::default() };
    assert_eq!(build(c).unwrap_err(), BuildError::DuplicateTemplate("x://{a}".into()));
    let c = Listing { resources: vec![t("x://{a}"), r("x://{a}")], ..Default::default() };
    assert!(build(c).is_ok(), "uris and templates are separate key spaces");
    let c = Listing { prompts: vec![PromptSpec::new("p"), PromptSpec::new("p")], ..Default::default() };
    assert_eq!(build(c).unwrap_err(), BuildError::DuplicatePrompt("p".into()));
    let p = PromptSpec::new("p").argument(PromptArgument::new("x")).argument(PromptArgument::new("x"));
    let c = Listing { prompts: vec![p], ..Default::default() };
    assert!(matches!(build(c).unwrap_err(), BuildError::DuplicatePromptArgument { .. }));
}

#[test]
fn refuses_unclaimed_template_expressions() {
    for bad in ["x://{?q}", "x://{a,b}", "x://{", "x://}"] {
        let c = Listing { resources: vec![ResourceTemplateSpec::new(bad, "n").into()], ..Default::default() };
        assert!(matches!(build(c).unwrap_err(), BuildError::InvalidTemplate { .. }), "{bad}");
    }
}

#[test]
fn refuses_listed_primitives_without_their_reader() {
    let c = Listing { resources: vec![ResourceSpec::new("x://a", "a").into()], ..Default::default() };
    assert_eq!(Server::builder(c).build().unwrap_err(), BuildError::MissingResourceReader);
    let c = Listing { prompts: vec![PromptSpec::new("p")], ..Default::default() };
    assert_eq!(Server::builder(c).build().unwrap_err(), BuildError::MissingPromptReader);
    let c = tools(vec![ToolSpec::new("t", Mode::ReadOnly)]);
    assert_eq!(Server::builder(c).build().unwrap_err(), BuildError::MissingDispatch);
    assert!(Server::builder(Listing::default()).build().is_ok(), "an empty catalog needs no functions");
}

#[test]
fn refuses_schemas_the_validator_cannot_enforce_naming_the_tool() {
    let remote = ToolSpec::new("remote", Mode::ReadOnly)
        .input_schema(json!({"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}));
    let err = build(tools(vec![remote])).unwrap_err();
    assert!(matches!(&err, BuildError::ToolSchema { tool, .. } if tool == "remote"), "{err}");
    assert!(err.to_string().starts_with("tool remote: "));
    let not_object = ToolSpec::new("arr", Mode::ReadOnly).input_schema(json!({"type":"array"}));
    assert_eq!(build(tools(vec![not_object])).unwrap_err(), BuildError::ToolSchemaNotObject("arr".into()));
    let header = ToolSpec::new("hdr", Mode::ReadOnly)
        .input_schema(json!({"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}));
    assert!(matches!(build(tools(vec![header])).unwrap_err(), BuildError::ToolSchema { .. }));
}

#[test]
fn refuses_non_object_required_capabilities() {
    let t = ToolSpec::new("t", Mode::ReadOnly).requires_client_capabilities(json!(["elicitation"]));
    assert_eq!(build(tools(vec![t])).unwrap_err(), BuildError::InvalidRequiredCapabilities("t".into()));
}

#[test]
fn refuses_empty_or_repeated_supported_versions() {
    use mcp_kernel_router::wire::ProtocolVersion::*;
    let b = || Server::builder(Listing::default());
    assert_eq!(b().supported_versions([]).build().unwrap_err(), BuildError::InvalidSupportedVersions);
    let twice = [V2026_07_28, V2026_07_28];
    assert_eq!(b().supported_versions(twice).build().unwrap_err(), BuildError::InvalidSupportedVersions);
}

#[test]
fn a_panicking_catalog_is_an_error_not_a_panic() {
    struct Bad;
    impl Catalog for Bad {
        fn listing(&self) -> Listing {
            panic!("catalog bug")
        }
    }
    assert_eq!(Server::builder(Bad).build().unwrap_err(), BuildError::CatalogPanicked);
}

#[test]
fn refuses_annotations_outside_the_schema() {
    use mcp_kernel_router::wire::types::Annotations;
    let annotations: Annotations = serde_json::from_value(json!({"priority": 1.5})).unwrap();
    let c = Listing {
        resources: vec![ResourceSpec::new("x://a", "a").annotations(annotations).into()],
        ..Default::default()
    };
    assert_eq!(build(c).unwrap_err(), BuildError::InvalidAnnotations("x://a".into()));
}
