//! The one place host code runs: a panic there is caught, logged by names only (the package never logs
//! a payload; the process's panic hook, which is the host's, runs first and decides what reaches
//! stderr), and answered -32603; the server keeps serving.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;

use crate::contract::BoxFuture;

/// The host's code panicked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Panicked;

/// Creates the host's future and awaits it, catching a panic in either step.
pub(crate) async fn guarded<'a, T>(start: impl FnOnce() -> BoxFuture<'a, T>) -> Result<T, Panicked> {
    let future = std::panic::catch_unwind(AssertUnwindSafe(start)).map_err(|_| Panicked)?;
    AssertUnwindSafe(future).catch_unwind().await.map_err(|_| Panicked)
}
