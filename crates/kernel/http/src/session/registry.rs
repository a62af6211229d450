//! The GET streams of legacy sessions open on this instance: at most one per session. A newer stream
//! of a session ends the older here at once; a session ended here (DELETE) ends its stream; a stream
//! that ends gives its place back. Across instances the session's record decides which stream is its
//! one (`SessionStream::take_over`): an older stream elsewhere falls silent at once and ends at its
//! next notification or check.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

/// The GET streams open on this instance: at most one per session.
#[derive(Debug, Default)]
pub(crate) struct GetStreams {
    /// Per session id: the open stream's number and the signal that ends it.
    open: Mutex<HashMap<String, (u64, oneshot::Sender<()>)>>,
    next: AtomicU64,
}

/// One open stream's place in [`GetStreams`], given back when the stream ends.
pub(crate) struct Registration {
    streams: Arc<GetStreams>,
    session: String,
    number: u64,
}

impl GetStreams {
    /// Registers a new stream of `session`, ending the older one if any; the receiver resolves when
    /// this one must end (replaced, or its session ended here).
    pub(crate) fn open(self: &Arc<Self>, session: &str) -> (oneshot::Receiver<()>, Registration) {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let (sender, ended) = oneshot::channel();
        let older = self.lock().insert(session.to_owned(), (number, sender));
        if let Some((_, older)) = older {
            let _ = older.send(());
        }
        (ended, Registration { streams: Arc::clone(self), session: session.to_owned(), number })
    }

    /// Ends the stream of `session` open on this instance, if any (the session was ended).
    pub(crate) fn end(&self, session: &str) {
        if let Some((_, open)) = self.lock().remove(session) {
            let _ = open.send(());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, oneshot::Sender<()>)>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many streams are open (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut open = self.streams.lock();
        if open.get(&self.session).is_some_and(|(number, _)| *number == self.number) {
            open.remove(&self.session);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_stream_of_a_session_ends_the_older_and_each_gives_its_place_back() {
        let streams = Arc::new(GetStreams::default());
        let (mut first, first_place) = streams.open("s");
        assert!(first.try_recv().is_err(), "open");
        let (mut second, second_place) = streams.open("s");
        assert!(first.try_recv().is_ok(), "replaced");
        drop(first_place);
        assert_eq!(streams.len(), 1, "the older gives back nothing of the newer's");
        let (_other, other_place) = streams.open("t");
        streams.end("s");
        assert!(second.try_recv().is_ok(), "ended with its session");
        drop((second_place, other_place));
        assert_eq!(streams.len(), 0);
    }
}
