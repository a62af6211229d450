//! `2025-11-25` sessions across instances: three `cluster-host` instances with legacy sessions on
//! (`CLUSTER_LEGACY_SESSIONS=1`), keeping them in the Redis session store they share, behind nginx
//! (round-robin, no affinity: the `docs/deploy.md` configuration), driven by rmcp's client in its
//! legacy lifecycle and, where a test must choose the instance each request reaches, by a raw
//! session client sending each request straight to the instance named (`sessions/raw.rs`).
//!
//! A session initialized through one instance is served by the others; a question one instance asks
//! is answered by a POST to another, and the tool completes; a subscription made through one instance
//! brings a change made through a second to the GET stream held by a third; and a session id, or an
//! answer, presented by whoever should not is refused, on every instance, exactly as an unknown one.
//!
//! Every test starts its own `redis-server` and its own cluster (`shared_state/setup.rs`); everything
//! binds 127.0.0.1, and every wait and loop is bounded in count and time. Ignored in the ordinary run:
//! `cargo xtask edge redis` runs them, with nginx at `/usr/sbin/nginx` (or `MCP_KERNEL_NGINX`) and
//! redis-server at `/usr/bin/redis-server` (or `MCP_KERNEL_REDIS_SERVER`).

#[path = "proxy/client.rs"]
#[allow(dead_code)]
mod client;
#[path = "proxy/cluster.rs"]
#[allow(dead_code)]
mod cluster;
#[allow(dead_code)]
mod common;
#[path = "sessions/hijack.rs"]
mod hijack;
#[path = "sessions/raw.rs"]
#[allow(dead_code)]
mod raw;
#[path = "shared_state/setup.rs"]
#[allow(dead_code)]
mod setup;
#[path = "sessions/user.rs"]
#[allow(dead_code)]
mod user;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use raw::{SESSION_NOT_FOUND, Session, accept, request, tool_call};
use serde_json::{Value, json};
use setup::{Shared, nonce};
use user::{Heard, call, close, connect, subscribe, until_listening};

/// How long a notification may take to arrive once its change is made.
const ARRIVES: Duration = Duration::from_secs(10);

/// How long a notification that must not come is waited for.
const QUIET: Duration = Duration::from_millis(500);

/// The resource `touch` updates.
const URI: &str = "cluster://instance";

/// The instances' names, in the upstream's order.
const NAMES: [&str; 3] = ["a", "b", "c"];

/// The instance a tool's structured content names.
fn served_by(content: &Value) -> String {
    content["instance"].as_str().unwrap_or_else(|| panic!("no instance in {content}")).to_owned()
}

/// A session initialized through one instance is served by the others: rmcp's legacy client through
/// the proxy (which never initializes again: a session another instance did not know would fail its
/// call) has its calls answered by more than one instance; a raw client initialized through `a` is
/// served by `b` and `c`, and a `DELETE` through `c` ends it on `a` and `b` too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn a_session_initialized_through_one_instance_is_served_by_the_others() {
    let shared = Shared::start_with_sessions().await;
    let (client, _) = connect(&shared.url(), "alice").await;
    let mut served = Vec::new();
    for _ in 0..6 {
        let answer = call(&client, "whoami", json!({})).await;
        assert_eq!(answer["caller"], "alice", "{answer}");
        served.push(served_by(&answer));
    }
    let distinct: BTreeSet<&String> = served.iter().collect();
    eprintln!("rmcp's session through the proxy, served by {served:?}");
    assert!(distinct.len() >= 2, "one session served by at least two instances: {served:?}");
    close(client).await;

    let session = Session::initialize(&shared.direct(0), "alice").await;
    for (index, name) in NAMES.iter().enumerate() {
        let answer = session.result(&shared.direct(index), &tool_call(2, "whoami", json!({}))).await;
        assert_eq!(served_by(&answer["structuredContent"]), *name, "{answer}");
        let listed = session.result(&shared.direct(index), &request(3, "tools/list", json!({}))).await;
        let names: Vec<&str> =
            listed["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
        assert!(names.contains(&"confirm_twice") && names.contains(&"touch"), "{listed}");
    }
    assert_eq!(session.delete(&shared.direct(2)).await.status, 204);
    for index in 0..2 {
        let after = session.post(&shared.direct(index), &tool_call(4, "whoami", json!({}))).await;
        assert_eq!((after.status, after.body.as_str()), (404, SESSION_NOT_FOUND), "via {index}");
    }
}

/// A question one instance asks is answered by a POST another instance receives, and the tool
/// completes where it was called: the call straight to `a`, its answer straight to `b`; a two-round
/// tool called on `b`, answered through `c` then `a`. Then rmcp's legacy client through the proxy:
/// every call completes, each answered by the instance whose upstream the proxy logged for the call,
/// and the proxy's log shows answers POSTed to another instance than the one asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn a_question_asked_by_one_instance_is_answered_through_another_and_the_tool_completes() {
    let shared = Shared::start_with_sessions().await;
    let session = Session::initialize(&shared.direct(2), "alice").await;

    let mut stream = session.open(&shared.direct(0), &tool_call(7, "confirm", json!({"item": "lamp"}))).await;
    let asked = stream.next().await;
    assert_eq!(asked["params"]["message"], "instance a asks: confirm lamp?", "{asked}");
    let delivered = session.post(&shared.direct(1), &accept(&asked, true)).await;
    assert_eq!((delivered.status, delivered.body.as_str()), (202, ""), "answered through b: {delivered:?}");
    let done = stream.next().await;
    assert_eq!(done["id"], 7, "{done}");
    let content = &done["result"]["structuredContent"];
    assert_eq!(content, &json!({"instance": "a", "asked_by": "a", "item": "lamp", "confirmed": true}));

    let twice = tool_call(8, "confirm_twice", json!({"item": "desk"}));
    let mut stream = session.open(&shared.direct(1), &twice).await;
    for (round, through) in [(1, 2), (2, 0)] {
        let asked = stream.next().await;
        let message = asked["params"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(&format!("instance b asks ({round} of 2)")), "{asked}");
        let delivered = session.post(&shared.direct(through), &accept(&asked, true)).await;
        assert_eq!(delivered.status, 202, "round {round} answered through {through}: {delivered:?}");
    }
    let done = stream.next().await;
    let content = &done["result"]["structuredContent"];
    assert_eq!(content, &json!({"instance": "b", "asked_by": ["b", "b"], "item": "desk", "confirmed": true}));

    // rmcp through the proxy: round-robin spreads the calls and the answers.
    let (client, user) = connect(&shared.url(), "alice").await;
    let calls = 6;
    let mut asking = Vec::new();
    for n in 0..calls {
        let item = format!("item-{n}");
        let answer = call(&client, "confirm", json!({"item": item})).await;
        assert_eq!(answer["confirmed"], true, "{answer}");
        assert_eq!(answer["asked_by"], answer["instance"], "the instance asking completes: {answer}");
        asking.push(served_by(&answer));
    }
    assert_eq!(user.asked().len(), calls, "{:?}", user.asked());
    let crossed = crossings(&shared, &asking).await;
    eprintln!("rmcp through the proxy: asked by {asking:?}, {crossed} of {calls} answers POSTed elsewhere");
    assert!(crossed >= 1, "at least one answer reached another instance than the one asking");
    close(client).await;
}

/// From the proxy's access log: the POSTs of rmcp's session after `initialize` and
/// `notifications/initialized` come in pairs, one per call (the call's 200 and its answer's 202, in
/// either order: each is logged as it ends). Checks that each call's upstream is the instance its
/// answer named, and counts the answers whose upstream was another instance.
async fn crossings(shared: &Shared, asking: &[String]) -> usize {
    let name_of = |upstream: &str| {
        let index = shared.cluster.instances.iter().position(|i| i.addr.to_string() == upstream);
        NAMES[index.unwrap_or_else(|| panic!("an upstream of the cluster: {upstream}"))]
    };
    let wanted = 2 + 2 * asking.len();
    let started = Instant::now();
    let posts = loop {
        let log = shared.cluster.nginx.access_log();
        let posts: Vec<String> = log.into_iter().filter(|line| line.contains("\"POST /mcp")).collect();
        if posts.len() >= wanted || started.elapsed() > Duration::from_secs(5) {
            break posts;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(posts.len(), wanted, "{posts:#?}");
    let field = |line: &str, name: &str| {
        let value = line.split(' ').find_map(|part| part.strip_prefix(name)).unwrap_or_default();
        value.to_owned()
    };
    let mut crossed = 0;
    for (pair, asker) in posts[2..].chunks(2).zip(asking) {
        let (mut call, mut answer) = (None, None);
        for line in pair {
            match field(line, "status=").as_str() {
                "200" => call = Some(field(line, "upstream=")),
                "202" => answer = Some(field(line, "upstream=")),
                _ => {}
            }
        }
        let (Some(call), Some(answer)) = (call, answer) else { panic!("a call and its answer: {pair:#?}") };
        assert_eq!(name_of(&call), asker, "the call's upstream asked: {pair:#?}");
        crossed += usize::from(name_of(&answer) != asker);
    }
    crossed
}

/// `resources/subscribe` through `a`, a change through `b`, the update on the GET stream held by `c`;
/// unsubscribed through `b`, the next change brings `c` the list change alone; subscribed again
/// through `c`, the update again. Then rmcp's legacy client through the proxy hears the updates of
/// changes made straight on each instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn a_subscription_through_one_instance_brings_a_change_through_another_to_the_stream_held_by_a_third() {
    let shared = Shared::start_with_sessions().await;
    let session = Session::initialize(&shared.direct(0), "alice").await;
    let mut stream = session.listen(&shared.direct(2)).await;
    let subscribe_to = |id| request(id, "resources/subscribe", json!({"uri": URI}));
    assert_eq!(session.result(&shared.direct(0), &subscribe_to(2)).await, json!({}));
    let touch = |id| tool_call(id, "touch", json!({}));
    let touched = session.result(&shared.direct(1), &touch(3)).await;
    assert_eq!(served_by(&touched["structuredContent"]), "b");
    let heard = [stream.next().await, stream.next().await];
    assert_eq!(heard[0]["method"], "notifications/resources/list_changed", "{heard:?}");
    assert_eq!(heard[1]["method"], "notifications/resources/updated", "{heard:?}");
    assert_eq!(heard[1]["params"]["uri"], URI, "{heard:?}");

    let unsubscribe = request(4, "resources/unsubscribe", json!({"uri": URI}));
    assert_eq!(session.result(&shared.direct(1), &unsubscribe).await, json!({}));
    session.result(&shared.direct(0), &touch(5)).await;
    assert_eq!(stream.next().await["method"], "notifications/resources/list_changed");
    stream.silent_for(QUIET).await;
    assert_eq!(session.result(&shared.direct(2), &subscribe_to(6)).await, json!({}));
    session.result(&shared.direct(2), &touch(7)).await;
    assert_eq!(stream.next().await["method"], "notifications/resources/list_changed");
    assert_eq!(stream.next().await["params"]["uri"], URI);

    // rmcp's legacy client through the proxy: its GET stream is wherever the proxy sent it.
    let (listener, user) = connect(&shared.url(), "alice").await;
    let (toucher, _) = connect(&shared.url(), "bob").await;
    until_listening(&toucher, &user).await;
    subscribe(&listener, URI).await;
    let updated = Heard::Updated(URI.to_owned());
    for (index, name) in NAMES.iter().enumerate() {
        let direct = Session::initialize(&shared.direct(index), &format!("carol-{}", nonce())).await;
        let touched = direct.result(&shared.direct(index), &touch(8)).await;
        assert_eq!(served_by(&touched["structuredContent"]), *name);
        let count = index + 1;
        user.until(ARRIVES, |h| h.iter().filter(|x| **x == updated).count() == count).await;
    }
    close(toucher).await;
    close(listener).await;
}

/// Another principal's session id, through every instance, is answered 404 in exactly the bytes of a
/// guessed id's (POST, GET and DELETE alike), and changes nothing; an id the client chose at
/// `initialize` is not adopted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn another_principals_session_id_is_refused_on_every_instance_as_a_guessed_one_byte_for_byte() {
    let shared = Shared::start_with_sessions().await;
    hijack::foreign_and_guessed_ids(&shared).await;
}

/// An answer to a question asked on alice's session, POSTed in another session — bob's, or another of
/// alice's — or under an id the server never issued, through any instance, is refused 400 in one set
/// of bytes and takes nothing: the rightful answer through a third instance still completes the tool,
/// and answering again is refused the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx and redis-server: cargo xtask edge redis"]
async fn an_answer_for_another_sessions_question_is_refused_on_every_instance_and_takes_nothing() {
    let shared = Shared::start_with_sessions().await;
    hijack::foreign_answers(&shared).await;
}
