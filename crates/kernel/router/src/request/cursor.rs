//! The opaque keyset cursor of the paginated lists.
//!
//! A cursor is base64url (no padding) over `{"a":"<key>","k":"<kind>","v":1}`: the list it belongs to
//! and the key of the last item served. A page holds the items whose key is strictly greater, so an
//! item present on both pages is never skipped when the list changes in between. Cursors are unsigned:
//! a forged one only names a position. Decoding goes through the bounded reader.
//!
//! `resources/list` has two phases when the host gives a resource source: the catalog's resources,
//! then the caller's own. A cursor into the second names it, `{"a":"<uri>","k":"resources","p":"source","v":1}`;
//! it still names only a position (the source is asked, with the caller's own context, for what follows
//! it), and every other list refuses one as malformed.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

/// The lists a cursor can belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorKind {
    /// `resources/list`, keyed by uri.
    Resources,
    /// `resources/templates/list`, keyed by uri template.
    ResourceTemplates,
    /// `prompts/list`, keyed by name.
    Prompts,
}

impl CursorKind {
    /// The kind's name inside the cursor.
    pub const fn as_str(self) -> &'static str {
        match self {
            CursorKind::Resources => "resources",
            CursorKind::ResourceTemplates => "resource_templates",
            CursorKind::Prompts => "prompts",
        }
    }
}

/// Why a cursor was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorError {
    /// Not a string, not base64url, not the expected JSON, or the wrong version.
    Malformed,
    /// A well-formed cursor of another list.
    WrongKind(CursorKind),
}

impl CursorError {
    /// The "Invalid params: …" detail (never echoes the foreign kind).
    pub fn detail(self) -> String {
        match self {
            CursorError::Malformed => "cursor is malformed".to_owned(),
            CursorError::WrongKind(expected) => {
                format!("cursor belongs to another list, not {}", expected.as_str())
            }
        }
    }
}

/// Where in `resources/list` a position lies: among the catalog's resources, or the source's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The catalog's resources (every list has only this phase).
    Catalog,
    /// The resource source's items, for this caller.
    Source,
}

/// A decoded cursor: its phase and the key of the last item served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Position {
    /// The phase the key lies in.
    pub(crate) phase: Phase,
    /// The key of the last item served.
    pub(crate) key: String,
}

/// The `p` member naming the source phase.
const SOURCE_PHASE: &str = "source";

/// Encodes the position after `uri` among the resource source's items of `resources/list`.
pub(crate) fn encode_source(uri: &str) -> String {
    // Keys in sorted order a, k, p, v, as `encode` writes them.
    let json = format!(
        "{{\"a\":{},\"k\":\"{}\",\"p\":\"{SOURCE_PHASE}\",\"v\":1}}",
        serde_json::to_string(uri).unwrap_or_default(),
        CursorKind::Resources.as_str()
    );
    URL_SAFE_NO_PAD.encode(json.as_bytes())
}

/// Encodes the position after `key` in the list of `kind`.
pub fn encode(kind: CursorKind, key: &str) -> String {
    // Keys in sorted order a, k, v: the same position always gives the same bytes.
    let json = format!(
        "{{\"a\":{},\"k\":\"{}\",\"v\":1}}",
        serde_json::to_string(key).unwrap_or_default(),
        kind.as_str()
    );
    URL_SAFE_NO_PAD.encode(json.as_bytes())
}

/// Decodes a cursor of `kind` into the key it names. An empty string names the start (`None`); a
/// cursor into `resources/list`'s source phase is malformed here.
pub fn decode(kind: CursorKind, cursor: &str) -> Result<Option<String>, CursorError> {
    match decode_position(kind, cursor)? {
        None => Ok(None),
        Some(Position { phase: Phase::Catalog, key }) => Ok(Some(key)),
        Some(Position { phase: Phase::Source, .. }) => Err(CursorError::Malformed),
    }
}

/// Decodes a cursor of `kind` into the position it names, phase included. An empty string names the
/// start (`None`). Only a `resources/list` cursor may name the source phase.
pub(crate) fn decode_position(kind: CursorKind, cursor: &str) -> Result<Option<Position>, CursorError> {
    if cursor.is_empty() {
        return Ok(None);
    }
    let bytes = URL_SAFE_NO_PAD.decode(cursor.as_bytes()).map_err(|_| CursorError::Malformed)?;
    let value = mcp_kernel_wire::reader::read_value(&bytes).map_err(|_| CursorError::Malformed)?;
    let Value::Object(map) = value else { return Err(CursorError::Malformed) };
    let phase = match (map.len(), map.get("p")) {
        (3, None) => Phase::Catalog,
        (4, Some(Value::String(p))) if p == SOURCE_PHASE => Phase::Source,
        _ => return Err(CursorError::Malformed),
    };
    if map.get("v") != Some(&Value::from(1)) {
        return Err(CursorError::Malformed);
    }
    let (Some(Value::String(found)), Some(Value::String(key))) = (map.get("k"), map.get("a")) else {
        return Err(CursorError::Malformed);
    };
    if found != kind.as_str() {
        return Err(CursorError::WrongKind(kind));
    }
    if phase == Phase::Source && kind != CursorKind::Resources {
        return Err(CursorError::Malformed);
    }
    Ok(Some(Position { phase, key: key.clone() }))
}

/// One page of a sorted list: the items after `after`, at most `page_size`, and the next cursor.
pub fn page<'a, T>(
    sorted: &'a [T],
    key_of: impl Fn(&T) -> &str,
    kind: CursorKind,
    after: Option<&str>,
    page_size: usize,
) -> (&'a [T], Option<String>) {
    let start = match after {
        None => 0,
        Some(after) => sorted.partition_point(|item| key_of(item) <= after),
    };
    let end = start.saturating_add(page_size).min(sorted.len());
    let items = &sorted[start..end];
    let next = if end < sorted.len() { items.last().map(|last| encode(kind, key_of(last))) } else { None };
    (items, next)
}

/// Like [`page`], over only the items `shown` admits: a page holds up to `page_size` shown items,
/// and a next cursor is given only when a shown item follows.
pub(crate) fn page_where<'a, T>(
    sorted: &'a [T],
    key_of: impl Fn(&T) -> &str,
    shown: impl Fn(&T) -> bool,
    kind: CursorKind,
    after: Option<&str>,
    page_size: usize,
) -> (Vec<&'a T>, Option<String>) {
    let start = match after {
        None => 0,
        Some(after) => sorted.partition_point(|item| key_of(item) <= after),
    };
    let mut visible = sorted.get(start..).unwrap_or_default().iter().filter(|item| shown(item));
    let items: Vec<&T> = visible.by_ref().take(page_size).collect();
    let more = visible.next().is_some();
    let next = if more { items.last().map(|last| encode(kind, key_of(last))) } else { None };
    (items, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_is_stable() {
        let c = encode(CursorKind::Prompts, "forecast");
        assert_eq!(c, encode(CursorKind::Prompts, "forecast"));
        assert_eq!(decode(CursorKind::Prompts, &c), Ok(Some("forecast".to_owned())));
    }

    #[test]
    fn refuses_a_cursor_of_another_list_without_naming_it() {
        let c = encode(CursorKind::Resources, "a://b");
        let err = decode(CursorKind::Prompts, &c).unwrap_err();
        assert_eq!(err, CursorError::WrongKind(CursorKind::Prompts));
        assert!(!err.detail().contains("resources"));
    }

    #[test]
    fn refuses_malformed_cursors() {
        for bad in ["!!!", "e30", "bnVsbA", &URL_SAFE_NO_PAD.encode(br#"{"a":"x","k":"prompts","v":2}"#)] {
            assert_eq!(decode(CursorKind::Prompts, bad), Err(CursorError::Malformed), "{bad}");
        }
        let dup = URL_SAFE_NO_PAD.encode(br#"{"a":"x","a":"y","k":"prompts","v":1}"#);
        assert_eq!(decode(CursorKind::Prompts, &dup), Err(CursorError::Malformed));
    }

    #[test]
    fn a_source_phase_cursor_names_its_phase_and_only_resources_list_reads_it() {
        let c = encode_source("u://x");
        let at = Position { phase: Phase::Source, key: "u://x".to_owned() };
        assert_eq!(decode_position(CursorKind::Resources, &c), Ok(Some(at)));
        let catalog = Position { phase: Phase::Catalog, key: "u://x".to_owned() };
        let plain = encode(CursorKind::Resources, "u://x");
        assert_eq!(decode_position(CursorKind::Resources, &plain), Ok(Some(catalog)));
        assert_eq!(decode(CursorKind::Resources, &c), Err(CursorError::Malformed));
        assert_eq!(
            decode_position(CursorKind::Prompts, &c),
            Err(CursorError::WrongKind(CursorKind::Prompts)),
            "another list's cursor is refused as today, whatever its phase"
        );
        let prompts_source = URL_SAFE_NO_PAD.encode(br#"{"a":"x","k":"prompts","p":"source","v":1}"#);
        assert_eq!(decode_position(CursorKind::Prompts, &prompts_source), Err(CursorError::Malformed));
        for forged in [
            br#"{"a":"x","k":"resources","p":"other","v":1}"#.as_slice(),
            br#"{"a":"x","k":"resources","p":1,"v":1}"#,
            br#"{"a":"x","k":"resources","q":"source","v":1}"#,
            br#"{"a":"x","k":"resources","p":"source","v":2}"#,
        ] {
            let forged = URL_SAFE_NO_PAD.encode(forged);
            assert_eq!(
                decode_position(CursorKind::Resources, &forged),
                Err(CursorError::Malformed),
                "{forged}"
            );
        }
    }

    #[test]
    fn empty_cursor_names_the_start() {
        assert_eq!(decode(CursorKind::Prompts, ""), Ok(None));
    }

    #[test]
    fn filtered_pages_hold_only_shown_items_and_end_at_the_last_shown() {
        let items = ["a", "b", "c", "d", "e"];
        let odd = |s: &&str| *s != "b" && *s != "d";
        let (p1, next) = page_where(&items, |s| s, odd, CursorKind::Prompts, None, 2);
        assert_eq!(p1, [&"a", &"c"]);
        let after = decode(CursorKind::Prompts, &next.unwrap()).unwrap();
        let (p2, next) = page_where(&items, |s| s, odd, CursorKind::Prompts, after.as_deref(), 2);
        assert_eq!((p2, next), (vec![&"e"], None));
        let (p, next) = page_where(&items, |s| s, |s: &&str| *s == "a", CursorKind::Prompts, None, 1);
        assert_eq!((p, next), (vec![&"a"], None), "no cursor when nothing shown follows");
    }

    #[test]
    fn pages_by_key_not_offset() {
        let items = ["a", "b", "c", "d", "e"];
        let (p1, next) = page(&items, |s| s, CursorKind::Prompts, None, 2);
        assert_eq!(p1, ["a", "b"]);
        let after = decode(CursorKind::Prompts, &next.unwrap()).unwrap();
        // "b" disappears and "ab" appears before the second page is read: nothing present on both is skipped.
        let changed = ["a", "ab", "c", "d", "e"];
        let (p2, _) = page(&changed, |s| s, CursorKind::Prompts, after.as_deref(), 2);
        assert_eq!(p2, ["c", "d"]);
        let (last, next) = page(&items, |s| s, CursorKind::Prompts, Some("c"), 2);
        assert_eq!(last, ["d", "e"]);
        assert_eq!(next, None);
        let (beyond, next) = page(&items, |s| s, CursorKind::Prompts, Some("z"), 2);
        assert!(beyond.is_empty() && next.is_none());
    }
}
