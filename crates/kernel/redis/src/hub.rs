//! [`RedisHub`]: the router's [`ChangeHub`] over Redis pub/sub, shared by every instance of one prefix.
//!
//! A change published here goes to Redis (`PUBLISH <prefix>:changes`, through the publishing queue)
//! and comes back through this instance's one subscription like anyone else's: every local
//! subscriber receives each change once, in the order Redis delivered it, its own included.

use std::sync::Arc;

use mcp_kernel_router::notify::{Change, ChangeFeed, ChangeHub, HubUnavailable};

use crate::Shared;
use crate::publish::Outgoing;

/// The change hub shared through Redis ([`Redis::change_hub`](crate::Redis::change_hub)). Cheap to
/// clone.
#[derive(Clone)]
pub struct RedisHub {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for RedisHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisHub").field("key_prefix", &self.shared.prefix).finish_non_exhaustive()
    }
}

impl ChangeHub for RedisHub {
    fn publish(&self, change: Change) {
        match serde_json::to_string(&change) {
            Ok(json) => self.shared.outbox.send(Outgoing::Change(json)),
            Err(error) => tracing::error!(%error, "a change does not encode; not published"),
        }
    }

    /// A feed, or one that has ended already while the subscription is down (prefer
    /// [`ChangeHub::try_subscribe`], which says so).
    fn subscribe(&self) -> ChangeFeed {
        self.try_subscribe().unwrap_or_else(|_| ChangeFeed::ended())
    }

    fn try_subscribe(&self) -> Result<ChangeFeed, HubUnavailable> {
        self.shared.events.subscribe()
    }
}
