//! A change feed that ends, over in-memory pipes: a listen reading it completes, and a legacy session
//! reading it ends the whole session (its output closes), so no client holds a stream that silently
//! stopped.

use std::sync::Arc;

use futures_util::stream;
use mcp_kernel_router::notify::{Change, ChangeFeed, ChangeHub, InProcessHub, Notifications};
use mcp_kernel_router::{Listing, Server};
use mcp_kernel_stdio::StdioOptions;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::harness::{Session, bounded, request};

/// A hub whose every feed ends when [`EndingHub::end`] is called, as a hub that lost its source does.
struct EndingHub {
    inner: InProcessHub,
    ended: watch::Sender<bool>,
}

impl EndingHub {
    fn end(&self) {
        self.ended.send_replace(true);
    }
}

impl ChangeHub for EndingHub {
    fn publish(&self, change: Change) {
        self.inner.publish(change);
    }

    fn subscribe(&self) -> ChangeFeed {
        let state = (self.inner.subscribe(), self.ended.subscribe());
        ChangeFeed::new(stream::unfold(state, |(mut feed, mut ended)| async move {
            let change = tokio::select! {
                biased;
                _ = ended.wait_for(|ended| *ended) => None,
                change = feed.next() => change,
            };
            change.map(|change| (change, (feed, ended)))
        }))
    }
}

/// A server with no catalog announcing through a hub the test can end.
fn ending_server() -> (Server, Arc<EndingHub>) {
    let hub = Arc::new(EndingHub { inner: InProcessHub::new(), ended: watch::Sender::new(false) });
    let shared: Arc<dyn ChangeHub> = hub.clone();
    let server = Server::builder(Listing::default())
        .notifications(Notifications::with_shared_hub(shared))
        .build()
        .expect("an empty catalog builds");
    (server, hub)
}

fn listen(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}},
        "notifications": {"toolsListChanged": true}}})
}

fn tag(line: &Value) -> &Value {
    let key = "io.modelcontextprotocol/subscriptionId";
    line.pointer("/params/_meta").or_else(|| line.pointer("/result/_meta")).map_or(&Value::Null, |m| &m[key])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_whose_change_feed_ends_is_completed_and_the_session_goes_on() {
    bounded(async {
        let (server, hub) = ending_server();
        let mut session = Session::start(server, StdioOptions::default());
        session.send_json(listen("l")).await;
        let ack = session.expect().await;
        assert_eq!(
            (&ack["method"], tag(&ack)),
            (&json!("notifications/subscriptions/acknowledged"), &json!("l"))
        );
        hub.end();
        let completion = session.expect().await;
        assert_eq!(
            (&completion["id"], &completion["result"]["resultType"]),
            (&json!("l"), &json!("complete"))
        );
        assert_eq!(tag(&completion), "l", "the completion is tagged: {completion}");
        session.send_json(request(1, "ping")).await;
        assert_eq!(session.expect().await["id"], 1, "the session goes on");
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_whose_change_feed_ends_is_ended_like_a_drain() {
    bounded(async {
        let (server, hub) = ending_server();
        let mut session = Session::start(server, StdioOptions::default());
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "legacy", "version": "1"}});
        session.send_json(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})).await;
        assert_eq!(session.expect().await["id"], 1);
        session.send_json(listen("l")).await;
        assert_eq!(tag(&session.expect().await), "l");
        hub.end();
        // stdin stays open: only the session's end can close the output.
        let rest = session.rest().await;
        assert_eq!(rest.len(), 1, "the open listen's completion, then the output closes: {rest:?}");
        assert_eq!((&rest[0]["id"], tag(&rest[0])), (&json!("l"), &json!("l")));
        session.finish().await.expect("an ended session returns Ok");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_never_initialized_outlives_the_end_of_the_change_feed() {
    bounded(async {
        let (server, hub) = ending_server();
        let mut session = Session::start(server, StdioOptions::default());
        hub.end();
        session.send_json(request(1, "ping")).await;
        assert_eq!(session.expect().await["id"], 1, "no legacy session was opened, none ends");
        session.expect_quiet().await;
        session.ends_clean().await;
    })
    .await;
}
