//! The requests being served, by id: what `notifications/cancelled` aborts.
//!
//! A request id names at most one running request; a finished request forgets its id unless a later
//! request reused it, so a cancellation never reaches a request it was not meant for.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::task::AbortHandle;

/// The requests being served, by id, so that `notifications/cancelled` can abort them.
#[derive(Debug, Default)]
pub(crate) struct InFlight(Mutex<HashMap<String, AbortHandle>>);

impl InFlight {
    /// The map (a panic while it was held leaves it whole: each change is one insert or remove).
    pub(crate) fn lock(&self) -> MutexGuard<'_, HashMap<String, AbortHandle>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Aborts the named request; an unknown or finished id is ignored.
    pub(crate) fn cancel(&self, key: &str) {
        let handle = self.lock().remove(key);
        if let Some(handle) = handle {
            tracing::debug!("a request was cancelled by the client");
            handle.abort();
        }
    }

    /// Called by a request's own task when it is done: forgets it unless a later request reused the id.
    pub(crate) fn finished(&self, key: &str) {
        let mut map = self.lock();
        if map.get(key).is_some_and(|handle| handle.id() == tokio::task::id()) {
            map.remove(key);
        }
    }
}
