//! The OAuth protected resource's description (OAuth 2.0 Protected Resource Metadata, RFC 9728; the
//! endpoint as a resource server, not an MCP resource): what the endpoint serves at its well-known
//! URL, what its 401s point at, and which audience its tokens name.
//!
//! Threat: a client that cannot find the authorization server cannot sign in; one that is pointed at
//! a document whose `resource` differs from the endpoint refuses it (RFC 9728 §3.3); a server that
//! accepts a token issued for another resource lets that resource's tokens be replayed here (the
//! MCP rule against token passthrough). One value describes the resource, and the metadata document,
//! its URL, the `resource_metadata` of every challenge and the audience check all derive from it.
//!
//! The package holds no key, verifies no token and runs no authorization server: the host's
//! `authorize` hook decides, with [`crate::bearer_token`] and [`ProtectedResource::is_audience`] as
//! helpers.

use std::fmt;
use std::sync::Arc;

use http::Uri;
use serde_json::{Map, Value};

use crate::auth::metadata::MetadataService;

/// The path prefix RFC 9728 §3 registers.
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// A resource identifier this package will not describe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidResource {
    reason: &'static str,
    of: &'static str,
}

impl fmt::Display for InvalidResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid identifier of {}: {}", self.of, self.reason)
    }
}

impl std::error::Error for InvalidResource {}

fn invalid(reason: &'static str) -> InvalidResource {
    InvalidResource { reason, of: "the protected resource" }
}

/// The endpoint as an OAuth protected resource: its identifier (the MCP endpoint's canonical URL),
/// the authorization servers that issue its tokens, and the rest of its RFC 9728 metadata.
///
/// ```
/// use mcp_kernel_http::ProtectedResource;
/// let resource = ProtectedResource::new("https://mcp.example.com/mcp", ["https://auth.example.com"])?
///     .scopes_supported(["notes"]);
/// assert_eq!(resource.metadata_path(), "/.well-known/oauth-protected-resource/mcp");
/// assert_eq!(
///     resource.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// # Ok::<(), mcp_kernel_http::InvalidResource>(())
/// ```
///
/// Given to [`crate::Builder::protected_resource`], it is what every 401 and 403 challenge points
/// at; [`ProtectedResource::metadata_service`] serves the document, mounted beside the endpoint:
///
/// ```
/// # use mcp_kernel_http::{AllowedOrigins, McpHttp, ProtectedResource};
/// # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
/// # let resource = ProtectedResource::new("https://mcp.example.com/mcp", ["https://auth.example.com"]).unwrap();
/// let service = McpHttp::builder(server)
///     .allowed_origins(AllowedOrigins::list(["https://app.example.com"]))
///     .protected_resource(resource.clone())
///     .authorize(|_parts| Ok(()))
///     .build();
/// let app = axum::Router::new()
///     .route_service("/mcp", service)
///     .route_service(resource.metadata_path(), resource.metadata_service());
/// # let _: axum::Router = app;
/// ```
///
/// # Refusals
///
/// What a hook's [`crate::Refused`] is answered with:
///
/// | refusal | status | `WWW-Authenticate` |
/// |---|---|---|
/// | [`Refused::because`](crate::Refused::because) | 403 | none |
/// | [`Refused::unauthenticated`](crate::Refused::unauthenticated) | 401 | `Bearer resource_metadata="…"` (+ `scope`) |
/// | [`Refused::invalid_token`](crate::Refused::invalid_token) | 401 | `Bearer resource_metadata="…", error="invalid_token"` (+ `scope`) |
/// | [`Refused::insufficient_scope`](crate::Refused::insufficient_scope) | 403 | `Bearer resource_metadata="…", error="insufficient_scope", scope="…"` |
/// | [`Refused::invalid_request`](crate::Refused::invalid_request) | 400 | `Bearer resource_metadata="…", error="invalid_request"` |
/// | [`Refused::unavailable`](crate::Refused::unavailable) | 503, `retry-after: 1` | none |
///
/// Without a protected resource the challenges carry no `resource_metadata`. A reason is never
/// sent (no `error_description`): it goes to the log.
#[derive(Clone)]
pub struct ProtectedResource {
    inner: Arc<Described>,
}

#[derive(Clone)]
struct Described {
    /// The identifier, as given.
    resource: String,
    /// The identifier with its scheme and authority lowercased.
    canonical: String,
    /// `host[:port]`, as given.
    authority: String,
    metadata_path: String,
    metadata_url: String,
    /// The document's other members: `authorization_servers` first, then in the order given.
    fields: Map<String, Value>,
}

impl fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("resource", &self.inner.resource)
            .field("metadata_url", &self.inner.metadata_url)
            .finish_non_exhaustive()
    }
}

impl ProtectedResource {
    /// Describes the resource `resource`, whose tokens the authorization servers `issuers` issue
    /// (at least one: the MCP specification requires `authorization_servers` to name one).
    ///
    /// `resource` is the endpoint's canonical URL, exactly as clients address it:
    /// `https://mcp.example.com/mcp`, without user information, query, fragment or a trailing slash
    /// (`https://mcp.example.com` for an endpoint at the root). Each issuer is an issuer identifier
    /// (RFC 8414 §2) of the same form. `http` is admitted only for loopback hosts (`localhost`,
    /// `127.0.0.0/8`, `[::1]`): a token sent in clear to anything else can be read on the way.
    pub fn new<I, S>(resource: &str, issuers: I) -> Result<Self, InvalidResource>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let parsed = parse(resource)?;
        let issuers: Vec<String> = issuers.into_iter().map(Into::into).collect();
        if issuers.is_empty() {
            return Err(invalid("at least one authorization server is needed"));
        }
        for issuer in &issuers {
            parse(issuer).map_err(|e| InvalidResource { reason: e.reason, of: "an authorization server" })?;
        }
        // RFC 9728 §3.1: the well-known segment goes between the host and the path.
        let metadata_path = format!("{WELL_KNOWN}{}", parsed.path);
        let metadata_url = format!("{}{metadata_path}", parsed.origin);
        let mut fields = Map::new();
        fields.insert("authorization_servers".into(), Self::strings(issuers));
        fields.insert("bearer_methods_supported".into(), Value::from(vec!["header"]));
        let inner = Described {
            resource: resource.to_owned(),
            canonical: parsed.canonical,
            authority: parsed.authority,
            metadata_path,
            metadata_url,
            fields,
        };
        Ok(Self { inner: Arc::new(inner) })
    }

    /// Sets a member; an empty array or string is left out (RFC 9728 §3.2: members without a value
    /// are omitted).
    fn set(mut self, name: &str, value: Value) -> Self {
        let empty = matches!(&value, Value::Array(a) if a.is_empty())
            || value.as_str() == Some("")
            || value.is_null();
        let fields = &mut Arc::make_mut(&mut self.inner).fields;
        if empty {
            fields.remove(name);
        } else {
            fields.insert(name.to_owned(), value);
        }
        self
    }

    fn strings<I, S>(values: I) -> Value
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Value::Array(values.into_iter().map(|v| Value::String(v.into())).collect())
    }

    /// `scopes_supported`: the scopes a client requests for basic use of this endpoint.
    pub fn scopes_supported<I, S>(self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.set("scopes_supported", Self::strings(scopes))
    }

    /// `resource_name`: a human-readable name.
    pub fn resource_name(self, name: impl Into<String>) -> Self {
        self.set("resource_name", Value::String(name.into()))
    }

    /// `resource_documentation`: a URL of documentation for developers.
    pub fn resource_documentation(self, url: impl Into<String>) -> Self {
        self.set("resource_documentation", Value::String(url.into()))
    }

    /// Any other member of RFC 9728 §2 (`jwks_uri`, `resource_policy_uri`, `bearer_methods_supported`,
    /// which defaults to `["header"]`, …); an empty value removes the member. `resource` and
    /// `authorization_servers` are the ones given to [`ProtectedResource::new`] and cannot be
    /// replaced: a call naming either is ignored.
    pub fn field(self, name: impl Into<String>, value: Value) -> Self {
        let name = name.into();
        if name == "resource" || name == "authorization_servers" {
            return self;
        }
        self.set(&name, value)
    }

    /// The resource identifier, as given.
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The identifier's `host[:port]`, as given: the one name clients address the endpoint by (the
    /// service's default allowed host when it is given this resource).
    pub(crate) fn authority(&self) -> &str {
        &self.inner.authority
    }

    /// The path the metadata document is served at (RFC 9728 §3.1): `/.well-known/oauth-protected-resource`
    /// followed by the resource's path, so a server mounted under a prefix is found.
    pub fn metadata_path(&self) -> &str {
        &self.inner.metadata_path
    }

    /// The metadata document's URL, the `resource_metadata` of every challenge.
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The metadata document, as served.
    pub fn document(&self) -> Value {
        let mut document = Map::new();
        document.insert("resource".into(), Value::String(self.inner.resource.clone()));
        document.extend(self.inner.fields.clone());
        Value::Object(document)
    }

    /// A `tower::Service` answering `GET` (and `HEAD`) with the metadata document, to mount at
    /// [`ProtectedResource::metadata_path`].
    pub fn metadata_service(&self) -> MetadataService {
        MetadataService::new(&self.document())
    }

    /// Whether a token's audience names this resource: `aud` (a JWT claim or an introspection
    /// member, RFC 7519 §4.1.3 / RFC 7662 §2.2) is this identifier, or an array holding it. The
    /// comparison ignores the case of the scheme and host; nothing else is normalized. A host that
    /// admits a token whose audience is not this resource forwards another resource's credentials:
    /// the MCP specification forbids it.
    pub fn is_audience(&self, aud: &Value) -> bool {
        let names = |candidate: &Value| {
            candidate
                .as_str()
                .and_then(|text| parse(text).ok())
                .is_some_and(|parsed| parsed.canonical == self.inner.canonical)
        };
        match aud {
            Value::Array(values) => values.iter().any(names),
            single => names(single),
        }
    }
}

/// A parsed identifier.
struct Parsed {
    /// Scheme and authority lowercased, then the path.
    canonical: String,
    /// `scheme://authority`, as given.
    origin: String,
    /// `host[:port]`, as given.
    authority: String,
    /// The path, as given (empty for the root).
    path: String,
}

/// Parses a resource or issuer identifier.
fn parse(resource: &str) -> Result<Parsed, InvalidResource> {
    let visible = resource.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
    if !visible || resource.is_empty() {
        return Err(invalid("only visible ASCII, without quotes or backslashes"));
    }
    if resource.contains('#') {
        return Err(invalid("an identifier has no fragment"));
    }
    if resource.contains('?') {
        return Err(invalid("an identifier has no query"));
    }
    let uri: Uri = resource.parse().map_err(|_| invalid("not a URI"))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(invalid("an absolute URL is needed"));
    };
    if authority.as_str().contains('@') || authority.host().is_empty() {
        return Err(invalid("the authority must be a host, without user information"));
    }
    let https = scheme.eq_ignore_ascii_case("https");
    if !https && !scheme.eq_ignore_ascii_case("http") {
        return Err(invalid("the scheme must be https"));
    }
    if !https && !is_loopback(authority.host()) {
        return Err(invalid("http is admitted only for a loopback host; use https"));
    }
    if crate::admission::host_header::split(authority.as_str()).is_none()
        || authority.as_str().ends_with(':')
        || authority.host().starts_with("[v")
    {
        return Err(invalid("the authority must be host[:port], the port from 1 to 65535"));
    }
    // `Uri` reads `https://h` as the path `/`; only what was written counts.
    let written_path =
        resource.get(scheme.len() + "://".len() + authority.as_str().len()..).unwrap_or_default();
    if written_path.ends_with('/') {
        return Err(invalid("write the identifier without a trailing slash"));
    }
    if written_path.split('/').any(|segment| segment == "." || segment == "..") {
        return Err(invalid("the path has a dot segment: write it resolved"));
    }
    if !percent_encoding_is_valid(written_path) {
        return Err(invalid("a `%` in the path is not followed by two hex digits"));
    }
    let origin = format!("{scheme}://{authority}");
    let canonical = format!(
        "{}://{}{written_path}",
        scheme.to_ascii_lowercase(),
        authority.as_str().to_ascii_lowercase()
    );
    Ok(Parsed { canonical, origin, authority: authority.as_str().to_owned(), path: written_path.to_owned() })
}

/// Whether every `%` in `text` starts a `%XX` escape.
fn percent_encoding_is_valid(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'%')
        .all(|(at, _)| bytes.get(at + 1..at + 3).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)))
}

/// Whether `host` (as `Uri` gives it: an IPv6 literal in brackets) is a loopback host.
fn is_loopback(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    literal.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const AS: [&str; 1] = ["https://auth.example.com"];

    fn described(resource: &str) -> ProtectedResource {
        ProtectedResource::new(resource, AS).unwrap()
    }

    #[test]
    fn the_metadata_path_inserts_the_well_known_segment_before_the_path() {
        let at = |r: &str| described(r).metadata_url().to_owned();
        assert_eq!(
            at("https://mcp.example.com/mcp"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            at("https://mcp.example.com/public/mcp"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp"
        );
        assert_eq!(
            at("https://mcp.example.com"),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            at("https://MCP.example.com:8443"),
            "https://MCP.example.com:8443/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            at("http://127.0.0.1:4000/mcp"),
            "http://127.0.0.1:4000/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(described("http://[::1]:4000/mcp").authority(), "[::1]:4000");
    }

    #[test]
    fn refuses_identifiers_rfc_9728_and_the_mcp_specification_do_not_allow() {
        for bad in [
            "mcp.example.com",
            "/mcp",
            "ftp://mcp.example.com/mcp",
            "https://mcp.example.com/mcp#frag",
            "https://mcp.example.com/mcp?x=1",
            "https://user@mcp.example.com/mcp",
            "https://mcp.example.com/m\"cp",
            "https://mcp.example.com/m cp",
            "https://mcp.example.com/mcp/",
            "https://mcp.example.com/",
            "http://mcp.example.com/mcp",
            "http://10.0.0.1/mcp",
            "https://mcp.example.com/x/../mcp",
            "https://mcp.example.com/./mcp",
            "https://mcp.example.com:0/mcp",
            "https://mcp.example.com:99999/mcp",
            "https://mcp.example.com:/mcp",
            "https://mcp.example.com/%",
            "https://mcp.example.com/%zz",
            "https://[v1.x]/mcp",
            "",
        ] {
            assert!(ProtectedResource::new(bad, AS).is_err(), "{bad}");
        }
        for loopback in [
            "http://localhost:4000/mcp",
            "http://127.0.0.2/mcp",
            "http://[::1]/mcp",
            "HTTPS://MCP.example.com",
        ] {
            assert!(ProtectedResource::new(loopback, AS).is_ok(), "{loopback}");
        }
    }

    #[test]
    fn at_least_one_valid_authorization_server_is_required() {
        let none: [&str; 0] = [];
        let error = ProtectedResource::new("https://mcp.example.com/mcp", none).unwrap_err();
        assert!(error.to_string().contains("authorization server"), "{error}");
        let bad = ProtectedResource::new("https://mcp.example.com/mcp", ["auth.example.com"]).unwrap_err();
        assert!(bad.to_string().contains("of an authorization server"), "{bad}");
        assert!(ProtectedResource::new("https://mcp.example.com/mcp", ["http://auth.example.com"]).is_err());
    }

    #[test]
    fn the_document_names_the_resource_first_and_keeps_it_and_its_servers() {
        let resource = described("https://mcp.example.com/mcp")
            .scopes_supported(["notes"])
            .field("resource", json!("https://evil.example"))
            .field("authorization_servers", json!(["https://evil.example"]))
            .field("jwks_uri", json!("https://mcp.example.com/jwks"))
            .resource_name("")
            .field("resource_documentation", json!([]));
        let document = resource.document();
        assert_eq!(document.as_object().unwrap().keys().next().unwrap(), "resource");
        assert_eq!(
            document,
            json!({
                "resource": "https://mcp.example.com/mcp",
                "authorization_servers": ["https://auth.example.com"],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["notes"],
                "jwks_uri": "https://mcp.example.com/jwks"
            })
        );
    }

    #[test]
    fn members_without_a_value_are_omitted() {
        let none: [&str; 0] = [];
        let document = described("https://mcp.example.com/mcp").scopes_supported(none).document();
        assert!(document.get("scopes_supported").is_none(), "{document}");
        let removed = described("https://mcp.example.com/mcp")
            .scopes_supported(["a"])
            .scopes_supported(none)
            .document();
        assert!(removed.get("scopes_supported").is_none(), "{removed}");
    }

    #[test]
    fn a_token_for_another_audience_is_not_for_this_resource() {
        let resource = described("https://mcp.example.com/mcp");
        assert!(resource.is_audience(&json!("https://mcp.example.com/mcp")));
        assert!(resource.is_audience(&json!("HTTPS://MCP.Example.com/mcp")));
        assert!(resource.is_audience(&json!(["https://other.example", "https://mcp.example.com/mcp"])));
        for other in [
            json!("https://mcp.example.com/mcp/"),
            json!("https://mcp.example.com/MCP"),
            json!("https://mcp.example.com"),
            json!("https://mcp.example.com:443/mcp"),
            json!("https://other.example/mcp"),
            json!(["https://other.example"]),
            json!([]),
            json!(null),
            json!(42),
        ] {
            assert!(!resource.is_audience(&other), "{other}");
        }
        assert!(described("https://mcp.example.com").is_audience(&json!("https://mcp.example.com")));
    }
}
