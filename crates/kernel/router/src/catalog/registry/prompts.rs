//! [`Prompts`]: prompts declared with their renderers.

use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::catalog::compile::BuildError;
use crate::catalog::registry::decode::arguments_as;
use crate::catalog::spec::PromptSpec;
use crate::contract::{BoxFuture, GetPrompt, PromptOutput, PromptReader, ReaderError, RequestContext};

/// One registered prompt with its renderer and, when registered typed, the renderer's type name
/// (`std::any::type_name`, the catalog export's `handler`).
pub(crate) type Registered = (PromptSpec, Arc<dyn PromptReader>, Option<&'static str>);

/// Prompts, each declared with its renderer: `Prompts::new().add(spec, render)`.
///
/// The arguments the spec declares are validated as for any prompt (strings, the required ones
/// present), then deserialized into the renderer's `A`; with the `schemars` feature,
/// `Prompts::add_derived` declares them from `A` itself.
#[derive(Default)]
pub struct Prompts {
    entries: Vec<Registered>,
    faults: Vec<BuildError>,
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|(spec, _, _)| spec.name())).finish()
    }
}

/// A typed renderer behind the `PromptReader` the snapshot calls.
struct Typed<F, A> {
    render: F,
    _arguments: std::marker::PhantomData<fn(A)>,
}

impl<F, Fut, A> PromptReader for Typed<F, A>
where
    F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PromptOutput, ReaderError>> + Send + 'static,
    A: DeserializeOwned + 'static,
{
    fn get(&self, request: GetPrompt) -> BoxFuture<'static, Result<PromptOutput, ReaderError>> {
        match arguments_as::<A>(&request.arguments, "prompt") {
            Ok(arguments) => {
                // Allocated first, as in `contract.rs` (`Dispatch for F`).
                let boxed: Box<Fut> =
                    Box::write(Box::new_uninit(), (self.render)(arguments, request.context));
                Box::into_pin(boxed)
            }
            Err(reason) => {
                Box::pin(std::future::ready(Err(ReaderError::new(format!("invalid arguments: {reason}")))))
            }
        }
    }
}

impl Prompts {
    /// No prompts yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A prompt whose renderer takes the spec's declared arguments as `A`.
    pub fn add<A, F, Fut>(self, spec: PromptSpec, render: F) -> Self
    where
        F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptOutput, ReaderError>> + Send + 'static,
        A: DeserializeOwned + 'static,
    {
        self.add_linked(spec, render, std::any::type_name::<F>())
    }

    /// [`Prompts::add`], recording `render_type` as the function that renders the prompt.
    pub(crate) fn add_linked<A, F, Fut>(
        mut self,
        spec: PromptSpec,
        render: F,
        render_type: &'static str,
    ) -> Self
    where
        F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptOutput, ReaderError>> + Send + 'static,
        A: DeserializeOwned + 'static,
    {
        let typed = Typed { render, _arguments: std::marker::PhantomData };
        self.entries.push((spec, Arc::new(typed), Some(render_type)));
        self
    }

    /// A prompt served by a plain [`PromptReader`] (it receives the whole request); the catalog export
    /// names no handler for it (`served_by: "untyped"`).
    pub fn add_reader(mut self, spec: PromptSpec, reader: impl PromptReader) -> Self {
        self.entries.push((spec, Arc::new(reader), None));
        self
    }

    /// A prompt whose arguments are declared from `A`'s fields (each a `String`, or an
    /// `Option<String>` for an optional one; doc comments become descriptions). A field of another
    /// type is a [`BuildError::InvalidPrompt`] when the server is built.
    #[cfg(feature = "schemars")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
    pub fn add_derived<A, F, Fut>(self, spec: PromptSpec, render: F) -> Self
    where
        F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptOutput, ReaderError>> + Send + 'static,
        A: DeserializeOwned + schemars::JsonSchema + 'static,
    {
        self.add_derived_linked(spec, render, std::any::type_name::<F>())
    }

    /// [`Prompts::add_derived`], recording `render_type` as the function that renders the prompt.
    #[cfg(feature = "schemars")]
    pub(crate) fn add_derived_linked<A, F, Fut>(
        mut self,
        spec: PromptSpec,
        render: F,
        render_type: &'static str,
    ) -> Self
    where
        F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptOutput, ReaderError>> + Send + 'static,
        A: DeserializeOwned + schemars::JsonSchema + 'static,
    {
        match crate::catalog::registry::derive::with_derived_arguments::<A>(spec) {
            Ok(spec) => self.add_linked(spec, render, render_type),
            Err((prompt, reason)) => {
                self.faults.push(BuildError::InvalidPrompt { prompt, reason });
                self
            }
        }
    }

    pub(crate) fn into_parts(self) -> (Vec<Registered>, Vec<BuildError>) {
        (self.entries, self.faults)
    }
}
