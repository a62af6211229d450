//! Not API (feature `test-util`): a test host's way to play the core's bridge over a real listener.
//!
//! With the feature on, every request of a legacy session that may stream carries a
//! [`ChannelSlot`] in its extensions, filled with the request's client channel when the transport
//! makes it: a tool of a test host reads it (`context.extensions().get::<ChannelSlot>()`) and sends the
//! client requests through it, exactly as the core's bridge does.

use std::sync::{Arc, OnceLock};

use mcp_kernel_router::Extensions;
use mcp_kernel_router::transport::SharedChannel;

/// Where a request's client channel is put once made.
#[derive(Clone, Default)]
pub struct ChannelSlot(Arc<OnceLock<SharedChannel>>);

impl std::fmt::Debug for ChannelSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ChannelSlot").field(&self.0.get().is_some()).finish()
    }
}

impl ChannelSlot {
    /// The request's client channel, once the transport made it.
    pub fn channel(&self) -> Option<SharedChannel> {
        self.0.get().cloned()
    }

    /// `extensions` with a fresh slot, and the slot.
    pub(crate) fn attach(mut extensions: Extensions) -> (Extensions, Self) {
        let slot = Self::default();
        extensions.insert(slot.clone());
        (extensions, slot)
    }

    /// Puts `channel` in the slot.
    pub(crate) fn fill(&self, channel: &SharedChannel) {
        let _ = self.0.set(Arc::clone(channel));
    }
}
