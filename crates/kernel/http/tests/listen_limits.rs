//! The bounds on `subscriptions/listen` streams, through a real listener over HTTP/1.1 and HTTP/2: a
//! share per client and a bound in all, each refused 503 with `retry-after` before any stream opens,
//! while another client (another loopback address) still gets its stream and its notifications; and
//! the defaults at their real numbers.
//!
//! In a test binary of its own: it holds thousands of streams open.

#[path = "integration/support/mod.rs"]
mod support;

use std::net::IpAddr;
use std::time::Duration;

use serde_json::json;

use mcp_kernel_http::{
    AllowedOrigins, Authorize, Builder, DEFAULT_MAX_LISTENS, DEFAULT_MAX_LISTENS_PER_CLIENT, McpHttp,
    ServeOptions,
};
use mcp_kernel_router::notify::Notifications;
use support::edge::loopback;
use support::*;

fn builder(notifications: &Notifications) -> Builder<AllowedOrigins, Authorize> {
    McpHttp::builder(notifying_server(notifications))
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
        .authorize(|_| Ok(()))
}

fn tools() -> serde_json::Value {
    json!({"toolsListChanged": true})
}

/// Opens a listen from `source` and reads its acknowledgment.
async fn listening(source: IpAddr, addr: std::net::SocketAddr, proto: Proto, id: usize) -> Listening {
    let mut listen =
        open_listen_from(source, addr, proto, &listen_request(id, tools()), listen_headers()).await;
    listen.assert_stream();
    let acknowledgment = listen.next_message().await.expect("the acknowledgment");
    assert_acknowledgment(&acknowledgment, &json!(id), &tools());
    listen
}

/// Opens a listen from `source` until one is admitted (a closed stream's slot comes back once the
/// server has seen it close), at most 200 tries 25 ms apart.
async fn listening_once_admitted(source: IpAddr, addr: std::net::SocketAddr, proto: Proto) -> Listening {
    for _ in 0..200 {
        let listen =
            open_listen_from(source, addr, proto, &listen_request(0, tools()), listen_headers()).await;
        if listen.status == 200 {
            return listen;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no slot came back within 5 s")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_past_its_clients_share_is_refused_503_while_another_client_gets_its_stream() {
    bounded(async {
        for proto in BOTH {
            let notifications = Notifications::in_process();
            let server =
                serve(builder(&notifications).max_listens_per_client(2).max_listens(10).build()).await;
            let (first, second) = (loopback(1), loopback(2));
            let mut held = vec![
                listening(first, server.addr, proto, 1).await,
                listening(first, server.addr, proto, 2).await,
            ];
            let mut refused =
                open_listen_from(first, server.addr, proto, &listen_request(3, tools()), listen_headers())
                    .await;
            let body = refused.assert_busy().await;
            assert_eq!(body["id"], 3, "the refusal echoes the listen's id");

            // Another address is another client: its stream opens, and it is told of changes.
            let mut other = listening(second, server.addr, proto, 4).await;
            notifications.notifier().tools_list_changed();
            let change = other.next_message().await.expect("the other client's notification");
            assert_eq!(change["method"], "notifications/tools/list_changed", "{proto:?}");
            for listen in &mut held {
                assert_eq!(listen.next_message().await.expect("theirs too")["method"], change["method"]);
            }

            // A stream closed gives its slot back.
            held.pop();
            let again = listening_once_admitted(first, server.addr, proto).await;
            drop((held, again, other));
            server.stop().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_past_the_total_is_refused_503_until_a_stream_closes() {
    bounded(async {
        for proto in BOTH {
            let notifications = Notifications::in_process();
            let server =
                serve(builder(&notifications).max_listens(3).max_listens_per_client(2).build()).await;
            let a = vec![
                listening(loopback(1), server.addr, proto, 1).await,
                listening(loopback(1), server.addr, proto, 2).await,
            ];
            let b = listening(loopback(2), server.addr, proto, 3).await;
            let mut refused = open_listen_from(
                loopback(3),
                server.addr,
                proto,
                &listen_request(4, tools()),
                listen_headers(),
            )
            .await;
            refused.assert_busy().await;

            // Requests other than listens are not held to the listen bounds.
            let reply = post_message(server.addr, proto, &request(5, "tools/list", json!({}))).await;
            assert_eq!(reply.status, 200);

            drop(b);
            let mut third = listening_once_admitted(loopback(3), server.addr, proto).await;
            assert!(third.next_message().await.is_some(), "acknowledged");
            drop((a, third));
            server.stop().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_completed_at_once_is_answered_even_when_every_slot_is_held() {
    bounded(async {
        let notifications = Notifications::in_process();
        let server = serve(builder(&notifications).max_listens(1).max_listens_per_client(1).build()).await;
        for proto in BOTH {
            // The only slot (given back by the previous round's stream once the server saw it close).
            let mut held = listening_once_admitted(loopback(1), server.addr, proto).await;
            assert!(held.next_message().await.is_some(), "acknowledged");
            // Nothing asked that the server announces: acknowledged empty and completed, no slot needed.
            for source in [loopback(1), loopback(2)] {
                let mut at_once = open_listen_from(
                    source,
                    server.addr,
                    proto,
                    &listen_request(2, json!({})),
                    listen_headers(),
                )
                .await;
                at_once.assert_stream();
                let messages = at_once.rest().await;
                assert_eq!(messages.len(), 2, "{messages:?}");
                assert_acknowledgment(&messages[0], &json!(2), &json!({}));
                assert_completion(&messages[1], &json!(2));
            }
            let mut refused = open_listen_from(
                loopback(2),
                server.addr,
                proto,
                &listen_request(3, tools()),
                listen_headers(),
            )
            .await;
            refused.assert_busy().await;
            drop(held);
        }
        server.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_bounds_admit_thirty_two_listens_per_client_and_four_thousand_and_ninety_six_in_all() {
    assert_eq!((DEFAULT_MAX_LISTENS_PER_CLIENT, DEFAULT_MAX_LISTENS), (32, 4_096));
    tokio::time::timeout(Duration::from_secs(120), async {
        let notifications = Notifications::in_process();
        let server = serve_with(builder(&notifications).build(), ServeOptions::new()).await;
        let addr = server.addr;
        // 128 addresses × 32 listens (two HTTP/2 connections of 16 streams each): every slot.
        let mut clients = tokio::task::JoinSet::new();
        for n in 0..128u8 {
            clients.spawn(async move {
                let source = loopback(10 + n);
                let mut held = Vec::with_capacity(32);
                for _ in 0..2 {
                    let connection = h2_connect_from(source, addr).await;
                    for _ in 0..16 {
                        let id = held.len();
                        let message = listen_request(id, tools());
                        let mut listen = open_h2(connection.clone(), addr, &message, listen_headers()).await;
                        listen.assert_stream();
                        assert_acknowledgment(
                            &listen.next_message().await.expect("ack"),
                            &json!(id),
                            &tools(),
                        );
                        held.push(listen);
                    }
                }
                held
            });
        }
        let mut all = Vec::with_capacity(4_096);
        while let Some(held) = clients.join_next().await {
            all.extend(held.expect("a client's listens"));
        }
        assert_eq!(all.len(), 4_096);
        // In all: the 4,097th, from an address holding none, is refused; so is a 33rd of a client.
        let mut past_total =
            open_listen_from(loopback(200), addr, Proto::H2, &listen_request(1, tools()), listen_headers())
                .await;
        past_total.assert_busy().await;
        let mut past_share =
            open_listen_from(loopback(10), addr, Proto::H1, &listen_request(2, tools()), listen_headers())
                .await;
        past_share.assert_busy().await;
        // Each of them is still told of a change.
        notifications.notifier().tools_list_changed();
        for listen in all.iter_mut().step_by(97) {
            assert_eq!(
                listen.next_message().await.expect("a change")["method"],
                "notifications/tools/list_changed"
            );
        }
        drop(all);
        server.stop().await;
    })
    .await
    .expect("within two minutes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_share_admits_thirty_two_listens_of_one_client_and_refuses_the_thirty_third() {
    bounded(async {
        let notifications = Notifications::in_process();
        let server = serve(builder(&notifications).build()).await;
        let mut held = Vec::new();
        for id in 0..DEFAULT_MAX_LISTENS_PER_CLIENT {
            // Mixed: HTTP/1.1 connections and HTTP/2 streams count alike.
            let proto = if id % 2 == 0 { Proto::H1 } else { Proto::H2 };
            held.push(listening(loopback(1), server.addr, proto, id).await);
        }
        let mut refused = open_listen_from(
            loopback(1),
            server.addr,
            Proto::H2,
            &listen_request(99, tools()),
            listen_headers(),
        )
        .await;
        refused.assert_busy().await;
        let other = listening(loopback(2), server.addr, Proto::H1, 100).await;
        drop((held, other));
        server.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_told_to_make_room_ends_its_listen_with_the_completion() {
    bounded(async {
        for proto in BOTH {
            let notifications = Notifications::in_process();
            let options = ServeOptions::new().max_connections(2);
            let server = serve_with(builder(&notifications).build(), options).await;
            // 127.0.0.1 holds both slots, each connection with a listen open (neither is idle).
            let mut oldest = listening(loopback(1), server.addr, proto, 1).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            let mut newest = listening(loopback(1), server.addr, proto, 2).await;
            // A newcomer from another client takes the oldest one's slot, and is served.
            let list = request(3, "tools/list", json!({}));
            let reply = connect_source(loopback(2), server.addr, proto)
                .await
                .post(server.addr, headers_for(&list), bytes(&list))
                .await;
            assert_eq!(reply.status, 200, "{reply:?}");
            let completion = oldest.next_message().await.expect("the completion");
            assert_completion(&completion, &json!(1));
            assert_eq!(oldest.next_message().await, None, "its response ends ({proto:?})");
            // The other stream is untouched.
            notifications.notifier().tools_list_changed();
            let change = newest.next_message().await.expect("a change");
            assert_eq!(change["method"], "notifications/tools/list_changed", "{proto:?}");
            server.stop().await;
        }
    })
    .await;
}
