//! Draining on the host's signal (`StdioOptions::shutdown_on`): nothing more is read, every request
//! read is answered, and the grace bounds the wait.

use std::time::Duration;

use mcp_kernel_stdio::StdioOptions;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::harness::{Controlled, Event, Session, bounded, call};

/// Options that stop on the returned sender, with `grace`.
fn stopping(grace: Duration) -> (StdioOptions, oneshot::Sender<()>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let options = StdioOptions::default()
        .shutdown_on(async move {
            let _ = stopped.await;
        })
        .shutdown_grace(grace);
    (options, stop)
}

/// One line holding every message of `messages`, written with one write.
fn lines(messages: &[Value]) -> Vec<u8> {
    messages.iter().flat_map(|message| format!("{message}\n").into_bytes()).collect()
}

fn started(name: &str) -> Event {
    Event::Started(name.into())
}

/// The ids of `responses`, sorted.
fn ids(responses: &[Value]) -> Vec<i64> {
    let mut ids: Vec<i64> =
        responses.iter().map(|r| r["id"].as_i64().unwrap_or_else(|| panic!("an id: {r}"))).collect();
    ids.sort_unstable();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shutdown_signal_stops_reading_and_every_request_read_is_answered() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let (options, stop) = stopping(Duration::from_secs(30));
        let mut session = Session::start(tools.server.clone(), options);
        session.send_json(call(1, "slow")).await;
        assert_eq!(tools.event().await, started("slow"));
        session.send_json(call(2, "fast")).await;
        assert_eq!(session.expect().await["id"], 2, "read and answered before the signal");
        assert_eq!(tools.event().await, started("fast"));

        stop.send(()).expect("the session holds the signal");
        // Sent after the signal: never read, never answered.
        session.send_json_late(call(3, "fast")).await;
        tools.expect_no_event().await;
        assert!(!session.is_finished(), "the session waits for the slow call it read");

        tools.gate.add_permits(1);
        let answered = session.expect().await;
        assert_eq!(answered["id"], 1, "the call in flight at the signal is answered: {answered}");
        assert_eq!(session.rest().await, Vec::<Value>::new(), "then the output ends");
        session.finish().await.expect("a drained session returns Ok");
        assert!(tools.events.try_recv().is_err(), "the call sent after the signal never ran");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_taken_in_before_the_signal_are_answered_after_it() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let (options, stop) = stopping(Duration::from_secs(30));
        // Two slow calls take both places; the third request is taken in with them and waits for one.
        let mut session = Session::start(tools.server.clone(), options.max_in_flight(2));
        session.send(&lines(&[call(1, "slow"), call(2, "slow"), call(3, "fast")])).await;
        assert_eq!(tools.event().await, started("slow"));
        assert_eq!(tools.event().await, started("slow"));
        stop.send(()).expect("the session holds the signal");
        session.send_json_late(call(4, "fast")).await;
        tools.gate.add_permits(2);
        let answered = session.rest().await;
        assert_eq!(ids(&answered), [1, 2, 3], "everything read is answered, nothing after: {answered:?}");
        session.finish().await.expect("a drained session returns Ok");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_still_running_at_the_grace_is_cut_and_the_session_returns_ok() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let (options, stop) = stopping(Duration::from_millis(200));
        let mut session = Session::start(tools.server.clone(), options);
        session.send_json(call(1, "forever")).await;
        assert_eq!(tools.event().await, started("forever"));
        stop.send(()).expect("the session holds the signal");
        assert_eq!(session.rest().await, Vec::<Value>::new(), "a cut request is never answered");
        session.finish().await.expect("a session cut at its grace returns Ok");
        assert_eq!(tools.event().await, Event::Dropped("forever".into()), "the cut call's future is dropped");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_during_the_wait_at_end_of_input_starts_the_grace() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let (options, stop) = stopping(Duration::from_millis(200));
        let mut session = Session::start(tools.server.clone(), options);
        session.send_json(call(1, "forever")).await;
        assert_eq!(tools.event().await, started("forever"));
        session.close();
        tools.expect_no_event().await;
        assert!(!session.is_finished(), "end of input alone waits for the requests read");
        stop.send(()).expect("the session holds the signal");
        assert_eq!(session.rest().await, Vec::<Value>::new());
        session.finish().await.expect("Ok once the grace has passed");
        assert_eq!(tools.event().await, Event::Dropped("forever".into()));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_nobody_takes_does_not_hold_the_session_past_the_grace() {
    bounded(async {
        // Answers of 200 kB each into a 64 KiB pipe nobody reads: the writer blocks on the first.
        let mut tools = Controlled::new(200_000);
        let (options, stop) = stopping(Duration::from_millis(200));
        let mut session = Session::start(tools.server.clone(), options);
        let big = |n: i64| {
            serde_json::json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "big", "arguments": {"n": n}}})
        };
        session.send(&lines(&[big(1), big(2), big(3)])).await;
        for _ in 0..3 {
            assert_eq!(tools.event().await, started("big"));
        }
        stop.send(()).expect("the session holds the signal");
        // `finish` keeps the output open, unread, while it waits.
        let ended = tokio::time::timeout(Duration::from_secs(10), session.finish()).await;
        ended.expect("serve_io returned although its output was never read").expect("Ok at the grace");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cloned_options_stop_every_session_with_one_signal() {
    bounded(async {
        let tools = Controlled::new(0);
        let (options, stop) = stopping(Duration::from_secs(30));
        let mut first = Session::start(tools.server.clone(), options.clone());
        let mut second = Session::start(tools.server.clone(), options);
        for session in [&mut first, &mut second] {
            session.send_json(call(1, "fast")).await;
            assert_eq!(session.expect().await["id"], 1);
        }
        stop.send(()).expect("the sessions hold the signal");
        for session in [first, second] {
            session.finish().await.expect("each session returns Ok at the one signal");
        }
    })
    .await;
}
