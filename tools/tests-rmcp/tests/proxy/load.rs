//! The rolling restart under load: [`CLIENTS`] rmcp clients make [`CALLS_PER_CLIENT`] calls each
//! through the proxy while each instance in turn is stopped (SIGTERM: it stops accepting and finishes
//! what it holds) and started again on its own port. Bounded in count (the calls) and in time (each
//! call, each restart, the whole load).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::ReadResourceRequestParams;
use serde_json::json;

use crate::client::{CALL, Client, call, close, connect, structured};
use crate::cluster::Cluster;
use crate::common::to_json;

/// How many clients call at once.
pub const CLIENTS: usize = 8;

/// How many calls each client makes (a `confirm` is two requests).
pub const CALLS_PER_CLIENT: usize = 150;

/// The longest the whole load may take.
const LOAD_DEADLINE: Duration = Duration::from_secs(240);

/// What the load saw.
#[derive(Debug, Default)]
pub struct Report {
    /// Calls made.
    pub calls: usize,
    /// Calls that failed.
    pub failed: usize,
    /// The first failures, described.
    pub failures: Vec<String>,
    /// Calls answered, by instance.
    pub answered_by: BTreeMap<String, usize>,
    /// One line per restart.
    pub restarts: Vec<String>,
    /// Requests in the proxy's access log.
    pub proxied: usize,
    /// Of those, the ones nginx sent to more than one instance (a connect that failed, retried).
    pub retried: usize,
    /// Of those, the ones answered with a 5xx status.
    pub server_errors: Vec<String>,
    /// nginx's error log: why a request failed or was retried.
    pub proxy_errors: Vec<String>,
    /// Of its lines, the requests sent on a kept-alive connection the instance closed unread.
    pub races: usize,
    /// How long the load took.
    pub took: Duration,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "rolling restart under load: {} clients x {} calls", CLIENTS, CALLS_PER_CLIENT)?;
        writeln!(
            f,
            "  calls: {} made, {} succeeded, {} failed, in {:.1} s",
            self.calls,
            self.calls - self.failed,
            self.failed,
            self.took.as_secs_f64()
        )?;
        writeln!(f, "  answered by: {:?}", self.answered_by)?;
        for restart in &self.restarts {
            writeln!(f, "  restart: {restart}")?;
        }
        writeln!(
            f,
            "  proxy: {} requests, {} retried on another instance, {} answered 5xx",
            self.proxied,
            self.retried,
            self.server_errors.len()
        )?;
        writeln!(
            f,
            "  keep-alive races (a POST sent on an upstream connection the draining instance closed unread): {}",
            self.races
        )?;
        for line in self.server_errors.iter().take(10) {
            writeln!(f, "    {line}")?;
        }
        let refused =
            self.proxy_errors.iter().filter(|line| line.contains("(111: Connection refused)")).count();
        writeln!(
            f,
            "  nginx error log: {refused} connects refused by a restarting instance (each request sent on), and:"
        )?;
        for line in
            self.proxy_errors.iter().filter(|l| l.contains("[error]") && !l.contains("(111: ")).take(20)
        {
            writeln!(f, "    {line}")?;
        }
        for failure in &self.failures {
            writeln!(f, "  failure: {failure}")?;
        }
        Ok(())
    }
}

/// Whether an nginx error line is the keep-alive race: a request sent on a pooled upstream connection
/// that closed before any response. nginx does not resend a `POST` once sent, so its client gets a 502.
pub fn is_keep_alive_race(line: &str) -> bool {
    line.contains("[error]")
        && line.contains("while reading response header from upstream")
        && (line.contains("upstream prematurely closed connection")
            || line.contains("Connection reset by peer"))
}

/// One call of the mix: which instance answered it, or what went wrong.
async fn one(client: &Client, n: usize) -> Result<String, String> {
    let instance = |answer: serde_json::Value| answer["instance"].as_str().unwrap_or_default().to_owned();
    let outcome = tokio::time::timeout(CALL, async {
        match n % 10 {
            0 => client
                .call_tool(call("confirm", json!({"item": "load"})))
                .await
                .map(|r| instance(structured(&r))),
            1 => {
                let mut params = call("count", json!({"steps": 2, "interval_ms": 5}));
                params.meta = serde_json::from_value(json!({"progressToken": n})).ok();
                client.call_tool(params).await.map(|r| instance(structured(&r)))
            }
            2 | 3 => {
                client.call_tool(call("slow", json!({"ms": 20}))).await.map(|r| instance(structured(&r)))
            }
            4 => client
                .read_resource(ReadResourceRequestParams::new("cluster://instance"))
                .await
                .map(|r| to_json(&r)["contents"][0]["text"].as_str().unwrap_or_default().to_owned()),
            _ => client.call_tool(call("whoami", json!({}))).await.map(|r| instance(structured(&r))),
        }
    })
    .await;
    match outcome {
        Ok(Ok(instance)) => Ok(instance),
        Ok(Err(error)) => Err(format!("call {n}: {error}")),
        Err(_) => Err(format!("call {n}: no answer within {CALL:?}")),
    }
}

/// One client's calls, counted in `done` as they finish.
async fn client_load(url: String, index: usize, done: Arc<AtomicUsize>) -> Vec<Result<String, String>> {
    let (client, _harness) = connect(&url, Some(&format!("client-{index}"))).await;
    let mut outcomes = Vec::with_capacity(CALLS_PER_CLIENT);
    for n in 0..CALLS_PER_CLIENT {
        outcomes.push(one(&client, index * CALLS_PER_CLIENT + n).await);
        done.fetch_add(1, Ordering::SeqCst);
    }
    close(client).await;
    outcomes
}

/// Waits (bounded by `deadline`) until `done` reaches `mark`.
async fn wait_for(done: &AtomicUsize, mark: usize, deadline: Instant) {
    while done.load(Ordering::SeqCst) < mark {
        assert!(Instant::now() < deadline, "the load did not reach {mark} calls within {LOAD_DEADLINE:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Runs the load, restarting `a`, `b` and `c` in turn at 10 %, 40 % and 70 % of it: SIGTERM (the
/// instance drains what it holds and exits), then started again on its port.
pub async fn rolling_restart(cluster: &mut Cluster) -> Report {
    let total = CLIENTS * CALLS_PER_CLIENT;
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let deadline = started + LOAD_DEADLINE;
    let url = cluster.url();
    let clients: Vec<_> =
        (0..CLIENTS).map(|index| tokio::spawn(client_load(url.clone(), index, Arc::clone(&done)))).collect();

    let mut report = Report::default();
    for (turn, instance) in cluster.instances.iter_mut().enumerate() {
        wait_for(&done, total * (1 + 3 * turn) / 10, deadline).await;
        let in_flight = instance.health().await.and_then(|h| h["in_flight"].as_u64()).unwrap_or(0);
        let stopping = Instant::now();
        let status = instance.terminate().await;
        assert!(status.success(), "instance {} exited cleanly after SIGTERM: {status}", instance.name);
        let stopped = stopping.elapsed();
        instance.restart().await;
        instance.wait_health("healthy after its restart", |_| true).await;
        let at = done.load(Ordering::SeqCst);
        assert!(
            at < total,
            "instance {} was back only after the load ended: raise CALLS_PER_CLIENT",
            instance.name
        );
        report.restarts.push(format!(
            "{}: {in_flight} calls in flight at SIGTERM, drained and exited in {} ms, serving again {} ms after SIGTERM, at call {at} of {total}",
            instance.name,
            stopped.as_millis(),
            stopping.elapsed().as_millis(),
        ));
    }

    for task in clients {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let outcomes = match tokio::time::timeout(remaining, task).await {
            Ok(joined) => joined.expect("a client's task"),
            Err(_) => panic!("the load did not finish within {LOAD_DEADLINE:?}"),
        };
        for outcome in outcomes {
            report.calls += 1;
            match outcome {
                Ok(instance) => *report.answered_by.entry(instance).or_default() += 1,
                Err(failure) => {
                    report.failed += 1;
                    if report.failures.len() < 20 {
                        report.failures.push(failure);
                    }
                }
            }
        }
    }
    report.took = started.elapsed();
    let log = cluster.nginx.access_log();
    report.proxied = log.len();
    report.retried = log.iter().filter(|line| line.contains("upstream=") && line.contains(", ")).count();
    report.server_errors = log.into_iter().filter(|line| line.contains(" HTTP/1.1 5")).collect();
    report.proxy_errors = cluster.nginx.errors().lines().map(str::to_owned).collect();
    report.races = report.proxy_errors.iter().filter(|line| is_keep_alive_race(line)).count();
    report
}
