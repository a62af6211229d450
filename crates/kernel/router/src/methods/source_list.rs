//! `resources/list` with a resource source: the catalog's resources (through the visibility filter),
//! then the caller's own, under one keyset cursor.
//!
//! A cursor names its phase and the last uri served in it, nothing more: a cursor taken from another
//! caller's pages only says where to start, and what follows is asked of the source with this caller's
//! own context. A page may straddle the two phases. The source's page is checked before it is served
//! (`catalog/source.rs`); its error or panic is answered -32603 with nothing more, and logged.

use serde_json::Value;
use tracing::Instrument;

use mcp_kernel_wire::ErrorObject;

use crate::catalog::snapshot::CompiledResource;
use crate::catalog::source::{ResourceSource, SourcePage, check_page};
use crate::catalog::spec::ResourceSpec;
use crate::catalog::visibility::{Listed, Sieve};
use crate::contract::RequestContext;
use crate::methods::list::page_result;
use crate::methods::resources_position;
use crate::request::cursor::{CursorKind, Phase, Position, encode, encode_source, page_where};
use crate::request::guard::guarded;
use crate::server::{Answer, Server};

impl Server {
    /// One page of `resources/list` on a server with a resource source.
    pub(crate) async fn list_with_source(
        &self,
        source: &dyn ResourceSource,
        params: Option<&Value>,
        context: &RequestContext,
    ) -> Answer {
        let hints = self.inner.options.resources_cache;
        let size = self.inner.options.page_size();
        let (mut items, last_in_catalog, after) = match resources_position(params)? {
            Some(Position { phase: Phase::Source, key }) => (Vec::new(), None, Some(key)),
            catalog => {
                let after = catalog.map(|position| position.key);
                let (items, last, next) = self.catalog_part(context, after.as_deref(), size);
                if next.is_some() {
                    return Ok(page_result("resources", items, next, hints));
                }
                (items, last, None)
            }
        };
        let room = size.saturating_sub(items.len());
        let fetched = self.fetch(source, context, after.as_deref(), room.saturating_add(1)).await?;
        let page = check_page(fetched, after.as_deref(), room, |uri| self.in_catalog(context, uri));
        if page.skipped > 0 {
            tracing::warn!(
                skipped = page.skipped,
                "the resource source returned items out of order, repeated, already listed or outside the schema; skipped"
            );
        }
        let next = next_cursor(&page, after.as_deref(), last_in_catalog.as_deref());
        items.extend(page.items);
        Ok(page_result("resources", items, next, hints))
    }

    /// The catalog's part of a page: the visible resources after `after`, at most `size`, the uri of the
    /// last one, and the cursor to the next page when more visible ones follow.
    fn catalog_part(
        &self,
        context: &RequestContext,
        after: Option<&str>,
        size: usize,
    ) -> (Vec<Value>, Option<String>, Option<String>) {
        let sieve = Sieve::new(self.inner.injected.visibility.as_deref(), context);
        let sorted = &self.inner.snapshot.resources;
        let shown = |r: &CompiledResource| sieve.shows(Listed::Resource(&r.uri));
        let (page, next) = page_where(sorted, |r| &r.uri, shown, CursorKind::Resources, after, size);
        let last = page.last().map(|r| r.uri.clone());
        (page.into_iter().map(|r| r.item.clone()).collect(), last, next)
    }

    /// Whether `uri` is a catalog resource this caller sees (listed in the first phase).
    fn in_catalog(&self, context: &RequestContext, uri: &str) -> bool {
        let resources = &self.inner.snapshot.resources;
        let Ok(i) = resources.binary_search_by(|r| r.uri.as_bytes().cmp(uri.as_bytes())) else {
            return false;
        };
        Sieve::new(self.inner.injected.visibility.as_deref(), context)
            .shows(Listed::Resource(&resources[i].uri))
    }

    /// Asks the source for one page; its error or panic is -32603, logged without its content, but a
    /// [`NoCaller`](crate::NoCaller) is an empty page: a request without a caller has no resources of its own.
    async fn fetch(
        &self,
        source: &dyn ResourceSource,
        context: &RequestContext,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ResourceSpec>, ErrorObject> {
        let span = tracing::info_span!("mcp.resource_source", server = %self.inner.options.server_name());
        match guarded(|| source.list(context, after, limit)).instrument(span).await {
            Ok(Ok(page)) => Ok(page),
            Ok(Err(refusal)) if refusal.answers_as_unlisted() => Ok(Vec::new()),
            Ok(Err(_)) => {
                tracing::error!("the resource source failed to list; answered -32603");
                Err(ErrorObject::internal())
            }
            Err(_) => {
                tracing::error!("the resource source panicked; answered -32603");
                Err(ErrorObject::internal())
            }
        }
    }
}

/// The cursor after a page whose source part is `page`: into the source phase at the last uri it
/// consumed, or, when the page had no room for the source and the source has items, at the catalog's
/// last uri (the next page starts the source from its first item).
fn next_cursor(page: &SourcePage, after: Option<&str>, last_in_catalog: Option<&str>) -> Option<String> {
    if !page.more {
        return None;
    }
    match page.last.as_deref() {
        Some(last) if Some(last) != after => Some(encode_source(last)),
        _ => last_in_catalog.map(|last| encode(CursorKind::Resources, last)),
    }
}
