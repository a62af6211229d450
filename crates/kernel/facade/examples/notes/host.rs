//! The notes host: three tools, a resource, a template and a prompt, each declared once with the
//! function that serves it. Every call knows its caller ([`Caller`], attached by the transport).

use std::sync::Arc;

use mcp_kernel::prompts::{PromptOutput, PromptSpec, Prompts};
use mcp_kernel::resources::{ResourceSpec, ResourceTemplateSpec, Resources, TemplateMatch};
use mcp_kernel::wire::types::{ContentBlock, PromptMessage, ResourceContents, Role};
use mcp_kernel::{
    BuildError, Listing, Mode, ReaderError, RequestContext, Server, ToolError, ToolSpec, Tools,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::store::{Note, Store};

/// The one answer to an id the caller has no note under: never added, deleted, or another caller's
/// (which the store cannot even see: ids are numbered per caller, see `store`).
const NO_SUCH_NOTE: &str = "there is no such note";

/// Who is calling: a name from `NOTES_TOKENS` over HTTP, `local` over stdio.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller(pub String);

/// The caller the transport attached (every transport of this host attaches one).
fn caller(cx: &RequestContext) -> Result<&str, ToolError> {
    cx.principal::<Caller>().map(|c| c.0.as_str()).ok_or_else(|| ToolError::new("no caller"))
}

#[derive(Deserialize, JsonSchema)]
struct AddNote {
    /// The note's title.
    title: String,
    /// The note's text.
    body: String,
    /// Tags to find the note by.
    tags: Option<Vec<String>>,
}

#[derive(Serialize, JsonSchema)]
struct Added {
    /// The new note's id, among the caller's notes.
    id: u64,
}

#[derive(Deserialize, JsonSchema)]
struct SearchNotes {
    /// Text to look for in titles, bodies and tags.
    query: String,
    /// At most this many notes (default 10).
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u8>,
}

#[derive(Serialize, JsonSchema)]
struct Found {
    /// The matching notes, oldest first.
    notes: Vec<Note>,
}

#[derive(Deserialize, JsonSchema)]
struct DeleteNote {
    /// The id of the note to delete.
    id: u64,
}

#[derive(Serialize, JsonSchema)]
struct Deleted {
    /// The deleted note's id.
    id: u64,
}

#[derive(Deserialize, JsonSchema)]
struct Summarize {
    /// What the notes to summarize are about.
    topic: String,
}

fn tools(store: &Arc<Store>) -> Tools {
    Tools::with_state(Arc::clone(store))
        .add_derived(
            ToolSpec::new("add_note", Mode::Proposal).description("Add a note.").destructive_hint(false),
            |store: Arc<Store>, args: AddNote, cx| async move {
                let id = store.add(caller(&cx)?, args.title, args.body, args.tags.unwrap_or_default());
                Ok(Added { id })
            },
        )
        .add_derived(
            ToolSpec::new("search_notes", Mode::ReadOnly).description("Find your notes that mention a text."),
            |store: Arc<Store>, args: SearchNotes, cx| async move {
                let limit = usize::from(args.limit.unwrap_or(10));
                Ok(Found { notes: store.search(caller(&cx)?, &args.query, limit) })
            },
        )
        .add_derived(
            ToolSpec::new("delete_note", Mode::Proposal).description("Delete one of your notes."),
            |store: Arc<Store>, args: DeleteNote, cx| async move {
                let deleted =
                    store.delete(caller(&cx)?, args.id).ok_or_else(|| ToolError::new(NO_SUCH_NOTE))?;
                Ok(Deleted { id: deleted.id })
            },
        )
        .into()
}

/// The caller, for a reader (whose refusals are `ReaderError`s).
fn reader(cx: &RequestContext) -> Result<&str, ReaderError> {
    caller(cx).map_err(|_| ReaderError::new("no caller"))
}

fn resources(store: &Arc<Store>) -> Resources {
    Resources::with_state(Arc::clone(store))
        .add(
            ResourceSpec::new("notes://index", "index").mime_type("text/plain"),
            |store: Arc<Store>, cx| async move {
                let lines: String = store
                    .owned_by(reader(&cx)?)
                    .iter()
                    .map(|note| format!("{}\t{}\n", note.id, note.title))
                    .collect();
                Ok(vec![ResourceContents::text("notes://index", lines).with_mime_type("text/plain")])
            },
        )
        .template(
            ResourceTemplateSpec::new("notes://note/{id}", "note").mime_type("text/plain"),
            |store: Arc<Store>, found: TemplateMatch, cx| async move {
                let id: u64 = found.parse("id")?;
                let note = store.get(reader(&cx)?, id).ok_or_else(|| ReaderError::new(NO_SUCH_NOTE))?;
                let text = format!("# {}\n\n{}\n\ntags: {}\n", note.title, note.body, note.tags.join(", "));
                Ok(vec![ResourceContents::text(found.uri(), text).with_mime_type("text/plain")])
            },
        )
        .into()
}

fn prompts(store: &Arc<Store>) -> Prompts {
    Prompts::with_state(Arc::clone(store))
        .add_derived(
            PromptSpec::new("summarize").description("Summarize your notes about a topic."),
            |store: Arc<Store>, args: Summarize, cx| async move {
                let notes = store.search(reader(&cx)?, &args.topic, 50);
                let listed: String = notes.iter().map(|n| format!("- {}: {}\n", n.title, n.body)).collect();
                let text = format!("Summarize my notes about {}:\n{listed}", args.topic);
                let message = PromptMessage::new(Role::User, ContentBlock::text(text));
                Ok(PromptOutput { description: None, messages: vec![message] })
            },
        )
        .into()
}

/// The notes server over `store`.
pub fn server(store: &Arc<Store>) -> Result<Server, BuildError> {
    Server::builder(Listing::new())
        .server_name("notes")
        .server_version(env!("CARGO_PKG_VERSION"))
        .tools(tools(store))
        .resources(resources(store))
        .prompts(prompts(store))
        .build()
}
