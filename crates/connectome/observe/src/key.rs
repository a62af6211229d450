//! The collector's row key: an edge `(from, to, kind)` between two identities, held as shared strings.
//!
//! Semantics: a key is the *structure* of an [`Identity`] (its tag and components), not its id string.
//! Ids are derived only at snapshot time through [`Identity::id`], the one id function, so the hot path
//! never formats or escapes anything ([CE-3]). A borrowed form, [`KeyRef`], hashes exactly like the owned
//! [`Key`] (`Arc<str>` and `&str` both hash as `str`; the derives list the same fields in the same
//! order), so an existing row is found without allocating; an owned key is built only on first sight.
//!
//! [CE-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::hash::Hash;
use std::sync::Arc;

use connectome_graph::{EdgeKind, GroupSource, Identity};
use papaya::Equivalent;

/// Which [`Identity`] variant an endpoint is (a boundary's source is part of its tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Tag {
    Server,
    Tool,
    Resource,
    Prompt,
    Process,
    Module,
    Fn,
    Application,
    BoundaryModule,
}

/// A borrowed endpoint: the components of an identity, in the order of [`End`]'s fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct EndRef<'a> {
    tag: Tag,
    server: &'a str,
    name: &'a str,
    extra: Option<&'a str>,
}

/// An owned endpoint, kept in the collector's table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct End {
    tag: Tag,
    server: Arc<str>,
    name: Arc<str>,
    extra: Option<Arc<str>>,
}

impl<'a> EndRef<'a> {
    /// A server endpoint.
    pub(crate) fn server(server: &'a str) -> Self {
        EndRef { tag: Tag::Server, server, name: "", extra: None }
    }

    /// A tool endpoint.
    pub(crate) fn tool(server: &'a str, name: &'a str) -> Self {
        EndRef { tag: Tag::Tool, server, name, extra: None }
    }

    /// A module endpoint (a Rust path).
    pub(crate) fn module(server: &'a str, path: &'a str) -> Self {
        EndRef { tag: Tag::Module, server, name: path, extra: None }
    }

    /// The components of `identity`, borrowed.
    pub(crate) fn of(identity: &'a Identity) -> Self {
        let (tag, server, name, extra): (Tag, &str, &str, Option<&str>) = match identity {
            Identity::Server { server } => (Tag::Server, server, "", None),
            Identity::Tool { server, name } => (Tag::Tool, server, name, None),
            Identity::Resource { server, uri } => (Tag::Resource, server, uri, None),
            Identity::Prompt { server, name } => (Tag::Prompt, server, name, None),
            Identity::Process { server, name } => (Tag::Process, server, name, None),
            Identity::Module { server, path } => (Tag::Module, server, path, None),
            Identity::Fn { server, path, name } => (Tag::Fn, server, path, Some(name)),
            Identity::Boundary { server, source: GroupSource::Application, name } => {
                (Tag::Application, server, name, None)
            }
            Identity::Boundary { server, source: GroupSource::BoundaryModule, name } => {
                (Tag::BoundaryModule, server, name, None)
            }
        };
        EndRef { tag, server, name, extra }
    }

    fn matches(&self, end: &End) -> bool {
        self.tag == end.tag
            && self.server == &*end.server
            && self.name == &*end.name
            && self.extra == end.extra.as_deref()
    }

    fn to_owned(self) -> End {
        End {
            tag: self.tag,
            server: Arc::from(self.server),
            name: Arc::from(self.name),
            extra: self.extra.map(Arc::from),
        }
    }
}

impl End {
    /// The identity this endpoint stands for (allocates; snapshot time only).
    pub(crate) fn to_identity(&self) -> Identity {
        let server = self.server.to_string();
        let name = self.name.to_string();
        match self.tag {
            Tag::Server => Identity::Server { server },
            Tag::Tool => Identity::Tool { server, name },
            Tag::Resource => Identity::Resource { server, uri: name },
            Tag::Prompt => Identity::Prompt { server, name },
            Tag::Process => Identity::Process { server, name },
            Tag::Module => Identity::Module { server, path: name },
            Tag::Fn => {
                Identity::Fn { server, path: name, name: self.extra.as_deref().unwrap_or("").to_owned() }
            }
            Tag::Application => Identity::Boundary { server, source: GroupSource::Application, name },
            Tag::BoundaryModule => Identity::Boundary { server, source: GroupSource::BoundaryModule, name },
        }
    }
}

/// A borrowed row key; found in the table without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct KeyRef<'a> {
    pub(crate) from: EndRef<'a>,
    pub(crate) to: EndRef<'a>,
    pub(crate) kind: EdgeKind,
}

/// An owned row key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub(crate) from: End,
    pub(crate) to: End,
    pub(crate) kind: EdgeKind,
}

impl KeyRef<'_> {
    /// The owned key (the cold path: first sight of an edge).
    pub(crate) fn to_owned(self) -> Key {
        Key { from: self.from.to_owned(), to: self.to.to_owned(), kind: self.kind }
    }
}

impl Equivalent<Key> for KeyRef<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        self.kind == key.kind && self.from.matches(&key.from) && self.to.matches(&key.to)
    }
}

#[cfg(test)]
mod tests {
    use std::hash::{BuildHasher, RandomState};

    use super::*;

    fn identities() -> Vec<Identity> {
        let s = || "a/b%".to_owned();
        vec![
            Identity::Server { server: s() },
            Identity::Tool { server: s(), name: "t".into() },
            Identity::Resource { server: s(), uri: "r://x".into() },
            Identity::Prompt { server: s(), name: "p".into() },
            Identity::Process { server: s(), name: "w".into() },
            Identity::Module { server: s(), path: "c::m".into() },
            Identity::Fn { server: s(), path: "c::m".into(), name: "run".into() },
            Identity::Boundary { server: s(), source: GroupSource::Application, name: "c".into() },
            Identity::Boundary { server: s(), source: GroupSource::BoundaryModule, name: "c::m".into() },
        ]
    }

    #[test]
    fn a_borrowed_key_hashes_and_compares_like_its_owned_key() {
        let hasher = RandomState::new();
        let ids = identities();
        for from in &ids {
            for to in &ids {
                let borrowed = KeyRef { from: EndRef::of(from), to: EndRef::of(to), kind: EdgeKind::Invoke };
                let owned = borrowed.to_owned();
                assert_eq!(hasher.hash_one(borrowed), hasher.hash_one(&owned));
                assert!(borrowed.equivalent(&owned));
                let other = KeyRef { kind: EdgeKind::Read, ..borrowed };
                assert!(!other.equivalent(&owned));
            }
        }
    }

    #[test]
    fn an_endpoint_round_trips_to_its_identity() {
        for identity in identities() {
            assert_eq!(EndRef::of(&identity).to_owned().to_identity(), identity);
        }
        assert_eq!(EndRef::server("s"), EndRef::of(&Identity::Server { server: "s".into() }));
        let tool = Identity::Tool { server: "s".into(), name: "t".into() };
        assert_eq!(EndRef::tool("s", "t"), EndRef::of(&tool));
        let module = Identity::Module { server: "s".into(), path: "c::m".into() };
        assert_eq!(EndRef::module("s", "c::m"), EndRef::of(&module));
    }

    #[test]
    fn distinct_identities_never_share_a_key() {
        let ids = identities();
        for (i, a) in ids.iter().enumerate() {
            for b in &ids[i + 1..] {
                assert_ne!(EndRef::of(a), EndRef::of(b));
            }
        }
    }
}
