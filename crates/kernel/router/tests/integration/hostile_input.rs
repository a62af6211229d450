//! Hostile input against the bounded reader and the protocol core: each test pins one hardening rule
//! (no panic, the right code, and an answer whose size never grows with the hostile part of the input).
//! Sizes, not timings, are asserted; every input is at most a few MiB and every loop is bounded.

use crate::support::*;
use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use mcp_kernel_router::fuzzing::{self as cursor, CursorError, CursorKind};
use mcp_kernel_router::fuzzing::{MAX_TEMPLATE_URI_BYTES, UriTemplate};
use mcp_kernel_router::wire::reader::{MAX_DEPTH, ReadError, read_message, read_value};
use serde_json::{Map, Value, json};

const MIB: usize = 1 << 20;

/// The largest answer a refusal (or a fixture result not echoing the caller) may have, in bytes.
const SMALL: usize = 1024;

fn size(response: &Value) -> usize {
    serde_json::to_vec(response).unwrap().len()
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn request(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

fn kinds() -> [(&'static str, Value); 6] {
    [
        ("null", Value::Null),
        ("bool", json!(true)),
        ("number", json!(1)),
        ("string", json!("x")),
        ("array", json!([])),
        ("object", json!({})),
    ]
}

/// Asserts a small `tools/call` error result whose text does not contain `needle`.
fn assert_small_tool_error(r: &Value, needle: &str) {
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(size(r) < SMALL, "{} bytes", size(r));
    assert!(!r.to_string().contains(needle), "the caller's value is quoted");
}

// ---------------------------------------------------------------------------------------------------
// The bounded reader
// ---------------------------------------------------------------------------------------------------

#[test]
fn interleaved_unbalanced_nesting_past_the_cap_is_refused_as_too_deep() {
    for body in ["[{".repeat(50_000), "{\"a\":[".repeat(100_000), "[".repeat(100_000)] {
        assert_eq!(read_value(body.as_bytes()), Err(ReadError::TooDeep));
    }
    // Exactly at the cap, balanced and interleaved: admitted.
    let open: String = (0..MAX_DEPTH).map(|i| if i % 2 == 0 { "[" } else { "{\"k\":" }).collect();
    let close: String = (0..MAX_DEPTH).rev().map(|i| if i % 2 == 0 { "]" } else { "}" }).collect();
    assert!(read_value(format!("{open}0{close}").as_bytes()).is_ok());
}

#[test]
fn brackets_quotes_and_backslashes_inside_a_one_mebibyte_string_do_not_count_as_depth() {
    let text = "[{\\\"\\\\".repeat(MIB / 6);
    let body = format!("{{\"a\":\"{text}\",\"b\":[[[]]]}}");
    let map = read_message(body.as_bytes()).unwrap();
    assert_eq!(map["a"].as_str().unwrap().len(), "[{\"\\".len() * (MIB / 6));
}

#[test]
fn a_mebibyte_of_closing_brackets_is_a_parse_error() {
    let mut body = "]}".repeat(MIB / 2);
    body.push_str(&"[".repeat(MAX_DEPTH));
    assert_eq!(read_value(body.as_bytes()), Err(ReadError::Parse));
    assert_eq!(read_value(b"]"), Err(ReadError::Parse));
    assert_eq!(read_value(b"{\"a\":1}}"), Err(ReadError::Parse));
}

#[test]
fn duplicate_keys_are_found_through_unicode_escapes_and_surrogate_pairs() {
    let cases: [(&[u8], &str); 4] = [
        (br#"{"\u0061":1,"a":2}"#, "a"),
        ("{\"\u{1F600}\":1,\"\\ud83d\\ude00\":2}".as_bytes(), "\u{1F600}"),
        (br#"{"x":{"\u00e9":1,"\u00E9":2}}"#, "\u{e9}"),
        (br#"{"\/":1,"/":2}"#, "/"),
    ];
    for (body, key) in cases {
        assert_eq!(read_value(body), Err(ReadError::DuplicateKey(key.to_owned())));
    }
    // Distinct code points (precomposed and decomposed) are distinct keys, as JSON defines them.
    assert!(read_value("{\"\u{e9}\":1,\"e\u{301}\":2}".as_bytes()).is_ok());
}

#[test]
fn lone_and_reversed_surrogates_are_parse_errors() {
    for body in [
        &br#"{"a":"\ud800"}"#[..],
        br#"{"a":"\udc00"}"#,
        br#"{"a":"\udc00\ud800"}"#,
        br#"{"\ud800":1}"#,
        br#"{"a":"\ud800\u0041"}"#,
    ] {
        assert_eq!(read_value(body), Err(ReadError::Parse), "{}", String::from_utf8_lossy(body));
    }
}

#[test]
fn invalid_utf8_bom_nul_and_form_feed_are_parse_errors() {
    for body in [
        &b"\xef\xbb\xbf{}"[..],
        b"{\"a\":\"\x00\"}",
        b"{}\x00",
        b"\x00{}",
        b"\x0c{}",
        b"{\"a\":\"\xff\"}",
        b"{\"\xff\":1}",
        b"{\"a\":\"\xed\xa0\x80\"}",
        b"{\"a\":\"\xc0\xaf\"}",
    ] {
        assert_eq!(read_value(body), Err(ReadError::Parse), "{body:?}");
    }
}

#[test]
fn out_of_range_numbers_are_parse_errors_and_long_numbers_stay_finite() {
    assert_eq!(read_value(br#"{"a":1e400}"#), Err(ReadError::Parse));
    assert_eq!(read_value(br#"{"a":-1e400}"#), Err(ReadError::Parse));
    let digits = format!("{{\"a\":1{}}}", "0".repeat(299));
    assert_eq!(read_value(digits.as_bytes()).unwrap()["a"].as_f64(), Some(1e299));
    let tiny = format!("{{\"a\":0.{}1}}", "0".repeat(MIB));
    assert_eq!(read_value(tiny.as_bytes()).unwrap()["a"].as_f64(), Some(0.0));
    let exponent = format!("{{\"a\":1e{}1}}", "0".repeat(MIB));
    assert_eq!(read_value(exponent.as_bytes()).unwrap()["a"].as_f64(), Some(10.0));
    let above = format!("{{\"a\":{}0}}", u64::MAX);
    assert!(read_value(above.as_bytes()).unwrap()["a"].is_f64());
}

#[test]
fn a_late_repeat_among_100000_small_keys_is_still_found() {
    let mut body = String::from("{");
    for i in 0..100_000 {
        body.push_str(&format!("\"k{i}\":0,"));
    }
    body.push_str("\"k0\":1}");
    assert_eq!(read_value(body.as_bytes()), Err(ReadError::DuplicateKey("k0".into())));
    body.truncate(body.len() - "\"k0\":1}".len() - 1);
    body.push('}');
    assert_eq!(read_message(body.as_bytes()).unwrap().len(), 100_000);
}

#[test]
fn a_repeated_key_of_a_mebibyte_of_control_characters_is_echoed_in_bounded_size() {
    let key = "\\u0001".repeat(MIB / 6);
    let body = format!("{{\"{key}\":1,\"{key}\":2}}");
    let refusal = read_value(body.as_bytes()).unwrap_err();
    assert!(matches!(refusal, ReadError::DuplicateKey(_)));
    let error = refusal.to_error_object();
    assert_eq!(error.code, -32600);
    assert!(error.message.len() < SMALL, "{} bytes", error.message.len());
    assert!(error.data.is_none());
}

// ---------------------------------------------------------------------------------------------------
// Ids, params, _meta
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn integer_ids_at_the_extremes_and_control_character_strings_are_echoed_exactly() {
    let server = server();
    for id in [json!(u64::MAX), json!(i64::MIN), json!(0), json!(-1), json!("\u{0}\n\u{1b}\"\\")] {
        let r = send(&server, json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).await;
        assert_eq!(r["id"], id);
        assert_eq!(r["result"], json!({}));
    }
}

#[tokio::test]
async fn non_integer_ids_are_invalid_requests_answered_without_an_id() {
    let server = server();
    for id in [json!(1.0), json!(1e300), json!(-0.5), json!(true), json!([1]), json!({"a": 1}), Value::Null] {
        let r = send(&server, json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).await;
        assert_eq!(code(&r), -32600, "{id}");
        assert!(r.get("id").is_none(), "{r}");
    }
}

#[tokio::test]
async fn params_of_every_json_type_get_a_small_answer_on_every_method() {
    let server = server();
    let methods = [
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "initialize",
        "server/discover",
        "no/such/method",
    ];
    for method in methods {
        for (kind, params) in kinds() {
            let r = send(&server, request(method, params)).await;
            assert!(size(&r) < 4 * SMALL, "{method} {kind}: {} bytes", size(&r));
            if let Some(error) = r.get("error") {
                let c = error["code"].as_i64().unwrap();
                assert!(c == -32602 || c == -32601, "{method} {kind}: {r}");
            }
        }
    }
    // The paginated lists, tools/call and prompts/get refuse a params that is present but not an object.
    for method in ["resources/list", "resources/templates/list", "prompts/list", "tools/call", "prompts/get"]
    {
        for params in [Value::Null, json!(true), json!(1), json!("x"), json!([])] {
            let r = send(&server, request(method, params)).await;
            assert_eq!(r["error"]["message"], "Invalid params: params must be an object", "{method}");
        }
    }
}

#[tokio::test]
async fn a_meta_or_revision_or_capabilities_of_the_wrong_type_is_invalid_params() {
    let server = server();
    for (kind, value) in kinds() {
        if kind != "object" {
            let r = send(&server, request("tools/list", json!({"_meta": value}))).await;
            assert_eq!(r["error"]["message"], "Invalid params: params._meta must be an object", "{kind}");
        }
        if kind != "string" {
            let meta = json!({"io.modelcontextprotocol/protocolVersion": value});
            let r = send(&server, request("tools/list", json!({"_meta": meta}))).await;
            assert_eq!(code(&r), -32602, "{kind}");
            assert!(size(&r) < SMALL);
        }
        if kind != "object" {
            let meta = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": value
            });
            let r = send(&server, request("tools/list", json!({"_meta": meta}))).await;
            assert_eq!(code(&r), -32602, "{kind}");
        }
        let r =
            send(&server, json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "_meta": value.clone()})).await;
        assert_eq!(code(&r), -32602, "top-level _meta {kind}");
    }
}

#[tokio::test]
async fn initialize_with_a_revision_of_any_type_offers_a_served_revision() {
    let server = server();
    for (kind, value) in kinds() {
        let r = send(&server, request("initialize", json!({"protocolVersion": value}))).await;
        assert_eq!(r["result"]["protocolVersion"], LEGACY, "{kind}");
    }
    let r = send(&server, request("initialize", json!({"protocolVersion": "a".repeat(MIB)}))).await;
    assert_eq!(r["result"]["protocolVersion"], LEGACY);
    assert!(size(&r) < SMALL);
}

#[tokio::test]
async fn a_one_mebibyte_method_name_or_top_level_meta_is_not_echoed() {
    let server = server();
    let big = "m".repeat(MIB);
    let r = send(&server, json!({"jsonrpc": "2.0", "id": 1, "method": big})).await;
    assert_eq!(code(&r), -32601);
    assert!(size(&r) < SMALL);
    let r = send(&server, json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "_meta": {"x": big}})).await;
    assert_eq!(code(&r), -32602);
    assert!(size(&r) < SMALL);
}

#[tokio::test]
async fn a_notification_never_gets_a_reply_whatever_its_params() {
    let server = server();
    for (_, params) in kinds() {
        for method in ["notifications/initialized", "tools/call", "resources/read", "no/such/method"] {
            let message = json!({"jsonrpc": "2.0", "method": method, "params": params.clone(), "_meta": 1});
            assert_eq!(send(&server, message).await, Value::Null);
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Cursors
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn hostile_cursors_are_refused_as_malformed_in_small_answers() {
    let server = server();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let extra = format!(r#"{{"a":"x","k":"prompts","v":1,"z":{}{}}}"#, "[".repeat(63), "]".repeat(63));
    let cursors = [
        json!("A".repeat(MIB)),
        json!("!!!"),
        json!(URL_SAFE.encode(br#"{"a":"x","k":"prompts","v":1}"#)),
        json!(b64(deep.as_bytes())),
        json!(b64(extra.as_bytes())),
        json!(b64(br#"{"a":"x","k":"prompts","v":1.0}"#)),
        json!(b64(br#"{"a":1,"k":"prompts","v":1}"#)),
        json!(b64(br#"{"a":"x","a":"y","k":"prompts","v":1}"#)),
        json!(b64(b"\xef\xbb\xbf{\"a\":\"x\",\"k\":\"prompts\",\"v\":1}")),
        json!(b64(b"{\"a\":\"\xff\",\"k\":\"prompts\",\"v\":1}")),
        json!(5),
        json!([]),
    ];
    for cursor in cursors {
        let r = send(&server, request("prompts/list", json!({"cursor": cursor}))).await;
        assert_eq!(r["error"]["message"], "Invalid params: cursor is malformed");
        assert!(size(&r) < SMALL);
    }
}

#[tokio::test]
async fn a_foreign_cursor_never_echoes_its_one_mebibyte_kind_or_key() {
    let server = server();
    let kind = "p".repeat(MIB);
    let foreign = format!(r#"{{"a":"x","k":"{kind}","v":1}}"#);
    let r = send(&server, request("prompts/list", json!({"cursor": b64(foreign.as_bytes())}))).await;
    assert_eq!(r["error"]["message"], "Invalid params: cursor belongs to another list, not prompts");
    assert!(size(&r) < SMALL);
    // A forged cursor naming a huge key only names a position: past every listed prompt.
    let key = "z".repeat(MIB);
    let forged = format!(r#"{{"a":"{key}","k":"prompts","v":1}}"#);
    let r = send(&server, request("prompts/list", json!({"cursor": b64(forged.as_bytes())}))).await;
    assert_eq!(r["result"]["prompts"], json!([]));
    assert!(size(&r) < SMALL);
}

#[test]
fn every_truncation_of_a_valid_cursor_is_refused() {
    let valid = cursor::encode(CursorKind::Resources, "test://a\u{0}\n\u{1F600}");
    assert_eq!(cursor::decode(CursorKind::Resources, &valid), Ok(Some("test://a\u{0}\n\u{1F600}".into())));
    for end in 1..valid.len() {
        assert_eq!(
            cursor::decode(CursorKind::Resources, &valid[..end]),
            Err(CursorError::Malformed),
            "{end}"
        );
    }
    // Appending anything (padding, whitespace, another character) is refused as well.
    for suffix in ["=", "==", " ", "A", "\n"] {
        let longer = format!("{valid}{suffix}");
        assert_eq!(cursor::decode(CursorKind::Resources, &longer), Err(CursorError::Malformed), "{suffix:?}");
    }
}

// ---------------------------------------------------------------------------------------------------
// Uri templates and resources/read
// ---------------------------------------------------------------------------------------------------

#[test]
fn a_uri_at_the_template_cap_is_matched_against_many_reserved_expressions_correctly() {
    let many = UriTemplate::parse("x://{+a}/{+b}/{+c}/{+d}/{+e}/{+f}/{+g}/{+h}").unwrap();
    let body = MAX_TEMPLATE_URI_BYTES - "x://".len();
    let slashes = format!("x://{}", "/".repeat(body));
    assert!(many.matches(&slashes));
    let no_slash = format!("x://{}", "a".repeat(body));
    assert!(!many.matches(&no_slash));
    let mixed = UriTemplate::parse("x://{+a}{b}{+c}{d}{+e}/z").unwrap();
    assert!(!mixed.matches(&format!("{}!", &slashes[..MAX_TEMPLATE_URI_BYTES - 1])));
    assert!(mixed.matches(&format!("x://{}/z", "\u{e9}\n".repeat(body / 4))));
    let segment = UriTemplate::parse("x://{a}{b}{c}{d}").unwrap();
    assert!(!segment.matches(&format!("x://{}/", "a".repeat(body - 1))));
    // Past the cap no template is tried at all, however many mebibytes the uri holds.
    assert!(!many.matches(&format!("x://{}", "/".repeat(4 * MIB))));
    assert!(!UriTemplate::parse("x://{+a}").unwrap().matches(&format!("x://{}", "a".repeat(body + 1))));
}

#[test]
fn a_template_too_large_to_compile_is_refused_not_panicked() {
    let template = format!("x://{}", "{a}/".repeat(100_000));
    assert!(UriTemplate::parse(&template).is_err());
    for bad in ["{", "}", "{{a}}", "{+}", "{+{a}}", "a{%4}", "a{%}", "{a}}", "x://{\u{0}}"] {
        assert!(UriTemplate::parse(bad).is_err(), "{bad:?}");
    }
}

#[tokio::test]
async fn a_uri_at_the_template_cap_is_read_and_a_longer_one_is_not_found() {
    let server = server();
    let prefix = "test://files/";
    let uri = format!("{prefix}{}", "a/".repeat((MAX_TEMPLATE_URI_BYTES - prefix.len()) / 2));
    let r = send(&server, request("resources/read", json!({"uri": uri}))).await;
    assert_eq!(r["result"]["contents"][0]["uri"], uri.as_str());
    let longer = format!("{prefix}{}", "a/".repeat(MIB / 2));
    let r = send(&server, request("resources/read", json!({"uri": longer}))).await;
    assert!(r.get("error").is_some(), "a mebibyte uri matches no template: {:.200}", r.to_string());
}

#[tokio::test]
async fn a_not_found_answer_repeats_the_uri_at_most_once_and_nothing_else_of_the_request() {
    // `data.uri` is the one echo the specification asks for; whatever its length, the answer adds only
    // a constant to it (never a second copy, nor any other part of the request).
    let server = server();
    let junk = "j".repeat(MIB);
    for uri in [
        "u".repeat(MIB),
        "\u{0}".repeat(MIB / 4),
        format!("test://place/{}/", "a".repeat(MIB)),
        format!("test://place/{}\u{0}/x", "\u{1F600}".repeat(MIB / 4)),
    ] {
        let echo = serde_json::to_vec(&uri).unwrap().len();
        let mut params = json!({"uri": uri, "junk": junk});
        let r = send(&server, request("resources/read", params.clone())).await;
        assert_eq!(code(&r), -32002);
        assert!(size(&r) <= echo + 256, "{} bytes for a {echo}-byte uri", size(&r));
        params["_meta"] = modern_meta();
        let r = send(&server, request("resources/read", params)).await;
        assert_eq!(code(&r), -32602);
        assert!(size(&r) <= echo + 512, "{} bytes for a {echo}-byte uri", size(&r));
    }
}

// ---------------------------------------------------------------------------------------------------
// tools/call and prompts/get
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn schema_violations_with_huge_values_never_quote_the_value() {
    let server = server();
    let big = "q".repeat(MIB);
    let needle = "q".repeat(64);
    let array: Vec<Value> = (0..MIB / 2).map(|_| json!(0)).collect();
    let nul_key = "\u{0}".repeat(MIB);
    let cases = [
        json!({"place": array}),
        json!({"place": "x", "days": big}),
        json!({"place": {"nested": big}}),
        json!({"place": "x", big.clone(): 1}),
        json!({"place": "x", nul_key: 1}),
        json!({"days": 1}),
    ];
    for arguments in cases {
        let r = send(&server, request("tools/call", json!({"name": "get_weather", "arguments": arguments})))
            .await;
        assert_small_tool_error(&r, &needle);
    }
    // Arguments that are not an object at all are a protocol error, which does not quote them either.
    for arguments in [json!(big), json!([big]), json!(1e300), Value::Null] {
        let r = send(&server, request("tools/call", json!({"name": "get_weather", "arguments": arguments})))
            .await;
        assert_eq!(code(&r), -32602);
        assert!(size(&r) < SMALL);
    }
}

#[tokio::test]
async fn ten_thousand_distinct_keys_are_refused_or_dropped_without_growing_the_answer() {
    let server = server();
    let keys: Map<String, Value> = (0..10_000).map(|i| (format!("key{i}"), json!(i))).collect();
    let keys = Value::Object(keys);
    let r = send(&server, request("tools/call", json!({"name": "get_weather", "arguments": keys}))).await;
    assert_small_tool_error(&r, "key1\"");
    for tool in ["open", "no_schema"] {
        let r = send(&server, request("tools/call", json!({"name": tool, "arguments": keys}))).await;
        assert_eq!(r["result"]["structuredContent"], json!({}), "{tool}");
        assert!(size(&r) < SMALL);
    }
    let r = send(&server, request("prompts/get", json!({"name": "forecast", "arguments": keys}))).await;
    assert_eq!(code(&r), -32602);
    assert!(size(&r) < SMALL);
}

#[tokio::test]
async fn numbers_at_the_edges_of_the_integer_range_are_validated_not_panicked() {
    let server = server();
    for (days, valid) in [
        (json!(u64::MAX), true),
        (json!(i64::MIN), false),
        (json!(1e300), true),
        (json!(1.0), true),
        (json!(1.5), false),
        (json!(-0.0), false),
        (json!(f64::MIN_POSITIVE), false),
    ] {
        let call = json!({"name": "get_weather", "arguments": {"place": "x", "days": days}});
        let r = send(&server, request("tools/call", call)).await;
        assert_eq!(r["result"]["isError"], !valid, "{days}: {r}");
        assert!(size(&r) < SMALL);
    }
}

#[tokio::test]
async fn unknown_tool_names_with_nul_newline_or_a_mebibyte_are_not_echoed() {
    let server = server();
    for name in ["a\u{0}b".to_owned(), "get_weather\n".to_owned(), "n".repeat(MIB), String::new()] {
        let r = send(&server, request("tools/call", json!({"name": name, "arguments": {}}))).await;
        assert_eq!(r["error"], json!({"code": -32602, "message": "Unknown tool"}));
    }
}

#[tokio::test]
async fn prompt_arguments_of_the_wrong_type_are_refused_without_quoting_them() {
    let server = server();
    let big = "w".repeat(MIB);
    let needle = "w".repeat(64);
    let array: Vec<Value> = (0..MIB / 2).map(|_| json!(1)).collect();
    for arguments in [
        json!({"place": 1}),
        json!({"place": null}),
        json!({"place": array}),
        json!({"place": {"k": big}}),
        json!({"place": "x", big.clone(): "y"}),
        json!({"place": "x", "\u{0}\n": "y"}),
        json!(big),
    ] {
        let r =
            send(&server, request("prompts/get", json!({"name": "forecast", "arguments": arguments}))).await;
        assert_eq!(code(&r), -32602);
        assert_eq!(r["error"]["data"]["name"], "forecast");
        assert!(size(&r) < SMALL, "{} bytes", size(&r));
        assert!(!r.to_string().contains(&needle));
    }
}

#[tokio::test]
async fn an_unknown_prompt_answer_repeats_the_name_at_most_once_and_nothing_else_of_the_request() {
    let server = server();
    let junk = "j".repeat(MIB);
    for name in
        ["p".repeat(MIB), "\u{0}".repeat(MIB / 4), "\u{1F600}".repeat(MIB / 4), "a\u{0}\nb".to_owned()]
    {
        let echo = serde_json::to_vec(&name).unwrap().len();
        let params = json!({"name": name, "arguments": {"place": junk}, "junk": junk});
        let r = send(&server, request("prompts/get", params)).await;
        assert_eq!(code(&r), -32602);
        assert!(size(&r) <= echo + 256, "{} bytes for a {echo}-byte name", size(&r));
    }
}
