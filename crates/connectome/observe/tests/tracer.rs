//! The tracer's rules (CE-6…CE-9 adapted, CK-11): off by default, one at a time, module edges between
//! instrumented spans of named modules only, bounded by events and time, inert on every exit, typed
//! refusals, and it never reads a field value.
//!
//! The tracer is process-wide, so these tests take one lock each.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use connectome_graph::{EdgeKind, Identity};
use connectome_observe::{Collector, StopReason, Tracer, TracerError, TracerLayer, TracerOptions};
use tracing_subscriber::Registry;
use tracing_subscriber::layer::SubscriberExt;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    Tracer::stop();
    guard
}

mod caller {
    pub const PATH: &str = module_path!();

    /// An instrumented caller span around `f`.
    pub fn run(f: impl FnOnce()) {
        tracing::info_span!("caller").in_scope(f);
    }
}

mod callee {
    pub const PATH: &str = module_path!();

    /// An instrumented callee, carrying `payload` as a span field.
    pub fn work(payload: &str) {
        tracing::info_span!("work", payload).in_scope(|| {});
    }

    /// A callee-module span, to be entered by the caller.
    pub fn span() -> tracing::Span {
        tracing::info_span!("polled")
    }

    pub mod inner {
        pub const PATH: &str = module_path!();

        pub fn work() {
            tracing::info_span!("inner").in_scope(|| {});
        }

        pub fn nested() {
            tracing::info_span!("outer").in_scope(work);
        }
    }
}

mod callee_x {
    pub fn work() {
        tracing::info_span!("lookalike").in_scope(|| {});
    }
}

const SERVER: &str = "srv";

fn module(path: &str) -> Identity {
    Identity::Module { server: SERVER.to_owned(), path: path.to_owned() }
}

fn started() -> Collector {
    let collector = Collector::new();
    collector.start();
    collector
}

fn options(modules: &[&str]) -> TracerOptions {
    TracerOptions::new(SERVER, modules.iter().copied())
}

/// Runs `f` with the tracer layer as the thread's subscriber.
fn traced<T>(f: impl FnOnce() -> T) -> T {
    tracing::subscriber::with_default(Registry::default().with(TracerLayer::new()), f)
}

/// `n` calls caller → callee.
fn calls(n: usize) {
    traced(|| {
        for _ in 0..n {
            caller::run(|| callee::work("x"));
        }
    });
}

/// The count of the module edge caller → `to`, if any.
fn edge(collector: &Collector, to: &str) -> Option<u64> {
    let rows = collector.rows().unwrap();
    rows.iter()
        .find(|r| r.from == module(caller::PATH) && r.to == module(to) && r.kind == EdgeKind::Invoke)
        .map(|r| r.count)
}

#[test]
fn the_tracer_is_off_by_default() {
    let _serial = serial();
    let collector = started();
    assert!(!Tracer::is_running());
    calls(3);
    assert_eq!(collector.size(), Ok(0));
}

#[test]
fn a_span_entered_inside_another_module_gives_one_module_edge_per_call() {
    let _serial = serial();
    let collector = started();
    let guard = Tracer::start(&collector, options(&[callee::PATH])).unwrap();
    assert!(Tracer::is_running());
    calls(4);
    traced(|| caller::run(callee::inner::work));
    assert_eq!(edge(&collector, callee::PATH), Some(4));
    assert_eq!(edge(&collector, callee::inner::PATH), Some(1), "a module inside a named one is traced");
    assert_eq!(guard.events(), 5);
    let graph = collector.snapshot().unwrap();
    let ids: Vec<&str> = graph.nodes().iter().map(|n| n.id()).collect();
    assert!(ids.contains(&module(caller::PATH).id().as_str()), "{ids:?}");
    assert!(graph.nodes().iter().all(|n| n.level() == connectome_graph::Level::Module));
    assert_eq!(guard.stop(), StopReason::Stopped);
}

#[test]
fn unnamed_modules_and_same_module_spans_give_no_edge() {
    let _serial = serial();
    let collector = started();
    let guard = Tracer::start(&collector, options(&[callee::inner::PATH])).unwrap();
    calls(2); // callee is not named (only its inner module is)
    traced(callee::inner::work); // no parent span
    traced(callee::inner::nested); // parent and child in the same module
    assert_eq!(collector.size(), Ok(0));
    drop(guard);
    // A named module matches whole path segments: `callee` does not name `callee_x`.
    let _guard = Tracer::start(&collector, options(&[callee::PATH])).unwrap();
    traced(|| caller::run(callee_x::work));
    assert_eq!(collector.size(), Ok(0));
}

#[test]
fn a_span_entered_many_times_counts_once() {
    let _serial = serial();
    let collector = started();
    let _guard = Tracer::start(&collector, options(&[callee::PATH])).unwrap();
    traced(|| caller::run(|| callee_span_entered(5)));
    assert_eq!(edge(&collector, callee::PATH), Some(1), "an async span is entered on every poll");
}

/// Enters one callee-module span `n` times (as an executor polls an instrumented future).
fn callee_span_entered(n: usize) {
    let span = callee::span();
    for _ in 0..n {
        span.in_scope(|| {});
    }
}

#[test]
fn the_event_limit_stops_recording_and_frees_the_slot() {
    let _serial = serial();
    let collector = started();
    let guard =
        Tracer::start(&collector, TracerOptions { max_events: 3, ..options(&[callee::PATH]) }).unwrap();
    calls(10);
    assert_eq!(edge(&collector, callee::PATH), Some(3));
    assert_eq!(guard.events(), 3);
    assert_eq!(guard.stop_reason(), Some(StopReason::EventLimit));
    assert!(!Tracer::is_running());
    let again = Tracer::start(&collector, options(&[callee::PATH])).expect("the slot is free again");
    drop((guard, again));
}

#[test]
fn the_deadline_stops_recording() {
    let _serial = serial();
    let collector = started();
    let limits = TracerOptions { max_duration: Duration::from_millis(200), ..options(&[callee::PATH]) };
    let guard = Tracer::start(&collector, limits).unwrap();
    calls(1);
    std::thread::sleep(Duration::from_millis(400));
    calls(5);
    assert_eq!(edge(&collector, callee::PATH), Some(1));
    assert_eq!(guard.stop_reason(), Some(StopReason::DurationLimit));
    assert!(!Tracer::is_running());
}

#[test]
fn a_stopped_collector_ends_the_tracer() {
    let _serial = serial();
    let collector = started();
    let guard = Tracer::start(&collector, options(&[callee::PATH])).unwrap();
    collector.stop();
    calls(2);
    assert_eq!(guard.stop_reason(), Some(StopReason::CollectorStopped));
    assert!(!Tracer::is_running());
    collector.start();
    calls(2);
    assert_eq!(collector.size(), Ok(0), "the ended session never writes into the next window");
}

#[test]
fn a_restarted_collector_ends_the_tracer_even_with_no_call_in_between() {
    let _serial = serial();
    let collector = started();
    let guard = Tracer::start(&collector, options(&[callee::PATH])).unwrap();
    collector.stop();
    collector.start();
    calls(2);
    assert_eq!(guard.stop_reason(), Some(StopReason::CollectorRestarted));
    assert_eq!(guard.events(), 0);
    assert!(!Tracer::is_running());
    assert_eq!(collector.size(), Ok(0), "the session never writes into the window after its own");
}

#[test]
fn one_tracer_runs_at_a_time() {
    let _serial = serial();
    let collector = started();
    let first = Tracer::start(&collector, options(&[callee::PATH])).unwrap();
    assert_eq!(Tracer::start(&collector, options(&[callee::PATH])).unwrap_err(), TracerError::AlreadyRunning);
    assert_eq!(Tracer::start(&started(), options(&[caller::PATH])).unwrap_err(), TracerError::AlreadyRunning);
    assert!(Tracer::is_running(), "a refused start leaves the running tracer alone");
    drop(first);
    assert!(!Tracer::is_running());
    let second = Tracer::start(&collector, options(&[callee::PATH])).unwrap();
    Tracer::stop();
    assert!(!Tracer::is_running());
    assert_eq!(second.stop_reason(), Some(StopReason::Stopped));
}

#[test]
fn dropping_the_guard_makes_the_layer_inert_even_when_unwinding() {
    let _serial = serial();
    let collector = started();
    let unwound = std::panic::catch_unwind(|| {
        let _guard = Tracer::start(&collector, options(&[callee::PATH])).unwrap();
        calls(1);
        panic!("host bug");
    });
    assert!(unwound.is_err());
    assert!(!Tracer::is_running());
    calls(3);
    assert_eq!(edge(&collector, callee::PATH), Some(1));
}

#[test]
fn refusals_are_typed_and_options_are_checked_first() {
    let _serial = serial();
    let collector = started();
    let invalid = |option| Err(TracerError::Invalid { option });
    let start = |o: TracerOptions| Tracer::start(&collector, o).map(|_| ());
    assert_eq!(start(options(&[])), invalid("modules"));
    for wildcard in ["", "*", "_", "a::*", "a::_", "a::", "::a", "a b", "a::b::"] {
        assert_eq!(start(options(&[callee::PATH, wildcard])), invalid("modules"), "{wildcard:?}");
    }
    assert_eq!(start(TracerOptions { max_events: 0, ..options(&[callee::PATH]) }), invalid("max_events"));
    let zero = TracerOptions { max_duration: Duration::ZERO, ..options(&[callee::PATH]) };
    assert_eq!(start(zero), invalid("max_duration"));
    let endless = TracerOptions { max_duration: Duration::MAX, ..options(&[callee::PATH]) };
    assert_eq!(start(endless), invalid("max_duration"));

    let idle = Collector::new();
    assert_eq!(Tracer::start(&idle, options(&[callee::PATH])).unwrap_err(), TracerError::CollectorNotStarted);
    assert_eq!(
        Tracer::start(&idle, options(&["*"])).unwrap_err(),
        TracerError::Invalid { option: "modules" }
    );
    assert!(!Tracer::is_running(), "no refusal claims the slot");
}

#[test]
fn the_tracer_never_reads_a_span_field() {
    let _serial = serial();
    let collector = started();
    let _guard = Tracer::start(&collector, options(&[callee::PATH])).unwrap();
    let marker = "PAYLOAD-MARKER-tracer-field";
    traced(|| caller::run(|| callee::work(marker)));
    assert_eq!(edge(&collector, callee::PATH), Some(1));
    let everything = format!(
        "{:?} {:?} {}",
        collector.rows().unwrap(),
        collector.latency().unwrap(),
        String::from_utf8(collector.sidecar_bytes().unwrap()).unwrap()
    );
    assert!(!everything.contains(marker), "{everything}");
}
