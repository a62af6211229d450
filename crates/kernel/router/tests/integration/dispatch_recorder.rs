//! Bound recorders: the router asks the observer once per listed tool, when the server is built, and
//! reports a bound tool's calls to its recorder (its own clock readings and the outcome) instead of by
//! event; an unbound tool is still reported by event, and a panicking recorder changes no answer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::support::*;
use mcp_kernel_router::Server;
use mcp_kernel_router::observe::{DispatchEvent, DispatchObserver, DispatchOutcome, DispatchRecorder};
use mcp_kernel_router::transport::LiveServer;
use serde_json::json;

/// What the binding observer saw: the tools it was asked to bind, the recorders' finishes (tool,
/// started, outcome) and the events.
#[derive(Default)]
struct Log {
    bound: Vec<(String, String)>,
    finished: Vec<(String, u64, DispatchOutcome)>,
    events: Vec<(String, DispatchOutcome)>,
}

/// Binds every tool but `fail`; its recorders number their starts from 1, or panic when `panics` is set.
#[derive(Clone, Default)]
struct Binder {
    log: Arc<Mutex<Log>>,
    panics: Option<&'static str>,
}

struct Recorder {
    tool: String,
    log: Arc<Mutex<Log>>,
    starts: AtomicU64,
    panics: Option<&'static str>,
}

impl DispatchRecorder for Recorder {
    fn start(&self) -> u64 {
        assert_ne!(self.panics, Some("start"), "recorder bug");
        self.starts.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn finish(&self, started: u64, outcome: DispatchOutcome) {
        assert_ne!(self.panics, Some("finish"), "recorder bug");
        self.log.lock().unwrap().finished.push((self.tool.clone(), started, outcome));
    }
}

impl DispatchObserver for Binder {
    fn dispatched(&self, event: &DispatchEvent<'_>) {
        self.log.lock().unwrap().events.push((event.tool.to_owned(), event.outcome));
    }

    fn bind(&self, server: &str, tool: &str) -> Option<Arc<dyn DispatchRecorder>> {
        self.log.lock().unwrap().bound.push((server.to_owned(), tool.to_owned()));
        (tool != "fail").then(|| {
            let recorder = Recorder {
                tool: tool.to_owned(),
                log: Arc::clone(&self.log),
                starts: AtomicU64::new(0),
                panics: self.panics,
            };
            Arc::new(recorder) as Arc<dyn DispatchRecorder>
        })
    }
}

fn bound_server(binder: &Binder) -> Server {
    bound_server_of(catalog(), binder)
}

/// A server of `listing` whose observer is `binder`.
fn bound_server_of(listing: mcp_kernel_router::Listing, binder: &Binder) -> Server {
    Server::builder(listing)
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .server_name("observed")
        .observe_dispatch(binder.clone())
        .build()
        .expect("the fixture catalog builds")
}

#[tokio::test]
async fn each_listed_tool_is_bound_once_when_the_server_is_built() {
    let binder = Binder::default();
    let server = bound_server(&binder);
    let listed = names(&send(&server, modern(1, "tools/list", json!({}))).await, "tools", "name");
    let mut bound = binder.log.lock().unwrap().bound.clone();
    bound.sort();
    let mut expected: Vec<_> = listed.iter().map(|t| ("observed".to_owned(), t.clone())).collect();
    expected.sort();
    assert_eq!(bound, expected);
    // Calls bind nothing more.
    send(&server, modern(2, "tools/call", json!({"name":"get_weather","arguments":{"place":"x"}}))).await;
    assert_eq!(binder.log.lock().unwrap().bound.len(), listed.len());
}

#[tokio::test]
async fn a_bound_tool_is_reported_to_its_recorder_and_an_unbound_one_by_event() {
    let binder = Binder::default();
    let server = bound_server(&binder);
    let weather = json!({"name":"get_weather","arguments":{"place":"x"}});
    assert_eq!(send(&server, modern(1, "tools/call", weather.clone())).await["result"]["isError"], false);
    assert_eq!(send(&server, modern(2, "tools/call", weather)).await["result"]["isError"], false);
    let panicked = send(&server, modern(3, "tools/call", json!({"name":"panics"}))).await;
    assert_eq!(code(&panicked), -32603);
    let failed = send(&server, modern(4, "tools/call", json!({"name":"fail"}))).await;
    assert_eq!(failed["result"]["isError"], true);
    // Refused before dispatch: neither told.
    send(&server, modern(5, "tools/call", json!({"name":"get_weather","arguments":{}}))).await;
    let log = binder.log.lock().unwrap();
    assert_eq!(
        log.finished,
        [
            ("get_weather".to_owned(), 1, DispatchOutcome::Ok),
            ("get_weather".to_owned(), 2, DispatchOutcome::Ok),
            ("panics".to_owned(), 1, DispatchOutcome::Panic),
        ],
        "each finish carries its own call's start"
    );
    assert_eq!(log.events, [("fail".to_owned(), DispatchOutcome::Error)]);
}

#[tokio::test]
async fn a_panicking_recorder_does_not_change_the_answer() {
    for panics in ["start", "finish"] {
        let binder = Binder { panics: Some(panics), ..Binder::default() };
        let server = bound_server(&binder);
        let r = send(&server, modern(1, "tools/call", json!({"name":"string_out"}))).await;
        assert_eq!(r["result"]["isError"], false, "a recorder panicking in {panics}");
        let log = binder.log.lock().unwrap();
        assert!(log.finished.is_empty());
        // A recorder that cannot start leaves the call reported by event.
        let events =
            if panics == "start" { vec![("string_out".to_owned(), DispatchOutcome::Ok)] } else { vec![] };
        assert_eq!(log.events, events);
    }
}

#[tokio::test]
async fn a_replacement_catalog_binds_its_own_tools() {
    let binder = Binder::default();
    let live = LiveServer::new(bound_server(&binder));
    let mut listing = catalog();
    listing.tools.push(mcp_kernel_router::ToolSpec::new("added", mcp_kernel_router::Mode::ReadOnly));
    let next = bound_server_of(listing, &binder);
    live.replace(next);
    send(&live.current(), modern(1, "tools/call", json!({"name":"added"}))).await;
    let log = binder.log.lock().unwrap();
    assert!(log.bound.contains(&("observed".to_owned(), "added".to_owned())));
    assert_eq!(log.finished.len(), 1);
    assert_eq!(log.finished[0].0, "added");
}

#[tokio::test]
async fn a_server_without_observer_binds_nothing() {
    // The default `bind` binds nothing: every call is reported by event, as before recorders existed.
    struct Events(Arc<Mutex<Vec<String>>>);
    impl DispatchObserver for Events {
        fn dispatched(&self, event: &DispatchEvent<'_>) {
            self.0.lock().unwrap().push(event.tool.to_owned());
        }
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .observe_dispatch(Events(Arc::clone(&seen)))
        .build()
        .unwrap();
    send(&server, modern(1, "tools/call", json!({"name":"string_out"}))).await;
    assert_eq!(*seen.lock().unwrap(), ["string_out"]);
}

#[tokio::test]
async fn a_bound_call_dropped_before_it_finishes_is_finished_once_as_cancelled() {
    let binder = Binder::default();
    let listing = mcp_kernel_router::Listing {
        tools: vec![mcp_kernel_router::ToolSpec::new("hang", mcp_kernel_router::Mode::ReadOnly)],
        ..Default::default()
    };
    let server = Server::builder(listing)
        .server_name("observed")
        .dispatch(|_call: mcp_kernel_router::ToolCall| {
            std::future::pending::<Result<mcp_kernel_router::ToolOutput, mcp_kernel_router::ToolError>>()
        })
        .observe_dispatch(binder.clone())
        .build()
        .unwrap();
    let mut pending = Box::pin(server.handle(modern(1, "tools/call", json!({"name":"hang"}))));
    assert!(futures_util::FutureExt::now_or_never(&mut pending).is_none(), "the tool never finishes");
    assert!(binder.log.lock().unwrap().finished.is_empty(), "nothing is finished while dispatch runs");
    drop(pending);
    let log = binder.log.lock().unwrap();
    assert_eq!(log.finished, [("hang".to_owned(), 1, DispatchOutcome::Cancelled)]);
    assert!(log.events.is_empty());
}
