//! Resources that vary per caller: the host's [`ResourceSource`], and the checks a page of it passes
//! before it is served.
//!
//! The catalog is fixed when the server is built; a source lists, per request, the caller's own
//! resources (a bookmarks server: each caller's bookmarks). `resources/list` serves the catalog's
//! resources first, then the source's, under one keyset cursor; `resources/read` accepts a uri the
//! source says this caller has, and only then (listed = accepted, `protocol.md` F-5).
//!
//! The source is host code, trusted for the order of its page and nothing it could get wrong: an item
//! is served only if its uri is strictly after the last one consumed (an item out of order or repeated
//! is skipped, never served twice), an item with an empty uri or annotations outside the schema is
//! skipped, and so is one whose uri is a catalog resource the caller sees (it was listed in the first
//! phase). Skips are logged by count, never by content.

use serde_json::Value;

use crate::catalog::snapshot::{annotations_in_range, resource_item};
use crate::catalog::spec::ResourceSpec;
use crate::contract::{BoxFuture, ReaderError, RequestContext};

/// The host's per-caller resources: listed after the catalog's by `resources/list`, accepted by
/// `resources/read` when [`ResourceSource::contains`] says so, and read by the server's resource
/// reader ([`crate::ServerBuilder::resource_reader`]).
///
/// `list` and `contains` must agree: a uri `list` returns for a caller is one `contains` accepts for
/// that caller. A uri the catalog lists, or a listed template matches, is the catalog's: the source is
/// not asked about it. The visibility filter is not asked about the source's items: the source answers
/// for its caller itself. An error or a panic of `list` answers the request -32603 with nothing more
/// (and is logged), but a [`NoCaller`](crate::NoCaller) (`cx.caller::<P>()?`) lists nothing: a request
/// without a caller has no resources of its own. A panic of `contains` counts as "no".
///
/// ```
/// use mcp_kernel_router::resources::{ResourceSource, ResourceSpec};
/// use mcp_kernel_router::wire::types::ResourceContents;
/// use mcp_kernel_router::{BoxFuture, Listing, ReaderError, RequestContext, Server};
///
/// #[derive(Clone)]
/// struct User(String);
///
/// /// Each user's bookmarks, `bookmarks://<user>/<n>`.
/// struct Bookmarks;
///
/// impl Bookmarks {
///     fn uris(user: &User) -> Vec<String> {
///         (1..=3).map(|n| format!("bookmarks://{}/{n}", user.0)).collect()
///     }
/// }
///
/// impl ResourceSource for Bookmarks {
///     fn list<'a>(
///         &'a self,
///         cx: &'a RequestContext,
///         after: Option<&'a str>,
///         limit: usize,
///     ) -> BoxFuture<'a, Result<Vec<ResourceSpec>, ReaderError>> {
///         Box::pin(async move {
///             let user = cx.caller::<User>()?;
///             let uris = Self::uris(user).into_iter().filter(|uri| after.is_none_or(|a| uri.as_str() > a));
///             Ok(uris.take(limit).map(|uri| ResourceSpec::new(uri, "bookmark")).collect())
///         })
///     }
///
///     fn contains<'a>(&'a self, cx: &'a RequestContext, uri: &'a str) -> BoxFuture<'a, bool> {
///         Box::pin(async move { cx.principal::<User>().is_some_and(|user| Self::uris(user).iter().any(|u| u == uri)) })
///     }
/// }
///
/// let server = Server::builder(Listing::new())
///     .resource_source(Bookmarks)
///     .resource_reader(|read: mcp_kernel_router::resources::ReadResource| async move {
///         let user = read.context.caller::<User>()?;
///         Ok(vec![ResourceContents::text(&read.uri, format!("a bookmark of {}", user.0))])
///     })
///     .build()
///     .expect("a source with a reader builds");
/// # let _ = server;
/// ```
pub trait ResourceSource: Send + Sync + 'static {
    /// One page of the caller's resources: sorted by uri ascending (bytewise), each uri strictly after
    /// `after` (`None`: from the first), at most `limit` of them. The kernel asks for one more item than
    /// it has room for, to know whether another page follows.
    fn list<'a>(
        &'a self,
        context: &'a RequestContext,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ResourceSpec>, ReaderError>>;

    /// Whether `uri` is one of the caller's resources (what `resources/read` accepts).
    fn contains<'a>(&'a self, context: &'a RequestContext, uri: &'a str) -> BoxFuture<'a, bool>;
}

/// One page of the source, checked.
#[derive(Debug)]
pub(crate) struct SourcePage {
    /// The items served, encoded as the catalog's resources are.
    pub(crate) items: Vec<Value>,
    /// The uri of the last item consumed (served, or skipped in order); `after` when none was.
    pub(crate) last: Option<String>,
    /// Whether items may follow `last`: another page is due.
    pub(crate) more: bool,
    /// How many items were skipped.
    pub(crate) skipped: usize,
}

/// Checks a page the source returned when asked for `room + 1` items after `after`: serves at most
/// `room` items, each strictly after the last consumed, none with an empty uri or annotations outside
/// the schema, none `in_catalog` says the first phase listed. Items past `room + 1` are ignored.
///
/// Another page is due when an item follows the served ones, or when the source filled its page and
/// the position moved (a page of skipped items moves it too, so a client never loops on one cursor).
pub(crate) fn check_page(
    fetched: Vec<ResourceSpec>,
    after: Option<&str>,
    room: usize,
    in_catalog: impl Fn(&str) -> bool,
) -> SourcePage {
    let asked = room.saturating_add(1);
    let full = fetched.len() >= asked;
    let mut last: Option<String> = after.map(str::to_owned);
    let mut items = Vec::with_capacity(room.min(fetched.len()));
    let mut skipped = 0;
    let mut follows = false;
    for spec in fetched.into_iter().take(asked) {
        if items.len() == room {
            follows = true;
            break;
        }
        let in_order = last.as_deref().is_none_or(|last| spec.uri.as_bytes() > last.as_bytes());
        if spec.uri.is_empty() || !in_order {
            skipped += 1;
            continue;
        }
        if !annotations_in_range(spec.annotations.as_ref()) || in_catalog(&spec.uri) {
            skipped += 1;
            last = Some(spec.uri);
            continue;
        }
        items.push(resource_item(&spec));
        last = Some(spec.uri);
    }
    let moved = last.as_deref() != after;
    SourcePage { items, last, more: follows || (full && moved), skipped }
}

#[cfg(test)]
mod tests {
    use mcp_kernel_wire::types::Annotations;

    use super::*;

    fn specs(uris: &[&str]) -> Vec<ResourceSpec> {
        uris.iter().map(|uri| ResourceSpec::new(*uri, "n")).collect()
    }

    fn served(page: &SourcePage) -> Vec<&str> {
        page.items.iter().map(|item| item["uri"].as_str().unwrap_or_default()).collect()
    }

    #[test]
    fn serves_in_order_and_sees_a_next_page_from_the_extra_item() {
        let page = check_page(specs(&["a", "b", "c"]), None, 2, |_| false);
        assert_eq!((served(&page), page.last.as_deref(), page.more), (vec!["a", "b"], Some("b"), true));
        let page = check_page(specs(&["c"]), Some("b"), 2, |_| false);
        assert_eq!((served(&page), page.more), (vec!["c"], false));
    }

    #[test]
    fn never_serves_an_item_out_of_order_repeated_or_not_after_the_cursor() {
        let page = check_page(specs(&["a", "c", "c", "b", "d", ""]), Some("a"), 9, |_| false);
        assert_eq!((served(&page), page.skipped, page.more), (vec!["c", "d"], 4, false));
    }

    #[test]
    fn skips_items_the_catalog_listed_or_that_break_the_schema() {
        let mut fetched = specs(&["a", "b"]);
        let bad: Annotations = serde_json::from_value(serde_json::json!({"priority": 2.0})).unwrap();
        fetched.push(ResourceSpec::new("c", "n").annotations(bad));
        let page = check_page(fetched, None, 9, |uri| uri == "a");
        assert_eq!((served(&page), page.skipped, page.last.as_deref()), (vec!["b"], 2, Some("c")));
    }

    #[test]
    fn a_full_page_of_skipped_items_moves_the_position_and_one_that_does_not_move_ends_the_list() {
        let page = check_page(specs(&["b", "c", "d"]), None, 2, |_| true);
        assert_eq!((served(&page).len(), page.last.as_deref(), page.more), (0, Some("d"), true));
        let page = check_page(specs(&["a", "a", "a"]), Some("b"), 2, |_| false);
        assert_eq!(
            (page.last.as_deref(), page.more),
            (Some("b"), false),
            "no cursor that names the same place"
        );
    }

    #[test]
    fn with_no_room_only_says_whether_an_item_follows() {
        let page = check_page(specs(&["a"]), None, 0, |_| false);
        assert_eq!((served(&page).len(), page.last, page.more), (0, None, true));
        let page = check_page(Vec::new(), None, 0, |_| false);
        assert!(!page.more);
    }

    #[test]
    fn ignores_items_past_what_was_asked() {
        let page = check_page(specs(&["a", "b", "c", "d"]), None, 1, |_| false);
        assert_eq!((served(&page), page.more), (vec!["a"], true));
    }
}
