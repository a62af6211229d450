//! One listen stream's pump: a task that takes each notification from the core ([`Listen::next`]) as
//! soon as it is announced and queues it, encoded, for the response body, until the stream ends.
//!
//! Threat: **a listener that never reads**. The hub must not wait for any one reader, so the stream's
//! notifications are taken from it at once, whether or not the client takes them from the stream; a
//! client that stops reading would then make the server hold every change announced since, without
//! bound. So the queue between the pump and the body is bounded (`listen_queue` notifications, plus
//! one place kept for the completion result): when a notification finds it full, the stream is ended
//! — that notification is not queued, the completion result takes the kept place, and the pump stops.
//! A client that reads again reads what was queued, then the completion, and knows to listen again (and
//! to list again); one that never does is closed at `serve`'s write deadline. Never a silent gap: a
//! notification is either delivered in order or the stream ends.
//!
//! The stream also ends, with its completion result, when the core's feed ends (the hub fell behind
//! for this listener or lost its source), when the server ends its listens ([`Ending`]: the
//! notifications already announced and ready go first, as long as the queue has room), or when the
//! core panics while taking a notification (logged); and silently when the body is gone (the client
//! closed the stream: cancellation, nothing more is written).

use std::panic::AssertUnwindSafe;

use bytes::Bytes;
use futures_util::FutureExt;
use tokio::sync::mpsc;

use mcp_kernel_router::transport::Listen;

use crate::dispatch::listen::ending::Ending;
use crate::response::event_stream::event;

/// Why the pump stopped taking notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The body is gone: the client closed the stream.
    ReaderGone,
    /// The core's feed ended.
    FeedEnded,
    /// The server ends its listens.
    Ending,
    /// A notification found the queue full.
    Overflow,
}

/// The queue from the pump to the body: room for `queue` notifications and the completion result.
pub(crate) fn channel(queue: usize) -> (mpsc::Sender<Bytes>, mpsc::Receiver<Bytes>) {
    mpsc::channel(queue.max(1).saturating_add(1))
}

/// Runs one stream: queues its notifications on `queue` until it ends, then its completion result
/// (unless the body is gone).
pub(crate) async fn pump(mut listen: Listen, queue: mpsc::Sender<Bytes>, mut ending: Ending) {
    let stop = AssertUnwindSafe(feed(&mut listen, &queue, &mut ending)).catch_unwind().await;
    match stop {
        Ok(Stop::ReaderGone) => return,
        Ok(Stop::Overflow) => tracing::debug!("a listen stream whose reader fell behind was ended"),
        Ok(Stop::Ending) => {
            // What was announced before the end and is ready now goes first, while there is room.
            let drained = AssertUnwindSafe(drain(&mut listen, &queue)).catch_unwind().await;
            if drained.is_err() {
                tracing::error!("the core panicked while ending a listen stream");
            }
        }
        Ok(Stop::FeedEnded) => {}
        Err(_) => tracing::error!("the core panicked while serving a listen stream; the stream was ended"),
    }
    // Room was kept for it: only this task sends, and it never fills the last place.
    if queue.try_send(event(&listen.completion().to_bytes())).is_err() {
        tracing::debug!("a listen stream's completion found its reader gone");
    }
}

/// Queues notifications while the last place of the queue stays free for the completion result.
async fn feed(listen: &mut Listen, queue: &mpsc::Sender<Bytes>, ending: &mut Ending) -> Stop {
    loop {
        let next = tokio::select! {
            biased;
            () = queue.closed() => return Stop::ReaderGone,
            () = ending.begun() => return Stop::Ending,
            next = listen.next() => next,
        };
        let Some(notification) = next else { return Stop::FeedEnded };
        if queue.capacity() <= 1 {
            return if queue.is_closed() { Stop::ReaderGone } else { Stop::Overflow };
        }
        let bytes = serde_json::to_vec(&notification).unwrap_or_default();
        if queue.try_send(event(&bytes)).is_err() {
            return Stop::ReaderGone;
        }
    }
}

/// Queues the notifications ready now (announced before the stream was ended), as long as the queue
/// has room beside the completion's place; at most one queue's worth.
async fn drain(listen: &mut Listen, queue: &mpsc::Sender<Bytes>) {
    for _ in 0..queue.max_capacity() {
        if queue.capacity() <= 1 {
            return;
        }
        let Some(Some(notification)) = listen.next().now_or_never() else { return };
        let bytes = serde_json::to_vec(&notification).unwrap_or_default();
        if queue.try_send(event(&bytes)).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use mcp_kernel_router::notify::Notifications;
    use mcp_kernel_router::transport::Inbound;
    use mcp_kernel_router::{Listing, Server};
    use mcp_kernel_wire::Envelope;
    use serde_json::{Value, json};

    use crate::dispatch::listen::ending::EndListens;

    async fn listening(notifications: &Notifications) -> Listen {
        let server = Server::builder(Listing::default())
            .notifications(notifications.clone())
            .build()
            .expect("a server");
        let message = json!({
            "jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}
                },
                "notifications": {"toolsListChanged": true}
            }
        });
        let envelope = Envelope::from_object(message.as_object().cloned().expect("an object"));
        server.open_listen(envelope, Inbound::new()).await.expect("a listen")
    }

    fn message(event: &Bytes) -> Value {
        let text = std::str::from_utf8(event).expect("UTF-8");
        let data = text.lines().find_map(|line| line.strip_prefix("data: ")).expect("a data line");
        serde_json::from_str(data).expect("JSON")
    }

    #[tokio::test]
    async fn a_reader_a_whole_queue_behind_gets_the_completion_in_the_place_kept_for_it() {
        let notifications = Notifications::in_process();
        let listen = listening(&notifications).await;
        let (sender, mut body) = channel(4);
        let end = EndListens::default();
        let task = tokio::spawn(pump(listen, sender, end.ending(None)));
        let notifier = notifications.notifier();
        for _ in 0..10 {
            notifier.tools_list_changed();
            tokio::task::yield_now().await;
        }
        tokio::time::timeout(Duration::from_secs(5), task).await.expect("the pump stops").expect("joined");
        let mut queued = Vec::new();
        while let Ok(event) = body.try_recv() {
            queued.push(message(&event));
        }
        assert_eq!(queued.len(), 5, "four notifications, then the completion: {queued:?}");
        for notification in &queued[..4] {
            assert_eq!(notification["method"], "notifications/tools/list_changed");
        }
        assert_eq!(queued[4]["id"], 5, "the completion result ends the stream: {:?}", queued[4]);
        assert!(queued[4].get("result").is_some());
        assert!(body.recv().await.is_none(), "nothing after it");
    }

    #[tokio::test]
    async fn the_end_of_listens_queues_the_completion_after_what_was_pending() {
        let notifications = Notifications::in_process();
        let listen = listening(&notifications).await;
        let (sender, mut body) = channel(64);
        let end = EndListens::default();
        let task = tokio::spawn(pump(listen, sender, end.ending(None)));
        notifications.notifier().tools_list_changed();
        let first = tokio::time::timeout(Duration::from_secs(5), body.recv()).await.expect("in time");
        assert_eq!(message(&first.expect("a notification"))["method"], "notifications/tools/list_changed");
        // Announced, then the end at once: the announcement still goes first.
        notifications.notifier().prompts_list_changed();
        notifications.notifier().tools_list_changed();
        end.end();
        let pending = tokio::time::timeout(Duration::from_secs(5), body.recv()).await.expect("in time");
        assert_eq!(message(&pending.expect("the pending one"))["method"], "notifications/tools/list_changed");
        let last = tokio::time::timeout(Duration::from_secs(5), body.recv()).await.expect("in time");
        assert_eq!(message(&last.expect("the completion"))["id"], 5);
        task.await.expect("joined");
        assert!(body.recv().await.is_none());
    }

    #[tokio::test]
    async fn a_closed_stream_stops_its_pump_and_writes_nothing_more() {
        let notifications = Notifications::in_process();
        let listen = listening(&notifications).await;
        let (sender, body) = channel(64);
        let end = EndListens::default();
        let task = tokio::spawn(pump(listen, sender, end.ending(None)));
        drop(body);
        tokio::time::timeout(Duration::from_secs(5), task).await.expect("the pump stops").expect("joined");
    }
}
