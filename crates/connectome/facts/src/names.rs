//! From a symbol to an item path: demangling (`rustc-demangle`, v0 and legacy) and folding.
//!
//! Folding rules (docs/connectome-facts.md):
//! - generic arguments are dropped (`a::f::<u32>` and `a::f::<u8>` are `a::f`);
//! - a `{…}` segment (`{closure#0}`, `{async_fn_body#0}`, `{shim:vtable#0}`, …) and everything after it
//!   fold into the enclosing item;
//! - an impl method `<T>::m` or `<T as Trait>::m` is `<module of T>::T.m`: its module is the module of
//!   the self type, its last segment `T.m`. When the self type is not a plain path (`&T`, `[T]`, a
//!   tuple), or the trait is in scope and the self type is not, the trait stands in for the type
//!   (`<u32 as a::Tr>::m` is `a::Tr.m`). With neither, the self type's shape stands (`<[u32]>::iter`
//!   is `[_].iter`, `<str>::len` is `str.len`).
//! - a method of a closure type (`<a::f::{closure#0} as FnOnce<()>>::call_once`) folds into the
//!   closure's enclosing item (`a::f`), and a `Fn`/`FnMut`/`FnOnce` (or `AsyncFn…`) method of a fn item
//!   (`<a::leaf as FnMut<(u32,)>>::call_mut`, the shim that calls it) folds into the fn item (`a::leaf`).

use std::collections::BTreeSet;

/// The demangled name of `symbol` in the alternate form (no hashes), if it is a Rust symbol.
pub(crate) fn demangle(symbol: &str) -> Option<String> {
    rustc_demangle::try_demangle(symbol).ok().map(|d| format!("{d:#}"))
}

/// The crate an item path belongs to: its first segment.
pub(crate) fn crate_of(path: &str) -> &str {
    let end = path.find("::").unwrap_or(path.len());
    let head = &path[..end];
    head.find('.').map_or(head, |dot| &head[..dot])
}

/// The item a demangled name folds into, given the crates in scope.
pub(crate) fn item(demangled: &str, scope: &BTreeSet<String>) -> String {
    let segments = split(demangled, "::");
    let mut out = String::new();
    let mut method_next = false;
    for (i, segment) in segments.iter().enumerate() {
        if segment.starts_with('{') {
            break;
        }
        if let Some(inner) = segment.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
            let qualified = if i == 0 {
                Some(qualified(inner, " as ", false))
            } else {
                inner.strip_prefix("impl ").map(|inner| qualified(inner, " for ", true))
            };
            let Some((self_ty, trait_)) = qualified else { continue }; // generic arguments
            match owner(self_ty, trait_, scope) {
                Owner::Closure(path) => return path,
                Owner::Type(path) => {
                    out = path;
                    method_next = true;
                }
            }
            continue;
        }
        let plain = segment.find('<').map_or(*segment, |lt| &segment[..lt]);
        if out.is_empty() {
            out.push_str(plain);
        } else {
            out.push_str(if method_next { "." } else { "::" });
            out.push_str(plain);
            method_next = false;
        }
    }
    if out.is_empty() { demangled.to_owned() } else { out }
}

/// `S as T` (or, for a legacy `impl T for S`, with `swapped`) split into self type and trait.
fn qualified<'a>(inner: &'a str, separator: &str, swapped: bool) -> (&'a str, Option<&'a str>) {
    match split(inner, separator).as_slice() {
        [first, second] if swapped => (second, Some(first)),
        [first, second] => (first, Some(second)),
        _ => (inner, None),
    }
}

/// Whom an impl method is attributed to.
enum Owner {
    /// The method belongs to a closure type: the closure's enclosing item.
    Closure(String),
    /// The method is `<path>.method`.
    Type(String),
}

fn owner(self_ty: &str, trait_: Option<&str>, scope: &BTreeSet<String>) -> Owner {
    let self_path = plain_path(self_ty.strip_prefix("dyn ").map_or(self_ty, |d| split(d, " + ")[0]));
    let trait_path = trait_.and_then(plain_path);
    // Stable Rust cannot implement the `Fn` traits by hand: an in-scope self type with one is a fn item.
    let fn_trait = trait_path.as_ref().is_some_and(|t| {
        t.path.starts_with("core::ops::")
            && t.path.rsplit("::").next().is_some_and(|name| {
                matches!(name, "Fn" | "FnMut" | "FnOnce" | "AsyncFn" | "AsyncFnMut" | "AsyncFnOnce")
            })
    });
    match (self_path, trait_path) {
        (Some(PlainPath { path, closure: true }), _) => Owner::Closure(path),
        (Some(s), Some(_)) if fn_trait && scope.contains(crate_of(&s.path)) => Owner::Closure(s.path),
        (Some(s), Some(t)) if scope.contains(crate_of(&t.path)) && !scope.contains(crate_of(&s.path)) => {
            Owner::Type(t.path)
        }
        (Some(s), _) => Owner::Type(s.path),
        (None, Some(t)) => Owner::Type(t.path),
        (None, None) => Owner::Type(shape(self_ty)),
    }
}

/// A self type that is not a path, reduced to its shape so that instantiations fold: `[_]`, `[_; _]`,
/// `&_`, `&mut _`, `*const _`, `*mut _`, `(..)`, `fn`; a primitive (`u32`, `str`) stays as it is.
fn shape(ty: &str) -> String {
    let shape = if let Some(inner) = ty.strip_prefix('[') {
        let inner = inner.strip_suffix(']').unwrap_or(inner);
        if split(inner, ";").len() > 1 { "[_; _]" } else { "[_]" }
    } else if ty.starts_with("&mut ") {
        "&mut _"
    } else if ty.starts_with('&') {
        "&_"
    } else if ty.starts_with("*const ") {
        "*const _"
    } else if ty.starts_with("*mut ") {
        "*mut _"
    } else if ty.starts_with('(') {
        "(..)"
    } else if ty.starts_with("fn(") || ty.starts_with("unsafe ") || ty.starts_with("extern ") {
        "fn"
    } else {
        return ty.find('<').map_or(ty, |lt| &ty[..lt]).to_owned();
    };
    shape.to_owned()
}

/// A type or trait named by a plain path (`a::b::T`, generic arguments dropped).
struct PlainPath {
    path: String,
    /// The path ended in a `{closure#n}` (or other `{…}`) segment, which was dropped.
    closure: bool,
}

/// `text` as a plain path of at least two segments (a crate and a name), if it is one.
fn plain_path(text: &str) -> Option<PlainPath> {
    let mut segments = Vec::new();
    let mut closure = false;
    for (i, segment) in split(text, "::").into_iter().enumerate() {
        if segment.starts_with('{') {
            closure = true;
            break;
        }
        if segment.starts_with('<') {
            if i == 0 {
                return None;
            }
            continue;
        }
        let plain = segment.find('<').map_or(segment, |lt| &segment[..lt]);
        if plain.is_empty() || !plain.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        segments.push(plain);
    }
    (segments.len() >= 2).then(|| PlainPath { path: segments.join("::"), closure })
}

/// `text` split at every `separator` outside brackets (`<>` but not `->`, `()`, `[]`, `{}`).
///
/// The scan compares bytes, so it never slices inside a character: a match begins with the
/// separator's first byte, which begins a character (a UTF-8 leading byte is never a continuation
/// byte), and ends where the separator's last character does. An empty separator splits nothing.
fn split<'a>(text: &'a str, separator: &str) -> Vec<&'a str> {
    if separator.is_empty() {
        return vec![text];
    }
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b'>' | b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ if depth == 0 && bytes[i..].starts_with(separator.as_bytes()) => {
                parts.push(&text[start..i]);
                i += separator.len();
                start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{crate_of, demangle, item, plain_path, qualified, shape, split};

    fn fold(name: &str) -> String {
        let scope: BTreeSet<String> = ["fx".to_owned()].into();
        item(name, &scope)
    }

    #[test]
    fn folds_paths() {
        let cases = [
            ("fx::alpha::run", "fx::alpha::run"),
            ("fx::tools::sum_leaves::{closure#0}", "fx::tools::sum_leaves"),
            ("fx::serve::{closure#0}::{closure#1}", "fx::serve"),
            ("fx::gen::<u32, fn(u8) -> u8>", "fx::gen"),
            ("core::ptr::drop_in_place::<alloc::vec::Vec<u8>>", "core::ptr::drop_in_place"),
            ("core::ptr::drop_in_place<alloc::string::String>", "core::ptr::drop_in_place"),
            ("<fx::beta::English>::word", "fx::beta::English.word"),
            ("<fx::beta::English as fx::Greeter>::greet", "fx::beta::English.greet"),
            ("<fx::beta::English as fx::Greeter>::greet::{shim:vtable#0}", "fx::beta::English.greet"),
            ("<fx::W<alloc::string::String> as core::fmt::Debug>::fmt", "fx::W.fmt"),
            ("<alloc::vec::Vec<u8>>::push", "alloc::vec::Vec.push"),
            ("<alloc::vec::Vec<u8> as fx::Tr>::m", "fx::Tr.m"),
            ("<u32 as fx::Tr>::m::<u8>", "fx::Tr.m"),
            ("<&mut fx::T as core::fmt::Write>::write_str", "core::fmt::Write.write_str"),
            ("<dyn fx::Greeter + core::marker::Send>::hello", "fx::Greeter.hello"),
            ("<fx::f::{closure#0} as core::ops::function::FnOnce<()>>::call_once", "fx::f"),
            ("<fx::alpha::leaf as core::ops::function::FnMut<(u32,)>>::call_mut", "fx::alpha::leaf"),
            ("<fx::g as core::ops::async_function::AsyncFnOnce<()>>::async_call_once", "fx::g"),
            (
                "<alloc::boxed::Box<dyn core::ops::function::Fn(u32) -> u32> as core::ops::function::Fn<(u32,)>>::call",
                "alloc::boxed::Box.call",
            ),
            ("<[u32]>::iter", "[_].iter"),
            ("<[(alloc::sync::Arc<str>, u8)]>::iter", "[_].iter"),
            ("<[u8; 4]>::map::<u16, fn(u8) -> u16>", "[_; _].map"),
            ("<str>::len", "str.len"),
            (
                "<*const _>::offset_from_unsigned::precondition_check",
                "*const _.offset_from_unsigned::precondition_check",
            ),
            ("alloc::string::<impl alloc::string::String>::push_str", "alloc::string::String.push_str"),
            ("fx::a::<impl core::fmt::Display for fx::a::T>::fmt", "fx::a::T.fmt"),
        ];
        for (name, want) in cases {
            assert_eq!(fold(name), want, "{name}");
        }
    }

    #[test]
    fn demangles_v0_and_legacy_without_hashes() {
        assert_eq!(
            demangle("_RNvNtCsjZl5Ww1Rnq1_18connectome_fixture5alpha3run").as_deref(),
            Some("connectome_fixture::alpha::run")
        );
        assert_eq!(
            demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE").as_deref(),
            Some("core::ptr::drop_in_place")
        );
        assert_eq!(demangle("rust_eh_personality"), None);
        assert_eq!(crate_of("fx::beta::English.word"), "fx");
        assert_eq!(crate_of("[_].iter"), "[_]");
        assert_eq!(crate_of("u32.wrapping_add"), "u32");
    }

    // Non-ASCII identifiers (Rust allows them): every scan must step over whole characters.

    #[test]
    fn split_never_cuts_a_character() {
        assert_eq!(split("fx::caf\u{e9}::run", "::"), ["fx", "caf\u{e9}", "run"]);
        assert_eq!(
            split("\u{65e5}\u{672c}::\u{65e5}::\u{672c}", "::"),
            ["\u{65e5}\u{672c}", "\u{65e5}", "\u{672c}"]
        );
        assert_eq!(split("\u{e9}", "::"), ["\u{e9}"]);
        assert_eq!(split("fx::f::<\u{65e5}::T>::g", "::"), ["fx", "f", "<\u{65e5}::T>", "g"]);
        assert_eq!(split("\u{65e5} as \u{672c}", " as "), ["\u{65e5}", "\u{672c}"]);
        assert_eq!(split("[\u{e9}; 2]", ";"), ["[\u{e9}; 2]"]);
        assert_eq!(split("\u{e9}\u{e9}", "\u{e9}"), ["", "", ""]);
        assert_eq!(split("a::b", ""), ["a::b"]);
    }

    #[test]
    fn folds_non_ascii_paths() {
        let cases = [
            ("fx::caf\u{e9}::run", "fx::caf\u{e9}::run"),
            ("fx::\u{65e5}\u{672c}::run::{closure#0}", "fx::\u{65e5}\u{672c}::run"),
            ("fx::caf\u{e9}::gen::<\u{65e5}::T, u8>", "fx::caf\u{e9}::gen"),
            ("<fx::caf\u{e9}::\u{65e5}\u{672c}>::run", "fx::caf\u{e9}::\u{65e5}\u{672c}.run"),
            ("<fx::caf\u{e9}::\u{65e5} as core::fmt::Debug>::fmt", "fx::caf\u{e9}::\u{65e5}.fmt"),
            ("<u32 as fx::caf\u{e9}::Tr>::m", "fx::caf\u{e9}::Tr.m"),
            ("<[fx::\u{65e5}::T; 2]>::map::<u8>", "[_; _].map"),
            ("<[fx::\u{65e5}::T]>::iter", "[_].iter"),
            ("fx::a::<impl core::fmt::Display for fx::caf\u{e9}::T>::fmt", "fx::caf\u{e9}::T.fmt"),
            (
                "<fx::caf\u{e9}::f::{closure#0} as core::ops::function::FnOnce<()>>::call_once",
                "fx::caf\u{e9}::f",
            ),
            ("\u{65e5}\u{672c}", "\u{65e5}\u{672c}"),
        ];
        for (name, want) in cases {
            assert_eq!(fold(name), want, "{name}");
        }
    }

    #[test]
    fn qualified_plain_path_shape_and_crate_of_take_non_ascii() {
        assert_eq!(qualified("\u{65e5}::T as fx::Tr", " as ", false), ("\u{65e5}::T", Some("fx::Tr")));
        assert_eq!(qualified("fx::caf\u{e9}", " as ", false), ("fx::caf\u{e9}", None));
        assert_eq!(qualified("fx::Tr for \u{65e5}::T", " for ", true), ("\u{65e5}::T", Some("fx::Tr")));
        let path = plain_path("fx::\u{65e5}\u{672c}<u8>").expect("a plain path");
        assert_eq!((path.path.as_str(), path.closure), ("fx::\u{65e5}\u{672c}", false));
        let closure = plain_path("fx::caf\u{e9}::{closure#0}").expect("a closure path");
        assert_eq!((closure.path.as_str(), closure.closure), ("fx::caf\u{e9}", true));
        assert!(plain_path("\u{e9}").is_none());
        for (ty, want) in [
            ("[\u{e9}]", "[_]"),
            ("[\u{e9}; 4]", "[_; _]"),
            ("[\u{e9}", "[_]"),
            ("[", "[_]"),
            ("&\u{65e5}", "&_"),
            ("(\u{e9}, u8)", "(..)"),
            ("\u{65e5}<u8>", "\u{65e5}"),
            ("\u{e9}", "\u{e9}"),
        ] {
            assert_eq!(shape(ty), want, "{ty}");
        }
        assert_eq!(crate_of("\u{65e5}\u{672c}::x::f"), "\u{65e5}\u{672c}");
        assert_eq!(crate_of("caf\u{e9}.len"), "caf\u{e9}");
        assert_eq!(crate_of("\u{65e5}"), "\u{65e5}");
    }

    #[test]
    fn demangles_non_ascii_v0_symbols() {
        // From `rustc -C symbol-mangling-version=v0` on
        // `mod café { struct 日本; impl 日本 { fn run } fn run }`.
        assert_eq!(demangle("_RNvNtCsfeZnyFoSiLL_2fxu7caf_dma3run").as_deref(), Some("fx::caf\u{e9}::run"));
        let method = demangle("_RNvMNtCsfeZnyFoSiLL_2fxu7caf_dmaNtB2_u6wgv71a3run").expect("a Rust symbol");
        assert_eq!(method, "<fx::caf\u{e9}::\u{65e5}\u{672c}>::run");
        assert_eq!(fold(&method), "fx::caf\u{e9}::\u{65e5}\u{672c}.run");
    }
}
