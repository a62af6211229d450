//! Serving: concurrency, one writer, cancellation, stopping, panics and the in-flight bound.

use std::collections::BTreeSet;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use mcp_kernel_stdio::{StdioOptions, serve_io};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, ReadBuf};

use crate::harness::{Controlled, Event, Session, big_text, bounded, call, error, plain_server, request};

fn cancel(request_id: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}})
}

fn text_of(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a text result: {response}"))
}

fn started(name: &str) -> Event {
    Event::Started(name.into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_tool_does_not_hold_up_a_later_tools_list() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let mut session = Session::start(tools.server.clone(), StdioOptions::default());
        session.send_json(call(1, "slow")).await;
        assert_eq!(tools.event().await, started("slow"));
        session.send_json(request(2, "tools/list")).await;
        let first = session.expect().await;
        assert_eq!(first["id"], 2, "tools/list is answered while the slow call runs");
        assert!(first["result"]["tools"].is_array());
        tools.gate.add_permits(1);
        let second = session.expect().await;
        assert_eq!(second["id"], 1);
        assert_eq!(text_of(&second), "slow");
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_never_interleave() {
    bounded(async {
        const CALLS: u64 = 40;
        const SIZE: usize = 150_000;
        let tools = Controlled::new(SIZE);
        let mut session = Session::start(tools.server.clone(), StdioOptions::default());
        let mut input = session.take_input();
        let writer = tokio::spawn(async move {
            for n in 1..=CALLS {
                let message = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                    "params": {"name": "big", "arguments": {"n": n}}});
                let mut line = message.to_string().into_bytes();
                line.push(b'\n');
                input.write_all(&line).await.expect("the server reads");
            }
            // Dropping the input ends it: the server answers everything, then closes its output.
        });
        // `recv` asserts that each line is whole and parses as JSON.
        let responses = session.rest().await;
        writer.await.expect("the writer finished");
        assert_eq!(responses.len(), CALLS as usize);
        let mut seen = BTreeSet::new();
        for response in &responses {
            let n = response["id"].as_u64().expect("a numeric id");
            assert_eq!(text_of(response), big_text(n, SIZE), "call {n} got its own output, whole");
            seen.insert(n);
        }
        assert_eq!(seen, (1..=CALLS).collect::<BTreeSet<_>>());
        session.finish().await.expect("a clean end");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_notification_cancels_without_answer() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let mut session = Session::start(tools.server.clone(), StdioOptions::default());
        session.send_json(call(7, "forever")).await;
        assert_eq!(tools.event().await, started("forever"));
        session.send_json(cancel(json!(7))).await;
        assert_eq!(tools.event().await, Event::Dropped("forever".into()), "the host future was dropped");
        session.send_json(request(8, "ping")).await;
        assert_eq!(session.expect().await, json!({"jsonrpc": "2.0", "id": 8, "result": {}}));

        // Ids are matched by their JSON text: the string "9" is not the number 9.
        session.send_json(call(9, "forever")).await;
        assert_eq!(tools.event().await, started("forever"));
        session.send_json(cancel(json!("9"))).await;
        tools.expect_no_event().await;
        session.send_json(cancel(json!(9))).await;
        assert_eq!(tools.event().await, Event::Dropped("forever".into()));

        // Cancelling a finished or unknown request is ignored.
        session.send_json(cancel(json!(7))).await;
        session.send_json(cancel(json!("unknown"))).await;
        session.send_json(request(10, "ping")).await;
        assert_eq!(session.expect().await["id"], 10);
        session.close();
        assert_eq!(session.rest().await, Vec::<Value>::new(), "neither 7, 9 nor any cancel is answered");
        session.finish().await.expect("a clean end");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_reaches_a_saturated_server() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let mut session = Session::start(tools.server.clone(), StdioOptions::default().max_in_flight(1));
        session.send_json(call(1, "forever")).await;
        assert_eq!(tools.event().await, started("forever"));
        session.send_json(cancel(json!(1))).await;
        assert_eq!(tools.event().await, Event::Dropped("forever".into()));
        session.send_json(request(2, "ping")).await;
        assert_eq!(session.expect().await["id"], 2);
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eof_waits_for_in_flight_requests() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let mut session = Session::start(tools.server.clone(), StdioOptions::default());
        session.send_json(call(1, "slow")).await;
        assert_eq!(tools.event().await, started("slow"));
        session.close();
        session.expect_quiet().await;
        assert!(!session.is_finished(), "serve_io waits for the request in flight");
        tools.gate.add_permits(1);
        let response = session.expect().await;
        assert_eq!(response["id"], 1);
        assert_eq!(text_of(&response), "slow");
        assert_eq!(session.rest().await, Vec::<Value>::new());
        session.finish().await.expect("a clean end");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_then_stops_reading() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let mut session = Session::start(tools.server.clone(), StdioOptions::default());
        session.send_json(call(1, "slow")).await;
        assert_eq!(tools.event().await, started("slow"));
        let mut input = Vec::new();
        for message in [request(2, "shutdown"), request(3, "ping"), call(4, "fast")] {
            input.extend(message.to_string().into_bytes());
            input.push(b'\n');
        }
        session.send(&input).await;
        assert_eq!(session.expect().await, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
        session.expect_quiet().await;
        assert!(!session.is_finished(), "the slow call read before shutdown is still answered");
        tools.gate.add_permits(1);
        assert_eq!(session.expect().await["id"], 1);
        assert_eq!(session.rest().await, Vec::<Value>::new(), "nothing after shutdown is read");
        session.finish().await.expect("shutdown is a clean end, with the input still open");
        tools.expect_no_event().await;
    })
    .await;
}

#[tokio::test]
async fn exit_notification_stops_without_answer() {
    bounded(async {
        let mut session = Session::start(plain_server(), StdioOptions::default());
        session.send_json(json!({"jsonrpc": "2.0", "method": "exit"})).await;
        session.send_json(request(1, "ping")).await;
        assert_eq!(session.rest().await, Vec::<Value>::new());
        session.finish().await.expect("exit is a clean end");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panic_in_dispatch_is_answered_internal_error_and_loop_continues() {
    bounded(async {
        let tools = Controlled::new(0);
        let mut session = Session::start(tools.server.clone(), StdioOptions::default());
        session.send_json(call(1, "boom")).await;
        let response = session.expect().await;
        assert_eq!(
            response,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}})
        );
        assert!(error(&response).get("data").is_none(), "nothing about the panic is told");
        session.send_json(call(2, "fast")).await;
        let response = session.expect().await;
        assert_eq!(response["id"], 2);
        assert_eq!(text_of(&response), "fast");
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_in_flight_bounds_reading() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let mut session = Session::start(tools.server.clone(), StdioOptions::default().max_in_flight(2));
        session.send_json(call(1, "slow")).await;
        session.send_json(call(2, "slow")).await;
        assert_eq!(tools.event().await, started("slow"));
        assert_eq!(tools.event().await, started("slow"));
        // A third request, then a line that would be refused at once if it were read.
        session.send_json(call(3, "slow")).await;
        session.send(b"not json\n").await;
        tools.expect_no_event().await;
        session.expect_quiet().await;

        tools.gate.add_permits(1);
        let finished = session.expect().await;
        assert!(finished["id"] == 1 || finished["id"] == 2, "one of the first two finished: {finished}");
        assert_eq!(tools.event().await, started("slow"), "the third call starts only now");
        let refused = session.expect().await;
        assert_eq!(refused["id"], Value::Null, "the line after it is read only now");
        assert_eq!(error(&refused)["code"], -32700);

        tools.gate.add_permits(2);
        let mut ids: Vec<i64> = vec![session.expect().await["id"].as_i64().unwrap()];
        ids.push(session.expect().await["id"].as_i64().unwrap());
        ids.push(finished["id"].as_i64().unwrap());
        ids.sort_unstable();
        assert_eq!(ids, vec![1, 2, 3]);
        session.ends_clean().await;
    })
    .await;
}

#[tokio::test]
async fn broken_output_stops_with_an_error() {
    bounded(async {
        let session = Session::start(plain_server(), StdioOptions::default());
        let (input, served) = session.drop_output();
        let mut input = input.expect("the input is open");
        let line = format!("{}\n", request(1, "ping"));
        // The write may fail once the server has stopped: only serve_io's result matters.
        let _ = input.write_all(line.as_bytes()).await;
        let served = served.await.expect("serve_io does not panic");
        assert!(served.is_err(), "a broken output is an error: {served:?}");
    })
    .await;
}

/// An input that fails on every read.
struct Failing;

impl AsyncRead for Failing {
    fn poll_read(self: Pin<&mut Self>, _: &mut Context<'_>, _: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Err(io::Error::other("the input failed")))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_error_is_returned_after_in_flight_requests_are_answered() {
    bounded(async {
        let mut tools = Controlled::new(0);
        let first = format!("{}\n", call(1, "slow")).into_bytes();
        let input = std::io::Cursor::new(first).chain(Failing);
        let (server_output, mut output) = tokio::io::duplex(64 * 1024);
        let served =
            tokio::spawn(serve_io(tools.server.clone(), input, server_output, StdioOptions::default()));
        assert_eq!(tools.event().await, started("slow"));
        tools.gate.add_permits(1);
        let mut written = String::new();
        output.read_to_string(&mut written).await.expect("the output is readable");
        let response: Value = serde_json::from_str(written.trim_end()).expect("one response line");
        assert_eq!(response["id"], 1);
        let served = served.await.expect("serve_io does not panic");
        assert_eq!(served.expect_err("the input error is returned").to_string(), "the input failed");
    })
    .await;
}

#[test]
fn serve_io_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let (input, output) = tokio::io::duplex(16);
    let future = serve_io(plain_server(), input, output, StdioOptions::default());
    assert_send(&future);
}
