//! The notes themselves: an in-memory store where each caller has a shelf of their own.
//!
//! A note is named by its owner and its id together, and ids are numbered per caller: alice's notes
//! are 1, 2, 3 …, bob's 1, 2 …, whatever the other has done. So every method starts at the caller's
//! own shelf and cannot reach anyone else's note: another caller's note and a note that never existed
//! are the same miss, on every path, by construction (there is no "not yours" case to answer
//! differently, nor to add back by mistake in a new tool), and an id tells its caller nothing but
//! how many notes they have added themselves. Ids are never reused, so a stale id never names a newer
//! note. (A host whose ids are shared between callers, as links, would use unguessable ids instead —
//! 128 random bits — and still answer another caller's note exactly as a missing one.)

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Serialize;

/// One note, as `search_notes` returns it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Note {
    /// The note's id, among its owner's notes.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// Its text.
    pub body: String,
    /// Its tags.
    pub tags: Vec<String>,
}

/// Every caller's notes, each caller's on a shelf of their own.
#[derive(Default)]
pub struct Store {
    shelves: Mutex<HashMap<String, Shelf>>,
}

/// One caller's notes, by id, and the last id given.
#[derive(Default)]
struct Shelf {
    last_id: u64,
    notes: BTreeMap<u64, Note>,
}

impl Store {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Shelf>> {
        self.shelves.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a note for `owner` and returns its id (`owner`'s previous id plus one).
    pub fn add(&self, owner: &str, title: String, body: String, tags: Vec<String>) -> u64 {
        let mut shelves = self.lock();
        let shelf = shelves.entry(owner.to_owned()).or_default();
        shelf.last_id += 1;
        let id = shelf.last_id;
        shelf.notes.insert(id, Note { id, title, body, tags });
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
        let shelves = self.lock();
        shelves.get(owner).map(|shelf| shelf.notes.values().cloned().collect()).unwrap_or_default()
    }

    /// `owner`'s note `id`, if `owner` has one.
    pub fn get(&self, owner: &str, id: u64) -> Option<Note> {
        let shelves = self.lock();
        shelves.get(owner).and_then(|shelf| shelf.notes.get(&id)).cloned()
    }

    /// Deletes `owner`'s note `id` and returns it, if `owner` has one.
    pub fn delete(&self, owner: &str, id: u64) -> Option<Note> {
        let mut shelves = self.lock();
        shelves.get_mut(owner).and_then(|shelf| shelf.notes.remove(&id))
    }
}
