//! One writer at a time per task in this instance: the updates of one task made here queue up, so
//! that only writers on other instances ever meet in the compare-and-swap.
//!
//! Threat: **a task's own writers starving its outcome**. A handler setting status messages in a
//! loop makes one update per message, all at once; were they left to race in the compare-and-swap,
//! every round would have one winner and the rest would read and try again — a burst of a thousand
//! messages exhausted [`MAX_SWAP_ATTEMPTS`](crate::MAX_SWAP_ATTEMPTS) for the task's completion, whose
//! result was then lost. Queued here (first come, first served), each update costs its two round
//! trips once, and a swap conflicts only with another instance's write.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{Mutex as Queue, OwnedMutexGuard};

/// The queue of each task being written in this instance (a task leaves the map with its last writer).
#[derive(Default)]
pub(crate) struct Writers {
    queues: Mutex<HashMap<Arc<str>, Arc<Queue<()>>>>,
}

impl Writers {
    /// Waits for the turn of this writer of the task `id`; the next one's comes when it is dropped.
    pub(crate) async fn turn(&self, id: &str) -> Turn<'_> {
        let queue = {
            let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(queues.entry(Arc::from(id)).or_default())
        };
        let guard = queue.lock_owned().await;
        Turn { writers: self, id: Arc::from(id), guard: Some(guard) }
    }

    /// How many tasks have a writer here now (for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.queues.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// One writer's turn.
pub(crate) struct Turn<'a> {
    writers: &'a Writers,
    id: Arc<str>,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let Some(guard) = self.guard.take() else { return };
        let queue = Arc::clone(OwnedMutexGuard::mutex(&guard));
        drop(guard);
        // Every waiter took its handle on the queue under this lock: the map's and this one are the
        // only ones left when nobody waits.
        let mut queues = self.writers.queues.lock().unwrap_or_else(PoisonError::into_inner);
        if Arc::strong_count(&queue) == 2 {
            queues.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[test]
    fn writers_of_one_task_take_turns_and_the_task_is_forgotten_with_its_last_writer() {
        let writers = Writers::default();
        let first = writers.turn("t").now_or_never().expect("nobody writes t");
        let other = writers.turn("u").now_or_never().expect("another task is not queued behind t");
        let mut second = Box::pin(writers.turn("t"));
        assert!((&mut second).now_or_never().is_none(), "t's second writer waits");
        drop(first);
        let second = second.now_or_never().expect("its turn came");
        let mut given_up = Box::pin(writers.turn("t"));
        assert!((&mut given_up).now_or_never().is_none());
        drop(given_up);
        assert_eq!(writers.len(), 2);
        drop((second, other));
        assert_eq!(writers.len(), 0, "nothing is kept for a task nobody writes");
    }
}
