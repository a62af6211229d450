//! One current-thread Tokio runtime per thread, and a bounded `block_on`.

use std::future::Future;
use std::time::Duration;

use tokio::runtime::{Builder, Runtime};

thread_local! {
    static RUNTIME: Runtime = Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime builds");
}

/// Runs `future` to completion on this thread's runtime; a future still pending after `limit` is a
/// finding (a hang), reported by panicking with `what`.
pub(crate) fn block_on_bounded<F: Future>(what: &str, limit: Duration, future: F) -> F::Output {
    RUNTIME.with(|runtime| match runtime.block_on(async { tokio::time::timeout(limit, future).await }) {
        Ok(output) => output,
        Err(_) => panic!("{what} did not finish within {limit:?}"),
    })
}
