//! The notes themselves: an in-memory store, each note owned by the caller who added it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Serialize;

/// One note, as `search_notes` returns it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Note {
    /// The note's id.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// Its text.
    pub body: String,
    /// Its tags.
    pub tags: Vec<String>,
}

/// Why a note could not be deleted.
#[derive(Debug, PartialEq, Eq)]
pub enum DeleteRefused {
    /// No note has that id.
    Unknown,
    /// The note belongs to another caller.
    NotYours,
}

/// Every note, with its owner.
#[derive(Default)]
pub struct Store {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    last_id: u64,
    notes: BTreeMap<u64, (String, Note)>,
}

impl Store {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a note for `owner` and returns its id.
    pub fn add(&self, owner: &str, title: String, body: String, tags: Vec<String>) -> u64 {
        let mut inner = self.lock();
        inner.last_id += 1;
        let id = inner.last_id;
        inner.notes.insert(id, (owner.to_owned(), Note { id, title, body, tags }));
        id
    }

    /// `owner`'s notes whose title, body or tags contain `query` (case-insensitive), oldest first.
    pub fn search(&self, owner: &str, query: &str, limit: usize) -> Vec<Note> {
        let query = query.to_lowercase();
        let matches = |note: &Note| {
            note.title.to_lowercase().contains(&query)
                || note.body.to_lowercase().contains(&query)
                || note.tags.iter().any(|tag| tag.to_lowercase().contains(&query))
        };
        self.owned_by(owner).into_iter().filter(matches).take(limit).collect()
    }

    /// Every note of `owner`, oldest first.
    pub fn owned_by(&self, owner: &str) -> Vec<Note> {
        let inner = self.lock();
        inner.notes.values().filter(|(o, _)| o == owner).map(|(_, note)| note.clone()).collect()
    }

    /// `owner`'s note `id`.
    pub fn get(&self, owner: &str, id: u64) -> Option<Note> {
        let inner = self.lock();
        inner.notes.get(&id).filter(|(o, _)| o == owner).map(|(_, note)| note.clone())
    }

    /// Deletes `owner`'s note `id`.
    pub fn delete(&self, owner: &str, id: u64) -> Result<(), DeleteRefused> {
        let mut inner = self.lock();
        match inner.notes.get(&id) {
            None => Err(DeleteRefused::Unknown),
            Some((o, _)) if o != owner => Err(DeleteRefused::NotYours),
            Some(_) => {
                inner.notes.remove(&id);
                Ok(())
            }
        }
    }
}
