#![cfg(all(feature = "schemars", feature = "fuzzing"))]
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use mcp_kernel_router::fuzzing::UriTemplate;
use mcp_kernel_router::wire::types::ResourceContents;
use mcp_kernel_router::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn cap(t: &str, u: &str) -> Option<Vec<(String, String)>> {
    UriTemplate::parse(t)
        .unwrap()
        .captures(u)
        .map(|v| v.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

#[test]
fn t_percent_sign_forms() {
    for u in ["a/%+1", "a/%+A", "a/%-1", "a/%00", "a/%2F..%2F", "a/%0A", "a/%C0%AF", "a/%ED%A0%80"] {
        println!("{u:?} -> {:?}", cap("a/{x}", u));
    }
}

#[test]
fn t_repeated() {
    println!("xx abab {:?}", cap("a://{x}{x}", "a://abab"));
    println!("pp {:?}", cap("a://{+p}/{+p}", "a://b/c/b/c"));
    println!("x-x {:?}", cap("a://{x}-{x}", "a://a-b-a-b"));
}

#[test]
fn t_huge() {
    let t = UriTemplate::parse("a/{x}").unwrap();
    let u = format!("a/{}", "%41".repeat(1_000_000));
    let s = Instant::now();
    let r = t.captures(&u).map(|v| v[0].1.len());
    println!("3MB triplets: {:?} in {:?}", r, s.elapsed());
    let t = UriTemplate::parse("a/{+x}/{+y}/{+z}/{x}").unwrap();
    let u = format!("a/{}", "b/".repeat(500_000));
    let s = Instant::now();
    let r = t.captures(&u).is_some();
    println!("1MB slashes multi: {:?} in {:?}", r, s.elapsed());
    // repeated var, 5 times
    let t = UriTemplate::parse("a/{+x}{+x}{+x}{+x}{+x}{+x}{+x}{+x}").unwrap();
    let u = format!("a/{}", "ab".repeat(8 * 50_000));
    let s = Instant::now();
    let r = t.captures(&u).is_some();
    println!("repeated 8x: {:?} in {:?}", r, s.elapsed());
}

fn reader_server(templates: &[&str]) -> Server {
    let mut res = Resources::new();
    for t in templates {
        let t2 = t.to_string();
        res = res.template(ResourceTemplateSpec::new(*t, "n"), move |found: TemplateMatch, _cx| {
            let t2 = t2.clone();
            async move {
                let vars: Vec<String> = found.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
                Ok::<_, ReaderError>(vec![ResourceContents::text(
                    found.uri(),
                    format!("{t2} {}", vars.join(",")),
                )])
            }
        });
    }
    Server::builder(Listing::new()).resources(res).build().unwrap()
}

#[tokio::test]
async fn t_overlap() {
    let s = reader_server(&["a://{x}", "a://{+y}", "a://n{z}"]);
    let c = TestClient::new(s);
    for u in ["a://note", "a://n/x", "a://%2B1", "a://%+A"] {
        let r = c.read_resource(u).await;
        println!("{u} -> {:?}", r.map(|r| serde_json::to_string(&r.result.contents).unwrap()));
    }
}

#[derive(Deserialize, JsonSchema, Debug)]
struct Flat {
    q: String,
    #[serde(flatten)]
    extra: HashMap<String, u32>,
}
#[derive(Deserialize, JsonSchema, Debug)]
struct Inner {
    a: u32,
    b: String,
}
#[derive(Deserialize, JsonSchema, Debug)]
struct FlatStruct {
    q: String,
    #[serde(flatten)]
    inner: Inner,
}
#[derive(Deserialize, JsonSchema, Debug)]
struct Map {
    m: HashMap<String, u32>,
}
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(tag = "op")]
enum Tagged {
    Add { a: i32 },
    Sub { a: i32 },
}
#[derive(Deserialize, JsonSchema, Debug)]
struct Ints {
    a: i32,
    b: u64,
    c: f32,
}
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
struct Strict {
    a: u32,
}
#[derive(Deserialize, JsonSchema, Debug)]
struct Aliased {
    #[serde(alias = "query")]
    q: String,
}
#[derive(Deserialize, JsonSchema, Debug)]
struct Defaulted {
    #[serde(default)]
    n: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    o: Option<u8>,
}

#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

fn tools() -> Result<Server, BuildError> {
    let t = Tools::new()
        .add_derived(ToolSpec::new("flat", Mode::ReadOnly), |a: Flat, _cx: RequestContext| async move {
            println!("  flat handler got {a:?}");
            Ok::<_, ToolError>(Out { ok: true })
        })
        .add_derived(
            ToolSpec::new("flatstruct", Mode::ReadOnly),
            |a: FlatStruct, _cx: RequestContext| async move {
                println!("  flatstruct handler got {a:?}");
                Ok::<_, ToolError>(Out { ok: true })
            },
        )
        .add_derived(ToolSpec::new("map", Mode::ReadOnly), |a: Map, _cx: RequestContext| async move {
            println!("  map handler got {a:?}");
            Ok::<_, ToolError>(Out { ok: true })
        })
        .add_derived(ToolSpec::new("ints", Mode::ReadOnly), |a: Ints, _cx: RequestContext| async move {
            println!("  ints handler got {a:?}");
            Ok::<_, ToolError>(Out { ok: true })
        })
        .add_derived(ToolSpec::new("strict", Mode::ReadOnly), |a: Strict, _cx: RequestContext| async move {
            println!("  strict got {a:?}");
            Ok::<_, ToolError>(Out { ok: true })
        })
        .add_derived(ToolSpec::new("alias", Mode::ReadOnly), |a: Aliased, _cx: RequestContext| async move {
            println!("  alias got {a:?}");
            Ok::<_, ToolError>(Out { ok: true })
        })
        .add_derived(ToolSpec::new("def", Mode::ReadOnly), |a: Defaulted, _cx: RequestContext| async move {
            println!("  def got {a:?}");
            Ok::<_, ToolError>(Out { ok: true })
        })
        .add(
            ToolSpec::new("hmap_noschema", Mode::ReadOnly),
            |a: HashMap<String, Value>, _cx: RequestContext| async move {
                println!("  hmap got {a:?}");
                Ok::<_, ToolError>("ok")
            },
        );
    Server::builder(Listing::new()).tools(t).build()
}

#[tokio::test]
async fn t_derived() {
    let s = tools().unwrap();
    let c = TestClient::new(s);
    for t in c.list_tools().await.unwrap() {
        println!("{}: {}", t.name, serde_json::to_string(&t.input_schema).unwrap());
    }
    let calls = [
        ("flat", json!({"q": "x", "k1": 5, "SECRETKEY": 7})),
        ("flat", json!({"q": "x", "SECRETKEY": "notnum"})),
        ("flatstruct", json!({"q": "x", "a": 1, "b": "s"})),
        ("flatstruct", json!({"q": "x", "a": "SECRETVAL", "b": "s"})),
        ("map", json!({"m": {"SECRETKEY": "SECRETVAL"}})),
        ("map", json!({"m": {"ok": 1}})),
        ("ints", json!({"a": 3000000000u64, "b": 1, "c": 1.0})),
        ("ints", json!({"a": 1, "b": 1e30, "c": 1e300})),
        ("ints", json!({"a": 1.0, "b": 2.0, "c": 1})),
        ("strict", json!({"a": 1, "SECRETKEY": 2})),
        ("alias", json!({"query": "x"})),
        ("def", json!({"n": null})),
        ("hmap_noschema", json!({"a": 1})),
    ];
    for (n, a) in calls {
        let r = c.call_tool(n, a.clone()).await;
        println!("{n} {a} -> {:?}", r.map(|r| serde_json::to_string(&r.result).unwrap()));
    }
}

#[test]
fn t_tagged_build() {
    let t = Tools::new().add_derived(
        ToolSpec::new("tagged", Mode::ReadOnly),
        |a: Tagged, _cx: RequestContext| async move {
            println!("{a:?}");
            Ok::<_, ToolError>(Out { ok: true })
        },
    );
    let r = Server::builder(Listing::new()).tools(t).build();
    println!("tagged build: {:?}", r.as_ref().err());
    if let Ok(s) = r {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let c = TestClient::new(s);
            println!("schema {:?}", c.list_tools().await.unwrap()[0].input_schema);
            println!(
                "{:?}",
                c.call_tool("tagged", json!({"op": "Add", "a": 1}))
                    .await
                    .map(|r| serde_json::to_string(&r.result).unwrap())
            );
        });
    }
}

#[tokio::test]
async fn t_filter_panics() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    let mut listing = Listing::new();
    for i in 0..2000 {
        listing.prompts.push(PromptSpec::new(format!("p{i:05}")));
    }
    let s = Server::builder(listing)
        .prompt_reader(|_g: GetPrompt| async move { Err::<PromptOutput, _>(ReaderError::new("x")) })
        .page_size(std::num::NonZeroUsize::new(1).unwrap())
        .visibility(move |_i: Listed<'_>, cx: &RequestContext| {
            c2.fetch_add(1, Ordering::Relaxed);
            let _: &String = cx.principal::<String>().unwrap();
            true
        })
        .build()
        .unwrap();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let c = TestClient::new(s);
    let t = Instant::now();
    let r = c.request("prompts/list", json!({})).await;
    println!(
        "panicking filter: {:?} calls={} in {:?}",
        r.map(|r| r.result),
        calls.load(Ordering::Relaxed),
        t.elapsed()
    );
    std::panic::set_hook(prev);
}

#[tokio::test]
async fn t_page_cost() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    let mut listing = Listing::new();
    for i in 0..10000 {
        listing.prompts.push(PromptSpec::new(format!("p{i:05}")));
    }
    let s = Server::builder(listing)
        .prompt_reader(|_g: GetPrompt| async move { Err::<PromptOutput, _>(ReaderError::new("x")) })
        .page_size(std::num::NonZeroUsize::new(1).unwrap())
        .visibility(move |i: Listed<'_>, _cx: &RequestContext| {
            c2.fetch_add(1, Ordering::Relaxed);
            match i {
                Listed::Prompt(n) => n.ends_with("000"),
                _ => true,
            }
        })
        .build()
        .unwrap();
    let c = TestClient::new(s);
    let all = c.list_prompts().await.unwrap();
    println!("visible {} filter calls {}", all.len(), calls.load(Ordering::Relaxed));
}
