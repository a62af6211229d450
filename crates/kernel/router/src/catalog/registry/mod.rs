//! Typed registration: a tool, resource, template or prompt declared together with the function that
//! serves it, so that its name (or uri, or uri template) is written once.
//!
//! A registry is both a part of the catalog and its dispatch: `Server::builder(Listing::new())
//! .tools(tools)` lists every registered tool after the catalog's own and routes each call straight
//! to its handler, with no `match` on the name. Nothing is checked less than for a hand-listed item:
//! the specs go through the same build-time compilation and refusals, arguments are validated
//! against the advertised schema before the handler's types see them, and what a handler returns is
//! checked against its declared output schema. With the `schemars` feature, `Tools::add_derived`
//! derives both schemas from the handler's types and `Prompts::add_derived` the prompt's arguments.

mod decode;
#[cfg(feature = "schemars")]
mod derive;
pub(crate) mod prompts;
pub(crate) mod resources;
mod state;
pub(crate) mod tools;

pub use prompts::Prompts;
pub use resources::Resources;
pub use state::{PromptsWith, ResourcesWith, ToolsWith};
pub use tools::{IntoToolOutput, Json, Tools};
