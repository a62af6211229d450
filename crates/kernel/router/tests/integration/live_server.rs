//! `LiveServer`: a replaceable server. A replacement serves from the next `current()` on, for every
//! clone; a request in flight finishes on the server it started with.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};

use crate::support::*;
use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_router::{Listing, Mode, RequestContext, Server, ToolError, ToolSpec, Tools};
use serde_json::{Value, json};

/// A gate a handler waits at, opened by the test.
#[derive(Clone, Default)]
struct Gate {
    entered: Arc<AtomicBool>,
    open: Arc<AtomicBool>,
}

impl Gate {
    fn wait(&self) -> impl Future<Output = ()> + Send + use<> {
        self.entered.store(true, Ordering::SeqCst);
        let open = Arc::clone(&self.open);
        std::future::poll_fn(
            move |_| if open.load(Ordering::SeqCst) { Poll::Ready(()) } else { Poll::Pending },
        )
    }
}

/// Server "A" (version 1): the tool `slow`, which waits at the gate.
fn server_a(gate: &Gate) -> Server {
    let gate = gate.clone();
    let tools =
        Tools::new().add(ToolSpec::new("slow", Mode::ReadOnly), move |_: Value, _cx: RequestContext| {
            let waiting = gate.wait();
            async move {
                waiting.await;
                Ok::<_, ToolError>("slow answered by A")
            }
        });
    Server::builder(Listing::new()).tools(tools).server_version("1").build().unwrap()
}

/// Server "B" (version 2): the tool `fresh` only.
fn server_b() -> Server {
    let tools = Tools::new()
        .add(ToolSpec::new("fresh", Mode::ReadOnly), |_: Value, _cx: RequestContext| async {
            Ok::<_, ToolError>("fresh from B")
        });
    Server::builder(Listing::new()).tools(tools).server_version("2").build().unwrap()
}

/// What a transport does with each message: read the current server once, serve it to the end.
async fn serve(live: LiveServer, message: Value) -> Value {
    let server = live.current();
    send(&server, message).await
}

fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Runs a future that never waits.
fn ready<F: Future>(future: F) -> F::Output {
    match poll_once(pin!(future)) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the future waited"),
    }
}

fn tool_names(live: &LiveServer) -> Vec<String> {
    names(&ready(serve(live.clone(), modern(1, "tools/list", json!({})))), "tools", "name")
}

fn version(response: &Value) -> &Value {
    &response["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"]
}

#[test]
fn replace_serves_the_replacement_from_the_next_current_on_for_every_clone() {
    let live = LiveServer::new(server_a(&Gate::default()));
    let clone = live.clone();
    assert_eq!(tool_names(&live), ["slow"]);
    let replaced = live.replace(server_b());
    assert_eq!(tool_names(&live), ["fresh"]);
    assert_eq!(tool_names(&clone), ["fresh"], "every clone sees the replacement");
    let r = ready(serve(clone.clone(), modern(1, "tools/call", json!({"name": "slow"}))));
    assert_eq!(r, json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool"}}));
    // The server replaced is returned whole, and still serves whoever holds it.
    assert_eq!(names(&ready(send(&replaced, modern(1, "tools/list", json!({})))), "tools", "name"), ["slow"]);
    let from: LiveServer = server_b().into();
    assert_eq!(tool_names(&from), ["fresh"]);
}

#[test]
fn a_request_in_flight_finishes_on_the_server_it_started_with() {
    let gate = Gate::default();
    let live = LiveServer::new(server_a(&gate));
    let mut in_flight = pin!(serve(live.clone(), modern(7, "tools/call", json!({"name": "slow"}))));
    assert!(poll_once(in_flight.as_mut()).is_pending());
    assert!(gate.entered.load(Ordering::SeqCst), "the request reached A's handler before the replace");

    live.replace(server_b());
    let next = ready(serve(live.clone(), modern(8, "tools/call", json!({"name": "fresh"}))));
    assert_eq!(first_text(&next), "fresh from B");
    assert_eq!(version(&next), "2");
    assert_eq!(tool_names(&live), ["fresh"]);

    gate.open.store(true, Ordering::SeqCst);
    let Poll::Ready(finished) = poll_once(in_flight.as_mut()) else { panic!("the gate is open") };
    assert_eq!(finished["id"], 7);
    assert_eq!(first_text(&finished), "slow answered by A", "{finished}");
    assert_eq!(version(&finished), "1", "decorated by the server it started on: {finished}");
}
