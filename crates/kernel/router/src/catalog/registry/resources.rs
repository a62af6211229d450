//! [`Resources`]: resources and uri templates declared with their readers.

use std::future::Future;
use std::sync::Arc;

use mcp_kernel_wire::types::ResourceContents;

use crate::catalog::spec::{ResourceEntry, ResourceSpec, ResourceTemplateSpec};
use crate::catalog::template::TemplateMatch;
use crate::contract::{BoxFuture, ReadResource, ReaderError, RequestContext, ResourceReader};

/// Resources and templates, each declared with its reader: the uri or uri template is written once.
///
/// ```
/// use mcp_kernel_router::resources::{Resources, ResourceSpec, ResourceTemplateSpec};
/// use mcp_kernel_router::{Listing, ReaderError, Server};
/// use mcp_kernel_router::wire::types::ResourceContents;
///
/// let resources = Resources::new()
///     .add(ResourceSpec::new("notes://index", "index"), |_cx| async move {
///         Ok::<_, ReaderError>(vec![ResourceContents::text("notes://index", "1\tfirst")])
///     })
///     .template(ResourceTemplateSpec::new("notes://note/{id}", "note"), |found, _cx| async move {
///         let id: u64 = found.parse("id")?;
///         Ok(vec![ResourceContents::text(found.uri(), format!("note {id}"))])
///     });
/// let server = Server::builder(Listing::new()).resources(resources).build().expect("valid");
/// # let _ = server;
/// ```
#[derive(Default)]
pub struct Resources {
    entries: Vec<Registered>,
}

/// One registered resource or template with its reader and, when registered typed, the reader's type
/// name (`std::any::type_name`, the catalog export's `handler`).
pub(crate) type Registered = (ResourceEntry, Arc<dyn ResourceReader>, Option<&'static str>);

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = self.entries.iter().map(|(entry, _, _)| match entry {
            ResourceEntry::Resource(spec) => spec.uri(),
            ResourceEntry::Template(spec) => spec.uri_template(),
        });
        f.debug_list().entries(names).finish()
    }
}

/// A concrete resource's reader behind the `ResourceReader` the snapshot calls.
struct Fixed<F>(F);

impl<F, Fut> ResourceReader for Fixed<F>
where
    F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceContents>, ReaderError>> + Send + 'static,
{
    fn read(&self, request: ReadResource) -> BoxFuture<'static, Result<Vec<ResourceContents>, ReaderError>> {
        // Allocated first, as in `contract.rs` (`Dispatch for F`).
        let boxed: Box<Fut> = Box::write(Box::new_uninit(), (self.0)(request.context));
        Box::into_pin(boxed)
    }
}

/// A template's reader: it receives the match (template, uri, decoded variables).
struct Templated<F>(F);

impl<F, Fut> ResourceReader for Templated<F>
where
    F: Fn(TemplateMatch, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceContents>, ReaderError>> + Send + 'static,
{
    fn read(&self, request: ReadResource) -> BoxFuture<'static, Result<Vec<ResourceContents>, ReaderError>> {
        let ReadResource { uri, template, context } = request;
        let found =
            template.unwrap_or_else(|| TemplateMatch::new(uri.as_str(), Vec::<(String, String)>::new()));
        let boxed: Box<Fut> = Box::write(Box::new_uninit(), (self.0)(found.with_uri(uri), context));
        Box::into_pin(boxed)
    }
}

impl Resources {
    /// No resources yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A concrete resource and its reader.
    pub fn add<F, Fut>(self, spec: ResourceSpec, reader: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ReaderError>> + Send + 'static,
    {
        self.add_linked(spec, reader, std::any::type_name::<F>())
    }

    /// [`Resources::add`], recording `reader_type` as the function that reads the resource.
    pub(crate) fn add_linked<F, Fut>(
        mut self,
        spec: ResourceSpec,
        reader: F,
        reader_type: &'static str,
    ) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ReaderError>> + Send + 'static,
    {
        self.entries.push((ResourceEntry::Resource(spec), Arc::new(Fixed(reader)), Some(reader_type)));
        self
    }

    /// A uri template and its reader, which receives the uri's decoded variables (see
    /// [`TemplateMatch`]); a reader's refusal is answered "resource not found" with its reason.
    pub fn template<F, Fut>(self, spec: ResourceTemplateSpec, reader: F) -> Self
    where
        F: Fn(TemplateMatch, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ReaderError>> + Send + 'static,
    {
        self.template_linked(spec, reader, std::any::type_name::<F>())
    }

    /// [`Resources::template`], recording `reader_type` as the function that reads the template.
    pub(crate) fn template_linked<F, Fut>(
        mut self,
        spec: ResourceTemplateSpec,
        reader: F,
        reader_type: &'static str,
    ) -> Self
    where
        F: Fn(TemplateMatch, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ReaderError>> + Send + 'static,
    {
        self.entries.push((ResourceEntry::Template(spec), Arc::new(Templated(reader)), Some(reader_type)));
        self
    }

    /// A resource or template served by a plain [`ResourceReader`] (it receives the whole request); the
    /// catalog export names no handler for it (`served_by: "untyped"`).
    pub fn add_reader(mut self, entry: impl Into<ResourceEntry>, reader: impl ResourceReader) -> Self {
        self.entries.push((entry.into(), Arc::new(reader), None));
        self
    }

    pub(crate) fn into_entries(self) -> Vec<Registered> {
        self.entries
    }
}
