//! Reading a bearer token from a request (RFC 6750 §2.1), for the host's `authorize` hook.
//!
//! Threat: a lenient reader accepts what the specifications refuse — a token in the query string,
//! where it lands in every access log and proxy cache (the MCP specification forbids it); two
//! `Authorization` headers, where a gateway and the server may each read a different one; a
//! scheme other than Bearer read as if it were one. [`bearer_token`] accepts exactly one
//! `Authorization: Bearer <token>` and nothing else, and its errors map onto the refusals RFC 6750 §3.1
//! prescribes (`From<BearerError> for Refused`).

use std::fmt;

use http::header::AUTHORIZATION;
use http::request::Parts;

use crate::auth::hooks::Refused;

/// Why a request carries no usable bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BearerError {
    /// No `Authorization` header: refused 401 without an error code, so the client signs in.
    Missing,
    /// An `Authorization` header with another scheme (`Basic …`): 401, like a missing one.
    NotBearer,
    /// More than one `Authorization` header: 400 `invalid_request`.
    Repeated,
    /// A token in the query string (`access_token=`), with or without a header: 400 `invalid_request`.
    InQuery,
    /// A Bearer credential whose token is empty or not of RFC 6750's `b64token` syntax: 401
    /// `invalid_token`.
    Malformed,
}

impl fmt::Display for BearerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BearerError::Missing => "no Authorization header",
            BearerError::NotBearer => "the Authorization header is not a Bearer credential",
            BearerError::Repeated => "more than one Authorization header",
            BearerError::InQuery => "an access token in the query string",
            BearerError::Malformed => "the bearer token is malformed",
        })
    }
}

impl std::error::Error for BearerError {}

impl From<BearerError> for Refused {
    fn from(error: BearerError) -> Self {
        let reason = error.to_string();
        match error {
            BearerError::Missing | BearerError::NotBearer => Refused::unauthenticated(reason),
            BearerError::Malformed => Refused::invalid_token(reason),
            BearerError::Repeated | BearerError::InQuery => Refused::invalid_request(reason),
        }
    }
}

/// The token of the request's one `Authorization: Bearer <token>` header. The scheme is matched
/// without regard to case (RFC 9110 §11.1); the token must be RFC 6750's `b64token`; a query string
/// with an `access_token` parameter is refused whatever the headers say (MCP: tokens never travel in
/// the URI). The token is returned as sent: verifying it is the host's.
///
/// ```
/// use mcp_kernel_http::{BearerError, bearer_token};
/// let (parts, ()) = http::Request::get("/mcp").header("authorization", "bearer abc.DEF-1~").body(()).unwrap().into_parts();
/// assert_eq!(bearer_token(&parts), Ok("abc.DEF-1~"));
/// let (parts, ()) = http::Request::get("/mcp?access_token=abc").body(()).unwrap().into_parts();
/// assert_eq!(bearer_token(&parts), Err(BearerError::InQuery));
/// ```
pub fn bearer_token(parts: &Parts) -> Result<&str, BearerError> {
    if parts.uri.query().is_some_and(names_access_token) {
        return Err(BearerError::InQuery);
    }
    let mut values = parts.headers.get_all(AUTHORIZATION).iter();
    let value = values.next().ok_or(BearerError::Missing)?;
    if values.next().is_some() {
        return Err(BearerError::Repeated);
    }
    let bytes = value.as_bytes();
    let (scheme, rest) = match bytes.iter().position(|&b| b == b' ') {
        Some(space) => (&bytes[..space], &bytes[space + 1..]),
        None => (bytes, &b""[..]),
    };
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return Err(BearerError::NotBearer);
    }
    let token = std::str::from_utf8(rest).map_err(|_| BearerError::Malformed)?.trim_start_matches(' ');
    if is_b64token(token) { Ok(token) } else { Err(BearerError::Malformed) }
}

/// `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="` (RFC 6750 §2.1).
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty() && body.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// Whether a query string has a parameter named `access_token` (or `access_token[…]`),
/// percent-encoded or not, with `&` or `;` between parameters.
fn names_access_token(query: &str) -> bool {
    query.split(['&', ';']).any(|pair| {
        let name = pair.split_once('=').map_or(pair, |(name, _)| name);
        let name = name.split_once('[').map_or(name, |(name, _)| name);
        let name = name.split_once("%5B").or_else(|| name.split_once("%5b")).map_or(name, |(name, _)| name);
        decoded_eq(name, "access_token")
    })
}

/// Whether `encoded`, percent-decoded (ASCII case ignored), is `expected`.
fn decoded_eq(encoded: &str, expected: &str) -> bool {
    let mut bytes = encoded.bytes();
    let mut want = expected.bytes();
    while let Some(b) = bytes.next() {
        let actual = if b == b'%' {
            let hex = [bytes.next(), bytes.next()];
            let [Some(hi), Some(lo)] = hex else { return false };
            match (char::from(hi).to_digit(16), char::from(lo).to_digit(16)) {
                (Some(hi), Some(lo)) => (hi * 16 + lo) as u8,
                _ => return false,
            }
        } else {
            b
        };
        if want.next().is_none_or(|w| !w.eq_ignore_ascii_case(&actual)) {
            return false;
        }
    }
    want.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    fn parts(uri: &str, authorization: &[&[u8]]) -> Parts {
        let mut request = http::Request::post(uri);
        for value in authorization {
            request = request.header(AUTHORIZATION, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    #[test]
    fn reads_one_bearer_header_with_any_case_of_the_scheme() {
        for (value, token) in [
            (&b"Bearer abc"[..], "abc"),
            (b"bearer abc", "abc"),
            (b"BEARER a-b.c_d~e+f/g==", "a-b.c_d~e+f/g=="),
            (b"Bearer  spaced", "spaced"),
        ] {
            assert_eq!(bearer_token(&parts("/mcp", &[value])), Ok(token));
        }
    }

    #[test]
    fn refuses_what_rfc_6750_does_not_allow() {
        let cases: [(&[&[u8]], BearerError); 9] = [
            (&[], BearerError::Missing),
            (&[b"Basic dXNlcjpwYXNz"], BearerError::NotBearer),
            (&[b"Bearerabc"], BearerError::NotBearer),
            (&[b"Bearer"], BearerError::Malformed),
            (&[b"Bearer "], BearerError::Malformed),
            (&[b"Bearer a b"], BearerError::Malformed),
            (&[b"Bearer \xffabc"], BearerError::Malformed),
            (&[b"Basic \xff"], BearerError::NotBearer),
            (&[b"Bearer a", b"Bearer b"], BearerError::Repeated),
        ];
        for (headers, expected) in cases {
            assert_eq!(bearer_token(&parts("/mcp", headers)), Err(expected), "{headers:?}");
        }
    }

    #[test]
    fn refuses_a_token_in_the_query_string_even_beside_a_header() {
        for uri in [
            "/mcp?access_token=abc",
            "/mcp?x=1&access_token",
            "/mcp?ACCESS%5Ftoken=abc",
            "/mcp?%61ccess_token=a",
        ] {
            assert_eq!(bearer_token(&parts(uri, &[b"Bearer abc"])), Err(BearerError::InQuery), "{uri}");
        }
        for uri in ["/mcp?token=abc", "/mcp?access_tokens=1", "/mcp?x=access_token", "/mcp?%zz=1"] {
            assert_eq!(bearer_token(&parts(uri, &[b"Bearer abc"])), Ok("abc"), "{uri}");
        }
    }

    #[test]
    fn each_error_maps_to_the_refusal_rfc_6750_prescribes() {
        let status = |e: BearerError| Refused::from(e).status();
        assert_eq!(status(BearerError::Missing), StatusCode::UNAUTHORIZED);
        assert_eq!(status(BearerError::NotBearer), StatusCode::UNAUTHORIZED);
        assert_eq!(status(BearerError::Malformed), StatusCode::UNAUTHORIZED);
        assert_eq!(status(BearerError::Repeated), StatusCode::BAD_REQUEST);
        assert_eq!(status(BearerError::InQuery), StatusCode::BAD_REQUEST);
    }
}
