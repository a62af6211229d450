//! `subscriptions/listen` on stdio: each open listen streams its tagged change notifications on the one
//! stdout, among the other answers, until the client cancels it, the server ends it, or the session
//! drains.
//!
//! Threats this module owns:
//!
//! * **A client that opens many listens.** A listen lives as long as the client wants; counted against
//!   [`StdioOptions::max_in_flight`](crate::StdioOptions::max_in_flight), sixteen of them would leave
//!   a client of the default bound with no place for a request, and the reader would stop. So a listen
//!   never holds one of those places: it holds one of [`StdioOptions::max_listens`](crate::StdioOptions::max_listens)
//!   places (default [`DEFAULT_MAX_LISTENS`]) from the moment it is read to its end, and a listen read
//!   while every place is taken is refused with [`TOO_MANY_LISTENS`] at once. The places are counted in
//!   read order and freed synchronously (a cancellation frees its place before the next line is read),
//!   so a client that waits for its cancelled or completed listen's end can open another at once.
//! * **Two streams under one tag.** A stdio client tells streams apart only by their id (the
//!   `io.modelcontextprotocol/subscriptionId` tag), so a listen whose id names a listen still open is
//!   refused (-32600) rather than run beside it.
//! * **A stream that silently stops.** A listen ends with its completion result whenever the server
//!   ends it: its feed ended ([`Listen::next`] returned `None`), or the session drains (end of input,
//!   `shutdown`/`exit`, the host's shutdown signal). Only the client's own cancellation, the output
//!   failing, or the shutdown grace running out end it without one. Its lines are never dropped: a
//!   reader too slow for the feed makes the feed end, and the listen completes.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::FutureExt;
use mcp_kernel_router::Server;
use mcp_kernel_router::transport::{Inbound, Listen};
use mcp_kernel_wire::{Envelope, ErrorObject, Response};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use crate::writer::Line;

/// How many listens one session holds open at once unless the host chooses otherwise.
pub const DEFAULT_MAX_LISTENS: usize = 16;

/// The JSON-RPC error code of a listen refused because the session holds
/// [`StdioOptions::max_listens`](crate::StdioOptions::max_listens) open already (a server error of
/// JSON-RPC's implementation-defined range).
pub const TOO_MANY_LISTENS: i64 = -32000;

/// The message of the [`TOO_MANY_LISTENS`] refusal.
const TOO_MANY_LISTENS_MESSAGE: &str = "Too many open subscriptions/listen streams on this connection";

/// The message of the refusal of a listen whose id names one still open.
const ID_IN_USE_MESSAGE: &str = "Invalid Request: a subscriptions/listen with this id is already open";

/// Why a listen is refused before it is opened.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Every place is taken.
    Full,
    /// A listen with the same id is open.
    IdInUse,
}

impl Refusal {
    /// The error written for it (nothing of the request is repeated; the cap is the host's own number).
    pub(crate) fn error(&self, max: usize) -> ErrorObject {
        match self {
            Refusal::Full => ErrorObject::new(TOO_MANY_LISTENS, TOO_MANY_LISTENS_MESSAGE)
                .with_data(json!({"maxListens": max})),
            Refusal::IdInUse => ErrorObject::refused(ID_IN_USE_MESSAGE),
        }
    }
}

/// One open listen: the task streaming it, and the serial number telling it from a later listen that
/// reuses its id.
#[derive(Debug)]
struct Open {
    serial: u64,
    handle: Option<AbortHandle>,
}

/// The listens of one session, by the JSON text of their id: the places they hold and what
/// `notifications/cancelled` aborts.
#[derive(Debug)]
pub(crate) struct Listens {
    open: Mutex<HashMap<String, Open>>,
    max: usize,
    serials: AtomicU64,
}

impl Listens {
    /// No listen open yet; at most `max` at once.
    pub(crate) fn new(max: usize) -> Self {
        Self { open: Mutex::default(), max, serials: AtomicU64::new(0) }
    }

    /// The most listens open at once.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// The map (a panic while it was held leaves it whole: each change is one insert or remove).
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Open>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a place for the listen `key`, or says why not; the place is the returned [`Place`]'s until
    /// it is dropped or the listen is cancelled.
    pub(crate) fn take(self: &Arc<Self>, key: &str) -> Result<Place, Refusal> {
        let mut open = self.lock();
        if open.contains_key(key) {
            return Err(Refusal::IdInUse);
        }
        if open.len() >= self.max {
            return Err(Refusal::Full);
        }
        let serial = self.serials.fetch_add(1, Ordering::Relaxed);
        open.insert(key.to_owned(), Open { serial, handle: None });
        Ok(Place { listens: Arc::clone(self), key: key.to_owned(), serial })
    }

    /// Names the task streaming the listen of `ticket`, so that a cancellation aborts it.
    pub(crate) fn streamed_by(&self, ticket: &Ticket, handle: AbortHandle) {
        let mut open = self.lock();
        match open.get_mut(&ticket.key) {
            Some(entry) if entry.serial == ticket.serial => entry.handle = Some(handle),
            // Already ended (its place freed): nothing may stream it.
            _ => handle.abort(),
        }
    }

    /// Ends the listen `key` with no further message (its task is aborted) and frees its place at
    /// once; an unknown or finished id is ignored. True when a listen was ended.
    pub(crate) fn cancel(&self, key: &str) -> bool {
        let ended = self.lock().remove(key);
        match ended {
            Some(Open { handle, .. }) => {
                tracing::debug!("a listen was cancelled by the client");
                if let Some(handle) = handle {
                    handle.abort();
                }
                true
            }
            None => false,
        }
    }

    /// Frees the place `serial` holds under `key`, unless a cancellation freed it already.
    fn free(&self, key: &str, serial: u64) {
        let mut open = self.lock();
        if open.get(key).is_some_and(|entry| entry.serial == serial) {
            open.remove(key);
        }
    }
}

/// One listen's place in its session: freed when dropped (the listen ended, or its task was aborted).
#[derive(Debug)]
pub(crate) struct Place {
    listens: Arc<Listens>,
    key: String,
    serial: u64,
}

impl Place {
    /// What names this place once it has moved into its task.
    pub(crate) fn ticket(&self) -> Ticket {
        Ticket { key: self.key.clone(), serial: self.serial }
    }
}

/// Names one listen's place without holding it ([`Place::ticket`]).
#[derive(Debug)]
pub(crate) struct Ticket {
    key: String,
    serial: u64,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.listens.free(&self.key, self.serial);
    }
}

/// Where a listen writes, and what tells it the session drains.
pub(crate) struct Stream {
    /// The writer's queue (a full queue is waited for: a listen's lines are never dropped).
    pub(crate) lines: mpsc::Sender<Line>,
    /// Becomes true when the session drains: every open listen then completes.
    pub(crate) draining: watch::Receiver<bool>,
    /// The listen's place, freed before its completion is written.
    pub(crate) place: Place,
    /// The request's id, for an answer when the core panics.
    pub(crate) id: Value,
}

impl Stream {
    /// Queues one line; false when the writer is gone.
    async fn write(&self, line: Line) -> bool {
        self.lines.send(line).await.is_ok()
    }

    /// Opens the listen `message` on `server` and streams it to its end: its acknowledgment first, then
    /// each notification, then its completion result; or the core's answer when it is not a listen it
    /// opens (malformed, legacy, a bad filter).
    pub(crate) async fn serve(self, server: Server, message: Envelope, inbound: Inbound) {
        let opened = AssertUnwindSafe(server.open_listen(message, inbound)).catch_unwind().await;
        let mut listen = match opened {
            Ok(Ok(listen)) => listen,
            Ok(Err(handled)) => {
                drop(self.place);
                if let Some(response) = handled.response {
                    let _ = self.lines.send(Line::encode(&response)).await;
                }
                return;
            }
            Err(_) => {
                tracing::error!("the core panicked while opening a listen; answered -32603");
                drop(self.place);
                let response = Response::error(self.id, ErrorObject::internal());
                let _ = self.lines.send(Line::encode(&response)).await;
                return;
            }
        };
        if !self.write(Line::notification(listen.acknowledgment())).await {
            return;
        }
        if !listen.completes_at_once() && !self.relay(&mut listen).await {
            return;
        }
        let Stream { lines, place, .. } = self;
        // The place first: a client that reads the completion may open another listen at once.
        drop(place);
        if lines.send(Line::encode(listen.completion())).await.is_err() {
            tracing::debug!("the output is gone; a listen's completion was dropped");
        }
    }

    /// Writes each notification of `listen` until its feed ends or the session drains (true), or the
    /// writer is gone (false).
    async fn relay(&self, listen: &mut Listen) -> bool {
        let mut draining = self.draining.clone();
        loop {
            let next = tokio::select! {
                biased;
                // A closed sender means the session is gone: end as at a drain.
                _ = draining.wait_for(|draining| *draining) => return true,
                next = AssertUnwindSafe(listen.next()).catch_unwind() => next,
            };
            match next {
                Ok(Some(notification)) => {
                    if !self.write(Line::notification(&notification)).await {
                        return false;
                    }
                }
                Ok(None) => {
                    tracing::debug!("a listen's feed ended; completing it");
                    return true;
                }
                Err(_) => {
                    tracing::error!("a change feed panicked; completing the listen");
                    return true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_and_freed_synchronously() {
        let listens = Arc::new(Listens::new(2));
        let first = listens.take("1").expect("a place");
        let _second = listens.take("\"1\"").expect("another id, another place");
        assert_eq!(listens.take("3").expect_err("both places are taken"), Refusal::Full);
        drop(first);
        let _third = listens.take("3").expect("the first place was freed when its holder dropped");
        assert!(listens.cancel("3"), "an open listen is cancelled");
        assert!(!listens.cancel("3"), "a cancelled listen is gone");
        let _fourth = listens.take("4").expect("a cancellation frees its place at once");
    }

    #[test]
    fn an_id_in_use_is_refused_before_the_cap() {
        let listens = Arc::new(Listens::new(1));
        let _open = listens.take("7").expect("a place");
        assert_eq!(listens.take("7").expect_err("the id is open"), Refusal::IdInUse);
        assert_eq!(listens.take("8").expect_err("every place is taken"), Refusal::Full);
    }

    #[test]
    fn a_place_freed_after_its_id_was_reused_leaves_the_new_listen_alone() {
        let listens = Arc::new(Listens::new(2));
        let old = listens.take("5").expect("a place");
        assert!(listens.cancel("5"));
        let _new = listens.take("5").expect("the id is free again");
        drop(old);
        assert_eq!(listens.take("5").expect_err("the new listen keeps its id"), Refusal::IdInUse);
    }

    #[test]
    fn refusals_repeat_nothing_of_the_request() {
        let full = Refusal::Full.error(16);
        assert_eq!(full.code, TOO_MANY_LISTENS);
        assert_eq!(full.message, TOO_MANY_LISTENS_MESSAGE);
        assert_eq!(full.data, Some(json!({"maxListens": 16})));
        assert_eq!(Refusal::IdInUse.error(16).code, mcp_kernel_wire::code::INVALID_REQUEST);
    }
}
