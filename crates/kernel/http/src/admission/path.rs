//! The endpoint's one path ([`Builder::path`](crate::Builder::path)): steps 0a (the metadata
//! document beside it) and 1b (every other path) of [`McpService`](crate::McpService)'s table.
//!
//! This is routing, not a defence: a service served bare answers MCP at every path unless its host
//! names one. Named, a request for any other path is answered 404 with no content — nothing of the
//! request repeated, nothing saying what the port serves — once the name and the origin have been
//! checked (step 1b), so that a rebound name is refused 421 and a foreign page 403 at every path
//! alike, and a page cannot tell the endpoint's path from any other. One other path is answered,
//! first (step 0a): with a [`ProtectedResource`](crate::ProtectedResource), its metadata document's
//! ([`ProtectedResource::metadata_path`](crate::ProtectedResource::metadata_path)), so that a client
//! sent a 401 finds the document its challenge names on the same port. The document is public and
//! served to any origin, as [`MetadataService`] serves it under a router.
//!
//! The path is compared byte for byte with the request's (`Uri::path`, its query aside), never
//! decoded or normalised: two readers that normalise one path differently would route it differently.
//! So only a path that clients send exactly as written is admitted ([`check_servable`]): the
//! characters RFC 3986 allows in a path unescaped; `%` escapes in upper case (as clients write them),
//! never of a letter, a digit or `-._~` (a normalising client sends those unescaped, RFC 3986
//! §6.2.2.2); and no `.` or `..` segment, which clients resolve away before they send.

use http::request::Parts;
use http::{Response, StatusCode};

use crate::auth::metadata::MetadataService;
use crate::body::read::close_when_body_unread;
use crate::response::body::ResponseBody;

/// The one path a service answers at, and the metadata document it serves beside it.
pub(crate) struct EndpointPath {
    path: Box<str>,
    /// The protected resource's metadata path and its document, when the host described one.
    metadata: Option<(Box<str>, MetadataService)>,
}

impl std::fmt::Debug for EndpointPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.path)?;
        if let Some((metadata, _)) = &self.metadata {
            write!(f, " (and {metadata})")?;
        }
        Ok(())
    }
}

impl EndpointPath {
    /// `path`, already checked by [`check_servable`], with the metadata document served beside it
    /// (at its path).
    pub(crate) fn new(path: Box<str>, metadata: Option<(Box<str>, MetadataService)>) -> Self {
        Self { path, metadata }
    }

    /// The metadata document's answer, when the request is for it.
    pub(crate) fn metadata(&self, parts: &Parts) -> Option<Response<ResponseBody>> {
        let (at, metadata) = self.metadata.as_ref()?;
        (parts.uri.path() == &**at).then(|| metadata.respond(parts))
    }

    /// Whether the request is for the endpoint's path (its query aside).
    pub(crate) fn serves(&self, parts: &Parts) -> bool {
        parts.uri.path() == &*self.path
    }
}

/// 404 with no content, the answer to a request for another path; its body is not read.
pub(crate) fn not_found(parts: &Parts) -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::NOT_FOUND;
    close_when_body_unread(&mut response, parts);
    response
}

/// Why a path cannot be the endpoint's: no request as clients send it could ever match it.
pub(crate) fn check_servable(path: &str) -> Result<(), &'static str> {
    if !path.starts_with('/') {
        return Err("it must start with `/`");
    }
    let bytes = path.as_bytes();
    for (at, &byte) in bytes.iter().enumerate() {
        match byte {
            b'%' => match bytes.get(at + 1..at + 3).and_then(escaped_byte) {
                None => return Err("a `%` must start an escape in upper-case hex, as clients write it"),
                Some(unreserved) if is_unreserved(unreserved) => {
                    return Err("it escapes a letter, digit or `-._~`, which clients may send unescaped");
                }
                Some(_) => {}
            },
            b'?' => return Err("it must not carry a query"),
            b'#' => return Err("it must not carry a fragment"),
            _ if is_path_char(byte) => {}
            _ => {
                return Err(
                    "it holds a character RFC 3986 does not allow unescaped in a path: write it `%XX`",
                );
            }
        }
    }
    // An escaped dot (`%2E`) is refused above: only literal dot segments are left.
    let dot_segment = |segment: &str| segment == "." || segment == "..";
    if path.split('/').any(dot_segment) {
        return Err(
            "it has a `.` or `..` segment, which clients resolve before they send: write it resolved",
        );
    }
    Ok(())
}

/// A byte RFC 3986 allows unescaped in a path: `/`, unreserved, sub-delims, `:` and `@` (the `%` of
/// an escape is checked apart).
fn is_path_char(byte: u8) -> bool {
    is_unreserved(byte) || b"/!$&'()*+,;=:@".contains(&byte)
}

/// RFC 3986 §2.3: what a normalising client sends unescaped, whichever way it was written.
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~".contains(&byte)
}

/// The byte two upper-case hex digits escape (`None` for anything else).
fn escaped_byte(hex: &[u8]) -> Option<u8> {
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    };
    match hex {
        [high, low] => Some((digit(*high)? << 4) | digit(*low)?),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_clients_send_as_written_is_servable() {
        for path in [
            "/",
            "/mcp",
            "/api/v1/mcp",
            "/a%20b",
            "/a%2Fb",
            "/caf%C3%A9",
            "/mcp;v=1",
            "/~user/mcp:x@y",
            "//mcp",
            "/...",
        ] {
            assert_eq!(check_servable(path), Ok(()), "{path:?}");
        }
    }

    #[test]
    fn a_path_no_request_could_match_is_not_servable() {
        for path in [
            "",
            "mcp",
            "http://host/mcp",
            "/mcp?x=1",
            "/mcp?",
            "/mcp#top",
            "/m cp",
            "/mcp ",
            "/mcpé",
            "/{mcp}",
            "/a\"b",
            "/a\\b",
            "/a%7bb",
            "/m%63p",
            "/a%2Db",
            "/a[b]",
            "/m%zz",
            "/m%4",
            "/a/../mcp",
            "/mcp/.",
            "/a/%2E%2E/mcp",
            "/a/.%2E/mcp",
        ] {
            assert!(check_servable(path).is_err(), "{path:?} was admitted");
        }
    }
}
