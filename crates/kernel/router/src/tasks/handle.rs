//! What a handler sees of its task ([`TaskHandle`], from [`RequestContext::task`](crate::RequestContext::task)):
//! a status message it may set, and the cancellation it may await.
//!
//! The handle exists from the start of a call that may become a task (a tool whose mode is not
//! `Never`, called by a client that declared the extension), before the kernel knows whether it will:
//! a message set before the task is created is the message it is created with; a cancellation can come
//! only once it exists.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures_channel::oneshot;
use futures_util::FutureExt;
use futures_util::future::Shared;

use crate::tasks::record::{Transition, now_ms};
use crate::tasks::registry::TaskEngine;

/// A handler's view of the task it runs in: cheap to clone, `Send`.
#[derive(Clone)]
pub struct TaskHandle {
    inner: Arc<HandleInner>,
}

struct HandleInner {
    state: Mutex<HandleState>,
    fired: AtomicBool,
    cancelled: Shared<oneshot::Receiver<()>>,
}

#[derive(Default)]
struct HandleState {
    /// The message set before the task existed.
    message: Option<String>,
    /// The task, once it exists.
    attached: Option<(String, TaskEngine)>,
    /// Fires the cancellation (taken when fired).
    cancel: Option<oneshot::Sender<()>>,
}

impl std::fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskHandle").field("cancelled", &self.is_cancelled()).finish_non_exhaustive()
    }
}

impl TaskHandle {
    /// A handle for a call that may become a task.
    pub(crate) fn new() -> Self {
        let (sender, receiver) = oneshot::channel();
        let state = HandleState { cancel: Some(sender), ..HandleState::default() };
        let inner = HandleInner {
            state: Mutex::new(state),
            fired: AtomicBool::new(false),
            cancelled: receiver.shared(),
        };
        Self { inner: Arc::new(inner) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HandleState> {
        self.inner.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The task's id, once the call has become a task.
    pub fn task_id(&self) -> Option<String> {
        self.state().attached.as_ref().map(|(id, _)| id.clone())
    }

    /// Sets the task's `statusMessage` (shown to the client by `tasks/get` and `notifications/tasks`).
    /// Before the call has become a task, the message is kept for the task it may become; on a task that
    /// has finished, nothing changes.
    pub fn set_status_message(&self, message: impl Into<String>) {
        let message = message.into();
        let attached = {
            let mut state = self.state();
            match &state.attached {
                Some((id, engine)) => Some((id.clone(), engine.clone())),
                None => {
                    state.message = Some(message.clone());
                    None
                }
            }
        };
        if let Some((id, engine)) = attached {
            let transition = Transition::Message(message);
            engine.spawn_transition(id, transition, now_ms());
        }
    }

    /// Whether the task was cancelled (by `tasks/cancel`, its time to live, or the server's shutdown).
    pub fn is_cancelled(&self) -> bool {
        self.inner.fired.load(Ordering::Acquire)
    }

    /// Resolves when the task is cancelled (never, for a call that does not become a task or is not
    /// cancelled). A handler that selects on it can stop early; its outcome after a cancellation is not
    /// stored, and it is dropped once the cancellation grace has passed.
    pub async fn cancelled(&self) {
        if self.inner.cancelled.clone().await.is_err() {
            // The sender is gone without firing: no cancellation will come.
            std::future::pending::<()>().await;
        }
    }

    /// Ties the handle to the task it has become; the message it was created with is returned.
    pub(crate) fn attach(&self, id: String, engine: TaskEngine) -> Option<String> {
        let mut state = self.state();
        state.attached = Some((id, engine));
        state.message.take()
    }

    /// The message set before the task existed.
    pub(crate) fn pending_message(&self) -> Option<String> {
        self.state().message.clone()
    }

    /// Fires the cancellation (once).
    pub(crate) fn cancel(&self) {
        if let Some(sender) = self.state().cancel.take() {
            self.inner.fired.store(true, Ordering::Release);
            let _ = sender.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancellation_wakes_every_waiter_once_fired() {
        let handle = TaskHandle::new();
        let other = handle.clone();
        assert!(!handle.is_cancelled());
        assert!(other.cancelled().now_or_never().is_none());
        handle.cancel();
        handle.cancel();
        assert!(other.is_cancelled());
        assert_eq!(other.cancelled().now_or_never(), Some(()));
        assert_eq!(handle.cancelled().now_or_never(), Some(()));
    }

    #[test]
    fn a_message_set_before_the_task_exists_is_kept_for_it() {
        let handle = TaskHandle::new();
        handle.set_status_message("starting");
        assert_eq!(handle.pending_message().as_deref(), Some("starting"));
        assert!(handle.task_id().is_none());
    }
}
