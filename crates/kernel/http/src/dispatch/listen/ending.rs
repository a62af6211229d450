//! When the server ends its listen streams: the service's own signal ([`McpService::end_listens`]), the
//! drain of the [`serve`] that accepted the request, and the notice telling the request's connection to
//! make room for another client (`serve/evict.rs`: a connection holding a stream that never ends would
//! otherwise never go).
//!
//! Threat: **a shutdown that cuts streams**. A listen stream never ends by itself; a server that stops
//! by dropping it leaves every client (and every proxy between) with a stream cut without its
//! completion result, which a client may read as a fault rather than as "listen again". So each stream
//! watches both signals and, when either is given, is ended gracefully: its pending notifications,
//! then its completion result, then the end of the response — within the drain's grace period, since
//! nothing waits for the client. A listen that arrives once either signal was given is acknowledged
//! and completed at once.
//!
//! [`McpService::end_listens`]: crate::McpService::end_listens
//! [`serve`]: crate::serve

use std::sync::Arc;

use tokio::sync::watch;

use crate::serve::{Draining, Notice};

/// The service's own signal: given once, by [`McpService::end_listens`](crate::McpService::end_listens).
#[derive(Debug)]
pub(crate) struct EndListens {
    sender: watch::Sender<bool>,
}

impl Default for EndListens {
    fn default() -> Self {
        Self { sender: watch::channel(false).0 }
    }
}

impl EndListens {
    /// Ends every listen stream open now, and every later one at once.
    pub(crate) fn end(&self) {
        self.sender.send_replace(true);
    }

    /// What one stream watches: this signal and, when the request came through `serve`, its drain and
    /// its connection's notice.
    pub(crate) fn ending(&self, draining: Option<Draining>) -> Ending {
        let (serve, notice) = match draining {
            Some(Draining { stop, notice, .. }) => (Some(stop), Some(notice)),
            None => (None, None),
        };
        Ending { service: self.sender.subscribe(), serve, notice }
    }
}

/// The signals one stream watches.
#[derive(Debug, Clone)]
pub(crate) struct Ending {
    service: watch::Receiver<bool>,
    serve: Option<watch::Receiver<bool>>,
    notice: Option<Arc<Notice>>,
}

/// Completes once `signal` is given (or its sender is gone: the server that would give it is).
async fn given(signal: &mut watch::Receiver<bool>) {
    let _ = signal.wait_for(|given| *given).await;
}

impl Ending {
    /// Whether any of the signals was given already.
    pub(crate) fn has_begun(&self) -> bool {
        *self.service.borrow()
            || self.serve.as_ref().is_some_and(|serve| *serve.borrow())
            || self.notice.as_ref().is_some_and(|notice| notice.is_told())
    }

    /// Completes once any of the signals is given. Cancel-safe.
    pub(crate) async fn begun(&mut self) {
        match (&mut self.serve, &self.notice) {
            (Some(serve), Some(notice)) => tokio::select! {
                () = given(&mut self.service) => {}
                () = given(serve) => {}
                () = notice.told() => {}
            },
            _ => given(&mut self.service).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn any_signal_ends_a_stream_and_a_later_one_sees_it_at_once() {
        let end = EndListens::default();
        let mut alone = end.ending(None);
        assert!(!alone.has_begun());
        let waiting = tokio::time::timeout(Duration::from_millis(20), alone.begun()).await;
        assert!(waiting.is_err(), "nothing given yet");
        end.end();
        tokio::time::timeout(Duration::from_secs(5), alone.begun()).await.expect("the service's signal");
        assert!(end.ending(None).has_begun(), "a later stream sees it at once");

        let service = EndListens::default();
        let (drain, draining) = watch::channel(false);
        let notice = Arc::new(Notice::default());
        let mut through_serve = service.ending(Some(Draining {
            stop: draining,
            notice: Arc::clone(&notice),
            tasks: Default::default(),
        }));
        assert!(!through_serve.has_begun());
        drain.send_replace(true);
        assert!(through_serve.has_begun());
        tokio::time::timeout(Duration::from_secs(5), through_serve.begun()).await.expect("serve's drain");

        notice.tell();
        let (_drain, draining) = watch::channel(false);
        let mut told = service.ending(Some(Draining {
            stop: draining,
            notice: Arc::clone(&notice),
            tasks: Default::default(),
        }));
        assert!(told.has_begun(), "the connection was told already");
        let fresh = Arc::new(Notice::default());
        let (_drain, draining) = watch::channel(false);
        let mut evicted = service.ending(Some(Draining {
            stop: draining,
            notice: Arc::clone(&fresh),
            tasks: Default::default(),
        }));
        let waiting = tokio::spawn(async move { evicted.begun().await });
        tokio::task::yield_now().await;
        fresh.tell();
        tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("the notice").expect("joined");
        tokio::time::timeout(Duration::from_secs(5), told.begun()).await.expect("told before");
    }
}
