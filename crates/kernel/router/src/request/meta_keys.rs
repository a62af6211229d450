//! The key names MCP allows in a `_meta` object a host writes (MCP `basic/index`, "Key name format").
//!
//! A key is an optional prefix (dot-separated labels, then `/`) and a name. A label starts with a
//! letter, ends with a letter or digit, and holds letters, digits and hyphens; a name, unless empty,
//! starts and ends with an ASCII letter or digit and holds those, `-`, `_` and `.`. A prefix whose
//! second label is `modelcontextprotocol` or `mcp` is reserved for MCP itself, so a host may not use it.

/// Why `key` is not a `_meta` key a host may write, or `None` when it is.
pub(crate) fn fault(key: &str) -> Option<&'static str> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let labels: Vec<&str> = prefix.split('.').collect();
        if !labels.iter().all(|label| is_label(label)) {
            return Some("its prefix must be dot-separated labels of letters, digits and hyphens");
        }
        if labels.get(1).is_some_and(|second| matches!(*second, "modelcontextprotocol" | "mcp")) {
            return Some("its prefix is reserved for MCP (the second label is modelcontextprotocol or mcp)");
        }
    }
    if !is_name(name) {
        return Some("its name must start and end with a letter or digit and hold only those, -, _ and .");
    }
    None
}

fn is_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphabetic()
                && last.is_ascii_alphanumeric()
                && bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        }
        _ => false,
    }
}

fn is_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    match (bytes.first(), bytes.last()) {
        (None, _) | (_, None) => true,
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allows_plain_names_and_reverse_dns_prefixes() {
        for key in ["ui", "com.example/ui", "com.example.mcp/tool-kind", "a1/b_c.d-e", "com.example/", "x9"] {
            assert_eq!(fault(key), None, "{key}");
        }
    }

    #[test]
    fn refuses_the_prefixes_mcp_reserves() {
        for key in
            ["io.modelcontextprotocol/x", "dev.mcp/x", "org.modelcontextprotocol.api/x", "com.mcp.tools/x"]
        {
            assert!(fault(key).is_some_and(|why| why.contains("reserved")), "{key}");
        }
    }

    #[test]
    fn refuses_malformed_labels_and_names() {
        for key in [
            "1com.example/x",
            "com.-example/x",
            "com.example-/x",
            "com..example/x",
            "/x",
            "-x",
            "x_",
            "a b",
            "é",
        ] {
            assert!(fault(key).is_some(), "{key}");
        }
    }
}
