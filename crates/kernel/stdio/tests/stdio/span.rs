//! The server span of a request served over stdio names its network (`docs/tracing.md`):
//! `network.transport` `pipe`, and no HTTP protocol.

use std::sync::{Arc, Mutex};

use mcp_kernel_stdio::StdioOptions;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

use crate::harness::{Session, bounded, plain_server, request};

/// The `(span, field, value)` of every span opened.
#[derive(Clone, Default)]
struct Opened(Arc<Mutex<Vec<(String, String, String)>>>);

impl<S: tracing::Subscriber> Layer<S> for Opened {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        struct Fields<'a>(&'static str, &'a Opened);
        impl Visit for Fields<'_> {
            fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
                let seen = (self.0.to_owned(), field.name().to_owned(), format!("{value:?}"));
                self.1.0.lock().unwrap().push(seen);
            }
        }
        attrs.record(&mut Fields(attrs.metadata().name(), self));
    }
}

#[tokio::test]
async fn a_request_over_stdio_records_network_transport_pipe() {
    let opened = Opened::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(opened.clone()));
    bounded(async {
        let mut session = Session::start(plain_server(), StdioOptions::default());
        session.send_json(request(1, "tools/list")).await;
        let response = session.expect().await;
        assert!(response["result"]["tools"].is_array(), "{response}");
        session.close();
        session.ends_clean().await;
    })
    .await;
    let seen = opened.0.lock().unwrap().clone();
    let field =
        |name: &str| seen.iter().find(|(s, f, _)| s == "mcp.request" && f == name).map(|(_, _, v)| v.clone());
    assert_eq!(field("network.transport").as_deref(), Some("\"pipe\""), "{seen:?}");
    assert_eq!(field("network.protocol.name"), None);
}
