//! The bound path (CE-3, CE-4, CE-5): every listed tool is bound to its row when the server is built, so
//! a call hashes nothing; its rows keep the collector's lifecycle (start at zero, stop drops, restart
//! at zero), sum across threads, merge with calls recorded by name, and follow a catalog replacement.

use std::time::Duration;

use crate::support::*;
use connectome_graph::{EdgeKind, Identity, Weight};
use connectome_observe::{Collector, DispatchEvent, DispatchObserver, DispatchOutcome};
use mcp_kernel_router::{
    Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec, transport::LiveServer,
};
use serde_json::json;

/// The row of server → `tool`: (count, sum_ns, max_ns).
fn row(collector: &Collector, tool: &str) -> Option<(u64, u64, u64)> {
    let to = Identity::Tool { server: SERVER.to_owned(), name: tool.to_owned() };
    let rows = collector.rows().expect("running");
    rows.iter().find(|r| r.to == to && r.kind == EdgeKind::Invoke).map(|r| (r.count, r.sum_ns, r.max_ns))
}

fn calls(server: &Server, tool: &str, n: u64) {
    for i in 0..n {
        send(server, call(i64::try_from(i).unwrap_or(0), tool, json!({})));
    }
}

#[test]
fn bound_rows_start_at_zero_in_every_window() {
    let collector = Collector::new();
    let server = server(&collector, &DispatchLog::default());
    calls(&server, "noop", 2);
    collector.start();
    assert_eq!(collector.size(), Ok(0), "calls before start are not counted");
    calls(&server, "noop", 3);
    assert_eq!(row(&collector, "noop").map(|r| r.0), Some(3));
    // Four more windows: each uses one of the slot's two sets again, and each begins at zero.
    for (window, n) in [(2, 1), (3, 4), (4, 2), (5, 5)] {
        collector.stop();
        calls(&server, "noop", 7);
        collector.start();
        assert_eq!(collector.size(), Ok(0), "window {window} begins with zero rows");
        calls(&server, "noop", n);
        assert_eq!(row(&collector, "noop").map(|r| r.0), Some(n), "window {window}");
        let weight = collector.snapshot().unwrap().edges()[0].weight;
        assert_eq!(weight, Some(Weight::Int(n)));
    }
}

#[test]
fn a_bound_call_is_timed_by_the_collector_clock() {
    let collector = Collector::new();
    collector.start();
    let bound = collector.bind(SERVER, "slow").expect("the collector binds every tool");
    let started = bound.start();
    std::thread::sleep(Duration::from_millis(3));
    bound.finish(started, DispatchOutcome::Ok);
    let (count, sum_ns, max_ns) = row(&collector, "slow").expect("one row");
    assert_eq!(count, 1);
    assert!((2_500_000..2_000_000_000).contains(&sum_ns), "nanoseconds: {sum_ns}");
    assert_eq!(max_ns, sum_ns);
}

#[test]
fn bound_calls_and_calls_by_name_on_one_edge_are_one_row() {
    let collector = Collector::new();
    collector.start();
    let server = server(&collector, &DispatchLog::default());
    calls(&server, "echo", 2);
    let event = DispatchEvent {
        server: SERVER,
        tool: "echo",
        elapsed: Duration::from_secs(3_600),
        outcome: DispatchOutcome::Ok,
    };
    collector.dispatched(&event);
    assert_eq!(collector.size(), Ok(1));
    let (count, sum_ns, max_ns) = row(&collector, "echo").unwrap();
    assert_eq!(count, 3);
    assert_eq!(max_ns, 3_600_000_000_000, "the longest call of either path");
    assert!(sum_ns > max_ns);
    let latency = collector.latency().unwrap();
    assert_eq!(latency.len(), 1);
    assert_eq!(latency.values().next().unwrap().count, 3);
}

#[test]
fn bound_calls_from_several_threads_sum_correctly_in_each_window() {
    const THREADS: u64 = 4;
    const CALLS: u64 = 5_000;
    let collector = Collector::new();
    let server = server(&collector, &DispatchLog::default());
    let bound = collector.bind(SERVER, "noop").unwrap();
    for window in 0..3 {
        collector.start();
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                let (server, bound) = (&server, &bound);
                scope.spawn(move || {
                    for i in 0..CALLS {
                        if i % 10 == 0 {
                            send(server, call(1, "noop", json!({})));
                        } else {
                            bound.finish(bound.start(), DispatchOutcome::Ok);
                        }
                    }
                });
            }
        });
        let (count, sum_ns, max_ns) = row(&collector, "noop").unwrap();
        assert_eq!(count, THREADS * CALLS, "window {window}");
        assert!(max_ns <= sum_ns);
        assert_eq!(collector.size(), Ok(1));
        collector.stop();
    }
}

#[test]
fn calls_across_stop_and_start_never_corrupt_the_next_window() {
    // Threads call while windows open and close; once they have stopped, a fresh window counts exactly.
    let collector = Collector::new();
    let bound = collector.bind(SERVER, "noop").unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            let (bound, done) = (&bound, &done);
            scope.spawn(move || {
                let mut n = 0;
                while !done.load(std::sync::atomic::Ordering::Relaxed) && n < 2_000_000 {
                    bound.finish(bound.start(), DispatchOutcome::Ok);
                    n += 1;
                }
            });
        }
        for _ in 0..200 {
            collector.start();
            std::thread::yield_now();
            assert!(collector.size().is_ok_and(|rows| rows <= 1));
            collector.stop();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    collector.start();
    assert_eq!(collector.size(), Ok(0));
    for _ in 0..10 {
        bound.finish(bound.start(), DispatchOutcome::Ok);
    }
    assert_eq!(row(&collector, "noop").map(|r| r.0), Some(10));
}

#[test]
fn a_tool_added_by_a_live_catalog_replacement_is_recorded() {
    let collector = Collector::new();
    collector.start();
    let live = LiveServer::new(server(&collector, &DispatchLog::default()));
    send(&live.current(), call(1, "noop", json!({})));
    let next = Server::builder(Listing {
        tools: vec![ToolSpec::new("noop", Mode::ReadOnly), ToolSpec::new("added", Mode::ReadOnly)],
        ..Listing::default()
    })
    .server_name(SERVER)
    .dispatch(|_call: ToolCall| std::future::ready(Ok::<_, ToolError>(ToolOutput::text("done"))))
    .observe_dispatch(collector.clone())
    .build()
    .unwrap();
    live.replace(next);
    send(&live.current(), call(2, "added", json!({})));
    send(&live.current(), call(3, "noop", json!({})));
    assert_eq!(row(&collector, "added").map(|r| r.0), Some(1));
    assert_eq!(row(&collector, "noop").map(|r| r.0), Some(2), "both catalogs' calls on one row");
    assert_eq!(collector.size(), Ok(2));
}
