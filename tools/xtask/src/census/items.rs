//! The public items of the library code, read from its lines, and the resolution of a Rust path
//! against them (for the README split census).
//!
//! An item is public when its declaration starts with `pub ` (not `pub(crate)`): `pub fn`, `pub async
//! fn`, `pub const fn`, `pub struct`, `pub enum`, `pub trait`, `pub type`, `pub const`, `pub static`,
//! `pub mod`, `pub union`; or when a `pub use` statement (read up to its `;`, across lines) names it as
//! a leaf or `as` alias. A variant is a line at depth one of a `pub enum` body starting with an
//! identifier. A `pub use some_crate as alias` makes `alias` a module standing for that crate.

use std::collections::{BTreeMap, BTreeSet};

use super::Library;
use super::lines::words;

/// Keywords that may sit between `pub` and the item keyword.
const QUALIFIERS: &[&str] = &["async", "const", "unsafe", "extern"];
/// Item keywords whose next word is the item's name.
const ITEM_KEYWORDS: &[&str] = &["fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union"];

/// The public items of the library, by crate (its Rust name, `-` as `_`).
#[derive(Debug, Default)]
pub struct Index {
    /// Crate → public names (declarations, re-export leaves and aliases).
    names: BTreeMap<String, BTreeSet<String>>,
    /// Crate → (alias → crate it stands for), from `pub use other_crate as alias`.
    aliases: BTreeMap<String, BTreeMap<String, String>>,
    /// Enum name → its variants, over every crate.
    variants: BTreeMap<String, BTreeSet<String>>,
}

/// The name a `pub` declaration line declares, if it is one.
fn declared(bare: &str) -> Option<(&'static str, String)> {
    let rest = bare.strip_prefix("pub ")?;
    let words = words(rest);
    let mut iter = words.iter().map(|(_, w)| *w).skip_while(|w| QUALIFIERS.contains(w) || *w == "C");
    let keyword = iter.next()?;
    let keyword = ITEM_KEYWORDS.iter().find(|k| **k == keyword)?;
    iter.next().map(|name| (*keyword, name.to_owned()))
}

/// The names a `pub use` statement exports: leaves and `as` aliases, with the path each stands for.
fn reexports(statement: &str) -> Vec<(String, String)> {
    let body = statement.trim_start_matches("pub use ").trim_end_matches(';');
    let mut out = Vec::new();
    let mut prefix: Vec<String> = Vec::new();
    let mut current = String::new();
    for c in body.chars().chain(std::iter::once(',')) {
        match c {
            '{' => {
                prefix.push(std::mem::take(&mut current));
            }
            ',' | '}' => {
                let leaf = std::mem::take(&mut current);
                let leaf = leaf.trim();
                if !leaf.is_empty() && leaf != "*" {
                    let full = format!("{}{leaf}", prefix.concat());
                    let (path, name) = match full.split_once(" as ") {
                        Some((path, alias)) => (path.trim().to_owned(), alias.trim().to_owned()),
                        None => (full.clone(), full.rsplit("::").next().unwrap_or_default().to_owned()),
                    };
                    if !matches!(name.as_str(), "self" | "_" | "*") {
                        out.push((name, path));
                    }
                }
                if c == '}' {
                    prefix.pop();
                }
            }
            c if c.is_whitespace() && current.is_empty() => {}
            c => current.push(c),
        }
    }
    out
}

impl Index {
    /// Reads the public items of `library`.
    pub fn build(library: &[Library]) -> Index {
        let mut index = Index::default();
        for file in library {
            let krate = file.krate.replace('-', "_");
            let names = index.names.entry(krate.clone()).or_default();
            let mut statement: Option<String> = None;
            let mut enum_body: Option<(String, i64)> = None;
            for line in &file.lines {
                if let Some((name, depth)) = enum_body.as_mut() {
                    if *depth == 1 {
                        let first = words(&line.bare).first().map(|(at, w)| (*at, *w));
                        if let Some((0, w)) =
                            first.filter(|(_, w)| w.starts_with(|c: char| c.is_ascii_uppercase()))
                        {
                            index.variants.entry(name.clone()).or_default().insert(w.to_owned());
                        }
                    }
                    *depth += line.bare.matches('{').count() as i64 - line.bare.matches('}').count() as i64;
                    if *depth <= 0 {
                        enum_body = None;
                    }
                } else if let Some((keyword, name)) = declared(&line.bare) {
                    if keyword == "enum" && line.bare.contains('{') {
                        let depth =
                            line.bare.matches('{').count() as i64 - line.bare.matches('}').count() as i64;
                        if depth > 0 {
                            enum_body = Some((name.clone(), depth));
                        }
                    }
                    names.insert(name);
                }
                if line.bare.starts_with("pub use ") || statement.is_some() {
                    let mut joined = statement.take().unwrap_or_default();
                    joined.push_str(&line.bare);
                    joined.push(' ');
                    if joined.contains(';') {
                        for (name, path) in reexports(joined.trim()) {
                            if !path.contains("::") {
                                index.aliases.entry(krate.clone()).or_default().insert(name.clone(), path);
                            }
                            names.insert(name);
                        }
                    } else {
                        statement = Some(joined);
                    }
                }
            }
        }
        index
    }

    /// Whether any crate declares or re-exports `name` publicly.
    fn anywhere(&self, name: &str) -> bool {
        self.names.values().any(|n| n.contains(name))
    }

    /// Whether `path` (`Name`, `krate::module::item`, `Enum::Variant`) names a public item; the error
    /// says which segment is missing.
    pub fn resolve(&self, path: &str) -> Result<(), String> {
        let segments: Vec<&str> = path.split("::").collect();
        let (first, rest) = segments.split_first().ok_or("an empty path")?;
        if self.names.contains_key(*first) {
            let mut krate = first.to_string();
            let Some((last, middle)) = rest.split_last() else { return Ok(()) };
            for module in middle {
                match self.aliases.get(&krate).and_then(|a| a.get(*module)) {
                    Some(target) if self.names.contains_key(target) => krate = target.clone(),
                    _ if self.names.get(&krate).is_some_and(|n| n.contains(*module)) => {}
                    _ => return Err(format!("no public module `{module}` in `{krate}`")),
                }
            }
            return match self.names.get(&krate).is_some_and(|n| n.contains(*last)) {
                true => Ok(()),
                false => Err(format!("no public `{last}` in `{krate}`")),
            };
        }
        if !self.anywhere(first) {
            return Err(format!("no public item `{first}`"));
        }
        match rest {
            [] => Ok(()),
            [member] if self.variants.get(*first).is_some_and(|v| v.contains(*member)) => Ok(()),
            [member] if self.anywhere(member) => Ok(()),
            _ => Err(format!("no public `{}` under `{first}`", rest.join("::"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-crate sample: a facade re-exporting a transport.
    fn index() -> Index {
        Index::build(&[
            Library::parse(
                "crates/my-facade/src/lib.rs",
                "pub use my_stdio as stdio;\npub use my_router::{\n    Server, ServerBuilder as Builder,\n};\npub(crate) fn hidden() {}\n",
            ),
            Library::parse("crates/my-stdio/src/lib.rs", "pub async fn serve() {}\n"),
            Library::parse(
                "crates/my-router/src/lib.rs",
                "pub struct Server;\npub enum Legacy {\n    /// doc\n    #[default]\n    Refuse,\n    Stateless { x: u8 },\n}\n",
            ),
        ])
    }

    /// Paths resolve through aliases reexports and variants.
    #[test]
    fn paths_resolve_through_aliases_reexports_and_variants() {
        let index = index();
        for path in [
            "Server",
            "Builder",
            "my_facade::stdio::serve",
            "my_facade::Server",
            "Legacy::Stateless",
            "Legacy::Refuse",
            "my_stdio",
        ] {
            assert_eq!(index.resolve(path), Ok(()), "{path}");
        }
        for path in
            ["hidden", "Legacy::Other", "my_facade::http::serve", "my_facade::stdio::connect", "Client"]
        {
            assert!(index.resolve(path).is_err(), "{path}");
        }
    }

    /// Reexport statements are read.
    #[test]
    fn reexport_statements_are_read() {
        let got = reexports("pub use a::{b::C, D as E, self, f::*};");
        assert_eq!(got, [("C".to_owned(), "a::b::C".to_owned()), ("E".to_owned(), "a::D".to_owned())]);
    }
}
