//! Per-caller resources (`ServerBuilder::resource_source`): `resources/list` serves the catalog's
//! resources, then the caller's own, under one cursor that names its phase; `resources/read` accepts a
//! source's uri only for a caller the source says has it, and answers any other exactly as an unlisted
//! uri; a source that fails or panics is answered -32603 with nothing more.

use std::num::NonZeroUsize;

use base64::Engine;
use mcp_kernel_router::options::CacheHints;
use mcp_kernel_router::resources::{ReadResource, ResourceSource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel_router::visibility::Listed;
use mcp_kernel_router::wire::types::{CacheScope, ResourceContents, TextResourceContents};
use mcp_kernel_router::{BoxFuture, Listing, ReaderError, RequestContext, Server, ServerBuilder};
use serde_json::{Value, json};

use crate::support::*;

/// The catalog's resources; the filter hides `a://2-hidden` from everyone, and `u://shared` is also
/// one of alice's.
const CATALOG: [&str; 5] = ["a://1", "a://2-hidden", "a://3", "a://4", "u://shared"];

/// Each caller's own uris, in order; "messy" answers with every uri twice and from `after` on (its
/// own off-by-one), "fails" with an error, "panics" by panicking.
struct Bookmarks;

fn owned(caller: &str) -> Vec<String> {
    let uris: &[&str] = match caller {
        "alice" => &["u://alice/1", "u://alice/2", "u://alice/3", "u://shared"],
        "bob" => &["u://bob/1", "u://bob/2"],
        "messy" => &["u://m/1", "u://m/2", "u://m/3", "u://m/4"],
        _ => &[],
    };
    uris.iter().map(|uri| (*uri).to_owned()).collect()
}

impl ResourceSource for Bookmarks {
    fn list<'a>(
        &'a self,
        cx: &'a RequestContext,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ResourceSpec>, ReaderError>> {
        Box::pin(async move {
            let caller = cx.caller::<String>()?.as_str();
            match caller {
                "fails" => return Err(ReaderError::new("database password is hunter2")),
                "panics" => panic!("source bug hunter2"),
                _ => {}
            }
            let uris = owned(caller).into_iter();
            let page: Vec<String> = if caller == "messy" {
                uris.filter(|uri| after.is_none_or(|a| uri.as_str() >= a))
                    .flat_map(|u| [u.clone(), u])
                    .collect()
            } else {
                uris.filter(|uri| after.is_none_or(|a| uri.as_str() > a)).collect()
            };
            Ok(page
                .into_iter()
                .take(limit)
                .map(|uri| ResourceSpec::new(uri, "bookmark").mime_type("text/uri-list"))
                .collect())
        })
    }

    fn contains<'a>(&'a self, cx: &'a RequestContext, uri: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let caller = cx.principal::<String>().map(String::as_str).unwrap_or_default();
            if caller == "panics" {
                panic!("contains bug");
            }
            owned(caller).iter().any(|owned| owned == uri)
        })
    }
}

async fn read(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    let caller = request.context.caller::<String>()?;
    let via = request.template().map(|found| found.template().to_owned());
    Ok(vec![
        TextResourceContents::new(&request.uri, format!("{} for {caller} via {via:?}", request.uri)).into(),
    ])
}

fn listing() -> Listing {
    let resources = CATALOG.iter().map(|uri| ResourceSpec::new(*uri, "fixed").into());
    let template = ResourceTemplateSpec::new("t://{x}", "t").into();
    Listing { resources: resources.chain([template]).collect(), ..Listing::default() }
}

fn hides_hidden(item: Listed<'_>, _: &RequestContext) -> bool {
    !matches!(item, Listed::Resource(uri) if uri.contains("hidden"))
}

fn builder(page: usize) -> ServerBuilder {
    Server::builder(listing())
        .resource_reader(read)
        .visibility(hides_hidden)
        .page_size(NonZeroUsize::new(page).unwrap())
}

fn with_source(page: usize) -> Server {
    builder(page).resource_source(Bookmarks).build().expect("the source host builds")
}

/// The same catalog and filter with no source: what a caller with no resources of their own sees.
fn without_source(page: usize) -> Server {
    builder(page).build().expect("the catalog builds")
}

/// Every page of `resources/list` for `caller`, following `nextCursor` (at most 20 pages).
async fn pages(server: &Server, caller: Option<&str>) -> Vec<Value> {
    let mut responses = Vec::new();
    let mut params = json!({});
    loop {
        let response = send_as(server, caller, modern(1, "resources/list", params.clone())).await;
        let next = response["result"]["nextCursor"].as_str().map(str::to_owned);
        responses.push(response);
        match next {
            Some(cursor) if responses.len() < 20 => params = json!({"cursor": cursor}),
            _ => return responses,
        }
    }
}

fn uris(pages: &[Value]) -> Vec<Vec<String>> {
    pages.iter().map(|page| names(page, "resources", "uri")).collect()
}

/// What a cursor holds (base64url JSON).
fn opened(cursor: &Value) -> Value {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(cursor.as_str().unwrap()).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn lists_the_catalog_then_each_callers_own_resources_with_pages_straddling_the_two() {
    let server = with_source(3);
    let alice = pages(&server, Some("alice")).await;
    assert_eq!(
        uris(&alice),
        [
            vec!["a://1", "a://3", "a://4"],
            vec!["u://shared", "u://alice/1", "u://alice/2"],
            vec!["u://alice/3"]
        ],
        "u://shared is listed once, in the catalog's phase"
    );
    assert_eq!(opened(&alice[0]["result"]["nextCursor"]), json!({"a": "a://4", "k": "resources", "v": 1}));
    assert_eq!(
        opened(&alice[1]["result"]["nextCursor"]),
        json!({"a": "u://alice/2", "k": "resources", "p": "source", "v": 1})
    );
    let bob = pages(&server, Some("bob")).await;
    assert_eq!(uris(&bob), [vec!["a://1", "a://3", "a://4"], vec!["u://shared", "u://bob/1", "u://bob/2"]]);
    let nobody = pages(&server, None).await;
    assert_eq!(uris(&nobody), [vec!["a://1", "a://3", "a://4"], vec!["u://shared"]]);
    assert_eq!(
        nobody,
        pages(&without_source(3), None).await,
        "no caller: the catalog's pages, byte for byte"
    );
    // A source item is encoded as a catalog resource is.
    assert_eq!(
        alice[2]["result"]["resources"][0],
        json!({"uri": "u://alice/3", "name": "bookmark", "mimeType": "text/uri-list"})
    );
}

#[tokio::test]
async fn a_page_the_catalog_fills_exactly_ends_with_a_cursor_only_when_the_caller_has_resources() {
    let server = with_source(4);
    let alice = pages(&server, Some("alice")).await;
    assert_eq!(
        uris(&alice),
        [vec!["a://1", "a://3", "a://4", "u://shared"], vec!["u://alice/1", "u://alice/2", "u://alice/3"]]
    );
    assert_eq!(
        opened(&alice[0]["result"]["nextCursor"]),
        json!({"a": "u://shared", "k": "resources", "v": 1})
    );
    let nobody = pages(&server, None).await;
    assert_eq!(uris(&nobody), [vec!["a://1", "a://3", "a://4", "u://shared"]]);
    assert!(nobody[0]["result"].get("nextCursor").is_none());
}

#[tokio::test]
async fn a_cursor_from_one_caller_never_reveals_that_callers_resources_to_another() {
    let server = with_source(3);
    let alice = pages(&server, Some("alice")).await;
    for page in &alice[..2] {
        let cursor = &page["result"]["nextCursor"];
        let request = modern(1, "resources/list", json!({"cursor": cursor}));
        for other in [Some("bob"), None] {
            let listed = send_as(&server, other, request.clone()).await;
            let seen = names(&listed, "resources", "uri");
            assert!(seen.iter().all(|uri| !uri.contains("alice")), "{other:?} saw {seen:?}");
        }
    }
    let into_source = modern(1, "resources/list", json!({"cursor": alice[1]["result"]["nextCursor"]}));
    let bob = send_as(&server, Some("bob"), into_source.clone()).await;
    assert_eq!(
        names(&bob, "resources", "uri"),
        ["u://bob/1", "u://bob/2"],
        "bob's own, after alice's position"
    );
    let nobody = send_as(&server, None, into_source).await;
    assert_eq!(nobody["result"]["resources"], json!([]));
}

#[tokio::test]
async fn a_forged_or_foreign_cursor_is_refused_exactly_as_without_a_source() {
    let (server, plain) = (with_source(3), without_source(3));
    let encode = |json: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
    let source_cursor = encode(r#"{"a":"u://alice/2","k":"resources","p":"source","v":1}"#);
    for cursor in [
        "!!!".to_owned(),
        encode(r#"{"a":"x","k":"prompts","v":1}"#),
        encode(r#"{"a":"x","k":"resources","p":"other","v":1}"#),
        encode(r#"{"a":"x","k":"resources","v":2}"#),
    ] {
        let request = modern(1, "resources/list", json!({"cursor": cursor}));
        let refused = send_as(&server, Some("alice"), request.clone()).await;
        assert_eq!(refused, send_as(&plain, Some("alice"), request).await, "{cursor}");
        assert_eq!(code(&refused), -32602, "{cursor}");
    }
    // A cursor into the source's phase belongs to resources/list: another list refuses it as another
    // list's, without naming the list.
    let catalog_cursor = encode(r#"{"a":"x","k":"resources","v":1}"#);
    for method in ["prompts/list", "resources/templates/list"] {
        let foreign =
            send_as(&server, Some("alice"), modern(1, method, json!({"cursor": source_cursor}))).await;
        let as_today =
            send_as(&plain, Some("alice"), modern(1, method, json!({"cursor": catalog_cursor}))).await;
        assert_eq!(foreign, as_today, "{method}");
    }
    // A server with no source knows no source phase: malformed, as before there was one.
    let refused =
        send_as(&plain, Some("alice"), modern(1, "resources/list", json!({"cursor": source_cursor}))).await;
    assert_eq!(refused["error"]["message"], "Invalid params: cursor is malformed");
}

#[tokio::test]
async fn reading_another_callers_resource_is_answered_exactly_as_an_unlisted_uri() {
    let (server, plain) = (with_source(3), without_source(3));
    for make in [modern as fn(i64, &str, Value) -> Value, legacy] {
        for (caller, uri) in [
            (Some("bob"), "u://alice/1"),
            (None, "u://alice/1"),
            (Some("alice"), "u://bob/2"),
            (Some("alice"), "u://alice/9"),
            (Some("alice"), ""),
            (Some("panics"), "u://alice/1"),
        ] {
            let request = make(1, "resources/read", json!({"uri": uri}));
            let refused = send_as(&server, caller, request.clone()).await;
            assert_eq!(refused, send_as(&plain, caller, request).await, "{caller:?} {uri}");
            assert_eq!(refused["error"]["data"], json!({"uri": uri}), "{refused}");
        }
    }
    let own =
        send_as(&server, Some("alice"), modern(1, "resources/read", json!({"uri": "u://alice/1"}))).await;
    assert_eq!(own["result"]["contents"][0]["text"], "u://alice/1 for alice via None", "{own}");
    let templated = send_as(&server, Some("bob"), modern(1, "resources/read", json!({"uri": "t://y"}))).await;
    assert_eq!(templated["result"]["contents"][0]["text"], "t://y for bob via Some(\"t://{x}\")");
    let hidden =
        send_as(&server, Some("alice"), modern(1, "resources/read", json!({"uri": "a://2-hidden"}))).await;
    assert_eq!(
        hidden["error"]["data"],
        json!({"uri": "a://2-hidden"}),
        "the filter still hides catalog items"
    );
}

#[tokio::test]
async fn a_source_that_fails_or_panics_is_answered_internal_error_with_nothing_more() {
    let server = with_source(3);
    let (logs, _guard) = capture_logs();
    for caller in ["fails", "panics"] {
        // The first page is the catalog's, and asks the source nothing: it is full and more follow.
        let first = send_as(&server, Some(caller), modern(1, "resources/list", json!({}))).await;
        assert_eq!(names(&first, "resources", "uri").len(), 3);
        let request = modern(1, "resources/list", json!({"cursor": first["result"]["nextCursor"]}));
        let failed = send_as(&server, Some(caller), request).await;
        assert_eq!(failed["error"], json!({"code": -32603, "message": "Internal error"}), "{caller}");
    }
    let logged = logs.text();
    assert!(logged.contains("the resource source failed to list"), "{logged}");
    assert!(logged.contains("the resource source panicked"), "{logged}");
    let read = send_as(&server, Some("panics"), modern(1, "resources/read", json!({"uri": "u://x"}))).await;
    assert_eq!(code(&read), -32602, "a panic in contains is a no");
    assert!(logs.text().contains("panicked in contains"));
    assert!(!logs.text().contains("hunter2"), "nothing of the source's error reaches the log");
}

#[tokio::test]
async fn a_source_page_out_of_order_or_repeated_is_never_served_twice() {
    let (logs, _guard) = capture_logs();
    let listed: Vec<String> = uris(&pages(&with_source(3), Some("messy")).await).concat();
    assert_eq!(listed, ["a://1", "a://3", "a://4", "u://shared", "u://m/1", "u://m/2", "u://m/3", "u://m/4"]);
    assert!(logs.text().contains("skipped=") && logs.text().contains("out of order"), "{}", logs.text());
}

#[tokio::test]
async fn with_a_source_every_resource_result_is_private() {
    let public = CacheHints { ttl_ms: 60_000, scope: CacheScope::Public };
    let unfiltered = || Server::builder(listing()).resource_reader(read).resources_cache(public);
    for (server, scope) in [
        (unfiltered().build().unwrap(), "public"),
        (unfiltered().resource_source(Bookmarks).build().unwrap(), "private"),
    ] {
        let listed = send_as(&server, Some("alice"), modern(1, "resources/list", json!({}))).await;
        let read =
            send_as(&server, Some("alice"), modern(1, "resources/read", json!({"uri": "a://1"}))).await;
        for answer in [listed, read] {
            assert_eq!(answer["result"]["cacheScope"], scope, "{answer}");
            assert_eq!(answer["result"]["ttlMs"], 60_000);
        }
    }
}

#[test]
fn a_source_without_a_resource_reader_is_refused_when_built() {
    let err = Server::builder(Listing::new()).resource_source(Bookmarks).build().unwrap_err();
    assert_eq!(err, mcp_kernel_router::BuildError::SourceWithoutReader);
    assert!(err.to_string().contains("no resource reader"), "{err}");
}
