//! The host's two authorization hooks, and how their answers and panics are handled.
//!
//! `authorize` runs before the body is read and is handed the request's [`Parts`] only: by its type it
//! cannot read the body, so refusing an unauthenticated caller never buffers their bytes. Extensions an
//! earlier tower layer set (a verified identity, the peer address) are visible in `parts.extensions`.
//! `authorize_body` runs after the read and before decoding, with the body exactly as received — the
//! bytes a signature covers. A refusal's reason is logged, never returned; a hook that panics is a
//! host fault, answered 500, and the server keeps serving.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use bytes::Bytes;
use http::request::Parts;

/// A hook's refusal. The reason goes to the log (tracing, at `info`), never to the caller.
#[derive(Clone, PartialEq, Eq)]
pub struct Refused {
    reason: String,
}

impl Refused {
    /// A refusal with a reason for the log.
    pub fn because(reason: impl Into<String>) -> Self {
        Self { reason: reason.into() }
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Debug for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Refused").field(&self.reason).finish()
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// The pre-read hook, as stored.
pub(crate) type AuthorizeFn = Arc<dyn Fn(&Parts) -> Result<(), Refused> + Send + Sync>;

/// The post-read hook, as stored.
pub(crate) type AuthorizeBodyFn = Arc<dyn Fn(&Parts, &Bytes) -> Result<(), Refused> + Send + Sync>;

/// What a hook's call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HookOutcome {
    /// Admitted.
    Admitted,
    /// Refused (403).
    Refused,
    /// Panicked (500).
    Panicked,
}

/// Runs a hook, logging a refusal's reason and catching a panic.
pub(crate) fn run_hook(name: &'static str, hook: impl FnOnce() -> Result<(), Refused>) -> HookOutcome {
    match std::panic::catch_unwind(AssertUnwindSafe(hook)) {
        Ok(Ok(())) => HookOutcome::Admitted,
        Ok(Err(refused)) => {
            tracing::info!(hook = name, reason = %refused.reason(), "request refused by the host's hook");
            HookOutcome::Refused
        }
        Err(_) => {
            tracing::error!(hook = name, "the host's hook panicked; answered 500");
            HookOutcome::Panicked
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_hook_is_caught() {
        assert_eq!(run_hook("authorize", || panic!("bug")), HookOutcome::Panicked);
        assert_eq!(run_hook("authorize", || Err(Refused::because("no token"))), HookOutcome::Refused);
        assert_eq!(run_hook("authorize", || Ok(())), HookOutcome::Admitted);
    }
}
