//! Each caller's notes as resources of their own, `notes://note/{id}`, and the changes to them told to
//! their owner alone.
//!
//! The rule this module owns: a caller learns nothing of another caller's notes, by listing, reading
//! or listening. The notes are listed by a [`ResourceSource`] for their owner only, and a uri is
//! accepted (for a read, or a listen's `resourceSubscriptions`) exactly when it is listed for the
//! caller (*listed = accepted*): there is no template, which would accept every `notes://note/…` for
//! everyone. Since ids are numbered per caller (see `store`), alice's `notes://note/3` and bob's are
//! different notes: another caller's note is refused exactly as one that never existed, because the
//! source looks only at the caller's own shelf. A uri is accepted only in the form it is listed in
//! (`notes://note/3`, never `notes://note/03` or `notes://note/%33`).
//!
//! Adding or deleting a note is announced with [`Notifier::to_caller`] keyed by the owner's name (the
//! key `caller_key` gives each listener): the index and the note were updated, and the owner's
//! resources list changed. No other caller's listener is told anything: not even that something
//! changed.

use std::sync::Arc;

use mcp_kernel::notify::{Notifications, Notifier};
use mcp_kernel::resources::{ReadResource, ResourceSource, ResourceSpec};
use mcp_kernel::wire::types::ResourceContents;
use mcp_kernel::{BoxFuture, ReaderError, RequestContext};

use crate::host::{Caller, caller_name};
use crate::store::{Note, Store};

/// The uri of the caller's index of notes (a static resource of the catalog).
pub const INDEX: &str = "notes://index";

/// What every note's uri starts with.
const NOTE_PREFIX: &str = "notes://note/";

/// The one answer to a note deleted between the check that the caller has it and its read.
pub const NO_SUCH_NOTE: &str = "there is no such note";

/// The uri of the caller's note `id`.
pub fn note_uri(id: u64) -> String {
    format!("{NOTE_PREFIX}{id}")
}

/// The id a note's uri names, only in the form [`note_uri`] writes it (decimal, no leading zero).
fn note_id(uri: &str) -> Option<u64> {
    let digits = uri.strip_prefix(NOTE_PREFIX)?;
    let id: u64 = digits.parse().ok()?;
    (id.to_string() == digits).then_some(id)
}

/// `notifications` keyed by the caller's name: a listener is its caller's, so that a change
/// addressed to a caller reaches that caller's listeners only.
pub fn keyed(notifications: Notifications) -> Notifications {
    notifications.caller_key(caller_name)
}

/// Tells `owner`'s listeners, and theirs only, that their note `id` was added or deleted: the index
/// and the note were updated, and their resources list changed.
pub fn announce_change(notifier: &Notifier, owner: &str, id: u64) {
    let owner = notifier.to_caller(owner);
    owner.resource_updated(INDEX);
    owner.resource_updated(&note_uri(id));
    owner.resources_list_changed();
}

/// The caller's notes, listed after the catalog's resources.
pub struct OwnNotes(pub Arc<Store>);

impl ResourceSource for OwnNotes {
    fn list<'a>(
        &'a self,
        cx: &'a RequestContext,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ResourceSpec>, ReaderError>> {
        Box::pin(async move {
            let owner = &cx.caller::<Caller>()?.0;
            // Sorted by uri, bytewise (`notes://note/10` before `notes://note/2`), as a source must be.
            let mut notes: Vec<(String, Note)> =
                self.0.owned_by(owner).into_iter().map(|note| (note_uri(note.id), note)).collect();
            notes.sort_by(|(a, _), (b, _)| a.cmp(b));
            let page = notes.into_iter().filter(|(uri, _)| after.is_none_or(|after| uri.as_str() > after));
            Ok(page.take(limit).map(|(uri, note)| spec(uri, &note)).collect())
        })
    }

    fn contains<'a>(&'a self, cx: &'a RequestContext, uri: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let Ok(owner) = cx.caller::<Caller>() else { return false };
            note_id(uri).is_some_and(|id| self.0.get(&owner.0, id).is_some())
        })
    }
}

/// How a note is listed: its uri, named `note-<id>`, titled by its title.
fn spec(uri: String, note: &Note) -> ResourceSpec {
    ResourceSpec::new(uri, format!("note-{}", note.id)).title(note.title.clone()).mime_type("text/plain")
}

/// Reads a note the source accepted for the caller (the server's resource reader: the catalog's
/// resources have readers of their own).
pub async fn read_note(store: Arc<Store>, read: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    let owner = &read.context.caller::<Caller>()?.0;
    let note = note_id(&read.uri).and_then(|id| store.get(owner, id));
    let note = note.ok_or_else(|| ReaderError::new(NO_SUCH_NOTE))?;
    let text = format!("# {}\n\n{}\n\ntags: {}\n", note.title, note.body, note.tags.join(", "));
    Ok(vec![ResourceContents::text(&read.uri, text).with_mime_type("text/plain")])
}

#[cfg(test)]
mod tests {
    use super::{note_id, note_uri};

    #[test]
    fn a_note_uri_is_accepted_only_as_it_is_listed() {
        assert_eq!(note_id(&note_uri(42)), Some(42));
        for other in
            ["notes://note/042", "notes://note/%34%32", "notes://note/+42", "notes://note/", "notes://index"]
        {
            assert_eq!(note_id(other), None, "{other}");
        }
    }
}
