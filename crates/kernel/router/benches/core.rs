//! One `tools/call` through the core — decode (bounded reader), era switch, validation, dispatch to a
//! no-op tool, encode — and the validator alone. The dispatch future is ready at once, so the core is
//! polled once with no runtime: what is measured is the package's own work. The other results the core
//! builds (the lists, a read, a rendered prompt, a completion, `server/discover`, `initialize`, the
//! empty answers) are timed the same way against a small catalog, and the lookups whose cost could
//! grow with the catalog (`catalog/*`: a read against 10 to 10,000 templates, each with its own
//! literal prefix or all with one, with the template index and with the plain scan it replaced;
//! `tools/list` and `tools/call` against as many tools).
#![allow(missing_docs)] // criterion's macros generate undocumented public functions

mod support;

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use serde_json::json;
use support::catalog::{self, catalog_server};
use support::{MODERN_CALL, echo_schema, one_call, plain_server as server, typed_server};

const BARE_CALL: &[u8] =
    br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}"#;

fn bench_core(c: &mut Criterion) {
    let server = server();
    assert!(String::from_utf8(one_call(&server, MODERN_CALL)).unwrap().contains("hello"));
    c.bench_function("core/tools_call_modern", |b| b.iter(|| one_call(&server, black_box(MODERN_CALL))));
    // The typed path against the plain one, side by side (issue: at most 10% more).
    let typed = typed_server();
    assert_eq!(
        one_call(&typed, MODERN_CALL),
        one_call(&server, MODERN_CALL),
        "the same answer, byte for byte"
    );
    let mut group = c.benchmark_group("host_api");
    group.bench_function("tools_call_plain_dispatch", |b| {
        b.iter(|| one_call(&server, black_box(MODERN_CALL)))
    });
    group
        .bench_function("tools_call_typed_registry", |b| b.iter(|| one_call(&typed, black_box(MODERN_CALL))));
    group.finish();
    c.bench_function("core/tools_call_bare", |b| b.iter(|| one_call(&server, black_box(BARE_CALL))));
    c.bench_function("reader/bounded_read_modern_call", |b| {
        b.iter(|| mcp_kernel_router::wire::read_message(black_box(MODERN_CALL)).unwrap())
    });
    c.bench_function("reader/read_envelope_modern_call", |b| {
        b.iter(|| mcp_kernel_router::wire::read_envelope(black_box(MODERN_CALL)).unwrap())
    });
    c.bench_function("baseline/serde_json_parse_modern_call", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(MODERN_CALL)).unwrap())
    });
    c.bench_function("baseline/serde_json_roundtrip", |b| {
        b.iter(|| {
            let v: serde_json::Value = serde_json::from_slice(black_box(MODERN_CALL)).unwrap();
            serde_json::to_vec(&v).unwrap()
        })
    });
}

/// Every other result the core builds, one request each, through the same decode, core and encode.
fn bench_results(c: &mut Criterion) {
    let server = catalog_server();
    let paths: [(&str, &[u8]); 10] = [
        ("core/discover", catalog::DISCOVER),
        ("core/initialize_bare", catalog::INITIALIZE),
        ("core/ping_bare", catalog::PING),
        ("core/set_level_bare", catalog::SET_LEVEL),
        ("core/tools_list_modern", catalog::TOOLS_LIST),
        ("core/resources_list_modern", catalog::RESOURCES_LIST),
        ("core/prompts_list_modern", catalog::PROMPTS_LIST),
        ("core/resources_read_modern", catalog::RESOURCES_READ),
        ("core/prompts_get_modern", catalog::PROMPTS_GET),
        ("core/complete_modern", catalog::COMPLETE),
    ];
    for (name, request) in paths {
        let answer = String::from_utf8(one_call(&server, request)).unwrap();
        assert!(answer.contains(r#""result":"#), "{name} answers with a result: {answer}");
        c.bench_function(name, |b| b.iter(|| one_call(&server, black_box(request))));
    }
}

/// The paths whose cost could grow with the catalog, at 10, 1,000 and 10,000 items.
fn bench_catalog_size(c: &mut Criterion) {
    use support::scale;
    for n in scale::SIZES {
        for (prefixes, name) in [
            (scale::Prefixes::Own, "resources_read"),
            (scale::Prefixes::Shared, "resources_read_shared_prefix"),
        ] {
            let request = scale::read_near_the_end(n, prefixes);
            let indexed = scale::templates_server(n, prefixes, false);
            let linear = scale::templates_server(n, prefixes, true);
            let answer = one_call(&indexed, &request);
            assert!(String::from_utf8_lossy(&answer).contains("body text"), "the read finds its template");
            assert_eq!(answer, one_call(&linear, &request), "the same answer, byte for byte");
            let mut group = c.benchmark_group(format!("catalog/{name}"));
            group.bench_function(format!("templates_{n}"), |b| {
                b.iter(|| one_call(&indexed, black_box(&request)))
            });
            group.finish();
            let mut group = c.benchmark_group(format!("catalog/{name}_linear_scan"));
            group.bench_function(format!("templates_{n}"), |b| {
                b.iter(|| one_call(&linear, black_box(&request)))
            });
            group.finish();
        }

        let tools = scale::tools_server(n);
        let first_page = scale::tools_list(None);
        let call = scale::call_near_the_end(n);
        assert_eq!(scale::tools_list_full_walk(&tools), n, "the walk sees every tool once");
        assert!(String::from_utf8_lossy(&one_call(&tools, &call)).contains(r#""isError":false"#));
        let mut group = c.benchmark_group("catalog/tools_list_first_page");
        group.bench_function(format!("tools_{n}"), |b| b.iter(|| one_call(&tools, black_box(&first_page))));
        group.finish();
        let mut group = c.benchmark_group("catalog/tools_list_full_walk");
        group.bench_function(format!("tools_{n}"), |b| {
            b.iter(|| scale::tools_list_full_walk(black_box(&tools)))
        });
        group.finish();
        let mut group = c.benchmark_group("catalog/tools_call");
        group.bench_function(format!("tools_{n}"), |b| b.iter(|| one_call(&tools, black_box(&call))));
        group.finish();
    }
}

fn bench_validator(c: &mut Criterion) {
    let schema = mcp_kernel_router::schema::compile(&echo_schema()).expect("compiles");
    let good = json!({"message": "hello"});
    let bad = json!({"message": 5, "extra": true});
    c.bench_function("validator/valid", |b| b.iter(|| schema.validate(black_box(&good)).is_ok()));
    c.bench_function("validator/invalid", |b| b.iter(|| schema.validate(black_box(&bad)).is_err()));
}

fn bench_cursor(c: &mut Criterion) {
    use mcp_kernel_router::fuzzing::{CursorKind, decode, encode, page};
    let keys: Vec<String> = (0..10_000).map(|i| format!("test://resource/{i:05}")).collect();
    let cursor = encode(CursorKind::Resources, &keys[5_000]);
    c.bench_function("cursor/encode", |b| b.iter(|| encode(CursorKind::Resources, black_box(&keys[5_000]))));
    c.bench_function("cursor/decode", |b| b.iter(|| decode(CursorKind::Resources, black_box(&cursor))));
    c.bench_function("cursor/page_of_50_in_10000", |b| {
        b.iter(|| {
            page(&keys, |k| k.as_str(), CursorKind::Resources, Some(black_box(keys[5_000].as_str())), 50)
        })
    });
}

criterion_group!(benches, bench_core, bench_results, bench_catalog_size, bench_validator, bench_cursor);
criterion_main!(benches);
