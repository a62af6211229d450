//! What a refusal asks of the client: the status and the `WWW-Authenticate` challenge of RFC 6750 §3.
//!
//! Threat: a client that is refused without being told how to sign in gives up, or guesses; a
//! challenge built by hand per host gets the quoting, the error codes or the metadata pointer subtly
//! wrong. Each kind of refusal here has one status and one challenge:
//!
//! | kind | status | `WWW-Authenticate` |
//! |---|---|---|
//! | forbidden ([`Refused::because`](crate::Refused::because)) | 403 | none |
//! | unauthenticated | 401 | `Bearer resource_metadata="…"` (+ `scope`) |
//! | invalid token | 401 | `Bearer resource_metadata="…", error="invalid_token"` (+ `scope`) |
//! | insufficient scope | 403 | `Bearer resource_metadata="…", error="insufficient_scope", scope="…"` |
//! | invalid request | 400 | `Bearer resource_metadata="…", error="invalid_request"` |
//! | unavailable | 503, `retry-after: 1` | none |
//!
//! `resource_metadata` (RFC 9728 §5.1) is the URL of the service's [`ProtectedResource`]
//! document, so the pointer and the document cannot disagree; without one it is left out (and a
//! challenge with no parameter left carries `realm="mcp"`: the scheme needs one). The MCP
//! specification requires the pointer, so a host that answers 401 gives a protected resource. No
//! `error_description` is sent: a refusal's reason goes to the log only.
//!
//! [`ProtectedResource`]: crate::ProtectedResource

use http::{HeaderValue, StatusCode};

/// The `realm` of a challenge that would otherwise carry no parameter: a 401 without a protected
/// resource, an error code or a scope.
const FALLBACK_REALM: &str = "mcp";

/// The kind of a host's refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Denial {
    /// 403 without a challenge: the caller is known and may not do this.
    Forbidden,
    /// 401: no usable credential (no `error` code, RFC 6750 §3.1), or `invalid_token`.
    Unauthenticated { invalid_token: bool, scope: Vec<String> },
    /// 403 `insufficient_scope`, naming the scopes the request needs.
    InsufficientScope { scope: Vec<String> },
    /// 400 `invalid_request`: a malformed credential (two of them, one in the query string).
    InvalidRequest,
    /// 503 with `retry-after: 1`: the check itself could not be made (the authorization server is
    /// unreachable); the client should retry, not sign in again.
    Unavailable,
}

impl Denial {
    /// The HTTP status of this refusal.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Denial::Forbidden | Denial::InsufficientScope { .. } => StatusCode::FORBIDDEN,
            Denial::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
            Denial::InvalidRequest => StatusCode::BAD_REQUEST,
            Denial::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The JSON-RPC error message of this refusal (fixed: never the host's reason).
    pub(crate) fn message(&self) -> &'static str {
        match self {
            Denial::Forbidden | Denial::InsufficientScope { .. } => "Forbidden",
            Denial::Unauthenticated { .. } => "Unauthorized",
            Denial::InvalidRequest => "Bad Request",
            Denial::Unavailable => "Server busy; retry later",
        }
    }

    /// The scopes this refusal names, if any.
    pub(crate) fn scope_mut(&mut self) -> Option<&mut Vec<String>> {
        match self {
            Denial::Unauthenticated { scope, .. } | Denial::InsufficientScope { scope } => Some(scope),
            Denial::Forbidden | Denial::InvalidRequest | Denial::Unavailable => None,
        }
    }

    /// The `WWW-Authenticate` value, pointing at `metadata_url` when the service has one; `None` for
    /// a plain 403.
    pub(crate) fn challenge(&self, metadata_url: Option<&str>) -> Option<HeaderValue> {
        let (error, scope) = match self {
            Denial::Forbidden | Denial::Unavailable => return None,
            Denial::Unauthenticated { invalid_token, scope } => {
                (invalid_token.then_some("invalid_token"), scope.as_slice())
            }
            Denial::InsufficientScope { scope } => (Some("insufficient_scope"), scope.as_slice()),
            Denial::InvalidRequest => (Some("invalid_request"), &[][..]),
        };
        let mut params = Vec::with_capacity(3);
        if let Some(url) = metadata_url {
            params.push(format!("resource_metadata=\"{url}\""));
        }
        if let Some(error) = error {
            params.push(format!("error=\"{error}\""));
        }
        let scope = scope_value(scope);
        if !scope.is_empty() {
            params.push(format!("scope=\"{scope}\""));
        }
        // The scheme must be followed by at least one parameter (RFC 6750 §3).
        if params.is_empty() {
            params.push(format!("realm=\"{FALLBACK_REALM}\""));
        }
        let value = format!("Bearer {}", params.join(", "));
        // Every part was checked to be visible ASCII without `"` or `\`, so this cannot fail.
        HeaderValue::from_str(&value).ok()
    }
}

/// Whether `scope` is a scope token (RFC 6749 §3.3: `1*( %x21 / %x23-5B / %x5D-7E )`).
pub(crate) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope.bytes().all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

/// The scope tokens joined by spaces; a value that is not a token is left out and logged (a host
/// bug: it would break the header's quoting).
fn scope_value(scope: &[String]) -> String {
    let mut joined = String::new();
    for token in scope {
        if !is_scope_token(token) {
            tracing::warn!(
                "a refusal named a scope that is not an RFC 6749 scope token; left out of the challenge"
            );
            continue;
        }
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(token);
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";

    fn scopes(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn an_unauthenticated_challenge_names_the_metadata_and_no_error_code() {
        let denial = Denial::Unauthenticated { invalid_token: false, scope: vec![] };
        assert_eq!(denial.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            denial.challenge(Some(URL)).unwrap(),
            format!("Bearer resource_metadata=\"{URL}\"").as_str()
        );
        assert_eq!(denial.challenge(None).unwrap(), "Bearer realm=\"mcp\"");
    }

    #[test]
    fn an_invalid_token_challenge_carries_its_code_and_scope() {
        let denial = Denial::Unauthenticated { invalid_token: true, scope: scopes(&["notes", "files:read"]) };
        let value = denial.challenge(Some(URL)).unwrap();
        assert_eq!(
            value,
            format!(
                "Bearer resource_metadata=\"{URL}\", error=\"invalid_token\", scope=\"notes files:read\""
            )
            .as_str()
        );
    }

    #[test]
    fn insufficient_scope_is_403_with_the_required_scopes() {
        let denial = Denial::InsufficientScope { scope: scopes(&["notes:write"]) };
        assert_eq!(denial.status(), StatusCode::FORBIDDEN);
        let value = denial.challenge(None).unwrap();
        assert_eq!(value, "Bearer error=\"insufficient_scope\", scope=\"notes:write\"");
    }

    #[test]
    fn a_plain_forbidden_has_no_challenge_and_invalid_request_is_400() {
        assert_eq!(Denial::Forbidden.challenge(Some(URL)), None);
        assert_eq!(Denial::InvalidRequest.status(), StatusCode::BAD_REQUEST);
        assert_eq!(Denial::InvalidRequest.challenge(None).unwrap(), "Bearer error=\"invalid_request\"");
        assert_eq!(Denial::Unavailable.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(Denial::Unavailable.challenge(Some(URL)), None);
    }

    #[test]
    fn a_scope_that_would_break_the_quoting_is_left_out() {
        let denial = Denial::InsufficientScope {
            scope: scopes(&["ok", "bad\"quote", "two words", "back\\slash", ""]),
        };
        assert_eq!(denial.challenge(None).unwrap(), "Bearer error=\"insufficient_scope\", scope=\"ok\"");
        assert!(is_scope_token("files:read") && !is_scope_token("é"));
    }
}
