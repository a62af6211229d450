//! The timing sidecar of a collector (docs/connectome.md CM-2): the graph and its timings from one read
//! of the rows, ready to be lifted into a federation.

use std::time::Duration;

use connectome_graph::federation::{Federation, merge};
use connectome_graph::read::read_timing;
use connectome_graph::{Algorithm, EdgeKind, Identity, Timing, Weight};
use connectome_observe::{Collector, ObserveError};

fn tool(name: &str) -> Identity {
    Identity::Tool { server: "obs".into(), name: name.into() }
}

#[test]
fn cm2_snapshot_with_timings_agrees_with_the_rows_and_lifts_into_a_federation() {
    let collector = Collector::new();
    assert_eq!(collector.snapshot_with_timings(), Err(ObserveError::NotStarted));
    collector.start();
    let server = Identity::Server { server: "obs".into() };
    for micros in [1, 2, 5] {
        collector.observe(server.clone(), tool("a"), EdgeKind::Invoke, Duration::from_micros(micros));
    }
    collector.observe(server, tool("b"), EdgeKind::Invoke, Duration::from_micros(7));

    let (graph, timings) = collector.snapshot_with_timings().unwrap();
    assert_eq!(graph, collector.snapshot().unwrap());
    let times: Vec<Timing> = timings.entries().iter().map(|(_, t)| *t).collect();
    assert_eq!(times, [Timing { sum_ns: 8_000, max_ns: 5_000 }, Timing { sum_ns: 7_000, max_ns: 7_000 }]);
    for (row, (key, timing)) in collector.rows().unwrap().iter().zip(timings.entries()) {
        assert_eq!((row.to.id(), row.sum_ns, row.max_ns), (key.to.clone(), timing.sum_ns, timing.max_ns));
    }
    assert_eq!(read_timing(&timings.to_bytes().unwrap()).unwrap(), timings);

    let eu = Federation::from_graph("eu-1", "obs", &graph, Algorithm::Sha256, Some(&timings)).unwrap();
    let us = Federation::from_graph("us-1", "obs", &graph, Algorithm::Sha256, Some(&timings)).unwrap();
    let both = merge(&[eu, us]).unwrap();
    assert_eq!(both.graph().edges()[0].weight, Some(Weight::Int(6)));
    assert_eq!(both.timings().unwrap().entries()[0].1, Timing { sum_ns: 16_000, max_ns: 5_000 });
}
