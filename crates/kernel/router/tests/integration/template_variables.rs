//! Template variables reach the reader decoded (`TemplateMatch`, `ReadResource::template()`): `{var}` is
//! percent-decoded, `{+var}` taken verbatim, a segment no expansion produces is not found, and a value
//! the reader cannot parse is "not found" naming the variable. Typed resources (`Resources`) are read
//! by their own readers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::*;
use mcp_kernel_router::resources::{
    ReadResource, ResourceSpec, ResourceTemplateSpec, Resources, TemplateMatch,
};
use mcp_kernel_router::wire::types::{ResourceContents, TextResourceContents};
use mcp_kernel_router::{BuildError, Listing, ReaderError, RequestContext, Server};
use serde_json::{Value, json};

/// The match as the reader saw it, as one text.
fn describe(found: &TemplateMatch) -> String {
    let variables: Vec<String> = found.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{} | {} | {}", found.template(), found.uri(), variables.join(","))
}

fn typed(reads: &Arc<AtomicUsize>) -> Resources {
    let counter = Arc::clone(reads);
    let parsed = Arc::clone(reads);
    Resources::new()
        .add(
            ResourceSpec::new("notes://index", "index").mime_type("text/plain"),
            |_cx: RequestContext| async {
                Ok::<_, ReaderError>(vec![ResourceContents::text("notes://index", "1\tfirst")])
            },
        )
        .template(ResourceTemplateSpec::new("notes://note/{id}", "note"), move |found: TemplateMatch, _cx| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ReaderError>(vec![ResourceContents::text(found.uri(), describe(&found))]) }
        })
        .template(
            ResourceTemplateSpec::new("files://{+path}", "file"),
            |found: TemplateMatch, _cx| async move {
                Ok::<_, ReaderError>(vec![ResourceContents::text(found.uri(), describe(&found))])
            },
        )
        .template(ResourceTemplateSpec::new("numbers://{n}", "number"), move |found: TemplateMatch, _cx| {
            parsed.fetch_add(1, Ordering::SeqCst);
            async move {
                let n: u64 = found.parse("n")?;
                Ok(vec![ResourceContents::text(found.uri(), format!("{}", n * 2))])
            }
        })
        .template(
            ResourceTemplateSpec::new("pairs://{a}/{+b}/{a}", "pair"),
            |found: TemplateMatch, _cx| async move {
                Ok::<_, ReaderError>(vec![ResourceContents::text(found.uri(), describe(&found))])
            },
        )
}

fn server(reads: &Arc<AtomicUsize>) -> Server {
    Server::builder(Listing::new()).resources(typed(reads)).build().expect("the typed resources build")
}

fn read(uri: &str) -> Value {
    modern(1, "resources/read", json!({"uri": uri}))
}

fn text(response: &Value) -> &str {
    response["result"]["contents"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {response}"))
}

#[tokio::test]
async fn a_percent_encoded_simple_variable_reaches_the_reader_decoded() {
    let server = server(&Arc::default());
    let r = send(&server, read("notes://note/%34%32")).await;
    assert_eq!(
        text(&r),
        "notes://note/{id} | notes://note/%34%32 | id=42",
        "the uri as sent, the value decoded"
    );
    let r = send(&server, read("notes://note/caf%C3%A9%20au%20lait")).await;
    assert_eq!(text(&r), "notes://note/{id} | notes://note/caf%C3%A9%20au%20lait | id=café au lait");
    assert_eq!(r["result"]["contents"][0]["uri"], "notes://note/caf%C3%A9%20au%20lait");
}

#[tokio::test]
async fn a_reserved_variable_keeps_slashes_and_encoded_slashes_verbatim() {
    let server = server(&Arc::default());
    let r = send(&server, read("files://docs/a%2Fb/c%20d.txt")).await;
    assert_eq!(text(&r), "files://{+path} | files://docs/a%2Fb/c%20d.txt | path=docs/a%2Fb/c%20d.txt");
}

#[tokio::test]
async fn a_repeated_variable_must_match_the_same_value_each_time() {
    let server = server(&Arc::default());
    let r = send(&server, read("pairs://x/p/q/%78")).await;
    assert_eq!(text(&r), "pairs://{a}/{+b}/{a} | pairs://x/p/q/%78 | a=x,b=p/q");
    let r = send(&server, read("pairs://x/p/y")).await;
    assert_eq!(r["error"]["data"], json!({"uri": "pairs://x/p/y"}), "{r}");
}

#[tokio::test]
async fn a_segment_no_expansion_produces_is_not_found_and_the_reader_never_runs() {
    let reads = Arc::new(AtomicUsize::new(0));
    let server = server(&reads);
    for uri in
        ["notes://note/%zz", "notes://note/%4", "notes://note/%", "notes://note/%FF", "notes://note/a%2"]
    {
        for (request, code_expected) in
            [(read(uri), -32602), (legacy(1, "resources/read", json!({"uri": uri})), -32002)]
        {
            let r = send(&server, request).await;
            assert_eq!(
                r["error"],
                json!({"code": code_expected, "message": "Resource not found", "data": {"uri": uri}}),
                "{uri}: {r}"
            );
        }
    }
    assert_eq!(reads.load(Ordering::SeqCst), 0, "the reader never ran");
}

#[tokio::test]
async fn a_variable_the_reader_cannot_parse_is_not_found_naming_the_variable_not_its_value() {
    let server = server(&Arc::default());
    let r = send(&server, read("numbers://21")).await;
    assert_eq!(text(&r), "42");
    for (value, request) in [
        ("4x2", read("numbers://4x2")),
        ("secret-value", read("numbers://secret-value")),
        ("secret-value", legacy(1, "resources/read", json!({"uri": "numbers://secret-value"}))),
    ] {
        let r = send(&server, request).await;
        assert_eq!(r["error"]["message"], "Resource not found", "{r}");
        let reason = r["error"]["data"]["reason"].as_str().unwrap();
        assert_eq!(reason, "the uri's n is not a valid u64");
        assert!(!reason.contains(value), "{reason}");
    }
}

#[tokio::test]
async fn a_typed_resource_is_listed_and_read_by_its_own_reader() {
    let server = server(&Arc::default());
    let list = send(&server, modern(1, "resources/list", json!({}))).await;
    assert_eq!(
        list["result"]["resources"],
        json!([{"uri": "notes://index", "name": "index", "mimeType": "text/plain"}])
    );
    let templates = send(&server, modern(1, "resources/templates/list", json!({}))).await;
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        ["files://{+path}", "notes://note/{id}", "numbers://{n}", "pairs://{a}/{+b}/{a}"]
    );
    let r = send(&server, read("notes://index")).await;
    assert_eq!(r["result"]["contents"], json!([{"uri": "notes://index", "text": "1\tfirst"}]));
}

async fn catalog_reader(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    let found = request.template().map(describe);
    Ok(vec![TextResourceContents::new(&request.uri, format!("host: {found:?}")).into()])
}

#[tokio::test]
async fn the_hosts_reader_and_a_plain_registered_reader_see_the_decoded_match() {
    let catalog = Listing {
        resources: vec![
            ResourceTemplateSpec::new("weather://place/{name}", "place").into(),
            ResourceSpec::new("weather://place/here", "here").into(),
        ],
        ..Listing::default()
    };
    let registered =
        Resources::new().add_reader(ResourceTemplateSpec::new("maps://{+area}", "map"), catalog_reader);
    let server =
        Server::builder(catalog).resource_reader(catalog_reader).resources(registered).build().unwrap();
    let r = send(&server, read("weather://place/S%C3%A3o%20Paulo")).await;
    assert_eq!(
        text(&r),
        "host: Some(\"weather://place/{name} | weather://place/S%C3%A3o%20Paulo | name=São Paulo\")"
    );
    let r = send(&server, read("maps://eu/no%2Fse")).await;
    assert_eq!(text(&r), "host: Some(\"maps://{+area} | maps://eu/no%2Fse | area=eu/no%2Fse\")");
    // A listed resource is read as itself before any template that matches its uri.
    let r = send(&server, read("weather://place/here")).await;
    assert_eq!(text(&r), "host: None");
}

#[test]
fn typed_and_catalog_resources_share_the_uri_and_template_key_spaces() {
    let handler = |_cx: RequestContext| async { Ok::<_, ReaderError>(vec![]) };
    let template = |_: TemplateMatch, _cx: RequestContext| async { Ok::<_, ReaderError>(vec![]) };
    let catalog = Listing {
        resources: vec![
            ResourceSpec::new("x://a", "a").into(),
            ResourceTemplateSpec::new("x://{id}", "t").into(),
        ],
        ..Listing::default()
    };
    let build = |resources: Resources| {
        Server::builder(catalog.clone())
            .resource_reader(catalog_reader)
            .resources(resources)
            .build()
            .map(drop)
    };
    assert_eq!(
        build(Resources::new().add(ResourceSpec::new("x://a", "again"), handler)),
        Err(BuildError::DuplicateResource("x://a".into()))
    );
    assert_eq!(
        build(Resources::new().template(ResourceTemplateSpec::new("x://{id}", "again"), template)),
        Err(BuildError::DuplicateTemplate("x://{id}".into()))
    );
    let bad = Resources::new().template(ResourceTemplateSpec::new("x://{?q}", "bad"), template);
    assert!(matches!(build(bad), Err(BuildError::InvalidTemplate { .. })));
    // Typed resources need no host reader; catalog ones still do.
    assert!(
        Server::builder(Listing::new())
            .resources(Resources::new().add(ResourceSpec::new("y://b", "b"), handler))
            .build()
            .is_ok()
    );
    let err = Server::builder(catalog)
        .resources(Resources::new().add(ResourceSpec::new("y://b", "b"), handler))
        .build();
    assert_eq!(err.map(drop), Err(BuildError::MissingResourceReader));
}

#[tokio::test]
async fn the_most_specific_matching_template_reads_the_uri() {
    let echo = |found: TemplateMatch, _cx: RequestContext| async move {
        Ok::<_, ReaderError>(vec![ResourceContents::text(found.uri(), found.template().to_owned())])
    };
    let resources = Resources::new()
        .template(ResourceTemplateSpec::new("a://{+rest}", "rest"), echo)
        .template(ResourceTemplateSpec::new("a://{x}", "any"), echo)
        .template(ResourceTemplateSpec::new("a://note/{id}", "note"), echo)
        .template(ResourceTemplateSpec::new("a://n{z}", "n"), echo);
    let server = Server::builder(Listing::new()).resources(resources).build().unwrap();
    for (uri, template) in [
        ("a://note/7", "a://note/{id}"),
        ("a://nine", "a://n{z}"),
        ("a://zed", "a://{x}"),
        ("a://deep/er/path", "a://{+rest}"),
    ] {
        assert_eq!(text(&send(&server, read(uri)).await), template, "{uri}");
    }
}

#[tokio::test]
async fn a_uri_longer_than_the_template_cap_matches_no_template() {
    let reads = Arc::new(AtomicUsize::new(0));
    let server = server(&reads);
    let long = format!("files://{}", "a/".repeat(40_000));
    let answer = send(&server, read(&long)).await;
    assert_eq!(
        answer["error"]["code"],
        json!(-32602),
        "not found (2026-07-28's code): {}",
        &answer.to_string()[..200]
    );
    let short = format!("files://{}", "a/".repeat(100));
    assert!(text(&send(&server, read(&short)).await).starts_with("files://{+path}"));
}

#[test]
fn a_template_with_more_than_eight_reserved_expressions_is_refused() {
    let nine: String = (0..9).map(|i| format!("{{+v{i}}}/")).collect();
    let resources = Resources::new().template(
        ResourceTemplateSpec::new(format!("x://{nine}"), "nine"),
        |found: TemplateMatch, _cx: RequestContext| async move {
            Ok::<_, ReaderError>(vec![ResourceContents::text(found.uri(), "")])
        },
    );
    let error = Server::builder(Listing::new()).resources(resources).build().unwrap_err();
    assert!(
        matches!(&error, BuildError::InvalidTemplate { reason, .. } if reason.contains("more than 8")),
        "{error:?}"
    );
}
