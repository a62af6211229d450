//! The drip figure, kept as a test: a thousand connections each dripping a body a byte at a time all
//! get 408 at the body deadline, while a legitimate request beside them is answered.
//!
//! In a test binary of its own: it holds many connections open, which would crowd the timing of
//! the tests in `integration/`.

#[path = "integration/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use mcp_kernel_http::ServeOptions;
use serde_json::json;
use support::edge::dripped_head;
use support::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// How many connections drip.
const DRIPS: usize = 1_000;

/// The body deadline of this test's service (the default is 15 s; the rule is the same).
const DEADLINE: Duration = Duration::from_secs(2);

/// One body byte per drip connection this often.
const TICK: Duration = Duration::from_millis(400);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_drips_each_get_408_at_the_deadline_while_a_request_is_answered() {
    tokio::time::timeout(Duration::from_secs(50), async {
        let service = builder().authorize(|_| Ok(())).read_timeout(DEADLINE).build();
        let server = serve_with(service, ServeOptions::new().max_connections_per_peer(2 * DRIPS)).await;
        let mut writers = Vec::with_capacity(DRIPS);
        let mut answers = Vec::with_capacity(DRIPS);
        for _ in 0..DRIPS {
            let mut stream = TcpStream::connect(server.addr).await.expect("connect");
            stream.write_all(&dripped_head(server.addr, 100)).await.expect("head");
            let headed = Instant::now();
            let (mut reader, writer) = stream.into_split();
            writers.push(writer);
            answers.push(tokio::spawn(async move {
                let reply = read_raw_response(&mut reader).await;
                (reply.status, headed.elapsed())
            }));
        }
        // One byte per connection per tick: never the whole body before the deadline.
        let dripping = tokio::spawn(async move {
            for _ in 0..((DEADLINE.as_millis() / TICK.as_millis()) as usize + 10) {
                tokio::time::sleep(TICK).await;
                for writer in &mut writers {
                    let _ = writer.write_all(b" ").await;
                }
            }
        });
        let legitimate = Instant::now();
        let reply = post_message(server.addr, Proto::H1, &request(1, "tools/list", json!({}))).await;
        let legitimate = legitimate.elapsed();
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(legitimate < Duration::from_secs(1), "a legitimate request took {legitimate:?} beside {DRIPS} drips");
        let mut times = Vec::with_capacity(DRIPS);
        for answer in answers {
            let (status, after) = answer.await.expect("joined");
            assert_eq!(status, 408);
            times.push(after);
        }
        dripping.abort();
        times.sort();
        let (first, last) = (times[0], times[DRIPS - 1]);
        assert!(first >= DEADLINE - Duration::from_millis(50), "a drip was answered before the deadline: {first:?}");
        assert!(last < DEADLINE + Duration::from_millis(1_500), "a drip was answered late: {last:?}");
        eprintln!("{DRIPS} drips: 408 at {first:?} to {last:?} after their heads; a legitimate request took {legitimate:?}");
    })
    .await
    .expect("bounded");
}
