//! Target `cursor`: the opaque keyset cursor of the paginated lists (`cursor::decode`, `encode`, `page`).
//!
//! Input: the whole input is tried as a cursor of each kind; its first line (lossy UTF-8) is also used as
//! a key, and its lines as a sorted list to page through. Laws: `decode` never panics;
//! `decode(k, encode(k, key)) == Some(key)`, and a cursor of another kind is `WrongKind`; whatever a
//! cursor decodes to re-encodes to a cursor that decodes to the same key; paging from the start with any
//! page size visits every item once, in order, in a bounded number of pages.

use mcp_kernel_router::fuzzing::{CursorError, CursorKind, decode, encode, page};

const KINDS: [CursorKind; 3] = [CursorKind::Resources, CursorKind::ResourceTemplates, CursorKind::Prompts];

/// The most list items a check pages through (bounds the work per input).
const MAX_ITEMS: usize = 64;

/// Checks the cursor laws on `data`; panics when one is broken.
pub fn cursor(data: &[u8]) {
    let text = String::from_utf8_lossy(data);

    // Any text as a cursor: never a panic; a decoded key round-trips; the error never names a foreign kind.
    for kind in KINDS {
        match decode(kind, &text) {
            Ok(None) => assert!(text.is_empty(), "only the empty cursor names the start"),
            Ok(Some(key)) => {
                let again = encode(kind, &key);
                assert_eq!(decode(kind, &again), Ok(Some(key)), "a decoded key does not round-trip");
            }
            Err(CursorError::Malformed) => {}
            Err(CursorError::WrongKind(expected)) => {
                assert_eq!(expected, kind);
                for other in KINDS.into_iter().filter(|&other| other != kind) {
                    assert!(!CursorError::WrongKind(expected).detail().contains(other.as_str()));
                }
            }
        }
    }

    // The input's first line as a key: decode(encode(key)) == key, and kinds never mix.
    let key = text.lines().next().unwrap_or_default();
    for kind in KINDS {
        let cursor = encode(kind, key);
        assert!(cursor.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "not base64url");
        assert_eq!(encode(kind, key), cursor, "encode is not deterministic");
        assert_eq!(decode(kind, &cursor), Ok(Some(key.to_owned())), "decode(encode(key)) != key");
        for other in KINDS.into_iter().filter(|&other| other != kind) {
            assert_eq!(decode(other, &cursor), Err(CursorError::WrongKind(other)));
        }
    }

    // The lines as a sorted list: paging covers it exactly once, cursor by cursor.
    let mut items: Vec<&str> = text.lines().take(MAX_ITEMS).collect();
    items.sort_unstable();
    items.dedup();
    let page_size = usize::from(data.first().copied().unwrap_or(0) % 8) + 1;
    for kind in KINDS {
        let mut seen: Vec<&str> = Vec::with_capacity(items.len());
        let mut after: Option<String> = None;
        for _ in 0..=items.len() {
            let (served, next) = page(&items, |item| item, kind, after.as_deref(), page_size);
            assert!(served.len() <= page_size, "a page longer than the page size");
            if let Some(after) = &after {
                assert!(served.iter().all(|item| *item > after.as_str()), "a page repeats an earlier item");
            }
            seen.extend_from_slice(served);
            match next {
                None => break,
                Some(next) => {
                    let decoded = decode(kind, &next).expect("a page's next cursor decodes");
                    assert_eq!(decoded.as_deref(), served.last().copied(), "next names the last item served");
                    after = decoded;
                }
            }
        }
        assert_eq!(seen, items, "paging did not visit every item once, in order");
    }
}
