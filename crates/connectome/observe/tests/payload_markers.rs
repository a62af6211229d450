//! CE-11 marker tests: a `PAYLOAD-MARKER-<random>` carried in nested arguments, a uri argument, a returned
//! tool error and a panic message reaches dispatch (each test proves it first) and is absent from the
//! collector's rows, the snapshot's canonical bytes, the sidecar, the latency summary, and every span or
//! event field any layer recorded. The panic test also installs the location-only panic hook the docs
//! recommend and shows the marker is not in what that hook prints (the default hook would print it).
//!
//! In a test binary of its own: it swaps the process's panic hook and records through scoped
//! subscribers, whose interest in the dispatch span another test of the same process could settle first.

#[path = "integration/support/mod.rs"]
mod support;

use std::hash::{BuildHasher, RandomState};
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::SystemTime;

use connectome_graph::Algorithm;
use connectome_observe::Collector;
use serde_json::{Value, json};
use support::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Registry;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A fresh marker per test.
fn marker() -> String {
    format!("PAYLOAD-MARKER-{:016x}", RandomState::new().hash_one(SystemTime::now()))
}

/// Every span and event field value any code emitted, as text, plus span and event names.
#[derive(Clone, Default)]
struct Fields(Arc<Mutex<Vec<String>>>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.lock().unwrap().push(format!("{}={value:?}", field.name()));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.lock().unwrap().push(format!("{}={value}", field.name()));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Fields {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        self.0.lock().unwrap().push(attrs.metadata().name().to_owned());
        attrs.record(&mut self.clone());
    }

    fn on_record(&self, _: &Id, values: &Record<'_>, _: Context<'_, S>) {
        values.record(&mut self.clone());
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        self.0.lock().unwrap().push(event.metadata().name().to_owned());
        event.record(&mut self.clone());
    }
}

/// A started collector on the fixture server, with a field recorder as the thread's subscriber.
struct Fixture {
    collector: Collector,
    log: DispatchLog,
    fields: Fields,
    server: mcp_kernel_router::Server,
}

impl Fixture {
    fn new() -> Self {
        let (collector, log) = (Collector::new(), DispatchLog::default());
        collector.start();
        let server = server(&collector, &log);
        Fixture { collector, log, fields: Fields::default(), server }
    }

    /// Sends one call with the field recorder installed.
    fn send(&self, tool: &str, arguments: Value) -> Value {
        let subscriber = Registry::default().with(self.fields.clone());
        tracing::subscriber::with_default(subscriber, || send(&self.server, call(7, tool, arguments)))
    }

    /// The marker is nowhere the observed side writes, and the dispatch span did carry its fields.
    fn assert_absent(&self, marker: &str) {
        let rows = format!("{:?}", self.collector.rows().unwrap());
        assert_eq!(self.collector.size(), Ok(1), "the call is an edge: {rows}");
        assert!(!rows.contains(marker), "rows: {rows}");
        let snapshot = self.collector.snapshot().unwrap();
        for algorithm in [Algorithm::Sha256, Algorithm::Sha384, Algorithm::Sha512] {
            let bytes = String::from_utf8(snapshot.to_canonical_bytes(algorithm).unwrap()).unwrap();
            assert!(!bytes.contains(marker), "canonical bytes: {bytes}");
        }
        let sidecar = String::from_utf8(self.collector.sidecar_bytes().unwrap()).unwrap();
        assert!(!sidecar.contains(marker), "sidecar: {sidecar}");
        let latency = format!("{:?}", self.collector.latency().unwrap());
        assert!(!latency.contains(marker), "latency: {latency}");
        let fields = self.fields.0.lock().unwrap().clone();
        assert!(fields.iter().any(|f| f == "mcp.dispatch"), "the recorder saw the dispatch span: {fields:?}");
        assert!(fields.iter().any(|f| f.starts_with("outcome=")), "and its outcome: {fields:?}");
        assert!(fields.iter().all(|f| !f.contains(marker)), "span and event fields: {fields:?}");
    }
}

#[test]
fn a_marker_in_nested_arguments_is_absent_from_every_observed_output() {
    let (fixture, marker) = (Fixture::new(), marker());
    let arguments =
        json!({"outer": {"list": [1, {"deep": {"secret": marker}}], "key": marker}, "text": marker});
    let response = fixture.send("echo", arguments);
    assert!(fixture.log.saw(&marker), "the marker reached dispatch");
    assert!(response.to_string().contains(&marker), "and was echoed back: {response}");
    fixture.assert_absent(&marker);
}

#[test]
fn a_marker_in_a_uri_argument_is_absent_from_every_observed_output() {
    let (fixture, marker) = (Fixture::new(), marker());
    let uri = format!("https://host.invalid/{marker}/path?token={marker}#{marker}");
    let response = fixture.send("fetch", json!({"uri": uri}));
    assert!(fixture.log.saw(&marker), "the marker reached dispatch");
    assert!(response.to_string().contains(&marker), "and the tool used it: {response}");
    fixture.assert_absent(&marker);
}

#[test]
fn a_marker_in_a_returned_tool_error_is_absent_from_every_observed_output() {
    let (fixture, marker) = (Fixture::new(), marker());
    let response = fixture.send("fail", json!({"reason": format!("refused: {marker}")}));
    assert!(fixture.log.saw(&marker), "the marker reached dispatch");
    assert_eq!(response["result"]["isError"], true);
    assert!(response.to_string().contains(&marker), "the error carried it back: {response}");
    fixture.assert_absent(&marker);
}

/// Serialises the tests of this file that replace the process's panic hook.
static PANIC_HOOK: Mutex<()> = Mutex::new(());

/// What the host's location-only hook printed for the panics of this thread, and whether a payload it
/// was handed carried the marker (which the default hook would have printed).
#[derive(Debug, Default)]
struct HookCapture {
    printed: Vec<String>,
    payload_had_marker: bool,
}

/// Runs `f` with a location-only panic hook (the docs' example, writing into a buffer instead of
/// stderr) installed for this thread's panics; panics of other threads go to the previous hook, which
/// is restored before returning.
fn with_location_only_hook<T>(marker: &str, f: impl FnOnce() -> T) -> (T, HookCapture) {
    type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Send + Sync + 'static>;
    let _serial = PANIC_HOOK.lock().unwrap_or_else(PoisonError::into_inner);
    let capture = Arc::new(Mutex::new(HookCapture::default()));
    let previous: Arc<Hook> = Arc::new(panic::take_hook());
    let (sink, fallback, needle, this_thread) =
        (Arc::clone(&capture), Arc::clone(&previous), marker.to_owned(), thread::current().id());
    panic::set_hook(Box::new(move |info| {
        if thread::current().id() != this_thread {
            return fallback(info); // another test's panic, printed as before
        }
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
        let line = format!("panic at {}", at.as_deref().unwrap_or("unknown location"));
        let payload = info.payload();
        let text =
            payload.downcast_ref::<String>().map(String::as_str).or(payload.downcast_ref::<&str>().copied());
        let mut capture = sink.lock().unwrap_or_else(PoisonError::into_inner);
        capture.printed.push(line);
        capture.payload_had_marker |= text.is_some_and(|t| t.contains(&needle));
    }));
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    drop(panic::take_hook()); // our hook, and with it its handle on the previous one
    panic::set_hook(Arc::try_unwrap(previous).unwrap_or_else(|shared| Box::new(move |info| shared(info))));
    let capture = std::mem::take(&mut *capture.lock().unwrap_or_else(PoisonError::into_inner));
    match outcome {
        Ok(value) => (value, capture),
        Err(_) => panic!("the call panicked past the router; the hook printed {:?}", capture.printed),
    }
}

#[test]
fn a_marker_in_a_panic_message_is_absent_from_every_observed_output() {
    let (fixture, marker) = (Fixture::new(), marker());
    let (response, hook) = with_location_only_hook(&marker, || {
        fixture.send("boom", json!({"message": format!("host bug {marker}")}))
    });
    assert!(fixture.log.saw(&marker), "the marker reached dispatch");
    assert_eq!(response["error"]["code"], -32603, "the panic was caught: {response}");
    assert!(!response.to_string().contains(&marker), "and not told to the caller");
    fixture.assert_absent(&marker);
    assert!(hook.payload_had_marker, "the hook was handed the marker (the default hook prints it)");
    assert_eq!(hook.printed.len(), 1, "one panic, one line: {:?}", hook.printed);
    assert!(hook.printed[0].contains("mod.rs:"), "the location of the panic: {:?}", hook.printed);
    assert!(hook.printed.iter().all(|line| !line.contains(&marker)), "the hook printed {:?}", hook.printed);
}
