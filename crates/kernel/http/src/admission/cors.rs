//! CORS for browser clients (the Fetch standard's CORS protocol), from the one origin list.
//!
//! Threat: a grant wider than meant. A browser page may call the endpoint from another origin only
//! when the endpoint says so; a server that grants every origin (or mirrors whatever it is sent)
//! lets any page a user visits drive it with whatever the page holds. The grant here is given only
//! to an origin *listed* in [`AllowedOrigins::List`](crate::AllowedOrigins::List) — the list the
//! Origin check already uses, so the two cannot disagree — and never to
//! [`AllowedOrigins::Any`](crate::AllowedOrigins::Any), which admits requests from any origin but
//! lets no browser page read an answer. No credentials mode is granted
//! (`access-control-allow-credentials` is never sent): cookies are not how MCP authenticates.
//!
//! A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from a listed origin
//! is answered 204 (an empty body whose length is not announced: no `content-length`, which RFC 9110
//! §8.6 forbids on a 204, over HTTP/1.1 or HTTP/2) with:
//!
//! * `access-control-allow-origin`: the origin;
//! * `access-control-allow-methods: POST`;
//! * `access-control-allow-headers`: the headers an MCP request carries — `accept`, `content-type`,
//!   `authorization`, `mcp-protocol-version`, `mcp-method`, `mcp-name` — and each `mcp-param-*`
//!   header the preflight asks for. The `mcp-param-*` names are granted as asked rather than read
//!   from the catalog: a preflight carries no credentials, so answering from the catalog would tell
//!   anyone the annotations of tools a `Visibility` filter hides, and the grant would go stale when a
//!   `LiveServer` is replaced; the request itself still has to pass every header rule;
//! * `access-control-max-age: 600`.
//!
//! With legacy sessions (`LegacyClients::Sessions`) the methods are `GET, POST, DELETE`, the request
//! headers also `mcp-session-id` and `last-event-id`, and `mcp-session-id` is exposed too.
//!
//! A preflight's body, if it declares one, is never read, and never taken for a request: over
//! HTTP/1.x hyper drains a body that arrived with the head and keeps the connection, and closes the
//! connection after the 204 when it has not all arrived (the 204 itself carries no
//! `connection: close`); over HTTP/2 only the stream ends.
//!
//! Every other answer to a request from a listed origin — refusals included, so that a page can read
//! a 401's challenge — carries `access-control-allow-origin` and
//! `access-control-expose-headers: www-authenticate, mcp-protocol-version, retry-after`.
//!
//! Threat: a preflight that costs far more than it should. It is answered before `authorize`, from
//! anyone, so reading what it asks for must cost little whatever it holds: at most 16 KiB of
//! `access-control-request-headers` and 128 names are looked at, each once, with no allocation per
//! name and a hash set (not a scan of the names granted so far) to find a repeated one; past either
//! bound nothing more is granted. A request that needs a name past them fails in the browser, as any
//! request whose headers were not granted does (the grant itself is at most 64 names of 128 bytes,
//! about half the byte bound).
//!
//! `tower-http`'s `CorsLayer` is not used: it would sit outside the service, so a preflight would be
//! answered before the Host check (the DNS-rebinding defence must come first), and its header list
//! is fixed when it is built, which cannot grant `mcp-param-*` names without either listing the
//! catalog (see above) or mirroring every requested header.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_HEADERS,
    ACCESS_CONTROL_REQUEST_METHOD, HeaderValue, ORIGIN, VARY,
};
use http::request::Parts;
use http::{HeaderMap, Method, Response, StatusCode};

use crate::admission::origin::AllowedOrigins;
use crate::response::body::ResponseBody;

/// The request headers every MCP request may carry.
const MCP_REQUEST_HEADERS: &str =
    "accept, content-type, authorization, mcp-protocol-version, mcp-method, mcp-name";

/// The response headers a browser client needs to read.
const EXPOSED: &str = "www-authenticate, mcp-protocol-version, retry-after";

/// With legacy sessions: the methods, the request headers granted beside the MCP ones, and the
/// response headers exposed (a page must read the session id `initialize` mints).
const SESSION_METHODS: &str = "GET, POST, DELETE";
const SESSION_REQUEST_HEADERS: &str = ", mcp-session-id, last-event-id";
const SESSION_EXPOSED: &str = "www-authenticate, mcp-protocol-version, retry-after, mcp-session-id";

/// The prefix of the headers that mirror annotated tool arguments.
const PARAM_PREFIX: &str = "mcp-param-";

/// At most this many `mcp-param-*` names are granted by one preflight.
const MAX_PARAM_HEADERS: usize = 64;

/// A longer requested name is not granted.
const MAX_PARAM_HEADER_BYTES: usize = 128;

/// At most this many bytes of `access-control-request-headers` (its values together) are read: about
/// twice what the longest grant asks for (64 names of 128 bytes and the MCP headers); past it nothing is
/// granted.
const MAX_REQUESTED_BYTES: usize = 16 * 1024;

/// At most this many names of `access-control-request-headers` are looked at (empty ones and names
/// that are not granted included): twice the most `mcp-param-*` names granted; past it nothing is
/// granted.
const MAX_REQUESTED_NAMES: usize = 2 * MAX_PARAM_HEADERS;

/// The request's origin, when it is granted CORS: exactly one `Origin` value, and listed.
pub(crate) fn granted_origin(origins: &AllowedOrigins, headers: &HeaderMap) -> Option<HeaderValue> {
    let AllowedOrigins::List(list) = origins else { return None };
    let mut values = headers.get_all(ORIGIN).iter();
    let origin = values.next()?;
    if values.next().is_some() {
        return None;
    }
    let text = origin.to_str().ok()?;
    list.iter().any(|allowed| allowed == text).then(|| origin.clone())
}

/// Whether the request is a CORS preflight.
pub(crate) fn is_preflight(parts: &Parts) -> bool {
    parts.method == Method::OPTIONS
        && parts.headers.contains_key(ORIGIN)
        && parts.headers.contains_key(ACCESS_CONTROL_REQUEST_METHOD)
}

/// The answer to a preflight from the granted `origin` (`sessions`: the service keeps legacy
/// sessions, and grants their methods and header too).
pub(crate) fn preflight(origin: HeaderValue, parts: &Parts, sessions: bool) -> Response<ResponseBody> {
    let requested = requested_params(parts.headers.get_all(ACCESS_CONTROL_REQUEST_HEADERS));
    let extra: usize = requested.names.iter().map(|name| name.len() + 2).sum();
    let mut allowed = Vec::with_capacity(MCP_REQUEST_HEADERS.len() + extra);
    allowed.extend_from_slice(MCP_REQUEST_HEADERS.as_bytes());
    if sessions {
        allowed.extend_from_slice(SESSION_REQUEST_HEADERS.as_bytes());
    }
    for name in &requested.names {
        allowed.extend_from_slice(b", ");
        allowed.extend_from_slice(name);
    }
    allowed.make_ascii_lowercase();
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    let methods = if sessions { SESSION_METHODS } else { "POST" };
    headers.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(methods));
    // Only visible ASCII went in: token characters, commas and spaces.
    if let Ok(value) = HeaderValue::try_from(allowed) {
        headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, value);
    }
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    headers.append(
        VARY,
        HeaderValue::from_static("origin, access-control-request-method, access-control-request-headers"),
    );
    response
}

/// The `mcp-param-*` names a preflight's `access-control-request-headers` asks for, as far as it
/// is read.
#[derive(Debug, Default)]
struct Requested<'a> {
    /// The distinct names to grant, in the order asked, as sent (at most [`MAX_PARAM_HEADERS`]).
    names: Vec<&'a [u8]>,
    /// How many comma-separated names were looked at (at most [`MAX_REQUESTED_NAMES`]).
    examined: usize,
}

/// Reads the names of `access-control-request-headers` (every value, in order), within the bounds.
///
/// The cost is linear in the bytes read and bounded whatever is sent: at most
/// [`MAX_REQUESTED_BYTES`] bytes and [`MAX_REQUESTED_NAMES`] names are looked at (a name cut by the
/// byte bound is not granted), each once, with nothing allocated per name; a repeated name is found
/// in a hash set of the names granted so far (at most [`MAX_PARAM_HEADERS`]), not by comparing it
/// with each of them.
fn requested_params<'a>(values: impl IntoIterator<Item = &'a HeaderValue>) -> Requested<'a> {
    let mut requested = Requested::default();
    let mut seen: HashSet<Folded<'a>> = HashSet::new();
    let mut budget = MAX_REQUESTED_BYTES;
    for value in values {
        let bytes = value.as_bytes();
        let cut = bytes.len() > budget;
        let window = bytes.get(..budget).unwrap_or(bytes);
        budget -= window.len();
        let mut pieces = window.split(|&byte| byte == b',').peekable();
        while let Some(piece) = pieces.next() {
            if requested.examined == MAX_REQUESTED_NAMES {
                return requested;
            }
            requested.examined += 1;
            if cut && pieces.peek().is_none() {
                // The byte bound fell inside (or at the end of) this name: not granted.
                return requested;
            }
            let name = piece.trim_ascii();
            if !is_param_name(name) {
                continue;
            }
            if requested.names.len() == MAX_PARAM_HEADERS {
                return requested;
            }
            if seen.is_empty() {
                seen.reserve(MAX_PARAM_HEADERS);
                requested.names.reserve(MAX_PARAM_HEADERS);
            }
            if seen.insert(Folded(name)) {
                requested.names.push(name);
            }
        }
        if cut {
            return requested;
        }
    }
    requested
}

/// Whether `name` is an `mcp-param-*` header name that may be granted: the prefix (any case) and
/// something after it, at most [`MAX_PARAM_HEADER_BYTES`] bytes, all token characters (RFC 9110
/// §5.6.2), so that the grant's value is a list of valid names.
fn is_param_name(name: &[u8]) -> bool {
    let prefix = PARAM_PREFIX.as_bytes();
    name.len() > prefix.len()
        && name.len() <= MAX_PARAM_HEADER_BYTES
        && name[..prefix.len()].eq_ignore_ascii_case(prefix)
        && name.iter().all(|&byte| is_token_byte(byte))
}

/// Whether `byte` may appear in a header name: RFC 9110's `tchar`.
fn is_token_byte(byte: u8) -> bool {
    TOKEN_BYTES[usize::from(byte)]
}

/// RFC 9110's `tchar`, by byte: one load per byte of a name.
static TOKEN_BYTES: [bool; 256] = {
    let tchar = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut table = [false; 256];
    let mut i = 0;
    while i < tchar.len() {
        table[tchar[i] as usize] = true;
        i += 1;
    }
    table
};

/// A requested name, compared and hashed without regard to ASCII case.
#[derive(Debug, Clone, Copy)]
struct Folded<'a>(&'a [u8]);

impl PartialEq for Folded<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_ignore_ascii_case(other.0)
    }
}

impl Eq for Folded<'_> {}

impl Hash for Folded<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Each byte with the bit that tells ASCII case apart set, so that names equal without regard
        // to case hash alike (a few others do too, which `eq` tells apart); a granted name is at most
        // `MAX_PARAM_HEADER_BYTES` long, so one write each (a longer one would take several).
        let mut folded = [0u8; MAX_PARAM_HEADER_BYTES];
        state.write_usize(self.0.len());
        for chunk in self.0.chunks(MAX_PARAM_HEADER_BYTES) {
            let folded = &mut folded[..chunk.len()];
            for (to, from) in folded.iter_mut().zip(chunk) {
                *to = from | 0x20;
            }
            state.write(folded);
        }
    }
}

/// Grants the answer to a request from `origin` to the page that sent it (`sessions`: the session id
/// is exposed too).
pub(crate) fn grant(response: &mut Response<ResponseBody>, origin: HeaderValue, sessions: bool) {
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    let exposed = if sessions { SESSION_EXPOSED } else { EXPOSED };
    headers.insert(ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(exposed));
    vary_origin(response);
}

/// Marks an answer as depending on the request's `Origin`.
pub(crate) fn vary_origin(response: &mut Response<ResponseBody>) {
    response.headers_mut().append(VARY, HeaderValue::from_static("origin"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(origins: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for origin in origins {
            headers.append(ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    #[test]
    fn only_one_listed_origin_is_granted() {
        let list = AllowedOrigins::list(["http://app.example"]);
        assert_eq!(granted_origin(&list, &headers(&["http://app.example"])).unwrap(), "http://app.example");
        assert_eq!(granted_origin(&list, &headers(&["http://evil.example"])), None);
        assert_eq!(granted_origin(&list, &headers(&[])), None);
        assert_eq!(granted_origin(&list, &headers(&["http://app.example", "http://app.example"])), None);
        assert_eq!(granted_origin(&AllowedOrigins::any(), &headers(&["http://app.example"])), None);
    }

    #[test]
    fn a_preflight_grants_the_mcp_headers_and_the_requested_param_headers_only() {
        let request = http::Request::options("/mcp")
            .header(ORIGIN, "http://app.example")
            .header(ACCESS_CONTROL_REQUEST_METHOD, "POST")
            .header(ACCESS_CONTROL_REQUEST_HEADERS, "content-type,Mcp-Param-Region, x-other ,mcp-param-")
            .header(ACCESS_CONTROL_REQUEST_HEADERS, "mcp-param-limit")
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        assert!(is_preflight(&parts));
        let response = preflight(HeaderValue::from_static("http://app.example"), &parts, false);
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        let h = response.headers();
        assert_eq!(h[ACCESS_CONTROL_ALLOW_ORIGIN], "http://app.example");
        assert_eq!(h[ACCESS_CONTROL_ALLOW_METHODS], "POST");
        assert_eq!(
            h[ACCESS_CONTROL_ALLOW_HEADERS],
            "accept, content-type, authorization, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region, mcp-param-limit"
        );
        assert!(h.get("access-control-allow-credentials").is_none());
        let sessions = preflight(HeaderValue::from_static("http://app.example"), &parts, true);
        let h = sessions.headers();
        assert_eq!(h[ACCESS_CONTROL_ALLOW_METHODS], "GET, POST, DELETE");
        assert_eq!(
            h[ACCESS_CONTROL_ALLOW_HEADERS],
            "accept, content-type, authorization, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id, mcp-param-region, mcp-param-limit"
        );
    }

    #[test]
    fn a_preflight_grants_a_bounded_number_of_short_distinct_param_headers() {
        let long = format!("mcp-param-{}", "x".repeat(MAX_PARAM_HEADER_BYTES));
        let mut many: Vec<String> = vec![long, "mcp-param-p0".into(), "MCP-PARAM-P0".into()];
        many.extend((0..500).map(|i| format!("mcp-param-p{i}")));
        let request = http::Request::options("/mcp")
            .header(ORIGIN, "http://app.example")
            .header(ACCESS_CONTROL_REQUEST_METHOD, "POST")
            .header(ACCESS_CONTROL_REQUEST_HEADERS, many.join(","))
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        let response = preflight(HeaderValue::from_static("http://app.example"), &parts, false);
        let granted =
            response.headers()[ACCESS_CONTROL_ALLOW_HEADERS].to_str().unwrap().matches("mcp-param-").count();
        assert_eq!(granted, MAX_PARAM_HEADERS);
    }

    fn value(text: &str) -> HeaderValue {
        HeaderValue::from_str(text).unwrap()
    }

    fn names<'a>(requested: &Requested<'a>) -> Vec<&'a str> {
        requested.names.iter().map(|name| std::str::from_utf8(name).unwrap()).collect()
    }

    #[test]
    fn the_parser_looks_at_no_more_than_the_name_bound_and_grants_nothing_past_it() {
        // The last name examined is granted; one more name before it pushes it past the bound.
        let at_bound = format!("{}mcp-param-last", "x,".repeat(MAX_REQUESTED_NAMES - 1));
        let values = [value(&at_bound)];
        let requested = requested_params(&values);
        assert_eq!((names(&requested), requested.examined), (vec!["mcp-param-last"], MAX_REQUESTED_NAMES));

        let past = format!("{}mcp-param-last", ",".repeat(MAX_REQUESTED_NAMES));
        let values = [value(&past)];
        let requested = requested_params(&values);
        assert_eq!((names(&requested), requested.examined), (vec![], MAX_REQUESTED_NAMES));

        // Empty values count as names too: a thousand of them cannot make the loop run longer.
        let mut values = vec![value(""); 1_000];
        values.push(value("mcp-param-last"));
        let requested = requested_params(&values);
        assert_eq!((names(&requested), requested.examined), (vec![], MAX_REQUESTED_NAMES));
    }

    #[test]
    fn the_parser_reads_no_more_than_the_byte_bound_and_grants_no_name_it_cuts() {
        let name = "mcp-param-last";
        let filler = |bytes: usize| format!("x-{},", "a".repeat(bytes - 3));
        // The name ends exactly at the bound (split over two values: the bound is over all of them).
        let first = filler(MAX_REQUESTED_BYTES / 2);
        let second = format!("{}{name}", filler(MAX_REQUESTED_BYTES - first.len() - name.len()));
        let values = [value(&first), value(&second)];
        assert_eq!(first.len() + second.len(), MAX_REQUESTED_BYTES);
        let requested = requested_params(&values);
        // The first value's trailing comma ends an empty name: four in all.
        assert_eq!((names(&requested), requested.examined), (vec![name], 4));

        // One byte more before it: the bound cuts the name, which is not granted.
        let second = format!("{}{name}", filler(MAX_REQUESTED_BYTES - first.len() - name.len() + 1));
        let values = [value(&first), value(&second)];
        assert_eq!(names(&requested_params(&values)), Vec::<&str>::new());

        // Nothing of a value past the bound is looked at.
        let values = [value(&"x".repeat(MAX_REQUESTED_BYTES)), value(name)];
        let requested = requested_params(&values);
        assert_eq!((names(&requested), requested.examined), (vec![], 2));
    }

    #[test]
    fn sixty_thousand_bytes_of_repeated_names_are_read_within_the_bounds_and_granted_once_each() {
        // Issue 30's preflight: 63 distinct names, then the last one repeated up to 60 KB.
        let mut list: String = (0..63).map(|i| format!("mcp-param-p{i},")).collect();
        while list.len() < 60_000 {
            list.push_str("MCP-Param-P62,");
        }
        list.push_str("mcp-param-late");
        let values = [value(&list)];
        let requested = requested_params(&values);
        let expected: Vec<String> = (0..63).map(|i| format!("mcp-param-p{i}")).collect();
        assert_eq!(names(&requested), expected);
        assert_eq!(requested.examined, MAX_REQUESTED_NAMES, "the rest is never looked at");
    }

    #[test]
    fn only_token_names_of_the_prefix_and_at_most_the_length_bound_are_granted() {
        let longest = format!("mcp-param-{}", "y".repeat(MAX_PARAM_HEADER_BYTES - PARAM_PREFIX.len()));
        let longer = format!("{longest}z");
        let list = format!(
            " mcp-param-a ,\tmcp-param-b\t,mcp-param-,mcp-param-c d,mcp-param-\"e\",mcp-param-é,mcp-param-f;g,\
             x-mcp-param-h,{longer},{longest},MCP-PARAM-A,Mcp-Param-i!#$%&'*+-.^_`|~9"
        );
        let values = [HeaderValue::from_bytes(list.as_bytes()).unwrap()];
        let requested = requested_params(&values);
        assert_eq!(
            names(&requested),
            vec!["mcp-param-a", "mcp-param-b", longest.as_str(), "Mcp-Param-i!#$%&'*+-.^_`|~9"]
        );
    }

    #[test]
    fn names_that_differ_in_case_only_are_one_name_to_the_set() {
        use std::collections::hash_map::RandomState;
        use std::hash::BuildHasher;
        let state = RandomState::new();
        let long = "mcp-param-".repeat(30);
        for (a, b) in [("mcp-param-A", "MCP-param-a"), (long.as_str(), &long.to_ascii_uppercase())] {
            assert_eq!(Folded(a.as_bytes()), Folded(b.as_bytes()));
            assert_eq!(state.hash_one(Folded(a.as_bytes())), state.hash_one(Folded(b.as_bytes())));
        }
        assert_ne!(Folded(b"mcp-param-a"), Folded(b"mcp-param-b"));
    }
}
