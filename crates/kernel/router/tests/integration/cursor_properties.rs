//! The cursor law, as properties: paging through a sorted list with the keyset cursor
//! (`mcp_kernel_router::cursor`) never skips an item present before and after a change made between
//! two pages, never returns an item twice, and serves every page in order; a cursor decodes to the key
//! it names, and only for its own list.
//!
//! End to end, a server's catalog is fixed when it is built (`ServerBuilder::build` compiles an
//! immutable snapshot), so the list cannot change under one server. Two things are checked through
//! `Server::handle` instead: paging through a server's `prompts/list` and `resources/list` returns
//! every item exactly once, in byte order, for a random catalog size and page size; and, because a
//! cursor names a position only, a client that carries a cursor from one server to another built from a
//! changed catalog (a redeploy behind a stateless endpoint) gets the same law as above.

use std::collections::BTreeSet;
use std::num::NonZeroUsize;

use crate::support::{get_prompt, modern, read_resource, send};
use mcp_kernel_router::fuzzing::{CursorError, CursorKind, decode, encode, page};
use mcp_kernel_router::prompts::PromptSpec;
use mcp_kernel_router::resources::ResourceSpec;
use mcp_kernel_router::{Listing, Server};
use proptest::prelude::*;
use proptest::sample::subsequence;
use serde_json::{Value, json};

const KINDS: [CursorKind; 3] = [CursorKind::Resources, CursorKind::ResourceTemplates, CursorKind::Prompts];

/// A key: from a small alphabet (ASCII and non-ASCII, one to four bytes a character, so insertions
/// land between existing keys and share their prefixes), or any string at all.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[ab/é日😀z]{0,4}",
        1 => any::<String>(),
    ]
}

/// A sorted list of unique keys (a `BTreeSet<String>` orders by bytes, as the catalog does).
fn keys(max: usize) -> impl Strategy<Value = BTreeSet<String>> {
    prop::collection::btree_set(key(), 0..max)
}

fn kind() -> impl Strategy<Value = CursorKind> {
    prop::sample::select(KINDS.to_vec())
}

/// A list, and the change made to it after some page: keys deleted (a subsequence of the list) and
/// keys inserted (anywhere: before, at or after the cursor position).
#[derive(Debug, Clone)]
struct Scenario {
    before: BTreeSet<String>,
    after: BTreeSet<String>,
    /// The change happens once this many pages have been read (possibly never).
    change_after_pages: usize,
    page_size: usize,
    kind: CursorKind,
}

fn scenario(max: usize) -> impl Strategy<Value = Scenario> {
    keys(max)
        .prop_flat_map(move |before| {
            let listed: Vec<String> = before.iter().cloned().collect();
            let n = listed.len();
            (Just(before), subsequence(listed, 0..=n), keys(max), 0..8usize, 1..8usize, kind())
        })
        .prop_map(|(before, deleted, inserted, change_after_pages, page_size, kind)| {
            let deleted: BTreeSet<String> = deleted.into_iter().collect();
            let after = before.difference(&deleted).cloned().chain(inserted).collect();
            Scenario { before, after, change_after_pages, page_size, kind }
        })
}

/// A pager: the page of a sorted `list` after the position `cursor` names (`None`: the start), at most
/// `page_size` items, and the cursor of the next page.
type Pager = dyn Fn(&[String], CursorKind, Option<&str>, usize) -> (Vec<String>, Option<String>);

/// The keyset pager under test, used as the server uses it: the cursor string decoded, then `page`.
fn keyset(
    list: &[String],
    kind: CursorKind,
    cursor: Option<&str>,
    page_size: usize,
) -> (Vec<String>, Option<String>) {
    let position = cursor.and_then(|c| decode(kind, c).expect("the cursor the previous page gave decodes"));
    let (items, next) = page(list, |k| k.as_str(), kind, position.as_deref(), page_size);
    (items.to_vec(), next)
}

/// The pages a client reads with `pager`, the list changing from `before` to `after` once
/// `change_after_pages` pages have been read; each next page is asked for with the cursor the previous
/// page gave. `Err` when paging does not end: each page but the last holds at least one item and the
/// items strictly increase, so a lawful pager ends within `|before| + |after| + 1` pages.
fn read_pages_with(s: &Scenario, pager: &Pager) -> Result<Vec<Vec<String>>, String> {
    let before: Vec<String> = s.before.iter().cloned().collect();
    let after: Vec<String> = s.after.iter().cloned().collect();
    let bound = before.len() + after.len() + 2;
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for read in 0..bound {
        let list = if read < s.change_after_pages { &before } else { &after };
        let (items, next) = pager(list, s.kind, cursor.as_deref(), s.page_size);
        pages.push(items);
        match next {
            Some(next) => cursor = Some(next),
            None => return Ok(pages),
        }
    }
    Err(format!("paging did not end within {bound} pages"))
}

fn read_pages(s: &Scenario) -> Vec<Vec<String>> {
    read_pages_with(s, &keyset).unwrap_or_else(|e| panic!("{e}: {s:?}"))
}

fn strictly_increasing(items: &[String]) -> bool {
    items.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes())
}

/// `Err` naming an item listed before and after the change that `served` lacks.
fn skipped(s: &Scenario, served: &[String]) -> Result<(), String> {
    match s.before.intersection(&s.after).find(|i| !served.contains(i)) {
        Some(item) => {
            Err(format!("{item:?} is listed before and after the change, and was skipped: {served:?}"))
        }
        None => Ok(()),
    }
}

/// `Err` when an item is served twice (or out of order: the keys must strictly increase).
fn repeated(served: &[String]) -> Result<(), String> {
    if strictly_increasing(served) {
        Ok(())
    } else {
        Err(format!("an item served twice or out of order: {served:?}"))
    }
}

/// The whole law over the pages read in `s`; `Err` names the first breach.
fn law(s: &Scenario, pages: &[Vec<String>]) -> Result<(), String> {
    let (last, full) = pages.split_last().ok_or("no page at all")?;
    if last.len() > s.page_size || full.iter().any(|p| p.len() != s.page_size) {
        return Err(format!("a page with a next cursor holds the page size, the last at most: {pages:?}"));
    }
    if let Some(page) = pages.iter().find(|p| !strictly_increasing(p)) {
        return Err(format!("a page is not sorted: {page:?}"));
    }
    let served: Vec<String> = pages.iter().flatten().cloned().collect();
    repeated(&served)?;
    skipped(s, &served)?;
    if let Some(invented) = served.iter().find(|i| !s.before.contains(*i) && !s.after.contains(*i)) {
        return Err(format!("{invented:?} was never listed"));
    }
    Ok(())
}

/// The page of `list` a control pager serves: at most `page_size` items from the index `start` gives
/// for the position `cursor` names (a cursor that does not decode reads as the start), and the index
/// after the page.
fn control_page(
    list: &[String],
    kind: CursorKind,
    cursor: Option<&str>,
    page_size: usize,
    start: impl FnOnce(Option<String>) -> usize,
) -> (Vec<String>, usize) {
    let position = cursor.and_then(|c| decode(kind, c).ok().flatten());
    let start = start(position).min(list.len());
    let end = (start + page_size).min(list.len());
    (list[start..end].to_vec(), end)
}

/// A position cursor (the offset of the next item): what the keyset cursor replaces.
fn offset(
    list: &[String],
    kind: CursorKind,
    cursor: Option<&str>,
    page_size: usize,
) -> (Vec<String>, Option<String>) {
    let at = |position: Option<String>| position.and_then(|p| p.parse::<usize>().ok()).unwrap_or(0);
    let (items, end) = control_page(list, kind, cursor, page_size, at);
    (items, (end < list.len()).then(|| encode(kind, &end.to_string())))
}

/// A keyset cursor that serves its own key again (`>=` where `>` is meant).
fn inclusive(
    list: &[String],
    kind: CursorKind,
    cursor: Option<&str>,
    page_size: usize,
) -> (Vec<String>, Option<String>) {
    let at = |position: Option<String>| {
        position.map_or(0, |after| list.partition_point(|k| k.as_str() < after.as_str()))
    };
    let (items, end) = control_page(list, kind, cursor, page_size, at);
    let next = if end < list.len() { items.last().map(|last| encode(kind, last)) } else { None };
    (items, next)
}

/// The laws are not vacuous: the scenarios make an offset cursor skip an item and an inclusive keyset
/// cursor serve one twice.
#[test]
fn the_law_catches_an_offset_cursor_and_an_inclusive_cursor() {
    use proptest::test_runner::{Config, TestCaseError, TestRng, TestRunner};
    type Breach = fn(&Scenario, &[Vec<String>]) -> Result<(), String>;
    let skips: Breach = |s, pages| skipped(s, &pages.concat());
    let repeats: Breach = |_, pages| repeated(&pages.concat());
    let controls: [(&str, &Pager, Breach); 2] =
        [("offset", &offset, skips), ("inclusive", &inclusive, repeats)];
    for (name, pager, breach) in controls {
        let config =
            Config { cases: 256, max_shrink_iters: 64, failure_persistence: None, ..Config::default() };
        let rng = TestRng::deterministic_rng(config.rng_algorithm);
        let outcome =
            TestRunner::new_with_rng(config, rng).run(&scenario(40), |s| match read_pages_with(&s, pager) {
                // An inclusive cursor on pages of one item never moves on: not the breach looked for here.
                Err(_) => Ok(()),
                Ok(pages) => breach(&s, &pages).map_err(TestCaseError::fail),
            });
        assert!(outcome.is_err(), "the {name} pager breaks the law, and the scenarios show it");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn paging_never_skips_an_item_present_on_both_pages(s in scenario(40)) {
        let served: BTreeSet<String> = read_pages(&s).into_iter().flatten().collect();
        for item in s.before.intersection(&s.after) {
            prop_assert!(served.contains(item), "{item:?} is in the list before and after the change");
        }
        // Nothing is invented: every item served was in the list when its page was read.
        for item in &served {
            prop_assert!(s.before.contains(item) || s.after.contains(item), "{item:?} was never listed");
        }
    }

    #[test]
    fn paging_never_returns_an_item_twice(s in scenario(40)) {
        let served: Vec<String> = read_pages(&s).into_iter().flatten().collect();
        let unique: BTreeSet<&String> = served.iter().collect();
        prop_assert_eq!(unique.len(), served.len(), "served: {:?}", served);
        // Stronger: across all pages the keys strictly increase.
        prop_assert!(strictly_increasing(&served), "served: {:?}", served);
    }

    #[test]
    fn every_page_is_sorted_and_only_the_last_is_short(s in scenario(40)) {
        let pages = read_pages(&s);
        for (at, items) in pages.iter().enumerate() {
            prop_assert!(strictly_increasing(items), "page: {:?}", items);
            prop_assert!(items.len() <= s.page_size, "page: {:?}", items);
            if at + 1 < pages.len() {
                prop_assert_eq!(items.len(), s.page_size, "a page with a next cursor is full");
            }
        }
    }

    /// The law as one check (`law`), which `the_law_catches_an_offset_cursor_and_an_inclusive_cursor`
    /// runs against broken pagers: it holds for the real one.
    #[test]
    fn the_keyset_cursor_keeps_the_whole_law(s in scenario(40)) {
        let pages = read_pages(&s);
        prop_assert_eq!(law(&s, &pages), Ok(()));
    }

    #[test]
    fn without_a_change_paging_returns_every_item_exactly_once_in_order(
        list in keys(60), page_size in 1..10usize, kind in kind(),
    ) {
        let s = Scenario { before: list.clone(), after: list.clone(), change_after_pages: 0, page_size, kind };
        let served: Vec<String> = read_pages(&s).into_iter().flatten().collect();
        prop_assert_eq!(served, list.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn a_cursor_decodes_to_the_key_it_was_encoded_from(
        k in prop_oneof![any::<String>(), "[\\[\\]{}\"\\\\a\u{0}\u{7f}é😀]{0,200}"],
    ) {
        for kind in KINDS {
            let cursor = encode(kind, &k);
            prop_assert!(!cursor.is_empty(), "a cursor never names the start");
            prop_assert_eq!(decode(kind, &cursor), Ok(Some(k.clone())));
            // The same position always gives the same bytes.
            prop_assert_eq!(&cursor, &encode(kind, &k));
        }
    }

    #[test]
    fn a_cursor_of_another_list_is_wrong_kind(k in any::<String>()) {
        for kind in KINDS {
            let cursor = encode(kind, &k);
            for other in KINDS.into_iter().filter(|o| *o != kind) {
                prop_assert_eq!(decode(other, &cursor), Err(CursorError::WrongKind(other)));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// End to end, through `Server::handle`
// ---------------------------------------------------------------------------------------------------

/// A server listing `prompts` as prompts and `test://{key}` for each as resources.
fn server_listing(prompts: &BTreeSet<String>, page_size: usize) -> Server {
    let catalog = Listing {
        resources: prompts
            .iter()
            .map(|k| ResourceSpec::new(format!("test://{k}"), k.clone()).into())
            .collect(),
        prompts: prompts.iter().map(PromptSpec::new).collect(),
        ..Listing::default()
    };
    Server::builder(catalog)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .page_size(NonZeroUsize::new(page_size).expect("a non-zero page size"))
        .build()
        .expect("a catalog of unique names builds")
}

/// The list `method` returns the items under `field`, keyed by `key`.
struct ListMethod {
    method: &'static str,
    field: &'static str,
    key: &'static str,
}

const LISTINGS: [ListMethod; 2] = [
    ListMethod { method: "prompts/list", field: "prompts", key: "name" },
    ListMethod { method: "resources/list", field: "resources", key: "uri" },
];

/// Reads `listing` page by page, from `first` until `change_after_pages` pages were read, then from
/// `second`; returns the pages.
async fn read_server_pages(
    first: &Server,
    second: &Server,
    change_after_pages: usize,
    listing: &ListMethod,
    bound: usize,
) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor: Option<Value> = None;
    for read in 0..bound {
        let server = if read < change_after_pages { first } else { second };
        let params = cursor.take().map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let response = send(server, modern(1, listing.method, params)).await;
        let result = &response["result"];
        let items = result[listing.field].as_array().unwrap_or_else(|| panic!("a list: {response}"));
        pages.push(
            items.iter().map(|item| item[listing.key].as_str().expect("a string key").to_owned()).collect(),
        );
        match result.get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => return pages,
        }
    }
    panic!("{} did not end within {bound} pages", listing.method);
}

/// Reads every listing of `LISTINGS` as `read_server_pages` does, on a fresh runtime; returns the
/// pages of each, in the order of `LISTINGS`.
fn read_every_listing(
    first: &Server,
    second: &Server,
    change_after_pages: usize,
    bound: usize,
) -> Vec<Vec<Vec<String>>> {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    runtime.block_on(async {
        let mut all = Vec::new();
        for listing in &LISTINGS {
            all.push(read_server_pages(first, second, change_after_pages, listing, bound).await);
        }
        all
    })
}

proptest! {
    // Each case builds servers (one compiled prompt schema per prompt): fewer cases, same law.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn paging_through_the_server_returns_every_item_exactly_once_in_order(
        list in keys(40), page_size in 1..10usize,
    ) {
        let server = server_listing(&list, page_size);
        let pages = read_every_listing(&server, &server, 0, list.len() + 2);
        let names: Vec<String> = list.iter().cloned().collect();
        let uris: Vec<String> = list.iter().map(|k| format!("test://{k}")).collect();
        for (pages, expected) in pages.into_iter().zip([names, uris]) {
            let served: Vec<String> = pages.into_iter().flatten().collect();
            prop_assert_eq!(served, expected);
        }
    }

    #[test]
    fn paging_across_a_redeploy_never_skips_an_item_present_on_both_catalogs(s in scenario(30)) {
        let (first, second) = (server_listing(&s.before, s.page_size), server_listing(&s.after, s.page_size));
        let bound = s.before.len() + s.after.len() + 2;
        let pages = read_every_listing(&first, &second, s.change_after_pages, bound);
        for (pages, prefix) in pages.into_iter().zip(["", "test://"]) {
            for items in &pages {
                prop_assert!(strictly_increasing(items), "page: {:?}", items);
            }
            let served: Vec<String> = pages.into_iter().flatten().collect();
            prop_assert!(strictly_increasing(&served), "never twice, in order: {:?}", served);
            for item in s.before.intersection(&s.after) {
                let item = format!("{prefix}{item}");
                prop_assert!(served.contains(&item), "{item:?} is in both catalogs: {served:?}");
            }
        }
    }
}
