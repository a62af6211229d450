//! Typed prompts (`Prompts`): a prompt declared with its renderer, its declared arguments validated as
//! for any prompt and then read as the renderer's type; a type that refuses what the declaration
//! admits is a prompt error naming the argument, never its value. (`Prompts::add_derived` is pinned in
//! `derived_schemas.rs`.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::*;
use mcp_kernel_router::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec, Prompts};
use mcp_kernel_router::wire::types::{ContentBlock, PromptMessage, Role};
use mcp_kernel_router::{BuildError, Listing, ReaderError, RequestContext, Server};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
struct Summarize {
    topic: String,
    style: Option<String>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Counted {
    count: u32,
}

fn rendered(text: String) -> PromptOutput {
    PromptOutput {
        description: Some("rendered".into()),
        messages: vec![PromptMessage::new(Role::User, ContentBlock::text(text))],
    }
}

fn summarize_spec() -> PromptSpec {
    PromptSpec::new("summarize")
        .argument(PromptArgument::new("topic").required(true).description("What to summarize."))
        .argument(PromptArgument::new("style"))
}

fn prompts(rendered_count: &Arc<AtomicUsize>) -> Prompts {
    let summarized = Arc::clone(rendered_count);
    let counted = Arc::clone(rendered_count);
    Prompts::new()
        .add(summarize_spec(), move |args: Summarize, _cx: RequestContext| {
            summarized.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ReaderError>(rendered(format!("{} / {:?}", args.topic, args.style))) }
        })
        .add(
            PromptSpec::new("count").argument(PromptArgument::new("count").required(true)),
            move |args: Counted, _cx: RequestContext| {
                counted.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, ReaderError>(rendered(format!("{args:?}"))) }
            },
        )
        .add_reader(PromptSpec::new("plain"), |request: GetPrompt| async move {
            Ok::<_, ReaderError>(rendered(format!("plain reader for {}", request.name)))
        })
}

fn server(rendered_count: &Arc<AtomicUsize>) -> Server {
    Server::builder(Listing::new()).prompts(prompts(rendered_count)).build().expect("the typed prompts build")
}

fn get(name: &str, arguments: Value) -> Value {
    modern(1, "prompts/get", json!({"name": name, "arguments": arguments}))
}

fn message(response: &Value) -> &str {
    response["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no message: {response}"))
}

#[tokio::test]
async fn a_typed_prompt_is_listed_and_rendered_from_its_arguments_struct() {
    let count = Arc::new(AtomicUsize::new(0));
    let server = server(&count);
    let list = send(&server, modern(1, "prompts/list", json!({}))).await;
    assert_eq!(names(&list, "prompts", "name"), ["count", "plain", "summarize"]);
    assert_eq!(
        list["result"]["prompts"][2]["arguments"],
        json!([{"name": "topic", "description": "What to summarize.", "required": true}, {"name": "style", "required": false}])
    );
    let r = send(&server, get("summarize", json!({"topic": "rust"}))).await;
    assert_eq!(message(&r), "rust / None");
    assert_eq!(r["result"]["description"], "rendered");
    let r = send(&server, get("summarize", json!({"topic": "rust", "style": "terse"}))).await;
    assert_eq!(message(&r), "rust / Some(\"terse\")");
    let r = send(&server, get("plain", json!({}))).await;
    assert_eq!(message(&r), "plain reader for plain");
}

#[tokio::test]
async fn a_typed_prompts_arguments_are_validated_before_the_renderer_runs() {
    let count = Arc::new(AtomicUsize::new(0));
    let server = server(&count);
    for arguments in [json!({}), json!({"topic": 5}), json!({"style": "terse"})] {
        let r = send(&server, get("summarize", arguments.clone())).await;
        assert_eq!(code(&r), -32602, "{arguments}: {r}");
        let reason = r["error"]["data"]["reason"].as_str().unwrap();
        assert!(reason.starts_with("invalid arguments: arguments.topic"), "{reason}");
    }
    assert_eq!(count.load(Ordering::SeqCst), 0, "the renderer never ran");
}

#[tokio::test]
async fn a_type_that_refuses_a_declared_argument_is_a_prompt_error_naming_it_not_its_value() {
    let count = Arc::new(AtomicUsize::new(0));
    let server = server(&count);
    for request in [
        get("count", json!({"count": "secret-twelve"})),
        legacy(1, "prompts/get", json!({"name": "count", "arguments": {"count": "secret-twelve"}})),
    ] {
        let r = send(&server, request).await;
        assert_eq!(
            r["error"],
            json!({
                "code": -32602,
                "message": "Invalid params: prompt cannot be rendered",
                "data": {"name": "count", "reason": "invalid arguments: argument count does not have the form the prompt reads"}
            }),
            "{r}"
        );
        assert!(!r.to_string().contains("secret-twelve"), "{r}");
    }
    assert_eq!(count.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn typed_prompts_are_served_beside_the_hosts_prompt_reader() {
    let catalog = Listing { prompts: vec![PromptSpec::new("hosted")], ..Listing::default() };
    let server = Server::builder(catalog)
        .prompt_reader(|request: GetPrompt| async move {
            Ok::<_, ReaderError>(rendered(format!("host renders {}", request.name)))
        })
        .prompts(prompts(&Arc::default()))
        .build()
        .unwrap();
    let list = send(&server, modern(1, "prompts/list", json!({}))).await;
    assert_eq!(
        names(&list, "prompts", "name"),
        ["count", "hosted", "plain", "summarize"],
        "one list, sorted by name"
    );
    assert_eq!(message(&send(&server, get("hosted", json!({}))).await), "host renders hosted");
    assert_eq!(message(&send(&server, get("summarize", json!({"topic": "t"}))).await), "t / None");
}

#[test]
fn a_typed_prompt_named_like_another_is_a_duplicate_and_catalog_prompts_still_need_a_reader() {
    let render = |_: Summarize, _cx: RequestContext| async { Ok::<_, ReaderError>(PromptOutput::default()) };
    let catalog = Listing { prompts: vec![PromptSpec::new("summarize")], ..Listing::default() };
    let reader = |_: GetPrompt| async { Ok::<_, ReaderError>(PromptOutput::default()) };
    let err = Server::builder(catalog.clone())
        .prompt_reader(reader)
        .prompts(Prompts::new().add(summarize_spec(), render))
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::DuplicatePrompt("summarize".into()));
    let err = Server::builder(catalog)
        .prompts(Prompts::new().add(PromptSpec::new("other"), render))
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::MissingPromptReader);
    let repeated = PromptSpec::new("p").argument(PromptArgument::new("x")).argument(PromptArgument::new("x"));
    let err =
        Server::builder(Listing::new()).prompts(Prompts::new().add(repeated, render)).build().unwrap_err();
    assert!(matches!(err, BuildError::DuplicatePromptArgument { .. }), "{err:?}");
}

#[tokio::test]
async fn an_undeclared_prompt_argument_is_refused_without_repeating_its_name() {
    let count = Arc::new(AtomicUsize::new(0));
    let server = server(&count);
    let hostile = "<script>alert(1)</script>SECRET";
    for (sent, expected) in [
        (
            json!({"topic": "x", hostile: "v"}),
            "invalid arguments: one argument is not one the prompt declares",
        ),
        (
            json!({"topic": "x", hostile: "v", "other": "w"}),
            "invalid arguments: 2 arguments are not ones the prompt declares",
        ),
    ] {
        let answer = send(&server, get("summarize", sent)).await;
        let text = answer.to_string();
        assert!(!text.contains("SECRET") && !text.contains("other"), "{text}");
        assert_eq!(answer["error"]["message"], json!(format!("Invalid params: {expected}")));
        assert_eq!(answer["error"]["data"]["reason"], json!(expected));
    }
    assert_eq!(count.load(Ordering::SeqCst), 0, "the renderer never ran");
}
