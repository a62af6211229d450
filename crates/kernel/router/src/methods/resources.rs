//! `resources/list`, `resources/templates/list` and `resources/read`.

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

/// Resource not found, with the code of the request's era: -32602 under 2026-07-28, -32002 otherwise.
fn not_found(era: Era, uri: &str, reason: Option<Value>) -> ErrorObject {
    let mut error = ErrorObject::resource_not_found(ResourceNotFoundData { uri: uri.to_owned(), reason });
    if era.is_modern() {
        error.code = code::INVALID_PARAMS;
    }
    error
}

impl Server {
    pub(crate) fn list_resources(&self, params: Option<&Value>, context: &RequestContext) -> Answer {
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

    /// Whether the caller of `context` may read `uri`: it is listed for them, or a template listed for
    /// them matches it (`protocol.md` [F-5]).
    ///
    /// [F-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub(crate) async fn is_listed_resource(&self, uri: &str, context: &RequestContext) -> bool {
        let filter = self.inner.injected.visibility.as_deref();
        let sieve = Sieve::new(filter, context);
        self.inner.snapshot.locate(uri, |item| sieve.shows(item)).is_some()
    }

    /// `resources/read`: only a listed uri, or one a listed template matches, is read (`protocol.md`
    /// [F-5]), and a refusal comes before any host reader runs.
    ///
    /// [F-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub(crate) async fn read_resource(&self, request: Request<'_>) -> Answer {
        let Request { params, context, .. } = request;
        let mut params = owned_params(params);
        let Some(Value::String(uri)) = params.remove("uri") else {
            return Err(ErrorObject::invalid_params("resources/read requires a string uri"));
        };
        let filter = self.inner.injected.visibility.as_deref();
        // A hidden item is skipped, not refused: the uri is read as if it were not listed.
        let sieve = Sieve::new(filter, &context);
        let (own_reader, template) = match self.inner.snapshot.locate(&uri, |item| sieve.shows(item)) {
            Some(Located::Resource(r)) => (&r.reader, None),
            Some(Located::Template(t, found)) => (&t.reader, Some(found)),
            None => return Err(not_found(context.era, &uri, None)),
        };
        let reader = match (own_reader, &self.inner.injected.resources) {
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
        let hints = if input.is_some() { CacheHints::default() } else { self.inner.options.resources_cache };
        let mut context = context;
        context.retry = input.map(std::sync::Arc::new);
        let template = template.map(|found| found.with_uri(uri.as_str()));
        let read = ReadResource { uri: uri.clone(), template, context };
        let span = tracing::info_span!("mcp.read_resource", server = %self.inner.options.server_name());
        match guarded(|| reader.read(read)).instrument(span).await {
            Err(_) => {
                tracing::error!("resource reader panicked; answered -32603");
                Err(ErrorObject::internal())
            }
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
