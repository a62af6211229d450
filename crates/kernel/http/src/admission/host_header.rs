//! The `Host` header check (the HTTP header naming the server, not the host application): which names
//! the endpoint answers to (RFC 9110 §7.2, §7.4).
//!
//! Threat: DNS rebinding. A page on `http://evil.example:4000` whose name an attacker re-points at
//! 127.0.0.1 makes the visitor's browser send requests to a local server *as the same origin*:
//! no CORS check stops them, and with [`AllowedOrigins::any`](crate::AllowedOrigins::any) no Origin
//! check either. What the browser cannot hide is the name it connected to: the request's `Host`
//! (`:authority` on HTTP/2) is `evil.example:4000`. The check runs first, before anything else reads
//! the request (only a protected resource's public metadata document, served beside a
//! [`Builder::path`](crate::Builder::path), is answered before it), and the default admits only
//! loopback names, so a server bound to loopback refuses a rebound name with no configuration at all.
//!
//! A request with no name (an HTTP/1.x request without `Host`, absolute-form target or not; an
//! HTTP/2 one without `:authority` or `Host`), with two `Host` headers, with a value that is not a
//! `host[:port]`, or whose `Host` and `:authority` (or absolute-form target) name different
//! authorities (a missing port read as the scheme's default) is malformed: 400 (RFC 9112 §3.2,
//! RFC 9113 §8.3.1; HTTP/1.0 is held to the HTTP/1.1 rule, and a disagreeing absolute-form target,
//! whose `Host` RFC 9112 §3.2.2 would ignore, is refused as a smuggling shape). A well-formed name the server is
//! not configured to answer for is 421 Misdirected Request (RFC 9110 §15.5.20): the request was sent
//! to a server that will not produce an authoritative response for it.

use http::Version;
use http::header::HOST;
use http::request::Parts;

/// Which names (`Host`, `:authority`) the endpoint answers to. Names compare without regard to
/// case; an entry without a port admits the name on any port, an entry with one only on that port
/// (browsers leave a default port out of `Host`: list `mcp.example.com`, not `mcp.example.com:443`).
/// An entry that is not a `host[:port]` admits nothing, and is logged when the service is built.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AllowedHosts {
    /// `localhost`, `127.0.0.1` and `[::1]`, on any port (the default): a server bound to loopback
    /// needs nothing more, and a rebound name is refused.
    #[default]
    Loopback,
    /// Exactly these names (`mcp.example.com`, `mcp.example.com:8443`, `[::1]:4000`); the loopback
    /// names are admitted only if listed.
    List(Vec<String>),
    /// Every name (the check is skipped): only behind a proxy that checks the name itself.
    Any,
}

impl AllowedHosts {
    /// The loopback names, on any port (the default).
    pub fn loopback() -> Self {
        AllowedHosts::Loopback
    }

    /// Exactly these names, each `host` or `host:port`.
    pub fn list<I, S>(hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        AllowedHosts::List(hosts.into_iter().map(Into::into).collect())
    }

    /// Every name: the check is skipped. Spell it out only when a proxy in front validates the name.
    pub fn any() -> Self {
        AllowedHosts::Any
    }

    /// Logs each listed entry that can never match (a URL, a path, a bad port).
    pub(crate) fn warn_unusable(&self) {
        if let AllowedHosts::List(entries) = self {
            for entry in entries.iter().filter(|entry| split(entry).is_none()) {
                tracing::warn!(entry = %entry, "an allowed host is not a host[:port] and admits nothing");
            }
        }
    }

    fn admits(&self, host: &str, port: Option<u16>) -> bool {
        match self {
            AllowedHosts::Any => true,
            AllowedHosts::Loopback => LOOPBACK.iter().any(|name| name.eq_ignore_ascii_case(host)),
            AllowedHosts::List(entries) => entries.iter().any(|entry| match split(entry) {
                Some((name, None)) => name.eq_ignore_ascii_case(host),
                Some((name, Some(want))) => name.eq_ignore_ascii_case(host) && port == Some(want),
                None => false,
            }),
        }
    }
}

const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Why the name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostRefusal {
    /// Missing, repeated, malformed, or `Host` and `:authority` disagree (400).
    Malformed,
    /// A well-formed name the endpoint does not answer to (421).
    NotAllowed,
}

/// Checks the request's name against `allowed`.
pub(crate) fn check(allowed: &AllowedHosts, parts: &Parts) -> Result<(), HostRefusal> {
    if *allowed == AllowedHosts::Any {
        return Ok(());
    }
    let mut hosts = parts.headers.get_all(HOST).iter();
    let header = hosts.next();
    if hosts.next().is_some() {
        return Err(HostRefusal::Malformed);
    }
    let header = match header {
        Some(value) => {
            Some(split(value.to_str().map_err(|_| HostRefusal::Malformed)?).ok_or(HostRefusal::Malformed)?)
        }
        // HTTP/1.x names its target in `Host`, even with an absolute-form target (RFC 9112 §3.2); only
        // HTTP/2 and later may carry `:authority` alone.
        None if parts.version < Version::HTTP_2 => return Err(HostRefusal::Malformed),
        None => None,
    };
    let authority = match parts.uri.authority() {
        Some(authority) => Some(split(authority.as_str()).ok_or(HostRefusal::Malformed)?),
        None => None,
    };
    let default_port = match parts.uri.scheme_str() {
        Some(scheme) if scheme.eq_ignore_ascii_case("https") => Some(443),
        Some(scheme) if scheme.eq_ignore_ascii_case("http") => Some(80),
        _ => None,
    };
    let (host, port) = match (header, authority) {
        // Both name the target: they must name the same one (RFC 9113 §8.3.1; for an HTTP/1.1
        // absolute-form target RFC 9112 §3.2.2 would ignore `Host`, refused here as a smuggling shape).
        (Some(h), Some(a)) if !same(h, a, default_port) => return Err(HostRefusal::Malformed),
        (Some(name), _) | (None, Some(name)) => name,
        (None, None) => return Err(HostRefusal::Malformed),
    };
    if allowed.admits(host, port) { Ok(()) } else { Err(HostRefusal::NotAllowed) }
}

/// Whether two `host[:port]` names are the same authority, a missing port read as `default_port`.
fn same(a: (&str, Option<u16>), b: (&str, Option<u16>), default_port: Option<u16>) -> bool {
    a.0.eq_ignore_ascii_case(b.0) && a.1.or(default_port) == b.1.or(default_port)
}

/// Splits `host[:port]` (RFC 9110 §7.2): a registered name or IPv4 address, or a bracketed IPv6
/// literal, and an optional port from 1 to 65535 (an empty one is none). `None` for anything else,
/// user information included.
pub(crate) fn split(text: &str) -> Option<(&str, Option<u16>)> {
    let (host, rest) = if text.starts_with('[') {
        let end = text.find(']')?;
        let literal = &text[1..end];
        if literal.is_empty() || !literal.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return None;
        }
        (&text[..=end], &text[end + 1..])
    } else {
        let end = text.find(':').unwrap_or(text.len());
        let name = &text[..end];
        // A registered name (RFC 3986 §3.2.2): unreserved, percent-encoded and sub-delimiters.
        let name_ok = name.bytes().all(is_name_byte);
        if name.is_empty() || !name_ok {
            return None;
        }
        (name, &text[end..])
    };
    let port = match rest.strip_prefix(':') {
        None if rest.is_empty() => None,
        None => return None,
        Some("") => None,
        Some(port) if port.bytes().all(|b| b.is_ascii_digit()) => {
            Some(port.parse::<u16>().ok().filter(|&p| p > 0)?)
        }
        Some(_) => return None,
    };
    Some((host, port))
}

/// A byte of a registered name (RFC 3986 §3.2.2): unreserved (letters, digits, `-._~`), `%` of a
/// percent-encoding, and the sub-delimiters `!$&'()*+,;=`.
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'%'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(uri: &str, hosts: &[&[u8]]) -> Parts {
        parts_at(Version::HTTP_11, uri, hosts)
    }

    fn parts_at(version: Version, uri: &str, hosts: &[&[u8]]) -> Parts {
        let mut request = http::Request::post(uri).version(version);
        for host in hosts {
            request = request.header(HOST, *host);
        }
        request.body(()).unwrap().into_parts().0
    }

    #[test]
    fn a_registered_name_is_unreserved_percent_and_sub_delimiter_bytes_only() {
        let allowed: Vec<u8> = (0..=255u8).filter(|&b| is_name_byte(b)).collect();
        let mut expected: Vec<u8> = (b'0'..=b'9').chain(b'A'..=b'Z').chain(b'a'..=b'z').collect();
        expected.extend_from_slice(b"-._~%!$&'()*+,;=");
        expected.sort_unstable();
        assert_eq!(allowed, expected);
    }

    #[test]
    fn the_default_admits_loopback_names_on_any_port_only() {
        let allowed = AllowedHosts::default();
        for host in ["localhost", "localhost:4000", "127.0.0.1:1", "[::1]:4000", "LOCALHOST:80", "127.0.0.1:"]
        {
            assert_eq!(check(&allowed, &parts("/mcp", &[host.as_bytes()])), Ok(()), "{host}");
        }
        for host in
            ["evil.example:4000", "evil.example", "127.0.0.2", "localhost.evil.example", "0.0.0.0:4000"]
        {
            assert_eq!(
                check(&allowed, &parts("/mcp", &[host.as_bytes()])),
                Err(HostRefusal::NotAllowed),
                "{host}"
            );
        }
    }

    #[test]
    fn a_missing_repeated_or_malformed_name_is_malformed() {
        let allowed = AllowedHosts::default();
        let cases: [&[&[u8]]; 9] = [
            &[],
            &[b"localhost", b"localhost"],
            &[b"user@localhost"],
            &[b"localhost:99999"],
            &[b"localhost:4000:1"],
            &[b"[::1"],
            &[b"[zz]"],
            &[b"local host"],
            &[b"\xfflocalhost"],
        ];
        for hosts in cases {
            assert_eq!(check(&allowed, &parts("/mcp", hosts)), Err(HostRefusal::Malformed), "{hosts:?}");
        }
    }

    #[test]
    fn host_and_authority_must_agree() {
        let allowed = AllowedHosts::default();
        let h2 = |uri: &str, hosts: &[&[u8]]| check(&allowed, &parts_at(Version::HTTP_2, uri, hosts));
        assert_eq!(h2("http://localhost:4000/mcp", &[]), Ok(()));
        assert_eq!(h2("http://localhost:4000/mcp", &[b"LocalHost:4000"]), Ok(()));
        assert_eq!(h2("https://localhost/mcp", &[b"localhost:443"]), Ok(()));
        assert_eq!(h2("http://localhost/mcp", &[b"localhost:443"]), Err(HostRefusal::Malformed));
        assert_eq!(h2("http://localhost:4000/mcp", &[b"evil.example:4000"]), Err(HostRefusal::Malformed));
        assert_eq!(h2("http://evil.example/mcp", &[]), Err(HostRefusal::NotAllowed));
        assert_eq!(check(&allowed, &parts("http://localhost:4000/mcp", &[b"localhost:4000"])), Ok(()));
        assert_eq!(
            check(&allowed, &parts("http://localhost:4000/mcp", &[b"evil.example"])),
            Err(HostRefusal::Malformed)
        );
    }

    #[test]
    fn an_http1_request_without_host_is_malformed_even_with_an_absolute_target() {
        let allowed = AllowedHosts::default();
        assert_eq!(check(&allowed, &parts("http://localhost:4000/mcp", &[])), Err(HostRefusal::Malformed));
        assert_eq!(check(&allowed, &parts_at(Version::HTTP_10, "/mcp", &[])), Err(HostRefusal::Malformed));
        assert_eq!(check(&allowed, &parts_at(Version::HTTP_2, "/mcp", &[b"localhost"])), Ok(()));
    }

    #[test]
    fn a_registered_name_with_sub_delimiters_is_well_formed_and_not_allowed() {
        let allowed = AllowedHosts::default();
        for name in [&b"evil%2eexample"[..], b"a!b$c&d'e(f)g*h+i,j;k=l"] {
            assert_eq!(check(&allowed, &parts("/mcp", &[name])), Err(HostRefusal::NotAllowed), "{name:?}");
        }
    }

    #[test]
    fn ports_compare_as_numbers_from_1_to_65535() {
        let allowed = AllowedHosts::list(["api.example.com:8443"]);
        assert_eq!(check(&allowed, &parts("/mcp", &[b"api.example.com:08443"])), Ok(()));
        for bad in [&b"api.example.com:0"[..], b"api.example.com:65536", b"api.example.com:-1"] {
            assert_eq!(check(&allowed, &parts("/mcp", &[bad])), Err(HostRefusal::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn a_list_entry_without_a_port_admits_every_port() {
        let allowed = AllowedHosts::list(["mcp.example.com", "api.example.com:8443", "[::1]:4000"]);
        let check = |host: &str| check(&allowed, &parts("/mcp", &[host.as_bytes()]));
        assert_eq!(check("MCP.example.com:443"), Ok(()));
        assert_eq!(check("mcp.example.com"), Ok(()));
        assert_eq!(check("api.example.com:8443"), Ok(()));
        assert_eq!(check("[::1]:4000"), Ok(()));
        assert_eq!(check("api.example.com"), Err(HostRefusal::NotAllowed));
        assert_eq!(check("api.example.com:443"), Err(HostRefusal::NotAllowed));
        assert_eq!(check("localhost:4000"), Err(HostRefusal::NotAllowed));
    }

    #[test]
    fn any_skips_the_check() {
        assert_eq!(check(&AllowedHosts::any(), &parts("/mcp", &[])), Ok(()));
        assert_eq!(check(&AllowedHosts::any(), &parts("/mcp", &[b"evil.example"])), Ok(()));
    }
}
