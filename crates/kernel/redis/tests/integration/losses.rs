//! A publication lost on its way leaves no instance deaf: every publication is numbered per
//! publishing instance, each beat announces the last number, and an instance that finds a number
//! skipped (or is told of a loss) ends every listen stream and watch it holds — while a normal stream
//! of publications ends nothing.

use std::time::{Duration, Instant};

use mcp_kernel_redis::Redis;
use mcp_kernel_router::notify::{Change, ChangeHub, ChangeKind, Notifications};
use mcp_kernel_router::tasks::{TaskMode, TaskStatus, TaskStore, Tasks, Transition, now_ms};
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

use crate::support::{LIMITS, Tokio, config, eventually, instance, raw, server, short, task};

/// What the publication queue of one instance holds (`publish.rs`): one more is dropped.
const QUEUE: usize = 1024;

fn resource(n: usize) -> Change {
    Change::to_everyone(ChangeKind::ResourceUpdated { uri: format!("notes://{n}").into() })
}

/// Fills `a`'s publication queue without yielding (one thread: its publishing task cannot run), so
/// that the next publication is dropped.
fn fill_the_queue(a: &Redis) {
    for n in 0..QUEUE {
        a.change_hub().publish(resource(n));
    }
}

/// Whether the watch ends (rather than be woken, or stay open) within `within`, and when.
async fn watch_ends(watch: &mut mcp_kernel_router::tasks::TaskWatch, within: Duration) -> Option<Duration> {
    let start = Instant::now();
    loop {
        match tokio::time::timeout(within.saturating_sub(start.elapsed()), watch.woken()).await {
            Ok(false) => return Some(start.elapsed()),
            Ok(true) => continue,
            Err(_) => return None,
        }
    }
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_wake_dropped_by_a_full_queue_ends_every_feed_and_watch_of_another_instance_within_a_beat() {
    let redis = server();
    let a = instance(config(&redis)).await;
    // Room for every change A sends: a feed here can only end through the loss, never by lagging.
    let b = instance(config(&redis).hub_capacity(4 * QUEUE)).await;
    let mut feed = b.change_hub().try_subscribe().unwrap();
    let mut watch = b.task_store().watch("t");
    let mut running = b.task_store().watch_running("t");
    b.task_store().create(task("t", None, None), LIMITS).await.unwrap().unwrap();
    let dropped = Instant::now();
    fill_the_queue(&a);
    a.task_store().wake("t");
    // A beat is every 200 ms; the margin covers a loaded machine.
    let bound = Duration::from_secs(2);
    let mut heard = 0;
    loop {
        match tokio::time::timeout(bound.saturating_sub(dropped.elapsed()), feed.next()).await {
            Ok(Some(_)) => heard += 1,
            Ok(None) => break,
            Err(_) => panic!("the feed stayed open after the loss ({heard} changes heard)"),
        }
    }
    let feed_ended = dropped.elapsed();
    assert!(heard <= QUEUE, "{heard} changes heard");
    let watch_ended = watch_ends(&mut watch, bound).await.expect("the listen's watch ended");
    watch_ends(&mut running, bound).await.expect("the runner's watch ended: its runner reads the task again");
    // One loss ends the listeners once: a new feed hears what A sent before the dropped wake-up
    // (announced already), and A's next beats, at the dropped number, end nothing.
    let mut again = b.change_hub().try_subscribe().expect("a new listen is served at once");
    let mut more = 0;
    while let Ok(change) = tokio::time::timeout(Duration::from_millis(700), again.next()).await {
        assert!(change.is_some(), "the new feed ended after {more} more changes");
        more += 1;
    }
    assert!(heard + more <= QUEUE, "each change once: {heard} + {more}");
    eprintln!(
        "a dropped wake-up: another instance's feed ended {feed_ended:?} after it ({heard} changes heard first), \
         its watches by {:?}",
        feed_ended + watch_ended
    );
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_change_whose_publish_failed_is_noticed_by_another_instance_at_the_next_beat() {
    let redis = server();
    // A Redis user that may publish wake-ups and beats, but not changes: A's change is refused by
    // Redis after it left the queue, and A publishes nothing more but its beats.
    let mut admin = raw(&redis).await;
    let rule = "on >pw ~* resetchannels &mcp-kernel:wake +@all";
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("lossy")
        .arg(rule.split(' ').collect::<Vec<_>>())
        .query_async(&mut admin)
        .await
        .unwrap();
    let url = format!("redis://lossy:pw@127.0.0.1:{}", redis.port());
    let a = Redis::start(short(mcp_kernel_redis::RedisConfig::from_url(&url).unwrap()));
    let linked =
        eventually(Duration::from_secs(5), || async { a.task_store().read("x").await.is_ok() }).await;
    assert!(linked, "A's command connection is up");
    let b = instance(config(&redis)).await;
    let mut feed = b.change_hub().try_subscribe().unwrap();
    let mut watch = b.task_store().watch("t");
    let failed = Instant::now();
    a.change_hub().publish(resource(1));
    let bound = Duration::from_secs(2);
    assert_eq!(tokio::time::timeout(bound, feed.next()).await, Ok(None), "the feed ended");
    let feed_ended = failed.elapsed();
    watch_ends(&mut watch, bound).await.expect("the watch ended");
    // A's later beats, at the same number, end nothing more.
    let mut again = b.change_hub().try_subscribe().unwrap();
    let quiet = tokio::time::timeout(Duration::from_millis(700), again.next()).await;
    assert!(quiet.is_err(), "told once: {quiet:?}");
    eprintln!("a change whose PUBLISH failed: another instance's feed ended {feed_ended:?} after it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_normal_stream_of_publications_from_two_instances_ends_no_feed_and_no_watch() {
    let redis = server();
    let a = instance(config(&redis).hub_capacity(4 * QUEUE)).await;
    let c = instance(config(&redis)).await;
    let b = instance(config(&redis).hub_capacity(4 * QUEUE)).await;
    let mut feed = b.change_hub().try_subscribe().unwrap();
    let mut own = a.change_hub().try_subscribe().unwrap();
    let mut watch = b.task_store().watch("t");
    let _running = b.task_store().watch_running("t");
    b.task_store().create(task("t", None, None), LIMITS).await.unwrap().unwrap();
    // Two tasks publishing through A at once, and C's changes and wake-ups of another task: A's
    // numbers must reach Redis in order however its callers interleave.
    let mut senders = Vec::new();
    for part in 0..2 {
        let hub = a.change_hub();
        senders.push(tokio::spawn(async move {
            for n in 0..300 {
                hub.publish(resource(part * 1000 + n));
                if n % 50 == 49 {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
        }));
    }
    for n in 0..300 {
        c.change_hub().publish(resource(5000 + n));
        if n % 3 == 0 {
            c.task_store().wake("other");
        }
    }
    for sender in senders {
        sender.await.unwrap();
    }
    for (name, feed) in [("B", &mut feed), ("A's own", &mut own)] {
        for n in 0..900 {
            let change = tokio::time::timeout(Duration::from_secs(5), feed.next()).await;
            assert!(matches!(change, Ok(Some(_))), "{name} feed, change {n}: {change:?}");
        }
    }
    // Several beats of both publishers go by: still nothing ends.
    let quiet = tokio::time::timeout(Duration::from_millis(800), feed.next()).await;
    assert!(quiet.is_err(), "the feed stays open, and heard each change once: {quiet:?}");
    let quiet = tokio::time::timeout(Duration::from_millis(100), watch.woken()).await;
    assert!(quiet.is_err(), "the watch stays open: {quiet:?}");
    a.task_store().wake("t");
    let woken = tokio::time::timeout(Duration::from_secs(2), watch.woken()).await;
    assert_eq!(woken, Ok(true), "and is woken as usual");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_number_skipped_by_hand_or_a_loss_announced_ends_the_feeds_and_watches_and_numbers_in_order_do_not()
{
    let redis = server();
    let b = instance(config(&redis).lease(std::time::Duration::from_secs(60))).await;
    let mut hand = raw(&redis).await;
    let mut say = async |channel: &str, message: Value| {
        let _: () = redis::cmd("PUBLISH")
            .arg(format!("mcp-kernel:{channel}"))
            .arg(message.to_string())
            .query_async(&mut hand)
            .await
            .unwrap();
    };
    let change = serde_json::to_value(resource(1)).unwrap();
    let mut feed = b.change_hub().try_subscribe().unwrap();
    let mut watch = b.task_store().watch("t");
    say("changes", json!({"from": "ghost", "seq": 1, "change": change})).await;
    say("wake", json!({"from": "ghost", "seq": 2, "task": "t"})).await;
    say("wake", json!({"from": "ghost", "seq": 2, "beat": true})).await;
    say("changes", json!({"from": "ghost", "seq": 3, "change": change})).await;
    let next = Duration::from_secs(2);
    assert_eq!(tokio::time::timeout(next, feed.next()).await, Ok(Some(resource(1))));
    assert_eq!(tokio::time::timeout(next, watch.woken()).await, Ok(true));
    assert_eq!(tokio::time::timeout(next, feed.next()).await, Ok(Some(resource(1))), "in order: heard");
    // Number 4 never comes.
    say("changes", json!({"from": "ghost", "seq": 5, "change": change})).await;
    assert_eq!(tokio::time::timeout(next, feed.next()).await, Ok(None), "a number skipped ends the feed");
    assert_eq!(tokio::time::timeout(next, watch.woken()).await, Ok(false), "and the watch");
    // A beat ahead of the last number heard.
    let (mut feed, mut watch) = (b.change_hub().try_subscribe().unwrap(), b.task_store().watch("t"));
    say("wake", json!({"from": "ghost", "seq": 7, "beat": true})).await;
    assert_eq!(tokio::time::timeout(next, feed.next()).await, Ok(None), "a beat ahead ends the feed");
    assert_eq!(tokio::time::timeout(next, watch.woken()).await, Ok(false));
    // A publisher never heard before that says it lost a publication.
    let (mut feed, mut watch) = (b.change_hub().try_subscribe().unwrap(), b.task_store().watch("t"));
    say("wake", json!({"from": "stranger", "seq": 40, "beat": true, "lost": 38})).await;
    assert_eq!(tokio::time::timeout(next, feed.next()).await, Ok(None), "a loss announced ends the feed");
    assert_eq!(tokio::time::timeout(next, watch.woken()).await, Ok(false));
    // What does not parse is ignored, and ends nothing.
    let mut feed = b.change_hub().try_subscribe().unwrap();
    say("wake", json!("t")).await;
    say("changes", json!({"from": "ghost", "seq": 8})).await;
    say("changes", json!({"from": "ghost", "seq": 8, "change": change})).await;
    assert_eq!(tokio::time::timeout(next, feed.next()).await, Ok(Some(resource(1))));
}

/// A server whose tool `slow` runs as a task until it is cancelled, then says so on `stopped`.
fn runner(redis: &Redis, stopped: tokio::sync::watch::Sender<bool>) -> Server {
    let listing = Listing {
        tools: vec![ToolSpec::new("slow", Mode::ReadOnly).task_mode(TaskMode::Required)],
        ..Listing::default()
    };
    let dispatch = move |call: ToolCall| {
        let stopped = stopped.clone();
        async move {
            let task = call.context.task().cloned().ok_or_else(|| ToolError::new("a task"))?;
            tokio::select! {
                () = task.cancelled() => {
                    stopped.send_replace(true);
                    Ok(ToolOutput::text("stopped"))
                }
                () = tokio::time::sleep(Duration::from_secs(30)) => Ok(ToolOutput::text("slept")),
            }
        }
    };
    Server::builder(listing)
        .dispatch(dispatch)
        .tasks(Tasks::with_store(redis.task_store(), Tokio))
        .notifications(Notifications::with_hub(redis.change_hub()))
        .build()
        .expect("a server")
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_cancel_whose_wake_was_dropped_still_stops_the_runner_on_another_instance() {
    let redis = server();
    let a = instance(config(&redis)).await;
    let b = instance(config(&redis)).await;
    let (stopped, mut told) = tokio::sync::watch::channel(false);
    let server_b = runner(&b, stopped);
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        }}
    });
    let created = server_b.handle(call).await.response.map(|r| r.to_value()).unwrap_or(Value::Null);
    let id = created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {created}")).to_owned();
    // The cancellation is written through A; its wake-up is dropped, A's queue being full.
    let cancel =
        |record: &mut mcp_kernel_router::tasks::TaskRecord| record.apply(&Transition::Cancelled, now_ms());
    a.task_store().update(&id, &cancel).await.unwrap().expect("cancelled");
    let dropped = Instant::now();
    fill_the_queue(&a);
    a.task_store().wake(&id);
    let learnt = tokio::time::timeout(Duration::from_secs(2), told.wait_for(|stopped| *stopped)).await;
    assert!(learnt.is_ok(), "the runner on B learnt of the cancellation");
    eprintln!(
        "a cancellation whose wake-up was dropped reached the runner on another instance in {:?}",
        dropped.elapsed()
    );
    assert_eq!(b.task_store().read(&id).await.unwrap().unwrap().status, TaskStatus::Cancelled);
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn an_idle_instance_makes_two_round_trips_a_beat_its_ping_and_its_beat() {
    let redis = server();
    let a = instance(config(&redis)).await;
    let before = a.round_trips();
    let idle = Instant::now();
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let beats = idle.elapsed().as_millis() as u64 / 200 + 1;
    let trips = a.round_trips() - before;
    assert!(trips <= 2 * beats, "{trips} round trips in {beats} beats while idle");
    eprintln!("idle, no task running: {trips} round trips in {beats} beats");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_flood_of_publications_lost_to_a_full_queue_or_a_stopped_redis_writes_one_error_line_a_streak() {
    let mut redis = server();
    // A current-thread runtime: the background tasks log on this thread, under this subscriber.
    let (lines, _guard) = crate::support::capture(tracing::Level::ERROR);
    let a = instance(config(&redis)).await;
    // Three queues' worth at once: two thousand dropped by the full queue.
    for n in 0..3 * QUEUE {
        a.change_hub().publish(resource(n));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Then Redis stops, and a few thousand more cannot be sent.
    redis.stop();
    for n in 0..3 * QUEUE {
        a.change_hub().publish(resource(n));
        if n % 256 == 0 {
            tokio::task::yield_now().await;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let text = lines.text();
    let errors = text.lines().filter(|line| line.contains("ERROR")).count();
    assert!(errors <= 6, "{errors} error lines for two streaks of losses:\n{text}");
    assert!(errors >= 1, "the losses were not said at all");
}
