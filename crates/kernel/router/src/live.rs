//! A server whose catalog can be replaced while transports serve it.
//!
//! The transports take a [`LiveServer`] (a [`crate::Server`] converts into one). Each request reads
//! the current server once, when it arrives, and is served by that server to the end, so requests in
//! flight finish on the server they started with while the next request sees the replacement. The
//! replacement is a whole built server: its catalog was compiled and checked by its own `build`, so
//! a running service never serves a half-replaced or unchecked catalog.
//!
//! A replacement built with notifications ([`ServerBuilder::notifications`](crate::ServerBuilder::notifications),
//! sharing its predecessor's hub) announces exactly the lists whose advertised content changed
//! (`notify::announce`): a swap that changes only prompts tells listeners of prompts only. Without
//! notifications, clients are not told: they see the new lists when they list again, which the list
//! results' `ttlMs` governs (default `0`: every list is fresh); a host that replaces its catalog at
//! runtime should keep `ttlMs` at most as long as it is willing to have clients call what it removed
//! (such a call is then answered as an unknown tool).

use std::sync::{Arc, PoisonError, RwLock};

use crate::server::Server;

/// A shared, replaceable [`Server`]: cheap to clone, every clone sees every replacement.
#[derive(Clone)]
pub struct LiveServer {
    cell: Arc<RwLock<Server>>,
}

impl std::fmt::Debug for LiveServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LiveServer").field(&self.current()).finish()
    }
}

impl LiveServer {
    /// Serves `server` until it is replaced.
    pub fn new(server: Server) -> Self {
        Self { cell: Arc::new(RwLock::new(server)) }
    }

    /// The server serving now (a request keeps the one it read for its whole life).
    pub fn current(&self) -> Server {
        self.cell.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Serves `next` from the next request on, announces the lists it changes (when `next` was built
    /// with notifications), and returns the server it replaces.
    pub fn replace(&self, next: Server) -> Server {
        let announced = next.clone();
        let old = {
            let mut slot = self.cell.write().unwrap_or_else(PoisonError::into_inner);
            std::mem::replace(&mut *slot, next)
        };
        // After the swap: a listener told of the change lists again and sees the new server.
        crate::notify::announce::announce(&old, &announced);
        old
    }
}

impl From<Server> for LiveServer {
    fn from(server: Server) -> Self {
        Self::new(server)
    }
}
