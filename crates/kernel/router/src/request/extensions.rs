//! Values a transport attaches to a request for the host: above all the caller's identity.
//!
//! The HTTP transport puts here whatever its `authorize` hook returned (the host's principal type);
//! the stdio transport what the host attached when it started serving. The package never reads them:
//! they pass through, unchanged, to dispatch, the readers, the completer and the list filter, on every
//! path (a plain JSON answer or an SSE stream alike), because they travel inside the request's
//! [`crate::RequestContext`] rather than in a task-local that a stream polled elsewhere would lose.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

/// One stored value, with its type's name for `Debug`.
#[derive(Clone)]
struct Entry {
    type_id: TypeId,
    type_name: &'static str,
    value: Arc<dyn Any + Send + Sync>,
}

/// A typed map holding at most one value per type; cheap to clone (the values are shared).
///
/// ```
/// use mcp_kernel_router::Extensions;
///
/// #[derive(Clone, Debug, PartialEq)]
/// struct Caller(String);
///
/// let mut extensions = Extensions::new();
/// extensions.insert(Caller("alice".into()));
/// assert_eq!(extensions.get::<Caller>(), Some(&Caller("alice".into())));
/// assert_eq!(extensions.get::<u32>(), None);
/// ```
#[derive(Clone, Default)]
pub struct Extensions {
    entries: Option<Arc<Vec<Entry>>>,
}

impl Extensions {
    /// An empty map (allocates nothing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `value`, replacing (and returning) a value of the same type stored before.
    pub fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        let entries = Arc::make_mut(self.entries.get_or_insert_with(Default::default));
        let entry = Entry {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            value: Arc::new(value),
        };
        match entries.iter_mut().find(|e| e.type_id == entry.type_id) {
            Some(slot) => {
                let previous = std::mem::replace(slot, entry);
                previous.value.downcast_ref::<T>().cloned()
            }
            None => {
                entries.push(entry);
                None
            }
        }
    }

    /// The stored value of type `T`, if any.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        let entries = self.entries.as_deref()?;
        let entry = entries.iter().find(|e| e.type_id == TypeId::of::<T>())?;
        entry.value.downcast_ref::<T>()
    }

    /// Whether a value of type `T` is stored.
    pub fn contains<T: Send + Sync + 'static>(&self) -> bool {
        self.get::<T>().is_some()
    }

    /// How many values are stored.
    pub fn len(&self) -> usize {
        self.entries.as_deref().map_or(0, Vec::len)
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds every value of `other`, replacing values of the same types.
    pub fn extend(&mut self, other: Extensions) {
        let Some(theirs) = other.entries else { return };
        if self.entries.is_none() {
            self.entries = Some(theirs);
            return;
        }
        let mine = Arc::make_mut(self.entries.get_or_insert_with(Default::default));
        for entry in theirs.iter() {
            match mine.iter_mut().find(|e| e.type_id == entry.type_id) {
                Some(slot) => *slot = entry.clone(),
                None => mine.push(entry.clone()),
            }
        }
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Type names only: a principal may hold a secret, and `Debug` output ends up in logs.
        let names = self.entries.as_deref().into_iter().flatten().map(|e| e.type_name);
        f.debug_set().entries(names).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_replaces_a_value_of_the_same_type() {
        let mut extensions = Extensions::new();
        assert!(extensions.is_empty());
        assert_eq!(extensions.insert(1_u32), None);
        assert_eq!(extensions.insert(2_u32), Some(1));
        extensions.insert("text");
        assert_eq!(extensions.get::<u32>(), Some(&2));
        assert_eq!(extensions.get::<&str>(), Some(&"text"));
        assert_eq!(extensions.len(), 2);
    }

    #[test]
    fn clones_share_values_and_diverge_on_insert() {
        let mut first = Extensions::new();
        first.insert(String::from("alice"));
        let mut second = first.clone();
        second.insert(String::from("bob"));
        assert_eq!(first.get::<String>().map(String::as_str), Some("alice"));
        assert_eq!(second.get::<String>().map(String::as_str), Some("bob"));
    }

    #[test]
    fn extend_merges_with_the_other_side_winning() {
        let mut mine = Extensions::new();
        mine.insert(1_u8);
        mine.insert(1_u16);
        let mut theirs = Extensions::new();
        theirs.insert(2_u16);
        theirs.insert(2_u32);
        mine.extend(theirs);
        assert_eq!((mine.get::<u8>(), mine.get::<u16>(), mine.get::<u32>()), (Some(&1), Some(&2), Some(&2)));
    }

    #[test]
    fn debug_shows_type_names_never_values() {
        let mut extensions = Extensions::new();
        extensions.insert(String::from("a-secret"));
        let shown = format!("{extensions:?}");
        assert!(shown.contains("String") && !shown.contains("a-secret"), "{shown}");
    }
}
