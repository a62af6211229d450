//! Target `http_headers`: the HTTP header rules (origin, version, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*` against the body, the `=?base64?…?=` sentinel) through the tower service `McpService`.
//!
//! Input: a first line naming the HTTP method (`POST`, … ; a second word `legacy` serves with legacy
//! clients admitted, the service's default; without it they are refused), then `name: value` header lines (`host: localhost:4000` unless one is given) (a trailing `\r` is dropped; a line that is not a
//! valid header is skipped), a blank line, and the body. Laws: the service answers every request, in
//! bounded time, with a status from the documented set and never 500 (the fixture never faults); a JSON
//! answer is one JSON value and an event stream carries JSON data lines; a header value is never echoed
//! into the body (except `Mcp-Protocol-Version`, whose first unsupported value the spec has the server
//! name); the sentinel decoding is canonical (a decoded value re-encodes to the raw text).

use std::sync::OnceLock;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use mcp_kernel_http::fuzzing::{decoded, integer_matches, is_malformed_sentinel};
use mcp_kernel_http::{AllowedOrigins, LegacyClients, McpHttp, McpService, Refused};
use serde_json::{Number, Value};
use tower_service::Service;

use crate::runtime::block_on_bounded;

/// The statuses the transport documents (D-20 to D-22, a CORS preflight's 204, a foreign `Host`'s
/// 421); 500 is a host fault, which the fixture never has.
const STATUSES: [u16; 13] = [200, 202, 204, 400, 401, 403, 404, 405, 406, 408, 411, 413, 421];
/// Header values shorter than this are not checked for echoes (they occur in any answer by chance).
const MIN_ECHO_LEN: usize = 8;
/// The most header lines read from one input.
const MAX_HEADERS: usize = 64;
/// The bound on one exchange.
const LIMIT: Duration = Duration::from_secs(5);
/// The header whose first unsupported value the unsupported-version error names (MCP S-25).
const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// Checks the HTTP header rules on `data`; panics when one is broken.
pub fn http_headers(data: &[u8]) {
    let (method, legacy, headers, body) = parse(data);
    for value in headers.values() {
        sentinel_laws(&String::from_utf8_lossy(value.as_bytes()));
    }
    sentinel_laws(&String::from_utf8_lossy(data));

    let (status, answer) = exchange(legacy, &method, &headers, &body);
    assert!(STATUSES.contains(&status.as_u16()), "status {status} is outside the documented set");
    check_answer(&answer);

    let request_text = request_texts(&body);
    for (name, value) in &headers {
        if name.as_str() == PROTOCOL_VERSION {
            continue;
        }
        let raw = String::from_utf8_lossy(value.as_bytes()).into_owned();
        if raw.len() < MIN_ECHO_LEN
            || !echoes(&answer, &raw)
            || request_text.iter().any(|text| echoes(text, &raw))
        {
            continue;
        }
        // The text may be the server's own words (the fuzzer copies them into headers): it is an echo
        // only if it goes both when the header goes and when one of its characters changes.
        let mut without = headers.clone();
        without.remove(name);
        if echoes(&exchange(legacy, &method, &without, &body).1, &raw) {
            continue;
        }
        if let Ok(changed) = HeaderValue::from_bytes(&alter_middle(value.as_bytes())) {
            let mut altered = headers.clone();
            altered.remove(name);
            for other in headers.get_all(name) {
                altered.append(name, if other == value { changed.clone() } else { other.clone() });
            }
            if echoes(&exchange(legacy, &method, &altered, &body).1, &raw) {
                continue;
            }
        }
        panic!("the value of header {name} is echoed into the body");
    }
}

/// `value` with its middle byte changed within its class (digit, letter, other), so that a header the
/// server reads keeps its meaning as far as possible while any echo of it changes.
fn alter_middle(value: &[u8]) -> Vec<u8> {
    let mut altered = value.to_vec();
    if let Some(byte) = altered.get_mut(value.len() / 2) {
        *byte = match *byte {
            b'0'..=b'8' | b'a'..=b'y' | b'A'..=b'Y' => *byte + 1,
            b'9' => b'0',
            b'z' => b'a',
            b'Z' => b'A',
            b'-' => b'_',
            _ => b'-',
        };
    }
    altered
}

/// The method, the legacy flag, the headers and the body an input describes.
fn parse(data: &[u8]) -> (Method, bool, HeaderMap, Bytes) {
    let mut lines = data.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let first = first.strip_suffix(b"\r").unwrap_or(first);
    let mut words = first.split(|&b| b == b' ');
    let method = Method::from_bytes(words.next().unwrap_or_default()).unwrap_or(Method::POST);
    let legacy = words.next() == Some(b"legacy");
    let mut consumed = first.len() + 1;
    let mut headers = HeaderMap::new();
    for line in lines.by_ref() {
        consumed += line.len() + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            break;
        }
        if headers.len() >= MAX_HEADERS {
            continue;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
        let value = line[colon + 1..].strip_prefix(b" ").unwrap_or(&line[colon + 1..]);
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(&line[..colon]), HeaderValue::from_bytes(value))
        {
            headers.append(name, value);
        }
    }
    let body = Bytes::copy_from_slice(data.get(consumed.min(data.len())..).unwrap_or_default());
    (method, legacy, headers, body)
}

/// Sends one request to the fixture service; the status and the whole body.
fn exchange(legacy: bool, method: &Method, headers: &HeaderMap, body: &Bytes) -> (StatusCode, Vec<u8>) {
    static SERVICES: OnceLock<[McpService; 2]> = OnceLock::new();
    let services = SERVICES.get_or_init(|| {
        let build = |legacy: bool| {
            let builder = McpHttp::builder(crate::fixture::server())
                .allowed_origins(AllowedOrigins::list(["http://localhost:4000"]))
                // A caller sending `x-fuzz-deny` is refused before the body is read.
                .authorize(|parts| match parts.headers.contains_key("x-fuzz-deny") {
                    true => Err(Refused::because("x-fuzz-deny")),
                    false => Ok(()),
                });
            // Both answers on purpose: legacy clients served (the default), and refused.
            let legacy = if legacy { LegacyClients::Stateless } else { LegacyClients::Refused };
            builder.legacy_clients(legacy).build()
        };
        [build(false), build(true)]
    });
    let mut service = services[usize::from(legacy)].clone();
    let mut request = Request::builder().method(method.clone()).uri("/mcp").body(Full::new(body.clone()));
    if let Ok(request) = &mut request {
        *request.headers_mut() = headers.clone();
        // The name the fixture answers to, unless the input names one: without it every input would
        // stop at the Host check.
        if !headers.contains_key(http::header::HOST) {
            request.headers_mut().insert(http::header::HOST, HeaderValue::from_static("localhost:4000"));
        }
    }
    let request = request.expect("a request with a fixed uri builds");
    block_on_bounded("an HTTP exchange", LIMIT, async move {
        let Ok(response) = service.call(request).await;
        let status = response.status();
        let Ok(collected) = response.into_body().collect().await;
        (status, collected.to_bytes().to_vec())
    })
}

/// An answer is empty, one JSON value, or an event stream whose `data:` lines are JSON.
fn check_answer(answer: &[u8]) {
    if answer.is_empty() || serde_json::from_slice::<Value>(answer).is_ok() {
        return;
    }
    let text = std::str::from_utf8(answer).expect("an answer is UTF-8");
    let mut data_lines = 0;
    for line in text.lines() {
        if let Some(data) = line.strip_prefix("data:") {
            data_lines += 1;
            assert!(serde_json::from_str::<Value>(data.trim_start()).is_ok(), "an event's data is not JSON");
        }
    }
    assert!(data_lines > 0, "an answer that is neither JSON nor an event stream");
}

/// The request body as sent and as the server may re-write it (re-serialized, which undoes escapes).
fn request_texts(body: &[u8]) -> Vec<Vec<u8>> {
    let mut texts = vec![body.to_vec()];
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        texts.push(value.to_string().into_bytes());
        texts.push(collect_strings(&value).into_bytes());
    }
    texts
}

/// Every string (keys included) of a JSON value, joined by `\n`; iterative and bounded by the value.
fn collect_strings(value: &Value) -> String {
    let mut out = String::new();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => {
                out.push_str(text);
                out.push('\n');
            }
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (key, item) in map {
                    out.push_str(key);
                    out.push('\n');
                    stack.push(item);
                }
            }
            _ => {}
        }
    }
    out
}

/// True when `haystack` holds `needle` as is or JSON-escaped.
fn echoes(haystack: &[u8], needle: &str) -> bool {
    let escaped = serde_json::to_string(needle).unwrap_or_default();
    let escaped = escaped.get(1..escaped.len().saturating_sub(1)).unwrap_or_default();
    [needle, escaped].iter().any(|needle| contains(haystack, needle.as_bytes()))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|window| window == needle)
}

/// The sentinel is honoured only in canonical form; integers follow the D-19 grammar.
fn sentinel_laws(raw: &str) {
    let text = decoded(raw);
    if text != raw {
        let wrapped = format!("=?base64?{}?=", STANDARD.encode(text.as_bytes()));
        assert_eq!(wrapped, raw, "a value decoded from a non-canonical sentinel");
        assert!(!is_malformed_sentinel(raw), "a decodable sentinel called malformed");
    }
    if is_malformed_sentinel(raw) {
        assert_eq!(text, raw, "a malformed sentinel was decoded");
    }
    if let Ok(number) = raw.parse::<u64>() {
        let canonical = number.to_string() == raw;
        assert_eq!(integer_matches(raw, &Number::from(number)), canonical, "D-19 on {raw:?}");
    }
    if let Ok(number) = serde_json::from_str::<Number>(raw) {
        let _ = integer_matches(raw, &number);
    }
}
