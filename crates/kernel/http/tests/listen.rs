//! `subscriptions/listen` over Streamable HTTP, through a real listener, over HTTP/1.1 (a raw socket)
//! and HTTP/2 (the `h2` crate): the acknowledgment first, the filter, the completion, keep-alives, the
//! end at shutdown, and what a listen that opens no stream is answered.
//!
//! In a test binary of its own: its streams stay open for a while, which would crowd the timing of the
//! tests in `integration/`.

#[path = "integration/support/mod.rs"]
mod support;

use std::time::Duration;

use serde_json::json;

use mcp_kernel_http::{LegacyClients, McpHttp, McpService, ServeOptions};
use mcp_kernel_router::notify::{InProcessHub, Notifications};
use mcp_kernel_router::prompts::PromptSpec;
use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_router::{Server, ToolSpec};
use support::*;

/// A service over the fixture catalog with notifications, admitting everyone.
fn notifying(notifications: &Notifications) -> McpService {
    McpHttp::builder(notifying_server(notifications))
        .allowed_origins(mcp_kernel_http::AllowedOrigins::list([ALLOWED_ORIGIN]))
        .authorize(|_| Ok(()))
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_acknowledgment_comes_first_tagged_with_the_request_id_in_its_json_type() {
    bounded(async {
        for proto in BOTH {
            for id in [json!(7), json!("listen-1")] {
                let notifications = Notifications::in_process();
                let service = notifying(&notifications);
                let handle = service.clone();
                let server = serve(service).await;
                let filter = json!({"toolsListChanged": true});
                let mut listen = open_listen(
                    server.addr,
                    proto,
                    &listen_request(id.clone(), filter.clone()),
                    listen_headers(),
                )
                .await;
                listen.assert_stream();
                let first = listen.next_event().await.expect("a first event");
                let Event::Message(acknowledgment) = first else { panic!("a comment first: {first:?}") };
                assert_acknowledgment(&acknowledgment, &id, &filter);

                notifications.notifier().tools_list_changed();
                let change = listen.next_message().await.expect("the change");
                assert_eq!(change["method"], "notifications/tools/list_changed", "{proto:?}");
                assert_eq!(tag(&change), &id, "the same id, the same JSON type: {change}");

                handle.end_listens();
                let completion = listen.next_message().await.expect("the completion");
                assert_completion(&completion, &id);
                assert_eq!(listen.next_message().await, None, "the end after the completion ({proto:?})");
                server.stop().await;
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_the_listener_did_not_ask_for_is_not_sent() {
    bounded(async {
        for proto in BOTH {
            let notifications = Notifications::in_process();
            let server = serve(notifying(&notifications)).await;
            let filter = json!({"promptsListChanged": true});
            let mut listen =
                open_listen(server.addr, proto, &listen_request(1, filter.clone()), listen_headers()).await;
            let acknowledgment = listen.next_message().await.expect("the acknowledgment");
            assert_acknowledgment(&acknowledgment, &json!(1), &filter);
            let notifier = notifications.notifier();
            notifier.tools_list_changed();
            notifier.resources_list_changed();
            notifier.prompts_list_changed();
            let first = listen.next_message().await.expect("a notification");
            assert_eq!(
                first["method"], "notifications/prompts/list_changed",
                "tools and resources skipped: {first}"
            );
            server.stop().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_notifications_a_listen_is_acknowledged_empty_and_completed_at_once() {
    bounded(async {
        for proto in BOTH {
            let server = start_default().await;
            let asked = json!({"toolsListChanged": true, "promptsListChanged": true});
            let mut listen =
                open_listen(server.addr, proto, &listen_request("l", asked), listen_headers()).await;
            listen.assert_stream();
            let messages = listen.rest().await;
            assert_eq!(messages.len(), 2, "{messages:?}");
            assert_acknowledgment(&messages[0], &json!("l"), &json!({}));
            assert_completion(&messages[1], &json!("l"));
            server.stop().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replacement_that_changes_only_prompts_announces_only_prompts() {
    bounded(async {
        for proto in BOTH {
            let notifications = Notifications::in_process();
            let live = LiveServer::new(notifying_server(&notifications));
            let service = McpHttp::builder(live.clone())
                .allowed_origins(mcp_kernel_http::AllowedOrigins::list([ALLOWED_ORIGIN]))
                .authorize(|_| Ok(()))
                .build();
            let handle = service.clone();
            let server = serve(service).await;
            let filter = json!({"toolsListChanged": true, "promptsListChanged": true});
            let mut listen =
                open_listen(server.addr, proto, &listen_request(3, filter.clone()), listen_headers()).await;
            assert_acknowledgment(
                &listen.next_message().await.expect("the acknowledgment"),
                &json!(3),
                &filter,
            );

            let mut listing = catalog();
            listing.prompts.push(PromptSpec::new("added"));
            let next = Server::builder(listing)
                .dispatch(dispatch)
                .prompt_reader(get_prompt)
                .resource_reader(read_resource)
                .defer_header_annotation_faults(true)
                .notifications(notifications.clone())
                .build()
                .expect("the replacement builds");
            let _old = live.replace(next);
            let announced = listen.next_message().await.expect("the announcement");
            assert_eq!(announced["method"], "notifications/prompts/list_changed", "{announced}");
            handle.end_listens();
            assert_completion(&listen.next_message().await.expect("the completion"), &json!(3));
            assert_eq!(listen.next_message().await, None, "nothing but prompts was announced");

            // A replacement that changes only tools announces only tools, to a fresh listener.
            let mut listing = catalog();
            listing.prompts.push(PromptSpec::new("added"));
            listing.tools.push(ToolSpec::new("another", mcp_kernel_router::Mode::ReadOnly));
            let server_2 = serve(
                McpHttp::builder(live.clone())
                    .allowed_origins(mcp_kernel_http::AllowedOrigins::list([ALLOWED_ORIGIN]))
                    .authorize(|_| Ok(()))
                    .build(),
            )
            .await;
            let mut second =
                open_listen(server_2.addr, proto, &listen_request(4, filter.clone()), listen_headers()).await;
            assert_acknowledgment(
                &second.next_message().await.expect("the acknowledgment"),
                &json!(4),
                &filter,
            );
            let next = Server::builder(listing)
                .dispatch(dispatch)
                .prompt_reader(get_prompt)
                .resource_reader(read_resource)
                .defer_header_annotation_faults(true)
                .notifications(notifications.clone())
                .build()
                .expect("the replacement builds");
            let _old = live.replace(next);
            let announced = second.next_message().await.expect("the announcement");
            assert_eq!(announced["method"], "notifications/tools/list_changed", "{announced}");
            notifications.notifier().prompts_list_changed();
            let after = second.next_message().await.expect("the host's own announcement");
            assert_eq!(after["method"], "notifications/prompts/list_changed", "nothing between: {after}");
            server.stop().await;
            server_2.stop().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_every_listen_with_its_completion_within_the_grace_period() {
    bounded(async {
        let notifications = Notifications::in_process();
        let options = ServeOptions::new().shutdown_grace(Duration::from_secs(8));
        let server = serve_with(notifying(&notifications), options).await;
        let filter = json!({"toolsListChanged": true});
        let mut streams = Vec::new();
        for (n, proto) in [Proto::H1, Proto::H2, Proto::H1, Proto::H2].into_iter().enumerate() {
            let mut listen =
                open_listen(server.addr, proto, &listen_request(n, filter.clone()), listen_headers()).await;
            assert_acknowledgment(
                &listen.next_message().await.expect("the acknowledgment"),
                &json!(n),
                &filter,
            );
            streams.push((n, proto, listen));
        }
        notifications.notifier().tools_list_changed();
        let stopping = tokio::spawn(server.stop_within(Duration::from_secs(8)));
        for (n, proto, listen) in &mut streams {
            let pending = listen.next_message().await.expect("the change announced before the shutdown");
            assert_eq!(pending["method"], "notifications/tools/list_changed", "{proto:?}");
            let completion = listen.next_message().await.expect("the completion");
            assert_completion(&completion, &json!(*n));
            assert_eq!(listen.next_message().await, None, "the response ends cleanly ({proto:?})");
        }
        // The HTTP/1.1 connections are left to their peer once their response has ended: this one
        // closes them, and the drain is over well within its grace.
        drop(streams);
        assert!(stopping.await.expect("joined"), "serve returned within the grace period");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_arriving_during_the_drain_is_acknowledged_and_completed_at_once() {
    bounded(async {
        let notifications = Notifications::in_process();
        let service = notifying(&notifications);
        let handle = service.clone();
        let server = serve(service).await;
        handle.end_listens();
        for proto in BOTH {
            let filter = json!({"toolsListChanged": true});
            let mut listen =
                open_listen(server.addr, proto, &listen_request(9, filter.clone()), listen_headers()).await;
            listen.assert_stream();
            let messages = listen.rest().await;
            assert_eq!(messages.len(), 2, "{messages:?}");
            assert_acknowledgment(&messages[0], &json!(9), &filter);
            assert_completion(&messages[1], &json!(9));
        }
        server.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_idle_timeout_does_not_close_a_connection_holding_a_listen() {
    bounded(async {
        let notifications = Notifications::in_process();
        let idle = Duration::from_millis(200);
        let server = serve_with(notifying(&notifications), ServeOptions::new().idle_timeout(idle)).await;
        for proto in BOTH {
            let filter = json!({"toolsListChanged": true});
            let mut listen =
                open_listen(server.addr, proto, &listen_request(1, filter.clone()), listen_headers()).await;
            assert_acknowledgment(
                &listen.next_message().await.expect("the acknowledgment"),
                &json!(1),
                &filter,
            );
            // Five idle timeouts with nothing written (the keep-alive interval is 15 s).
            tokio::time::sleep(idle * 5).await;
            notifications.notifier().tools_list_changed();
            let change = listen.next_event().await.expect("the stream is still open");
            assert_eq!(
                change,
                Event::Message(json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/tools/list_changed",
                    "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}}
                })),
                "{proto:?}"
            );
        }
        server.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_comments_arrive_on_the_interval_the_host_sets() {
    bounded(async {
        let notifications = Notifications::in_process();
        let service = McpHttp::builder(notifying_server(&notifications))
            .allowed_origins(mcp_kernel_http::AllowedOrigins::list([ALLOWED_ORIGIN]))
            .authorize(|_| Ok(()))
            .listen_keep_alive(Duration::from_millis(100))
            .build();
        let server = serve(service).await;
        for proto in BOTH {
            let filter = json!({"toolsListChanged": true});
            let mut listen =
                open_listen(server.addr, proto, &listen_request(1, filter.clone()), listen_headers()).await;
            let first = listen.next_event().await.expect("the acknowledgment");
            assert!(matches!(first, Event::Message(_)), "the acknowledgment comes before any comment");
            // At least two comments within a window of fifty intervals.
            let mut comments = 0;
            let window = tokio::time::timeout(Duration::from_secs(5), async {
                while comments < 2 {
                    match listen.next_event().await {
                        Some(Event::Comment(text)) => {
                            assert_eq!(text, "keep-alive");
                            comments += 1;
                        }
                        other => panic!("only comments on a quiet stream: {other:?}"),
                    }
                }
            })
            .await;
            assert!(
                window.is_ok(),
                "{comments} keep-alive comments within 5 s at a 100 ms interval ({proto:?})"
            );
            // A change still comes through between them.
            notifications.notifier().tools_list_changed();
            let change = listen.next_message().await.expect("the change");
            assert_eq!(change["method"], "notifications/tools/list_changed");
        }
        server.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_the_core_does_not_open_gets_the_core_answer_as_json() {
    bounded(async {
        let notifications = Notifications::in_process();
        let service = McpHttp::builder(notifying_server(&notifications))
            .allowed_origins(mcp_kernel_http::AllowedOrigins::list([ALLOWED_ORIGIN]))
            .authorize(|_| Ok(()))
            .legacy_clients(LegacyClients::Stateless)
            .build();
        let server = serve(service).await;
        for proto in BOTH {
            // A filter that is not one: -32602, 200 like every invalid-params answer.
            let bad = listen_request(1, json!({"toolsListChanged": "yes"}));
            let mut listen = open_listen(server.addr, proto, &bad, listen_headers()).await;
            assert_eq!(listen.status, 200);
            assert_eq!(listen.header("content-type"), Some("application/json"));
            let body = listen.json().await;
            assert_eq!(body["error"]["code"], -32602, "{body}");
            assert_eq!(body["id"], 1);

            // No `_meta` at all, with the modern header: the header rules refuse it (-32602, 400).
            let bare = json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
                "params": {"notifications": {"toolsListChanged": true}}});
            let mut listen = open_listen(server.addr, proto, &bare, listen_headers()).await;
            assert_eq!(listen.status, 400);
            assert_eq!(listen.json().await["error"]["code"], -32602);

            // A 2025-11-25 client (served statelessly): a method its revision does not have.
            let legacy_listen = json!({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen",
                "params": {"notifications": {"toolsListChanged": true}}});
            let mut listen = open_listen(server.addr, proto, &legacy_listen, legacy_headers()).await;
            assert_eq!(listen.status, 200, "a legacy client reads 404 as an ended session");
            let body = listen.json().await;
            assert_eq!(body["error"]["code"], -32601, "{body}");

            // `resources/subscribe` stays what a stateless server answers: 404, -32601.
            let subscribe = request(4, "resources/subscribe", json!({"uri": "test://a"}));
            let reply = post_message(server.addr, proto, &subscribe).await;
            reply.assert_error(404, -32601, &json!(4));
        }
        server.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_must_pass_the_header_checks() {
    bounded(async {
        let notifications = Notifications::in_process();
        let server = serve(notifying(&notifications)).await;
        let message = listen_request(1, json!({"toolsListChanged": true}));
        for proto in BOTH {
            let mismatched_version = replace(listen_headers(), "mcp-protocol-version", b"2025-11-25");
            let mut listen = open_listen(server.addr, proto, &message, mismatched_version).await;
            assert_eq!(listen.status, 400, "the header must equal `_meta`'s version");
            assert_eq!(listen.json().await["error"]["code"], -32020);

            let wrong_method = replace(listen_headers(), "mcp-method", b"tools/list");
            let mut listen = open_listen(server.addr, proto, &message, wrong_method).await;
            assert_eq!(listen.status, 400);
            assert_eq!(listen.json().await["error"]["code"], -32020);

            let no_method = without(listen_headers(), "mcp-method");
            let mut listen = open_listen(server.addr, proto, &message, no_method).await;
            assert_eq!(listen.status, 400);
            assert_eq!(listen.json().await["error"]["code"], -32020);
        }
        server.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_listen_gives_back_its_share_of_the_body_budget() {
    bounded(async {
        let notifications = Notifications::in_process();
        // A budget of 4 KiB in all, per client too: five listens of about 1 KiB held open would spend it.
        let service = McpHttp::builder(notifying_server(&notifications))
            .allowed_origins(mcp_kernel_http::AllowedOrigins::list([ALLOWED_ORIGIN]))
            .authorize(|_| Ok(()))
            .max_body_bytes(4096)
            .max_body_bytes_in_flight(4096)
            .build();
        let server = serve(service).await;
        let padding = "p".repeat(1000);
        let mut held = Vec::new();
        for n in 0..8 {
            let proto = if n % 2 == 0 { Proto::H1 } else { Proto::H2 };
            let message = listen_request(n, json!({"toolsListChanged": true, "padding": padding}));
            let mut listen = open_listen(server.addr, proto, &message, listen_headers()).await;
            listen.assert_stream();
            assert!(listen.next_message().await.is_some(), "acknowledged");
            held.push(listen);
        }
        // Eight listens of 1 KiB are open; a 3.5 KiB request still fits the 4 KiB budget.
        let big = request(99, "tools/list", json!({"padding": "q".repeat(3500)}));
        for proto in BOTH {
            let reply = post_message(server.addr, proto, &big).await;
            assert_eq!(reply.status, 200, "{reply:?}");
        }
        drop(held);
        server.stop().await;
    })
    .await;
}

/// A connection from 127.0.0.1 whose receive buffer is small, so that a client that stops reading
/// stops the server's writes within a few kilobytes.
async fn small_window(addr: std::net::SocketAddr) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.set_recv_buffer_size(4096).expect("a small receive buffer");
    let stream = socket.connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_whose_client_stops_reading_is_cut_at_the_write_deadline() {
    const CHANGES: usize = 60_000;
    bounded(async {
        // A hub and a stream queue deep enough never to fall behind, however slowly the server's
        // writer is scheduled: a full queue would end the stream with its completion (a reader that
        // fell behind, pinned in `pump.rs`), which fits in the buffers on the way and is not the rule
        // pinned here. What must stop the stream is the write deadline: the 7 MB announced below are
        // more than the buffers on the way hold (over loopback at most 4 MiB of send buffer).
        let notifications = Notifications::with_hub(InProcessHub::with_capacity(2 * CHANGES));
        let service = McpHttp::builder(notifying_server(&notifications))
            .allowed_origins(mcp_kernel_http::AllowedOrigins::list([ALLOWED_ORIGIN]))
            .authorize(|_| Ok(()))
            .listen_queue(2 * CHANGES)
            .build();
        let options = ServeOptions::new().write_timeout(Duration::from_millis(300));
        let server = serve_with(service, options).await;
        let filter = json!({"toolsListChanged": true});
        for proto in BOTH {
            let message = listen_request(1, filter.clone());
            let mut listen = match proto {
                Proto::H1 => {
                    open_h1(small_window(server.addr).await, server.addr, &message, listen_headers()).await
                }
                // The `h2` client gives the server no more window than it has read: 64 KiB.
                Proto::H2 => {
                    open_h2(h2_connect_patient(server.addr).await, server.addr, &message, listen_headers())
                        .await
                }
            };
            assert_acknowledgment(
                &listen.next_message().await.expect("the acknowledgment"),
                &json!(1),
                &filter,
            );
            // The client reads nothing more while 60,000 changes are announced (about 7 MB of events),
            // paced so that the server writes what it can between them: the buffers on the way fill,
            // the rest waits in the stream's queue, and no completion is queued at all.
            let notifier = notifications.notifier();
            for n in 0..CHANGES {
                notifier.tools_list_changed();
                if n % 64 == 63 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            // Five write deadlines later, the client reads what reached it.
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            let (messages, cut) = listen.messages_until_cut(Duration::from_secs(5)).await;
            assert!(
                cut,
                "the connection was closed, not the stream ended ({proto:?}): {} messages, the last {:?}",
                messages.len(),
                messages.last()
            );
            assert!(messages.len() < CHANGES, "{} of {CHANGES} reached it ({proto:?})", messages.len());
            assert!(
                messages.iter().all(|m| m["method"] == "notifications/tools/list_changed"),
                "no completion could be written to a client that did not read ({proto:?})"
            );
        }
        server.stop().await;
    })
    .await;
}
