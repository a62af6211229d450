//! Registries whose handlers share one piece of the host's state: `Tools::with_state(store)`.
//!
//! A handler is a `Fn` called once per request, and its future must own what it uses, so a handler
//! that reads the host's store would clone it twice (into the closure, then into each future). With
//! a state, the registry does that: every handler receives its own clone of the state (an `Arc`, a
//! pool handle: anything cheap to clone) as its first argument.

use std::future::Future;

use mcp_kernel_wire::types::ResourceContents;
#[cfg(feature = "schemars")]
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::catalog::registry::{IntoToolOutput, Prompts, Resources, Tools};
use crate::catalog::spec::{PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec};
use crate::catalog::template::TemplateMatch;
use crate::contract::{PromptOutput, ReaderError, RequestContext, ToolError};

/// [`Tools`] whose handlers receive a clone of `S` first; it converts into [`Tools`].
#[derive(Debug)]
pub struct ToolsWith<S> {
    state: S,
    tools: Tools,
}

/// [`Resources`] whose readers receive a clone of `S` first; it converts into [`Resources`].
#[derive(Debug)]
pub struct ResourcesWith<S> {
    state: S,
    resources: Resources,
}

/// [`Prompts`] whose renderers receive a clone of `S` first; it converts into [`Prompts`].
#[derive(Debug)]
pub struct PromptsWith<S> {
    state: S,
    prompts: Prompts,
}

impl Tools {
    /// Tools whose handlers each receive a clone of `state`: `|store, args: AddNote, cx| async {..}`.
    pub fn with_state<S: Clone + Send + Sync + 'static>(state: S) -> ToolsWith<S> {
        ToolsWith { state, tools: Tools::new() }
    }
}

impl Resources {
    /// Resources whose readers each receive a clone of `state`.
    pub fn with_state<S: Clone + Send + Sync + 'static>(state: S) -> ResourcesWith<S> {
        ResourcesWith { state, resources: Resources::new() }
    }
}

impl Prompts {
    /// Prompts whose renderers each receive a clone of `state`.
    pub fn with_state<S: Clone + Send + Sync + 'static>(state: S) -> PromptsWith<S> {
        PromptsWith { state, prompts: Prompts::new() }
    }
}

impl<S: Clone + Send + Sync + 'static> ToolsWith<S> {
    /// [`Tools::add`], the handler receiving the state first.
    pub fn add<In, Out, F, Fut>(mut self, spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(S, In, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        In: DeserializeOwned + 'static,
        Out: IntoToolOutput + 'static,
    {
        let state = self.state.clone();
        let named = std::any::type_name::<F>();
        self.tools = self.tools.add_linked(spec, move |args: In, cx| handler(state.clone(), args, cx), named);
        self
    }

    /// [`Tools::add_derived`], the handler receiving the state first.
    #[cfg(feature = "schemars")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
    pub fn add_derived<In, Out, F, Fut>(mut self, spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(S, In, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        In: DeserializeOwned + schemars::JsonSchema + 'static,
        Out: Serialize + schemars::JsonSchema + Send + 'static,
    {
        let state = self.state.clone();
        let named = std::any::type_name::<F>();
        self.tools =
            self.tools.add_derived_linked(spec, move |args: In, cx| handler(state.clone(), args, cx), named);
        self
    }

    /// [`Tools::add_derived_input`], the handler receiving the state first.
    #[cfg(feature = "schemars")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
    pub fn add_derived_input<In, Out, F, Fut>(mut self, spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(S, In, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        In: DeserializeOwned + schemars::JsonSchema + 'static,
        Out: IntoToolOutput + 'static,
    {
        let state = self.state.clone();
        let named = std::any::type_name::<F>();
        let wrapped = move |args: In, cx| handler(state.clone(), args, cx);
        self.tools = self.tools.add_derived_input_linked(spec, wrapped, named);
        self
    }
}

impl<S: Clone + Send + Sync + 'static> ResourcesWith<S> {
    /// [`Resources::add`], the reader receiving the state first.
    pub fn add<F, Fut>(mut self, spec: ResourceSpec, reader: F) -> Self
    where
        F: Fn(S, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ReaderError>> + Send + 'static,
    {
        let state = self.state.clone();
        let named = std::any::type_name::<F>();
        self.resources = self.resources.add_linked(spec, move |cx| reader(state.clone(), cx), named);
        self
    }

    /// [`Resources::template`], the reader receiving the state first.
    pub fn template<F, Fut>(mut self, spec: ResourceTemplateSpec, reader: F) -> Self
    where
        F: Fn(S, TemplateMatch, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ReaderError>> + Send + 'static,
    {
        let state = self.state.clone();
        let named = std::any::type_name::<F>();
        let wrapped = move |found, cx| reader(state.clone(), found, cx);
        self.resources = self.resources.template_linked(spec, wrapped, named);
        self
    }
}

impl<S: Clone + Send + Sync + 'static> PromptsWith<S> {
    /// [`Prompts::add`], the renderer receiving the state first.
    pub fn add<A, F, Fut>(mut self, spec: PromptSpec, render: F) -> Self
    where
        F: Fn(S, A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptOutput, ReaderError>> + Send + 'static,
        A: DeserializeOwned + 'static,
    {
        let state = self.state.clone();
        let named = std::any::type_name::<F>();
        self.prompts =
            self.prompts.add_linked(spec, move |args: A, cx| render(state.clone(), args, cx), named);
        self
    }

    /// [`Prompts::add_derived`], the renderer receiving the state first.
    #[cfg(feature = "schemars")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
    pub fn add_derived<A, F, Fut>(mut self, spec: PromptSpec, render: F) -> Self
    where
        F: Fn(S, A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptOutput, ReaderError>> + Send + 'static,
        A: DeserializeOwned + schemars::JsonSchema + 'static,
    {
        let state = self.state.clone();
        let named = std::any::type_name::<F>();
        let wrapped = move |args: A, cx| render(state.clone(), args, cx);
        self.prompts = self.prompts.add_derived_linked(spec, wrapped, named);
        self
    }
}

impl<S> From<ToolsWith<S>> for Tools {
    fn from(with: ToolsWith<S>) -> Self {
        with.tools
    }
}

impl<S> From<ResourcesWith<S>> for Resources {
    fn from(with: ResourcesWith<S>) -> Self {
        with.resources
    }
}

impl<S> From<PromptsWith<S>> for Prompts {
    fn from(with: PromptsWith<S>) -> Self {
        with.prompts
    }
}
