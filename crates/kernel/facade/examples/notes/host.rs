//! The notes host: four tools, the caller's index, each caller's notes as resources of their own
//! (`own_notes`) and a prompt, each declared once with the function that serves it. Every call knows
//! its caller ([`Caller`], attached by the transport: `cx.caller::<Caller>()?`), and adding or
//! deleting a note is told to that caller's listeners (`subscriptions/listen`) alone. The fourth tool,
//! `export_notes`, is slow: for a client that takes tasks it runs as one, owned by its caller (`export`).

use std::sync::Arc;

use mcp_kernel::notify::{Notifications, Notifier};
use mcp_kernel::prompts::{PromptOutput, PromptSpec, Prompts};
use mcp_kernel::resources::{ReadResource, ResourceSpec, Resources};
use mcp_kernel::tasks::{Tasks, TokioRuntime};
use mcp_kernel::wire::types::{ContentBlock, PromptMessage, ResourceContents, Role};
use mcp_kernel::{BuildError, Listing, Mode, RequestContext, Server, ToolError, ToolSpec, Tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::export::{self, ExportNotes, Pace};
use crate::own_notes::{self, INDEX, NO_SUCH_NOTE, OwnNotes};
use crate::store::{Note, Store};

/// Who is calling: a name from `NOTES_TOKENS` over HTTP, `local` over stdio.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller(pub String);

/// The name of the request's caller: the key of their listeners and the owner of their tasks.
pub fn caller_name(cx: &RequestContext) -> Option<String> {
    cx.principal::<Caller>().map(|caller| caller.0.clone())
}

/// What the tools share: the notes, the notifier their changes are announced through, and how slow
/// an export is.
#[derive(Clone)]
struct Shared {
    store: Arc<Store>,
    notifier: Notifier,
    pace: Pace,
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

fn tools(shared: Shared) -> Tools {
    Tools::with_state(shared)
        .add_derived(
            ToolSpec::new("add_note", Mode::Proposal).description("Add a note.").destructive_hint(false),
            |shared: Shared, args: AddNote, cx| async move {
                let owner = &cx.caller::<Caller>()?.0;
                let id = shared.store.add(owner, args.title, args.body, args.tags.unwrap_or_default());
                own_notes::announce_change(&shared.notifier, owner, id);
                Ok(Added { id })
            },
        )
        .add_derived(
            ToolSpec::new("search_notes", Mode::ReadOnly).description("Find your notes that mention a text."),
            |shared: Shared, args: SearchNotes, cx| async move {
                let limit = usize::from(args.limit.unwrap_or(10));
                Ok(Found { notes: shared.store.search(&cx.caller::<Caller>()?.0, &args.query, limit) })
            },
        )
        .add_derived(
            ToolSpec::new("delete_note", Mode::Proposal).description("Delete one of your notes."),
            |shared: Shared, args: DeleteNote, cx| async move {
                let owner = &cx.caller::<Caller>()?.0;
                let deleted =
                    shared.store.delete(owner, args.id).ok_or_else(|| ToolError::new(NO_SUCH_NOTE))?;
                own_notes::announce_change(&shared.notifier, owner, deleted.id);
                Ok(Deleted { id: deleted.id })
            },
        )
        .add_derived_input(export::spec(), |shared: Shared, args: ExportNotes, cx| async move {
            export::export(&shared.store, shared.pace, args, cx).await
        })
        .into()
}

/// The catalog's one resource: the caller's index, one `id<TAB>title` line per note. The notes
/// themselves are the caller's own resources (`own_notes`), not the catalog's.
fn resources(store: &Arc<Store>) -> Resources {
    Resources::with_state(Arc::clone(store))
        .add(ResourceSpec::new(INDEX, "index").mime_type("text/plain"), |store: Arc<Store>, cx| async move {
            let lines: String = store
                .owned_by(&cx.caller::<Caller>()?.0)
                .iter()
                .map(|note| format!("{}\t{}\n", note.id, note.title))
                .collect();
            Ok(vec![ResourceContents::text(INDEX, lines).with_mime_type("text/plain")])
        })
        .into()
}

fn prompts(store: &Arc<Store>) -> Prompts {
    Prompts::with_state(Arc::clone(store))
        .add_derived(
            PromptSpec::new("summarize").description("Summarize your notes about a topic."),
            |store: Arc<Store>, args: Summarize, cx| async move {
                let notes = store.search(&cx.caller::<Caller>()?.0, &args.topic, 50);
                let listed: String = notes.iter().map(|n| format!("- {}: {}\n", n.title, n.body)).collect();
                let text = format!("Summarize my notes about {}:\n{listed}", args.topic);
                let message = PromptMessage::new(Role::User, ContentBlock::text(text));
                Ok(PromptOutput { description: None, messages: vec![message] })
            },
        )
        .into()
}

/// The notes server over `store`, with notifications keyed by caller, and tasks owned by their caller
/// for `export_notes` (as slow as `pace` says).
#[cfg(test)]
pub fn server(store: &Arc<Store>, pace: Pace) -> Result<Server, BuildError> {
    server_sharing(store, pace, Sharing::InProcess)
}

/// Where the server's change notifications and tasks live.
pub enum Sharing {
    /// In this process (the default): one instance.
    InProcess,
    /// In the Redis every instance uses (`NOTES_REDIS_URL`): a listen on one instance hears a change
    /// made through another, and a task created through one is read through any. The notes
    /// themselves stay in each instance's memory.
    #[cfg(feature = "redis")]
    Redis(mcp_kernel::redis::Redis),
}

/// The notes server, its notifications and tasks kept as `sharing` says.
pub fn server_sharing(store: &Arc<Store>, pace: Pace, sharing: Sharing) -> Result<Server, BuildError> {
    let (notifications, tasks) = match sharing {
        Sharing::InProcess => (Notifications::in_process(), Tasks::in_process(TokioRuntime)),
        #[cfg(feature = "redis")]
        Sharing::Redis(redis) => {
            (Notifications::with_hub(redis.change_hub()), Tasks::with_store(redis.task_store(), TokioRuntime))
        }
    };
    let notifications = own_notes::keyed(notifications);
    let shared = Shared { store: Arc::clone(store), notifier: notifications.notifier(), pace };
    let reader_store = Arc::clone(store);
    Server::builder(Listing::new())
        .server_name("notes")
        .server_version(env!("CARGO_PKG_VERSION"))
        .tools(tools(shared))
        .resources(resources(store))
        .resource_source(OwnNotes(Arc::clone(store)))
        .resource_reader(move |read: ReadResource| own_notes::read_note(Arc::clone(&reader_store), read))
        .prompts(prompts(store))
        .notifications(notifications)
        // Tasks run on tokio, each owned by its caller: another caller's task is answered as one that
        // does not exist.
        .tasks(tasks.threshold(pace.threshold).owner(caller_name))
        .build()
}
