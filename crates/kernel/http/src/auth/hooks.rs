//! The host's authorization hooks, and how their answers and panics are handled.
//!
//! `authorize` (or `authorize_async`) runs before the body is read and is handed the request's
//! [`Parts`] only: by its type it cannot read the body, so refusing an unauthenticated caller never
//! buffers their bytes. Extensions an earlier tower layer set (a verified identity, the peer address)
//! are visible in `parts.extensions`. `authorize_async`'s future owns what it took from the parts
//! (it is `'static`) and is awaited within the request's one deadline, the one the body read then
//! shares: a hook not done by then is answered 503 with `retry-after: 1`. `authorize_body` runs after
//! the read and before decoding, with the body exactly as received — the bytes a signature covers.
//!
//! What a hook admits with is the host's principal: it is put into the request's
//! [`Extensions`] (nothing for `()`), `authorize_body`'s over `authorize`'s for the same type, and
//! reaches the host in `RequestContext::extensions` / `principal::<P>()` on every path. The pre-read
//! hook's principal, digested (`client.rs`), also names the client whose share of the body budget
//! the request's body is charged to.
//!
//! A refusal's reason is logged, never returned; a hook that panics (an async one: while its future
//! is made or polled) is a host fault, answered 500, and the server keeps serving.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use std::any::TypeId;
use std::hash::Hash;

use bytes::Bytes;
use futures_util::FutureExt;
use http::request::Parts;
use mcp_kernel_router::{BoxFuture, Extensions};
use tokio::time::Instant;

use crate::client::PrincipalDigest;
use crate::response::challenge::Denial;

/// A hook's refusal: its kind, which decides the status and the `WWW-Authenticate` challenge (the
/// table is in [`ProtectedResource`](crate::ProtectedResource)'s docs), and a reason for the log
/// (tracing, at `info`), never sent to the caller.
#[derive(Clone, PartialEq, Eq)]
pub struct Refused {
    reason: String,
    denial: Denial,
}

impl Refused {
    /// 403 Forbidden, without a challenge: the caller may not do this. The reason is for the log.
    pub fn because(reason: impl Into<String>) -> Self {
        Self { reason: reason.into(), denial: Denial::Forbidden }
    }

    /// 401 Unauthorized: the request carries no credential the host accepts. The challenge is
    /// `WWW-Authenticate: Bearer resource_metadata="…"` (the service's [`ProtectedResource`]), without
    /// an error code (RFC 6750 §3.1): the client signs in and retries.
    ///
    /// [`ProtectedResource`]: crate::ProtectedResource
    pub fn unauthenticated(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            denial: Denial::Unauthenticated { invalid_token: false, scope: Vec::new() },
        }
    }

    /// 401 Unauthorized with `error="invalid_token"`: the token is expired, revoked, malformed, or
    /// issued for another resource (the MCP rule against token passthrough).
    pub fn invalid_token(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            denial: Denial::Unauthenticated { invalid_token: true, scope: Vec::new() },
        }
    }

    /// 403 Forbidden with `error="insufficient_scope"` and `scope="…"`: the token is good but does
    /// not carry `scopes`, every scope the request needs (so the client asks for all of them at once).
    pub fn insufficient_scope<I, S>(scopes: I, reason: impl Into<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let scope = scopes.into_iter().map(Into::into).collect();
        Self { reason: reason.into(), denial: Denial::InsufficientScope { scope } }
    }

    /// 400 Bad Request with `error="invalid_request"`: the credential is malformed (sent twice, or
    /// in the query string).
    pub fn invalid_request(reason: impl Into<String>) -> Self {
        Self { reason: reason.into(), denial: Denial::InvalidRequest }
    }

    /// 503 Service Unavailable with `retry-after: 1`, without a challenge: the check could not be
    /// made (the introspection endpoint or the key server is unreachable), so the client should retry
    /// rather than sign in again.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self { reason: reason.into(), denial: Denial::Unavailable }
    }

    /// Names the scopes a 401's challenge asks the client to request (`scope="…"`, RFC 6750 §3);
    /// replaces those of an insufficient-scope refusal; ignored by the others. A value that is not
    /// an RFC 6749 scope token is left out of the header (and logged).
    pub fn with_scope<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Some(scope) = self.denial.scope_mut() {
            *scope = scopes.into_iter().map(Into::into).collect();
        }
        self
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The HTTP status this refusal is answered with: 401, 403, 400 or 503.
    pub fn status(&self) -> http::StatusCode {
        self.denial.status()
    }
}

impl fmt::Debug for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Refused")
            .field("status", &self.status().as_u16())
            .field("reason", &self.reason)
            .finish()
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// What the pre-read hook admitted a request with: the host's principal as [`Extensions`], and its
/// digest, the client the request's body is charged to (`None` for a hook that names nobody); with
/// legacy sessions on, also the owner its sessions are bound to.
#[derive(Debug, Default)]
pub(crate) struct Admission {
    pub(crate) extensions: Extensions,
    pub(crate) principal: Option<u64>,
    pub(crate) owner: Option<String>,
}

impl Admission {
    /// The admission of `principal`, digested by `digest`.
    pub(crate) fn of<P: Hash + Clone + Send + Sync + 'static>(
        digest: &PrincipalDigest,
        principal: P,
    ) -> Self {
        Self {
            principal: digest.of(&principal),
            owner: digest.owner(&principal),
            extensions: self::principal(principal),
        }
    }
}

/// The pre-read hook, as stored: the host's principal already turned into an [`Admission`].
pub(crate) type AuthorizeFn = Arc<dyn Fn(&Parts) -> Result<Admission, Refused> + Send + Sync>;

/// The asynchronous pre-read hook, as stored (its future is boxed; the sync hook's answer is not).
pub(crate) type AuthorizeAsyncFn =
    Arc<dyn Fn(&Parts) -> BoxFuture<'static, Result<Admission, Refused>> + Send + Sync>;

/// The post-read hook, as stored.
pub(crate) type AuthorizeBodyFn = Arc<dyn Fn(&Parts, &Bytes) -> Result<Extensions, Refused> + Send + Sync>;

/// The host's pre-read hook: `authorize` or `authorize_async`.
#[derive(Clone)]
pub(crate) enum AuthorizeHook {
    /// `authorize`: called inline, nothing boxed per request.
    Sync(AuthorizeFn),
    /// `authorize_async`: its future is awaited within the request's deadline.
    Async(AuthorizeAsyncFn),
}

/// The extensions a hook's principal becomes: nothing for `()` (a hook that only admits), else the
/// principal itself.
pub(crate) fn principal<P: Clone + Send + Sync + 'static>(principal: P) -> Extensions {
    let mut extensions = Extensions::new();
    if TypeId::of::<P>() != TypeId::of::<()>() {
        extensions.insert(principal);
    }
    extensions
}

/// What a hook's call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HookOutcome<T> {
    /// Admitted, with what the hook returned.
    Admitted(T),
    /// Refused: 401, 403 or 400, as the refusal's kind says.
    Refused(Denial),
    /// Panicked (500).
    Panicked,
    /// An asynchronous hook not done by the request's deadline (503, `retry-after: 1`).
    TimedOut,
}

/// What a hook answered, its refusal's reason logged.
fn admitted<T>(name: &'static str, answer: Result<T, Refused>) -> HookOutcome<T> {
    match answer {
        Ok(value) => HookOutcome::Admitted(value),
        Err(refused) => {
            let status = refused.status().as_u16();
            tracing::info!(hook = name, status, reason = %refused.reason(), "request refused by the host's hook");
            HookOutcome::Refused(refused.denial)
        }
    }
}

fn panicked<T>(name: &'static str) -> HookOutcome<T> {
    tracing::error!(hook = name, "the host's hook panicked; answered 500");
    HookOutcome::Panicked
}

/// Runs a hook, logging a refusal's reason and catching a panic.
pub(crate) fn run_hook<T>(name: &'static str, hook: impl FnOnce() -> Result<T, Refused>) -> HookOutcome<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(hook)) {
        Ok(answer) => admitted(name, answer),
        Err(_) => panicked(name),
    }
}

/// Runs the pre-read hook, whichever kind it is: the sync one inline, the async one until
/// `deadline` (the request's one deadline, which the body read then shares), catching a panic
/// whether it is raised by the call that makes the future or while the future is polled.
pub(crate) async fn run_authorize(
    hook: &AuthorizeHook,
    parts: &Parts,
    deadline: Instant,
) -> HookOutcome<Admission> {
    const NAME: &str = "authorize_async";
    let hook = match hook {
        AuthorizeHook::Sync(hook) => return run_hook("authorize", || hook(parts)),
        AuthorizeHook::Async(hook) => hook,
    };
    let future = match std::panic::catch_unwind(AssertUnwindSafe(|| hook(parts))) {
        Ok(future) => future,
        Err(_) => return panicked(NAME),
    };
    match tokio::time::timeout_at(deadline, AssertUnwindSafe(future).catch_unwind()).await {
        Ok(Ok(answer)) => admitted(NAME, answer),
        Ok(Err(_)) => panicked(NAME),
        Err(_elapsed) => {
            tracing::warn!(
                hook = NAME,
                "the host's hook did not finish within the request's read timeout; answered 503"
            );
            HookOutcome::TimedOut
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_hook_is_caught() {
        assert_eq!(run_hook::<()>("authorize", || panic!("bug")), HookOutcome::Panicked);
        assert_eq!(
            run_hook::<()>("authorize", || Err(Refused::because("no token"))),
            HookOutcome::Refused(Denial::Forbidden)
        );
        assert_eq!(run_hook("authorize", || Ok(())), HookOutcome::Admitted(()));
    }

    #[test]
    fn a_unit_principal_attaches_nothing() {
        assert!(principal(()).is_empty());
        assert_eq!(principal(7_u32).get::<u32>(), Some(&7));
    }

    fn parts() -> Parts {
        http::Request::new(()).into_parts().0
    }

    fn far() -> Instant {
        Instant::now() + std::time::Duration::from_secs(60)
    }

    #[tokio::test]
    async fn an_async_hook_is_bounded_by_the_deadline_and_its_panics_are_caught() {
        let slow: AuthorizeAsyncFn = Arc::new(|_: &Parts| {
            Box::pin(async {
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                Ok(Admission::default())
            })
        });
        let soon = Instant::now() + std::time::Duration::from_millis(20);
        let outcome = run_authorize(&AuthorizeHook::Async(slow), &parts(), soon).await;
        assert!(matches!(outcome, HookOutcome::TimedOut));
        let polled: AuthorizeAsyncFn = Arc::new(|_: &Parts| Box::pin(async { panic!("bug while polled") }));
        let outcome = run_authorize(&AuthorizeHook::Async(polled), &parts(), far()).await;
        assert!(matches!(outcome, HookOutcome::Panicked));
        let called: AuthorizeAsyncFn = Arc::new(|_: &Parts| panic!("bug before the future"));
        let outcome = run_authorize(&AuthorizeHook::Async(called), &parts(), far()).await;
        assert!(matches!(outcome, HookOutcome::Panicked));
        let refusing: AuthorizeAsyncFn =
            Arc::new(|_: &Parts| Box::pin(async { Err(Refused::because("no token")) }));
        let outcome = run_authorize(&AuthorizeHook::Async(refusing), &parts(), far()).await;
        assert!(matches!(outcome, HookOutcome::Refused(Denial::Forbidden)));
    }
}
