//! Per-principal lists: which listed items one request may see.
//!
//! MCP lets a server's lists vary with the caller's authorization (never with the connection: there
//! is none). A host that gives a [`Visibility`] filter decides, per request, which tools, resources,
//! templates and prompts the request sees, usually from the principal in
//! [`RequestContext::extensions`]. An item the filter hides is hidden everywhere: it is left out of
//! its list (and the pages are cut from what remains), and a call, read, get or completion naming it
//! is answered exactly as one naming an item that is not listed at all. A filter that panics hides
//! the item (fail closed) and is logged once per request; after 8 panics in one request, the rest
//! of it (a long list) is hidden without asking the filter again.
//!
//! Cost: a list asks the filter about each item from the cursor on until a page of shown items is
//! full, so one request may ask about every item of a catalog that hides nearly everything; listing a
//! whole catalog page by page asks about each item about twice.
//!
//! Results that vary per principal must not be shared from a cache: keep the lists' `cacheScope` at
//! its default, `"private"`.

use std::cell::Cell;
use std::panic::AssertUnwindSafe;

use crate::contract::RequestContext;

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
    Sieve::new(filter, context).shows(item)
}

/// How many panics of the filter one request tolerates before every further item of it is hidden
/// without asking: an item the filter panics on is hidden alone, but a filter that panics on every
/// item costs a long list at most this many panics.
pub(crate) const PANICS_PER_REQUEST: u32 = 8;

/// One request's view through the filter: an item the filter panics on is hidden, the first panic of
/// the request is logged, and after [`PANICS_PER_REQUEST`] of them the rest of the request is hidden
/// without asking again.
pub(crate) struct Sieve<'a> {
    filter: Option<&'a dyn Visibility>,
    context: &'a RequestContext,
    panics: Cell<u32>,
}

impl<'a> Sieve<'a> {
    /// The filter (if any) as the request `context` describes sees it.
    pub(crate) fn new(filter: Option<&'a dyn Visibility>, context: &'a RequestContext) -> Self {
        Self { filter, context, panics: Cell::new(0) }
    }

    /// Whether `item` is shown.
    pub(crate) fn shows(&self, item: Listed<'_>) -> bool {
        let Some(filter) = self.filter else { return true };
        if self.panics.get() >= PANICS_PER_REQUEST {
            return false;
        }
        match std::panic::catch_unwind(AssertUnwindSafe(|| filter.shows(item, self.context))) {
            Ok(shown) => shown,
            Err(_) => {
                let panics = self.panics.get() + 1;
                self.panics.set(panics);
                if panics == 1 {
                    tracing::error!("the host's visibility filter panicked; the item is hidden");
                }
                false
            }
        }
    }
}
