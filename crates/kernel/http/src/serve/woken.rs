//! A future polled only when something it waits on has woken it.
//!
//! A connection's task waits on its connection and, beside it, on the signals that may end it (its
//! deadlines, the drain, the notice to make room). In one `select!` every wake-up of the task — each
//! request read, each response written — would poll the signals too, each a timer or a lock to look
//! at, although none of them has changed. [`OnWake`] gives the signals a waker of their own: the task
//! still wakes for them, and polls them then, and only then (and once at first, when they register).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

pin_project_lite::pin_project! {
    /// `inner`, polled only after one of its own wakers fired.
    pub(crate) struct OnWake<F> {
        #[pin]
        inner: F,
        flag: Arc<Flag>,
        waker: Waker,
    }
}

/// Whether `inner` was woken since it was last polled, and the task to wake then.
#[derive(Debug)]
struct Flag {
    woken: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl<F> OnWake<F> {
    /// `inner`, to be polled at its first poll and then whenever it is woken.
    pub(crate) fn new(inner: F) -> Self {
        let flag = Arc::new(Flag { woken: AtomicBool::new(true), task: AtomicWaker::new() });
        let waker = Waker::from(Arc::clone(&flag));
        Self { inner, flag, waker }
    }
}

impl<F: Future> Future for OnWake<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        // Registered before the flag is read: a wake-up between the two still wakes this task.
        this.flag.task.register(cx.waker());
        if !this.flag.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        this.inner.poll(&mut Context::from_waker(this.waker))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts its polls; ready once `ready` is set, waking whoever polled it last when told to.
    struct Counted {
        polls: Arc<AtomicUsize>,
        ready: Arc<AtomicBool>,
        waker: Arc<std::sync::Mutex<Option<Waker>>>,
    }

    impl Future for Counted {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.fetch_add(1, Ordering::Relaxed);
            if self.ready.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            *self.waker.lock().expect("not poisoned") = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    #[test]
    fn the_inner_future_is_polled_first_and_then_only_when_it_is_woken() {
        let (polls, ready) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let inner_waker = Arc::new(std::sync::Mutex::new(None::<Waker>));
        let counted =
            Counted { polls: Arc::clone(&polls), ready: Arc::clone(&ready), waker: Arc::clone(&inner_waker) };
        let mut on_wake = std::pin::pin!(OnWake::new(counted));
        let task_wakes = Arc::new(TaskWakes::default());
        let task_waker = Waker::from(Arc::clone(&task_wakes));
        let mut cx = Context::from_waker(&task_waker);

        assert!(on_wake.as_mut().poll(&mut cx).is_pending());
        assert_eq!(polls.load(Ordering::Relaxed), 1, "polled once at first, to register");
        for _ in 0..10 {
            assert!(on_wake.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(polls.load(Ordering::Relaxed), 1, "the task's other wake-ups do not poll it");

        ready.store(true, Ordering::Release);
        let woken = inner_waker.lock().expect("not poisoned").take().expect("registered");
        woken.wake();
        assert_eq!(task_wakes.0.load(Ordering::Relaxed), 1, "its wake-up wakes the task");
        assert!(on_wake.as_mut().poll(&mut cx).is_ready());
        assert_eq!(polls.load(Ordering::Relaxed), 2);
    }

    /// Counts the task's wake-ups.
    #[derive(Default)]
    struct TaskWakes(AtomicUsize);

    impl Wake for TaskWakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}
