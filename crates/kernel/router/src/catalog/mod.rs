//! The catalog: what a host declares (the specs, the typed registries), how a build checks it and
//! compiles it into the immutable snapshot a server answers from (indexes, compiled schemas, encoded
//! list items, the uri-template index), what the server advertises about itself, which listed
//! items one request may see, and the host's per-caller resource source.

pub(crate) mod advertised;
pub(crate) mod compile;
pub(crate) mod export;
pub(crate) mod registry;
pub(crate) mod snapshot;
pub(crate) mod source;
pub(crate) mod spec;
pub(crate) mod template;
pub(crate) mod template_index;
pub(crate) mod visibility;
