//! Redis stopped, restarted empty, paused, or down at start: listeners are never left deaf, requests
//! are refused promptly as retryable, and everything comes back when Redis does.

use std::time::{Duration, Instant};

use mcp_kernel_redis::{Redis, RedisConfig};
use mcp_kernel_router::notify::{Change, ChangeHub, ChangeKind};
use mcp_kernel_router::tasks::{StoreError, TaskStatus, TaskStore};

use crate::support::{LIMITS, config, eventually, instance, server, task};

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_redis_stop_ends_every_feed_and_watch_and_refuses_new_ones_until_it_is_back() {
    let mut redis = server();
    let a = instance(config(&redis)).await;
    let (hub, store) = (a.change_hub(), a.task_store());
    let mut feeds = vec![hub.try_subscribe().unwrap(), hub.try_subscribe().unwrap()];
    let _running = store.watch_running("t");
    store.create(task("t", None, None), LIMITS).await.unwrap().unwrap();
    let mut watches = vec![store.watch("t"), store.watch_running("t")];
    redis.stop();
    for feed in &mut feeds {
        let end = tokio::time::timeout(Duration::from_secs(2), feed.next()).await.expect("ended in time");
        assert_eq!(end, None, "the feed ended: its listen ends with its completion result");
    }
    for watch in &mut watches {
        let alive = tokio::time::timeout(Duration::from_secs(2), watch.woken()).await.expect("ended in time");
        assert!(!alive, "the watch ended: its reader reads the task again");
    }
    assert!(hub.try_subscribe().is_err(), "a listen is refused while the subscription is down");
    assert!(!store.watch("t").woken().await, "a new watch has ended already");
    assert!(matches!(store.read("t").await, Err(StoreError::Unavailable(_))));
    redis.restart().unwrap();
    let back = eventually(Duration::from_secs(5), || async { hub.try_subscribe().is_ok() }).await;
    assert!(back, "subscribed again after the restart");
    let served = eventually(Duration::from_secs(5), || async { store.read("t").await.is_ok() }).await;
    assert!(served, "the store serves again");
    assert_eq!(store.read("t").await, Ok(None), "a Redis restarted empty lost its tasks: not found");
    let mut feed = hub.try_subscribe().unwrap();
    hub.publish(Change::to_everyone(ChangeKind::PromptsListChanged));
    let change = tokio::time::timeout(Duration::from_secs(2), feed.next()).await.expect("delivered");
    assert_eq!(change.map(|c| c.kind), Some(ChangeKind::PromptsListChanged), "new subscribers work again");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_paused_redis_fails_store_operations_within_the_response_timeout() {
    let redis = server();
    let a = instance(config(&redis)).await;
    let store = a.task_store();
    let _running = store.watch_running("t");
    store.create(task("t", None, None), LIMITS).await.unwrap().unwrap();
    let mut feed = a.change_hub().try_subscribe().unwrap();
    redis.pause().unwrap();
    // The response timeout is 300 ms; the margin covers a loaded machine.
    let margin = Duration::from_millis(400);
    for attempt in 0..3 {
        let asked = Instant::now();
        let read = store.read("t").await;
        assert!(matches!(read, Err(StoreError::Unavailable(_))), "attempt {attempt}: {read:?}");
        assert!(
            asked.elapsed() <= Duration::from_millis(300) + margin,
            "attempt {attempt}: {:?}",
            asked.elapsed()
        );
    }
    let asked = Instant::now();
    let created = store.create(task("u", None, None), LIMITS).await;
    assert!(matches!(created, Err(StoreError::Unavailable(_))), "{created:?}");
    assert!(asked.elapsed() <= Duration::from_millis(300) + margin);
    // The subscription's ping goes unanswered at the next beat: the feed ends.
    let end = tokio::time::timeout(Duration::from_secs(2), feed.next()).await.expect("ended in time");
    assert_eq!(end, None);
    redis.resume().unwrap();
    let served = eventually(Duration::from_secs(5), || async { store.read("t").await.is_ok() }).await;
    assert!(served, "served again once resumed");
    assert_eq!(store.read("t").await.unwrap().unwrap().status, TaskStatus::Working, "never a wrong status");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn an_instance_started_while_redis_is_down_serves_once_it_is_up() {
    let mut redis = server();
    redis.stop();
    let config = config(&redis);
    let asked = Instant::now();
    let refused = Redis::connect(config.clone()).await.unwrap_err();
    assert!(asked.elapsed() < Duration::from_secs(2), "connect gives up within its timeout");
    assert!(refused.to_string().contains("not reachable"), "{refused}");
    let a = Redis::start(config);
    assert!(matches!(a.task_store().read("t").await, Err(StoreError::Unavailable(_))));
    assert!(a.change_hub().try_subscribe().is_err());
    redis.restart().unwrap();
    a.ready(Duration::from_secs(5)).await.expect("connected once Redis is up");
    assert_eq!(a.task_store().read("t").await, Ok(None));
    assert!(a.change_hub().try_subscribe().is_ok());
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn two_prefixes_on_one_redis_do_not_see_each_other() {
    let redis = server();
    let one = instance(config(&redis).key_prefix("one")).await;
    let two = instance(config(&redis).key_prefix("two")).await;
    let _running = one.task_store().watch_running("t");
    one.task_store().create(task("t", None, None), LIMITS).await.unwrap().unwrap();
    assert_eq!(two.task_store().read("t").await, Ok(None), "another prefix's task is not found");
    let mut feed = two.change_hub().try_subscribe().unwrap();
    let mut own = one.change_hub().try_subscribe().unwrap();
    one.change_hub().publish(Change::to_everyone(ChangeKind::ToolsListChanged));
    assert!(tokio::time::timeout(Duration::from_secs(2), own.next()).await.is_ok());
    let heard = tokio::time::timeout(Duration::from_millis(300), feed.next()).await;
    assert!(heard.is_err(), "another prefix's change is not heard: {heard:?}");
    let mut watch = two.task_store().watch("t");
    one.task_store().wake("t");
    assert!(tokio::time::timeout(Duration::from_millis(300), watch.woken()).await.is_err());
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_unix_socket_url_works() {
    let redis = mcp_kernel_test_support::redis::RedisServer::start_with(
        mcp_kernel_test_support::redis::RedisOptions::default().unix_socket(),
    )
    .unwrap();
    let path = redis.socket_path().unwrap();
    for url in [format!("unix://{}", path.display()), format!("redis+unix://{}", path.display())] {
        let a = instance(RedisConfig::from_url(&url).unwrap()).await;
        let _running = a.task_store().watch_running("t");
        assert_eq!(a.task_store().create(task("t", None, None), LIMITS).await, Ok(Ok(())), "{url}");
        assert!(a.task_store().read("t").await.unwrap().is_some());
        a.task_store().transition("t", mcp_kernel_router::tasks::Transition::Cancelled, 1).await.unwrap();
        let mut raw =
            redis::Client::open(redis.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("FLUSHALL").query_async(&mut raw).await.unwrap();
    }
}
