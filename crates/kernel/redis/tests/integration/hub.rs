//! The change hub across instances: one subscription per instance, fanned out locally, each change
//! delivered once to every subscriber of every instance, the publisher's own included.

use std::time::Duration;

use mcp_kernel_router::notify::{Change, ChangeHub, ChangeKind};

use crate::support::{config, instance, server};

fn resource(n: usize) -> Change {
    Change::to_everyone(ChangeKind::ResourceUpdated { uri: format!("notes://{n}").into() })
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_change_published_on_one_instance_reaches_every_subscriber_of_both_once_in_order() {
    let redis = server();
    let a = instance(config(&redis)).await.change_hub();
    let b = instance(config(&redis)).await.change_hub();
    let mut feeds = [a.try_subscribe().unwrap(), a.try_subscribe().unwrap(), b.try_subscribe().unwrap()];
    for n in 0..5 {
        a.publish(resource(n));
    }
    b.publish(Change::to_caller(ChangeKind::ToolsListChanged, "alice"));
    for (i, feed) in feeds.iter_mut().enumerate() {
        for n in 0..5 {
            let change = tokio::time::timeout(Duration::from_secs(2), feed.next()).await.expect("delivered");
            assert_eq!(change, Some(resource(n)), "feed {i}, change {n}");
        }
        let last = tokio::time::timeout(Duration::from_secs(2), feed.next()).await.expect("delivered");
        assert_eq!(last, Some(Change::to_caller(ChangeKind::ToolsListChanged, "alice")), "feed {i}");
        let more = tokio::time::timeout(Duration::from_millis(300), feed.next()).await;
        assert!(more.is_err(), "feed {i}: each change once, never twice: {more:?}");
    }
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_subscriber_too_far_behind_has_its_feed_ended_while_the_others_go_on() {
    let redis = server();
    let a = instance(config(&redis).hub_capacity(2)).await.change_hub();
    let mut slow = a.try_subscribe().unwrap();
    let mut fast = a.try_subscribe().unwrap();
    for n in 0..3 {
        a.publish(resource(n));
        let change = tokio::time::timeout(Duration::from_secs(2), fast.next()).await.expect("delivered");
        assert_eq!(change, Some(resource(n)));
    }
    assert_eq!(slow.next().await, Some(resource(0)), "what it holds is delivered");
    assert_eq!(slow.next().await, Some(resource(1)));
    assert_eq!(slow.next().await, None, "then the lagged feed ends rather than skip");
}
