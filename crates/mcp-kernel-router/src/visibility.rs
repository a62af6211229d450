//! Per-principal lists: which listed items one request may see.
//!
//! MCP lets a server's lists vary with the caller's authorization (never with the connection: there
//! is none). A host that gives a [`Visibility`] filter decides, per request, which tools, resources,
//! templates and prompts the request sees, usually from the principal in
//! [`RequestContext::extensions`]. An item the filter hides is hidden everywhere: it is left out of
//! its list (and the pages are cut from what remains), and a call, read, get or completion naming it
//! is answered exactly as one naming an item that is not listed at all. A filter that panics hides
//! the item (fail closed) and is logged.
//!
//! Results that vary per principal must not be shared from a cache: keep the lists' `cacheScope` at
//! its default, `"private"`.

use std::panic::AssertUnwindSafe;

use crate::host::RequestContext;

/// One listed item, as the filter sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Listed<'a> {
    /// A tool, by name.
    Tool(&'a str),
    /// A concrete resource, by uri.
    Resource(&'a str),
    /// A resource template, by its uri template.
    Template(&'a str),
    /// A prompt, by name.
    Prompt(&'a str),
}

/// The host's list filter: `true` shows the item to the request, `false` hides it.
pub trait Visibility: Send + Sync + 'static {
    /// Whether `item` is shown to the request `context` describes.
    fn shows(&self, item: Listed<'_>, context: &RequestContext) -> bool;
}

impl<F> Visibility for F
where
    F: Fn(Listed<'_>, &RequestContext) -> bool + Send + Sync + 'static,
{
    fn shows(&self, item: Listed<'_>, context: &RequestContext) -> bool {
        self(item, context)
    }
}

/// Runs the filter, if any: no filter shows everything; a panic hides the item.
pub(crate) fn shown(filter: Option<&dyn Visibility>, item: Listed<'_>, context: &RequestContext) -> bool {
    let Some(filter) = filter else { return true };
    match std::panic::catch_unwind(AssertUnwindSafe(|| filter.shows(item, context))) {
        Ok(shown) => shown,
        Err(_) => {
            tracing::error!("the host's visibility filter panicked; the item is hidden");
            false
        }
    }
}
