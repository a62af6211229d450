//! One page of a paginated list, the shape `prompts/list`, `resources/list` and
//! `resources/templates/list` share: the items under their member, `nextCursor` when more follow, then
//! the cache hints.

use serde_json::{Map, Value};

use crate::catalog::visibility::{Listed, Sieve};
use crate::contract::RequestContext;
use crate::methods::cursor_position;
use crate::options::CacheHints;
use crate::request::cursor::{CursorKind, page, page_where};
use crate::server::{Answer, Server, cache_fields};

/// The list a page is cut from: its sorted items, its cursor kind, the member its items go under, its
/// cache hints.
pub(crate) struct ListOf<'a, T> {
    /// Every item, in the catalog's sorted order.
    pub(crate) sorted: &'a [T],
    /// What the list's cursors name.
    pub(crate) kind: CursorKind,
    /// The result member holding the page (`prompts`, `resources`, `resourceTemplates`).
    pub(crate) field: &'static str,
    /// The primitive's cache hints.
    pub(crate) hints: CacheHints,
}

impl Server {
    /// One page of a list, as a map: the items are encoded once, in the snapshot, and a typed result
    /// (`ListPromptsResult`, `ListResourcesResult`, …) would decode and re-encode each of them per
    /// request (1.7 times the work).
    pub(crate) fn list_page<T>(
        &self,
        params: Option<&Value>,
        context: &RequestContext,
        list: ListOf<'_, T>,
        key_of: impl Fn(&T) -> &str,
        item_of: impl Fn(&T) -> &Value,
        listed: impl Fn(&T) -> Listed<'_>,
    ) -> Answer {
        let ListOf { sorted, kind, field, hints } = list;
        let after = cursor_position(params, kind)?;
        let size = self.inner.options.page_size();
        let (items, next) = match self.inner.injected.visibility.as_deref() {
            None => {
                let (items, next) = page(sorted, &key_of, kind, after.as_deref(), size);
                (items.iter().map(|i| item_of(i).clone()).collect(), next)
            }
            Some(filter) => {
                let sieve = Sieve::new(Some(filter), context);
                let visible = |item: &T| sieve.shows(listed(item));
                let (items, next) = page_where(sorted, &key_of, visible, kind, after.as_deref(), size);
                (items.into_iter().map(|i| item_of(i).clone()).collect(), next)
            }
        };
        Ok(page_result(field, items, next, hints))
    }
}

/// A page's result: the items under `field`, `nextCursor` when more follow, then the cache hints.
pub(crate) fn page_result(
    field: &'static str,
    items: Vec<Value>,
    next: Option<String>,
    hints: CacheHints,
) -> Value {
    let mut result = Map::with_capacity(7);
    result.insert(field.into(), Value::Array(items));
    if let Some(next) = next {
        result.insert("nextCursor".into(), Value::String(next));
    }
    cache_fields(&mut result, hints);
    Value::Object(result)
}
