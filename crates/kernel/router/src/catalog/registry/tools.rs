//! [`Tools`]: tools declared with their handlers.

use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::catalog::compile::BuildError;
use crate::catalog::registry::decode::arguments_as;
use crate::catalog::spec::ToolSpec;
use crate::contract::{BoxFuture, Dispatch, RequestContext, ToolCall, ToolError, ToolOutput};

/// What a typed tool handler may return on success.
pub trait IntoToolOutput {
    /// The output sent to the caller.
    fn into_tool_output(self) -> Result<ToolOutput, ToolError>;
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(self)
    }
}

impl IntoToolOutput for String {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self))
    }
}

impl IntoToolOutput for &'static str {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self))
    }
}

/// A serializable value sent as `structuredContent` (and as one text block holding its JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolOutput for Json<T> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        ToolOutput::json(&self.0)
    }
}

/// Tools, each declared with its handler: `Tools::new().add(spec, handler)`.
///
/// ```
/// use mcp_kernel_router::{Listing, Mode, Server, ToolError, ToolSpec, Tools};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize)]
/// struct Echo {
///     message: String,
/// }
///
/// let schema = json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]});
/// let tools = Tools::new().add(
///     ToolSpec::new("echo", Mode::ReadOnly).input_schema(schema),
///     |args: Echo, _cx| async move { Ok::<_, ToolError>(args.message) },
/// );
/// let server = Server::builder(Listing::new()).tools(tools).build().expect("a valid catalog");
/// # let _ = server;
/// ```
#[derive(Default)]
pub struct Tools {
    entries: Vec<Registered>,
    faults: Vec<BuildError>,
}

/// One registered tool with its handler and, when registered typed, the handler's type name
/// (`std::any::type_name`, the catalog export's `handler`).
pub(crate) type Registered = (ToolSpec, Arc<dyn Dispatch>, Option<&'static str>);

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|(spec, _, _)| spec.name())).finish()
    }
}

/// A typed handler behind the `Dispatch` the snapshot calls.
struct Typed<F, In, Out> {
    handler: F,
    _types: std::marker::PhantomData<fn(In) -> Out>,
}

impl<F, Fut, In, Out> Dispatch for Typed<F, In, Out>
where
    F: Fn(In, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
    In: DeserializeOwned + 'static,
    Out: IntoToolOutput + 'static,
{
    fn call(&self, call: ToolCall) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let ToolCall { name, arguments, context } = call;
        match arguments_as::<In>(&arguments, "tool") {
            Ok(input) => {
                // Allocated first, as in `contract.rs` (`Dispatch for F`): the handler's future is made
                // after the allocation, so that the optimizer can build it there.
                let output =
                    |outcome: Result<Out, ToolError>| outcome.and_then(IntoToolOutput::into_tool_output);
                let boxed =
                    Box::write(Box::new_uninit(), FutureExt::map((self.handler)(input, context), output));
                Box::into_pin(boxed)
            }
            Err(reason) => {
                let reason = format!("invalid arguments: {reason}");
                let error = ToolError::structured(json!({"tool": &*name, "reason": reason}));
                Box::pin(std::future::ready(Err(error)))
            }
        }
    }
}

impl Tools {
    /// No tools yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tool whose handler takes its arguments as `In` (deserialized after they pass the spec's
    /// input schema) and the request's context. `In` is read from the keys the schema's `properties`
    /// declare, and only those: a key the schema admits without declaring it (through
    /// `additionalProperties`, or with no input schema at all) never reaches the handler, so a map or a
    /// `#[serde(flatten)]` map in `In` stays empty. The schema is the spec's, written by hand; with the
    /// `schemars` feature, `Tools::add_derived` derives it from `In`.
    pub fn add<In, Out, F, Fut>(self, spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(In, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        In: DeserializeOwned + 'static,
        Out: IntoToolOutput + 'static,
    {
        self.add_linked(spec, handler, std::any::type_name::<F>())
    }

    /// [`Tools::add`], recording `handler_type` as the function that serves the tool (the caller's
    /// handler, where `handler` wraps it).
    pub(crate) fn add_linked<In, Out, F, Fut>(
        mut self,
        spec: ToolSpec,
        handler: F,
        handler_type: &'static str,
    ) -> Self
    where
        F: Fn(In, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        In: DeserializeOwned + 'static,
        Out: IntoToolOutput + 'static,
    {
        let typed = Typed { handler, _types: std::marker::PhantomData };
        self.entries.push((spec, Arc::new(typed), Some(handler_type)));
        self
    }

    /// A tool served by a plain [`Dispatch`] function (it receives the whole [`ToolCall`]); the
    /// catalog export names no handler for it (`served_by: "untyped"`).
    pub fn add_dispatch(mut self, spec: ToolSpec, dispatch: impl Dispatch) -> Self {
        self.entries.push((spec, Arc::new(dispatch), None));
        self
    }

    /// The registered specs, in registration order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.entries.iter().map(|(spec, _, _)| spec)
    }

    /// Records a registration fault, returned by `build`.
    #[cfg_attr(not(feature = "schemars"), allow(dead_code))]
    pub(crate) fn refuse(mut self, fault: BuildError) -> Self {
        self.faults.push(fault);
        self
    }

    pub(crate) fn into_parts(self) -> (Vec<Registered>, Vec<BuildError>) {
        (self.entries, self.faults)
    }
}
