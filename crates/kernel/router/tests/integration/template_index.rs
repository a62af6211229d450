//! The template index (`src/template_index.rs`) changes what a `resources/read` costs, never what it
//! answers: the most specific matching template is read whatever the catalog's order, a template the
//! visibility filter hides is never matched, and over random catalogs and uris a server that consults
//! the index answers byte for byte what one that tries every template in turn answers
//! (`fuzzing::linear_template_scan`), having asked its filter the same questions in the same order.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use mcp_kernel_router::completion::{Completion, CompletionRef, CompletionRequest};
use mcp_kernel_router::fuzzing::{MAX_TEMPLATE_URI_BYTES, linear_template_scan};
use mcp_kernel_router::resources::{ReadResource, ResourceTemplateSpec};
use mcp_kernel_router::visibility::Listed;
use mcp_kernel_router::wire::types::ResourceContents;
use mcp_kernel_router::{Listing, ReaderError, RequestContext, Server, ServerBuilder};
use proptest::prelude::*;
use serde_json::{Value, json};

/// The templates a filter was asked about, in order.
type Asked = Arc<Mutex<Vec<String>>>;

/// The reader: the template the uri matched and its variables, as one text.
async fn echo(read: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    let found = read.template().map_or_else(String::new, |found| {
        let variables: Vec<String> = found.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
        format!("{} {}", found.template(), variables.join(","))
    });
    Ok(vec![ResourceContents::text(read.uri, found)])
}

fn listing(templates: &[String]) -> Listing {
    let mut listing = Listing::new();
    for (i, template) in templates.iter().enumerate() {
        listing.resources.push(ResourceTemplateSpec::new(template.clone(), format!("t{i}")).into());
    }
    listing
}

/// A server over `templates` (listed in the given order) whose filter hides `hidden` and records what
/// it was asked; `linear`: reads try every template in turn, as before the index.
fn server(templates: &[String], hidden: &BTreeSet<String>, linear: bool) -> (Server, Asked) {
    let asked: Asked = Arc::default();
    let log = Arc::clone(&asked);
    let hidden = hidden.clone();
    let builder = Server::builder(listing(templates)).resource_reader(echo).visibility(
        move |item: Listed<'_>, _: &RequestContext| match item {
            Listed::Template(t) => {
                log.lock().unwrap().push(t.to_owned());
                !hidden.contains(t)
            }
            _ => true,
        },
    );
    let builder: ServerBuilder = if linear { linear_template_scan(builder) } else { builder };
    (builder.build().expect("the templates build"), asked)
}

/// The answer to a `resources/read` of `uri` (the reader's future is ready at once).
fn read(server: &Server, uri: &str) -> Value {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}});
    let handled = server.handle(message).now_or_never().expect("the reader is ready at once");
    handled.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

/// The template that read `uri`, or `None` for "not found".
fn read_by(server: &Server, uri: &str) -> Option<String> {
    let answer = read(server, uri);
    let text = answer["result"]["contents"][0]["text"].as_str()?;
    Some(text.split(' ').next().unwrap_or_default().to_owned())
}

/// Many templates sharing one prefix (enough for the index to match them through a set), a few more
/// specific ones among them, and some with other prefixes.
fn many() -> Vec<String> {
    let mut templates: Vec<String> = (0..40).map(|i| format!("app://{{tenant}}/kind{i}/{{id}}")).collect();
    templates.extend((0..40).map(|i| format!("app://{{+rest}}/kind{i}")));
    templates.extend((0..40).map(|i| format!("app://acme{i}/{{id}}")));
    templates.extend([
        "app://acme7/kind3/{id}".to_owned(),
        "app://{+all}".to_owned(),
        "{+anything}".to_owned(),
    ]);
    templates
}

/// A fixed shuffle of `items` (an LCG): the same every run.
fn shuffled(items: &[String], seed: u64) -> Vec<String> {
    let mut items = items.to_vec();
    let mut state = seed;
    for i in (1..items.len()).rev() {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        items.swap(i, (state >> 33) as usize % (i + 1));
    }
    items
}

#[test]
fn the_most_specific_of_many_matching_templates_is_read_whatever_their_order() {
    let expected = [
        // Fewest `{+var}`, then most literal text: the all-literal-but-one wins over the shared prefix.
        ("app://acme7/kind3/9", Some("app://acme7/kind3/{id}")),
        ("app://acme7/9", Some("app://acme7/{id}")),
        ("app://other/kind12/9", Some("app://{tenant}/kind12/{id}")),
        // No `{var}` form fits; of the one-`{+var}` ones, the one with most literal text.
        ("app://a/b/kind5", Some("app://{+rest}/kind5")),
        ("app://a/b/c", Some("app://{+all}")),
        ("other://x", Some("{+anything}")),
        ("", None),
    ];
    let none = BTreeSet::new();
    for seed in 0..8 {
        let templates = if seed == 0 { many() } else { shuffled(&many(), seed) };
        let (server, _) = server(&templates, &none, false);
        for (uri, template) in expected {
            assert_eq!(read_by(&server, uri).as_deref(), template, "{uri} (order {seed})");
        }
    }
}

#[test]
fn a_hidden_template_is_never_matched_through_the_index() {
    // Hidden: one of the shared-prefix group (matched through a set) and one alone under its prefix.
    let hidden: BTreeSet<String> =
        ["app://{tenant}/kind12/{id}".to_owned(), "app://acme7/kind3/{id}".to_owned()].into();
    for linear in [false, true] {
        let (server, asked) = server(&many(), &hidden, linear);
        // The next most specific template reads the uri, as if the hidden one were not listed.
        assert_eq!(read_by(&server, "app://other/kind12/9").as_deref(), Some("app://{+all}"));
        assert_eq!(read_by(&server, "app://acme7/kind3/9").as_deref(), Some("app://{tenant}/kind3/{id}"));
        // The filter was asked about the matching templates only, most specific first.
        let asked = asked.lock().unwrap().clone();
        assert_eq!(
            asked,
            [
                "app://{tenant}/kind12/{id}",
                "app://{+all}",
                "app://acme7/kind3/{id}",
                "app://{tenant}/kind3/{id}",
            ],
            "linear: {linear}"
        );
    }
}

#[test]
fn a_uri_longer_than_the_cap_matches_no_template_through_the_index() {
    let (server, asked) = server(&many(), &BTreeSet::new(), false);
    let at_cap = format!("app://{}", "a".repeat(MAX_TEMPLATE_URI_BYTES - 6));
    assert_eq!(read_by(&server, &at_cap).as_deref(), Some("app://{+all}"));
    assert_eq!(read_by(&server, &format!("{at_cap}a")), None);
    assert_eq!(asked.lock().unwrap().len(), 1, "nothing is asked about a uri over the cap");
}

#[test]
fn a_catalog_of_thousands_of_templates_reads_the_one_a_uri_names() {
    let templates: Vec<String> = (0..2_000).map(|i| format!("bench://kind{i:05}/{{id}}")).collect();
    let (server, _) = server(&templates, &BTreeSet::new(), false);
    assert_eq!(read_by(&server, "bench://kind01998/42").as_deref(), Some("bench://kind01998/{id}"));
    assert_eq!(read_by(&server, "bench://kind02000/42"), None);
}

#[test]
fn completion_names_a_template_among_many_by_its_uri_template() {
    let server = Server::builder(listing(&many()))
        .resource_reader(echo)
        .completer(|request: CompletionRequest| {
            let CompletionRef::ResourceTemplate { uri } = request.reference else { unreachable!() };
            std::future::ready(Ok::<_, ReaderError>(Completion::new(vec![format!(
                "{uri} {}",
                request.argument.name
            )])))
        })
        .build()
        .unwrap();
    let complete = |uri: &str, argument: &str| {
        let params =
            json!({"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": argument, "value": ""}});
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "completion/complete", "params": params});
        let handled = server.handle(message).now_or_never().expect("the completer is ready at once");
        handled.response.map(|r| r.to_value()).unwrap_or(Value::Null)
    };
    let answer = complete("app://{tenant}/kind12/{id}", "tenant");
    assert_eq!(answer["result"]["completion"]["values"], json!(["app://{tenant}/kind12/{id} tenant"]));
    // A uri the template matches is not the template: completion names templates, reads match them.
    assert_eq!(complete("app://acme/kind12/9", "tenant")["error"]["code"], json!(-32602));
}

/// A template from a small alphabet, so that prefixes collide: one of a few literal prefixes, most
/// often followed at once by an expression (so that many templates share the whole prefix and the
/// index matches them through a set), then literals and expressions.
fn template() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec!["", "a://", "a://b/", "a://b", "b:"]);
    let first = prop::sample::select(vec!["{x}", "{+y}", "{z}", "{x}", "{z}", "{+y}", "/", "b"]);
    let part = prop::sample::select(vec!["{x}", "{+y}", "{z}", "/", "b", ".j", "é", "{x}"]);
    (prefix, first, prop::collection::vec(part, 0..4))
        .prop_map(|(prefix, first, parts)| format!("{prefix}{first}{}", parts.concat()))
}

/// A uri: often one of the catalog's templates expanded with awkward values, sometimes any text.
fn uri_for(templates: Vec<String>) -> impl Strategy<Value = String> {
    let value = prop::sample::select(vec!["1", "b", "x/y", "%41", "%zz", "é", "", "a://b", "/"]);
    let expanded =
        (prop::sample::select(templates), prop::collection::vec(value, 5)).prop_map(|(t, values)| {
            let mut uri = t;
            for (name, value) in ["{x}", "{+y}", "{z}"].iter().zip(&values) {
                uri = uri.replace(name, value);
            }
            uri
        });
    prop_oneof![4 => expanded, 1 => "[a:/bé.j%1]{0,8}"]
}

fn case() -> impl Strategy<Value = (Vec<String>, BTreeSet<String>, Vec<String>)> {
    prop::collection::btree_set(template(), 1..90).prop_flat_map(|set| {
        let templates: Vec<String> = set.into_iter().collect();
        let n = templates.len();
        let hidden = prop::sample::subsequence(templates.clone(), 0..=n / 3)
            .prop_map(|hidden| hidden.into_iter().collect::<BTreeSet<String>>());
        let uris = prop::collection::vec(uri_for(templates.clone()), 4..16);
        (Just(templates), hidden, uris)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The index reads exactly what the plain scan reads, asking the filter the same questions.
    #[test]
    fn the_indexed_lookup_reads_what_the_linear_scan_reads((templates, hidden, uris) in case()) {
        let (indexed, asked_indexed) = server(&templates, &hidden, false);
        let (linear, asked_linear) = server(&templates, &hidden, true);
        for uri in &uris {
            prop_assert_eq!(read(&indexed, uri).to_string(), read(&linear, uri).to_string(), "{}", uri);
            prop_assert_eq!(&*asked_indexed.lock().unwrap(), &*asked_linear.lock().unwrap(), "{}", uri);
        }
    }
}
