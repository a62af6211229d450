//! Human names for nodes, read back from their ids (connectome [CA-13], [CJ-3]).
//!
//! An id is its components, each escaped (`%` as `%25`, then `/` as `%2F`) and joined with `/`:
//! `<server>/<tag>/<rest…>`. The name undoes the escaping per component and picks what a person calls
//! the node: a server its name, a tool, prompt or process its name, a resource its URI, a module its
//! Rust path, a function `path::name`, a boundary its name. An id that does not follow the scheme, or
//! whose tag disagrees with the node's kind, is shown as written: nothing is guessed.
//!
//! [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CJ-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use crate::vocab::NodeKind;

/// The longest name a drawing prints, in characters; a longer one keeps its end (the most specific part).
pub const MAX_CHARS: usize = 40;

/// One id component with the [CA-13] escaping undone: `%2F` is `/`, `%25` is `%`; any other `%` stays.
///
/// [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn decode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("2F") {
            out.push('/');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("25") {
            out.push('%');
            rest = tail;
        } else {
            out.push('%');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The decoded components of an id, in order.
pub fn components(id: &str) -> Vec<String> {
    id.split('/').map(decode_component).collect()
}

/// The node kind an id tag names, if it is one of the scheme's tags.
fn tag_kind(tag: &str) -> Option<NodeKind> {
    Some(match tag {
        "server" => NodeKind::Server,
        "tool" => NodeKind::Tool,
        "resource" => NodeKind::Resource,
        "prompt" => NodeKind::Prompt,
        "process" => NodeKind::Process,
        "module" | "boundary" => NodeKind::Module,
        _ => return None,
    })
}

/// The human name of a node with this id and kind (`None`: a diff endpoint no export describes).
pub fn name(id: &str, kind: Option<NodeKind>) -> String {
    let parts = components(id);
    let Some(tag) = parts.get(1) else { return id.to_owned() };
    let Some(tagged) = tag_kind(tag) else { return id.to_owned() };
    if kind.is_some_and(|k| k != tagged) {
        return id.to_owned();
    }
    let named = match (tag.as_str(), parts.as_slice()) {
        ("server", [server, _]) => server.clone(),
        ("tool" | "resource" | "prompt" | "process", [_, _, one]) => one.clone(),
        ("module", [_, _, path]) => path.clone(),
        ("module", [_, _, path, function]) => format!("{path}::{function}"),
        ("boundary", [_, _, _source, group]) => group.clone(),
        _ => return id.to_owned(),
    };
    if named.is_empty() { id.to_owned() } else { named }
}

/// `text` cut to [`MAX_CHARS`] characters: a longer text keeps its last characters after `…`.
pub fn short(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_CHARS {
        return text.to_owned();
    }
    std::iter::once('…').chain(text.chars().skip(count - (MAX_CHARS - 1))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_undoes_the_escaping_in_order() {
        assert_eq!(decode_component("r:%2F%2Fa"), "r://a");
        assert_eq!(decode_component("p%25"), "p%");
        // `%252F` is an escaped `%` followed by `2F`, not a slash.
        assert_eq!(decode_component("a%252Fb"), "a%2Fb");
        assert_eq!(decode_component("50%"), "50%");
        assert_eq!(decode_component("%zz"), "%zz");
    }

    #[test]
    fn short_keeps_the_end() {
        let long = format!("my_crate::{}::run", "deep".repeat(12));
        let s = short(&long);
        assert_eq!(s.chars().count(), MAX_CHARS);
        assert!(s.starts_with('…') && s.ends_with("deep::run"));
        assert_eq!(short("weather://places"), "weather://places");
    }
}
