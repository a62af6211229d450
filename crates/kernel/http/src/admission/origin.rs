//! The Origin check (`protocol.md` [D-3], MCP [S-14]).
//!
//! Threat: DNS rebinding. A page served from an attacker's domain that resolves to 127.0.0.1 can make a
//! browser POST to a local MCP server; the browser sends the page's `Origin`, and the server must refuse
//! it. Every `Origin` value is checked (a request carrying two must have both allowed); an absent
//! `Origin` is admitted, since non-browser clients send none.
//!
//! [D-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [S-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use http::HeaderMap;
use http::header::ORIGIN;

/// Which `Origin` values are admitted. There is no default: a host spells out its choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedOrigins {
    /// Every origin is admitted (the check is skipped).
    Any,
    /// Only these exact origins (for example `http://localhost:4000`).
    List(Vec<String>),
}

impl AllowedOrigins {
    /// Admits every origin: for servers that are not reachable from a browser.
    pub fn any() -> Self {
        AllowedOrigins::Any
    }

    /// Admits exactly these origins, compared as exact strings.
    pub fn list<I, S>(origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        AllowedOrigins::List(origins.into_iter().map(Into::into).collect())
    }
}

impl AllowedOrigins {
    /// The origins of pages served from this machine on `port`, and from its default port:
    /// `http://localhost`, `http://127.0.0.1`, `http://localhost:{port}` and `http://127.0.0.1:{port}`.
    pub fn loopback(port: u16) -> Self {
        AllowedOrigins::List(vec![
            "http://localhost".to_owned(),
            "http://127.0.0.1".to_owned(),
            format!("http://localhost:{port}"),
            format!("http://127.0.0.1:{port}"),
        ])
    }
}

/// Why an `Origin` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OriginRefusal {
    /// A value is not UTF-8 (403).
    NotUtf8,
    /// A value is not in the list (403).
    NotAllowed,
}

/// Checks every `Origin` value against the allowed origins.
pub(crate) fn check(allowed: &AllowedOrigins, headers: &HeaderMap) -> Result<(), OriginRefusal> {
    let AllowedOrigins::List(list) = allowed else { return Ok(()) };
    for value in headers.get_all(ORIGIN) {
        let text = std::str::from_utf8(value.as_bytes()).map_err(|_| OriginRefusal::NotUtf8)?;
        if !list.iter().any(|allowed| allowed == text) {
            return Err(OriginRefusal::NotAllowed);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn loopback_admits_this_machines_pages_on_the_port_and_the_default_port_only() {
        let origins = AllowedOrigins::loopback(4000);
        let with = |origin: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(ORIGIN, HeaderValue::from_static(origin));
            check(&origins, &headers)
        };
        for admitted in
            ["http://localhost", "http://127.0.0.1", "http://localhost:4000", "http://127.0.0.1:4000"]
        {
            assert_eq!(with(admitted), Ok(()), "{admitted}");
        }
        for refused in
            ["http://localhost:4001", "https://localhost:4000", "http://evil.example", "http://[::1]:4000"]
        {
            assert_eq!(with(refused), Err(OriginRefusal::NotAllowed), "{refused}");
        }
    }

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(ORIGIN, HeaderValue::from_bytes(v).unwrap());
        }
        h
    }

    #[test]
    fn admits_an_absent_origin_and_a_listed_one() {
        let allowed = AllowedOrigins::list(["http://localhost:4000"]);
        assert_eq!(check(&allowed, &headers(&[])), Ok(()));
        assert_eq!(check(&allowed, &headers(&[b"http://localhost:4000"])), Ok(()));
    }

    #[test]
    fn refuses_when_any_value_is_not_listed() {
        let allowed = AllowedOrigins::list(["http://localhost:4000"]);
        let h = headers(&[b"http://localhost:4000", b"http://evil.example"]);
        assert_eq!(check(&allowed, &h), Err(OriginRefusal::NotAllowed));
        assert_eq!(check(&allowed, &headers(&[b"http://localhost:4000/"])), Err(OriginRefusal::NotAllowed));
    }

    #[test]
    fn refuses_a_value_that_is_not_utf8() {
        let allowed = AllowedOrigins::list(["http://localhost"]);
        assert_eq!(check(&allowed, &headers(&[b"http://\xff"])), Err(OriginRefusal::NotUtf8));
    }

    #[test]
    fn any_skips_the_check() {
        assert_eq!(check(&AllowedOrigins::any(), &headers(&[b"http://evil.example"])), Ok(()));
    }
}
