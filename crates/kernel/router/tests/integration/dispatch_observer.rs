//! The dispatch observer hook: told of every call that reaches dispatch (ok, tool error, panic), never
//! of a call refused before it, and handed names and timing only.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::*;
use mcp_kernel_router::Server;
use mcp_kernel_router::observe::{DispatchEvent, DispatchObserver, DispatchOutcome};
use serde_json::json;

/// One event as recorded: (server, tool, outcome, elapsed).
type Told = (String, String, DispatchOutcome, Duration);

/// Every event the observer was told of.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Told>>>);

impl DispatchObserver for Seen {
    fn dispatched(&self, event: &DispatchEvent<'_>) {
        let row = (event.server.to_owned(), event.tool.to_owned(), event.outcome, event.elapsed);
        self.0.lock().unwrap().push(row);
    }
}

impl Seen {
    fn outcomes(&self) -> Vec<(String, String, DispatchOutcome)> {
        self.0.lock().unwrap().iter().map(|(s, t, o, _)| (s.clone(), t.clone(), *o)).collect()
    }
}

fn observed_server(seen: &Seen) -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .server_name("observed")
        .observe_dispatch(seen.clone())
        .build()
        .expect("the fixture catalog builds")
}

fn row(tool: &str, outcome: DispatchOutcome) -> (String, String, DispatchOutcome) {
    ("observed".to_owned(), tool.to_owned(), outcome)
}

#[tokio::test]
async fn the_observer_sees_ok_error_and_panic_once_each() {
    let seen = Seen::default();
    let server = observed_server(&seen);
    let ok = send(&server, modern(1, "tools/call", json!({"name":"get_weather","arguments":{"place":"x"}})));
    assert_eq!(ok.await["result"]["isError"], false);
    let failed = send(&server, modern(2, "tools/call", json!({"name":"fail"}))).await;
    assert_eq!(failed["result"]["isError"], true);
    let panicked = send(&server, modern(3, "tools/call", json!({"name":"panics"}))).await;
    assert_eq!(code(&panicked), -32603);
    assert_eq!(
        seen.outcomes(),
        [
            row("get_weather", DispatchOutcome::Ok),
            row("fail", DispatchOutcome::Error),
            row("panics", DispatchOutcome::Panic)
        ]
    );
}

#[tokio::test]
async fn a_call_refused_before_dispatch_is_not_observed() {
    let seen = Seen::default();
    let server = observed_server(&seen);
    // A schema violation is answered as a tool error without reaching dispatch.
    let refused = send(&server, modern(1, "tools/call", json!({"name":"get_weather","arguments":{}}))).await;
    assert_eq!(refused["result"]["isError"], true);
    // An unknown tool and a missing client capability are protocol errors before dispatch.
    send(&server, modern(2, "tools/call", json!({"name":"nope"}))).await;
    send(&server, modern(3, "tools/call", json!({"name":"needs_elicitation"}))).await;
    assert!(seen.outcomes().is_empty(), "{:?}", seen.outcomes());
}

#[tokio::test]
async fn a_restricted_server_keeps_its_observer() {
    let seen = Seen::default();
    let server = observed_server(&seen).restricted_to([mcp_kernel_router::wire::ProtocolVersion::ALL[0]]);
    let server = server.expect("a served revision");
    send(&server, modern(1, "tools/call", json!({"name":"string_out"}))).await;
    assert_eq!(seen.outcomes(), [row("string_out", DispatchOutcome::Ok)]);
}

/// An observer that panics on every call.
struct Panicky;

impl DispatchObserver for Panicky {
    fn dispatched(&self, _: &DispatchEvent<'_>) {
        panic!("observer bug");
    }
}

#[tokio::test]
async fn a_panicking_observer_does_not_change_the_answer() {
    let server = Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .observe_dispatch(Panicky)
        .build()
        .unwrap();
    let r = send(&server, modern(1, "tools/call", json!({"name":"string_out"}))).await;
    assert_eq!(r["result"]["isError"], false);
}

#[test]
fn outcome_names_match_the_dispatch_span() {
    let names: Vec<_> =
        [DispatchOutcome::Ok, DispatchOutcome::Error, DispatchOutcome::Panic, DispatchOutcome::Cancelled]
            .map(|o| o.as_str())
            .into();
    assert_eq!(names, ["ok", "error", "panic", "cancelled"]);
}

#[tokio::test]
async fn a_dispatch_dropped_before_it_finishes_is_observed_once_as_cancelled() {
    let seen = Seen::default();
    let capabilities = mcp_kernel_router::Listing {
        tools: vec![mcp_kernel_router::ToolSpec::new("hang", mcp_kernel_router::Mode::ReadOnly)],
        ..Default::default()
    };
    let server = Server::builder(capabilities)
        .server_name("observed")
        .dispatch(|_call: mcp_kernel_router::ToolCall| {
            std::future::pending::<Result<mcp_kernel_router::ToolOutput, mcp_kernel_router::ToolError>>()
        })
        .observe_dispatch(seen.clone())
        .build()
        .unwrap();
    let mut pending = Box::pin(server.handle(modern(1, "tools/call", json!({"name":"hang"}))));
    assert!(futures_util::FutureExt::now_or_never(&mut pending).is_none(), "the tool never finishes");
    assert!(seen.outcomes().is_empty(), "nothing is reported while dispatch runs");
    // The client goes away: the transport drops the request's future while dispatch is still running.
    drop(pending);
    assert_eq!(seen.outcomes(), [row("hang", DispatchOutcome::Cancelled)]);
    // A call that was never polled never reached dispatch: nothing is reported for it.
    drop(server.handle(modern(2, "tools/call", json!({"name":"hang"}))));
    assert_eq!(seen.outcomes().len(), 1);
}
