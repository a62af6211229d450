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
//! is answered 204 with:
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
//! Every other answer to a request from a listed origin — refusals included, so that a page can read
//! a 401's challenge — carries `access-control-allow-origin` and
//! `access-control-expose-headers: www-authenticate, mcp-protocol-version, retry-after`.
//!
//! `tower-http`'s `CorsLayer` is not used: it would sit outside the service, so a preflight would be
//! answered before the Host check (the DNS-rebinding defence must come first), and its header list
//! is fixed when it is built, which cannot grant `mcp-param-*` names without either listing the
//! catalog (see above) or mirroring every requested header.

use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_HEADERS,
    ACCESS_CONTROL_REQUEST_METHOD, HeaderName, HeaderValue, ORIGIN, VARY,
};
use http::request::Parts;
use http::{HeaderMap, Method, Response, StatusCode};

use crate::body::ResponseBody;
use crate::origin::AllowedOrigins;

/// The request headers every MCP request may carry.
const MCP_REQUEST_HEADERS: &str =
    "accept, content-type, authorization, mcp-protocol-version, mcp-method, mcp-name";

/// The response headers a browser client needs to read.
const EXPOSED: &str = "www-authenticate, mcp-protocol-version, retry-after";

/// The prefix of the headers that mirror annotated tool arguments.
const PARAM_PREFIX: &str = "mcp-param-";

/// At most this many `mcp-param-*` names are granted by one preflight.
const MAX_PARAM_HEADERS: usize = 64;

/// A longer requested name is not granted.
const MAX_PARAM_HEADER_BYTES: usize = 128;

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

/// The answer to a preflight from the granted `origin`.
pub(crate) fn preflight(origin: HeaderValue, parts: &Parts) -> Response<ResponseBody> {
    let mut allowed = String::from(MCP_REQUEST_HEADERS);
    let requested = parts.headers.get_all(ACCESS_CONTROL_REQUEST_HEADERS).iter();
    let names = requested.filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(','));
    let params = names
        .map(str::trim)
        .filter(|name| name.len() > PARAM_PREFIX.len() && name.len() <= MAX_PARAM_HEADER_BYTES)
        .map(str::to_ascii_lowercase)
        .filter(|name| name.starts_with(PARAM_PREFIX) && HeaderName::from_bytes(name.as_bytes()).is_ok());
    let mut granted: Vec<String> = Vec::new();
    for name in params {
        if granted.len() == MAX_PARAM_HEADERS {
            break;
        }
        if !granted.contains(&name) {
            granted.push(name);
        }
    }
    for name in &granted {
        allowed.push_str(", ");
        allowed.push_str(name);
    }
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("POST"));
    // Only visible ASCII went in: token characters, commas and spaces.
    if let Ok(value) = HeaderValue::from_str(&allowed) {
        headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, value);
    }
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    headers.append(
        VARY,
        HeaderValue::from_static("origin, access-control-request-method, access-control-request-headers"),
    );
    response
}

/// Grants the answer to a request from `origin` to the page that sent it.
pub(crate) fn grant(response: &mut Response<ResponseBody>, origin: HeaderValue) {
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED));
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
        let response = preflight(HeaderValue::from_static("http://app.example"), &parts);
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        let h = response.headers();
        assert_eq!(h[ACCESS_CONTROL_ALLOW_ORIGIN], "http://app.example");
        assert_eq!(h[ACCESS_CONTROL_ALLOW_METHODS], "POST");
        assert_eq!(
            h[ACCESS_CONTROL_ALLOW_HEADERS],
            "accept, content-type, authorization, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region, mcp-param-limit"
        );
        assert!(h.get("access-control-allow-credentials").is_none());
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
        let response = preflight(HeaderValue::from_static("http://app.example"), &parts);
        let granted =
            response.headers()[ACCESS_CONTROL_ALLOW_HEADERS].to_str().unwrap().matches("mcp-param-").count();
        assert_eq!(granted, MAX_PARAM_HEADERS);
    }
}
