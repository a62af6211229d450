//! `resources/list`, `resources/templates/list` and `resources/read`, and the one answer to "is this
//! uri listed for this caller?" that a read and anything else that accepts a uri share.

use serde_json::Value;
use tracing::Instrument;

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::error::{ResourceNotFoundData, code};
use mcp_kernel_wire::types::ReadResourceResult;

use crate::catalog::snapshot::Located;
use crate::catalog::visibility::{Listed, Sieve};
use crate::contract::{Era, ReadResource, RequestContext};
use crate::methods::list::ListOf;
use crate::methods::round_trip::input_required;
use crate::methods::{encoded, owned_params};
use crate::options::CacheHints;
use crate::request::cursor::CursorKind;
use crate::request::guard::guarded;
use crate::sealing::state::Binding;
use crate::server::{Answer, Request, Server};
use crate::session::bridge::bridge;

/// Resource not found, with the code of the request's era: -32602 under 2026-07-28, -32002 otherwise.
fn not_found(era: Era, uri: &str, reason: Option<Value>) -> ErrorObject {
    let mut error = ErrorObject::resource_not_found(ResourceNotFoundData { uri: uri.to_owned(), reason });
    if era.is_modern() {
        error.code = code::INVALID_PARAMS;
    }
    error
}

/// Where an accepted `resources/read` uri leads.
enum Accepted<'a> {
    /// A catalog resource or a listed template's match.
    Catalog(Located<'a>),
    /// One of the resource source's uris for this caller.
    Source,
}

impl Server {
    /// `resources/list`: the catalog's resources, then a resource source's (`source_list.rs`).
    pub(crate) async fn list_resources(&self, params: Option<&Value>, context: &RequestContext) -> Answer {
        if let Some(source) = self.inner.injected.source.as_deref() {
            return self.list_with_source(source, params, context).await;
        }
        let sorted = &self.inner.snapshot.resources;
        let hints = self.inner.options.resources_cache;
        let list = ListOf { sorted, kind: CursorKind::Resources, field: "resources", hints };
        self.list_page(params, context, list, |r| &r.uri, |r| &r.item, |r| Listed::Resource(&r.uri))
    }

    pub(crate) fn list_templates(&self, params: Option<&Value>, context: &RequestContext) -> Answer {
        let sorted = &self.inner.snapshot.templates;
        let hints = self.inner.options.resources_cache;
        let list = ListOf { sorted, kind: CursorKind::ResourceTemplates, field: "resourceTemplates", hints };
        self.list_page(
            params,
            context,
            list,
            |t| &t.uri_template,
            |t| &t.item,
            |t| Listed::Template(&t.uri_template),
        )
    }

    /// Whether `uri` is listed for the request `context` describes: a catalog resource or a uri a
    /// listed template matches, either visible to it, or one the resource source says the caller has.
    /// `resources/read` accepts exactly these uris.
    pub(crate) async fn is_listed_resource(&self, uri: &str, context: &RequestContext) -> bool {
        self.accepted(uri, context).await.is_some()
    }

    /// Where an accepted `uri` leads, or `None` when it is not listed for this caller: the catalog is
    /// asked first (a hidden item is skipped, not refused), then the source, for a non-empty uri.
    async fn accepted(&self, uri: &str, context: &RequestContext) -> Option<Accepted<'_>> {
        let located = {
            let sieve = Sieve::new(self.inner.injected.visibility.as_deref(), context);
            self.inner.snapshot.locate(uri, |item| sieve.shows(item))
        };
        if let Some(located) = located {
            return Some(Accepted::Catalog(located));
        }
        let source = self.inner.injected.source.as_deref()?;
        if uri.is_empty() {
            return None;
        }
        match guarded(|| source.contains(context, uri)).await {
            Ok(true) => Some(Accepted::Source),
            Ok(false) => None,
            Err(_) => {
                tracing::error!("the resource source panicked in contains; the uri is not listed");
                None
            }
        }
    }

    /// `resources/read`: only a listed uri, one a listed template matches, or one the resource source
    /// says the caller has is read (`protocol.md` [F-5], [`Server::is_listed_resource`]), and a refusal
    /// comes before any host reader runs.
    ///
    /// [F-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub(crate) async fn read_resource(&self, request: Request<'_>) -> Answer {
        let Request { params, context, client, .. } = request;
        let mut params = owned_params(params);
        let Some(Value::String(uri)) = params.remove("uri") else {
            return Err(ErrorObject::invalid_params("resources/read requires a string uri"));
        };
        let (own_reader, template) = match self.accepted(&uri, &context).await {
            Some(Accepted::Catalog(Located::Resource(r))) => (r.reader.as_ref(), None),
            Some(Accepted::Catalog(Located::Template(t, found))) => (t.reader.as_ref(), Some(found)),
            // The source's uris are read by the server's resource reader.
            Some(Accepted::Source) => (None, None),
            None => return Err(not_found(context.era, &uri, None)),
        };
        let reader = match (own_reader, self.inner.injected.resources.as_ref()) {
            (Some(reader), _) | (None, Some(reader)) => reader,
            (None, None) => return Err(ErrorObject::internal()),
        };
        let era = context.era;
        let round = self.round(&context, || Binding::resource(&uri));
        let input = match &round {
            Some(round) => round.read_retry(&mut params)?,
            None => None,
        };
        drop(params);
        // A result that depends on a retry's input responses is never shared from a cache: the inputs
        // are not part of any cache key.
        let mut hints =
            if input.is_some() { CacheHints::default() } else { self.inner.options.resources_cache };
        let bridged = bridge(&context, client.as_ref());
        let mut context = context;
        context.retry = input.map(std::sync::Arc::new);
        let template = template.map(|found| found.with_uri(uri.as_str()));
        let read = ReadResource { uri: uri.clone(), template, context };
        let span = tracing::info_span!("mcp.read_resource", server = %self.inner.options.server_name());
        let outcome = match bridged {
            None => guarded(|| reader.read(read)).instrument(span).await,
            // A legacy client asked through its channel: the reader runs again with its answers.
            Some(bridge) => {
                let attempt = |retry: Option<std::sync::Arc<_>>| {
                    if retry.is_some() {
                        hints = CacheHints::default();
                    }
                    let mut read = read.clone();
                    read.context.retry = retry;
                    guarded(move || reader.read(read)).instrument(span.clone())
                };
                bridge.run(attempt).await.map_err(|stopped| stopped.error)?
            }
        };
        match outcome {
            Err(_) => {
                tracing::error!("resource reader panicked; answered -32603");
                Err(ErrorObject::internal())
            }
            // A `NoCaller`: answered exactly as a uri that is not listed.
            Ok(Err(refusal)) if refusal.answers_as_unlisted() => Err(not_found(era, &uri, None)),
            Ok(Err(refusal)) => match refusal.into_input_required() {
                Ok(required) => input_required(round.as_ref(), required),
                Err(refusal) => Err(not_found(era, &uri, Some(refusal.reason().clone()))),
            },
            Ok(Ok(contents)) => encoded(&ReadResourceResult {
                result_type: None,
                contents,
                ttl_ms: Some(hints.ttl_ms),
                cache_scope: Some(hints.scope),
                meta: None,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use mcp_kernel_wire::Envelope;
    use mcp_kernel_wire::types::{ResourceContents, TextResourceContents};
    use serde_json::json;

    use crate::catalog::source::ResourceSource;
    use crate::catalog::spec::{Listing, ResourceSpec, ResourceTemplateSpec};
    use crate::catalog::visibility::Listed;
    use crate::contract::{BoxFuture, Era, ReadResource, ReaderError, RequestContext};
    use crate::request::extensions::Extensions;
    use crate::server::Server;
    use crate::transport::Inbound;

    /// "alice" has `u://alice`; "panics" panics.
    struct Own;

    impl ResourceSource for Own {
        fn list<'a>(
            &'a self,
            _: &'a RequestContext,
            _: Option<&'a str>,
            _: usize,
        ) -> BoxFuture<'a, Result<Vec<ResourceSpec>, ReaderError>> {
            Box::pin(async { Ok(Vec::new()) })
        }

        fn contains<'a>(&'a self, cx: &'a RequestContext, uri: &'a str) -> BoxFuture<'a, bool> {
            Box::pin(async move {
                match cx.principal::<String>().map(String::as_str) {
                    Some("panics") => panic!("contains bug"),
                    Some(caller) => uri == format!("u://{caller}"),
                    None => false,
                }
            })
        }
    }

    fn server() -> Server {
        let listing = Listing {
            resources: vec![
                ResourceSpec::new("c://shown", "c").into(),
                ResourceSpec::new("c://hidden", "c").into(),
                ResourceTemplateSpec::new("t://{x}", "t").into(),
                ResourceTemplateSpec::new("h://hidden/{x}", "t").into(),
            ],
            ..Listing::default()
        };
        Server::builder(listing)
            .resource_reader(|read: ReadResource| async move {
                Ok::<_, ReaderError>(vec![ResourceContents::from(TextResourceContents::new(&read.uri, "x"))])
            })
            .visibility(|item: Listed<'_>, _: &RequestContext| match item {
                Listed::Resource(key) | Listed::Template(key) => !key.contains("hidden"),
                _ => true,
            })
            .resource_source(Own)
            .build()
            .expect("builds")
    }

    fn assert_send<T: Send>(value: T) -> T {
        value
    }

    #[tokio::test]
    async fn is_listed_resource_agrees_with_what_a_read_accepts() {
        let server = server();
        let uris =
            ["c://shown", "c://hidden", "t://1", "h://hidden/1", "u://alice", "u://bob", "u://", "", "z://"];
        for caller in [None, Some("alice"), Some("bob"), Some("panics")] {
            let mut extensions = Extensions::new();
            if let Some(caller) = caller {
                extensions.insert(caller.to_owned());
            }
            for uri in uris {
                let context = RequestContext::new(Era::Bare, None).with_extensions(extensions.clone());
                let listed = assert_send(server.is_listed_resource(uri, &context)).await;
                let request =
                    json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}});
                let envelope = Envelope::from_value(request).expect("a request");
                let inbound = Inbound::new().extensions(extensions.clone());
                let handled = assert_send(server.handle_envelope(envelope, inbound)).await;
                let answer = handled.response.expect("answered").to_value();
                assert_eq!(listed, answer.get("result").is_some(), "{caller:?} {uri}: {answer}");
                let expected = matches!(
                    (caller, uri),
                    (_, "c://shown" | "t://1") | (Some("alice"), "u://alice") | (Some("bob"), "u://bob")
                );
                assert_eq!(listed, expected, "{caller:?} {uri}");
            }
        }
    }
}
