use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::read_message;

/// The two-step read this one replaces: the oracle.
fn two_steps(bytes: &[u8]) -> Result<Envelope, ReadError> {
    read_message(bytes).map(Envelope::from_object)
}

/// An envelope with its maps' member order made visible (a map's `==` ignores it).
fn ordered(read: &Result<Envelope, ReadError>) -> String {
    match read {
        Ok(envelope) => format!(
            "{envelope:?} params {} meta {}",
            serde_json::to_string(&envelope.params()).expect("JSON"),
            serde_json::to_string(&envelope.meta().value()).expect("JSON")
        ),
        Err(refusal) => format!("{refusal:?}"),
    }
}

fn read(text: &str) -> Result<Envelope, ReadError> {
    let once = read_envelope(text.as_bytes());
    assert_eq!(ordered(&once), ordered(&two_steps(text.as_bytes())), "the oracle disagrees on {text}");
    once
}

#[test]
fn a_request_reads_into_the_envelope_the_map_gives() {
    let text = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"a":1},"name":"echo"}}"#;
    let envelope = read(text).expect("a request");
    assert!(envelope.is_call());
    assert_eq!(envelope.method(), Some(&Method::known("tools/call").expect("known")));
    assert_eq!(envelope.params(), Some(&json!({"name": "echo"})));
    assert_eq!(envelope.meta().value(), Some(&json!({"a": 1})));
}

#[test]
fn a_repeated_top_level_key_is_refused_by_its_decoded_name() {
    assert_eq!(read(r#"{"id":1,"\u0069d":2}"#), Err(ReadError::DuplicateKey("id".to_owned())));
    assert_eq!(read(r#"{"x":1,"method":"a","x":[2]}"#), Err(ReadError::DuplicateKey("x".to_owned())));
    // The first repeat in the bytes is the one named, at whatever depth it lies.
    let nested_first = r#"{"params":{"k":1,"k":2},"method":"a","method":"b"}"#;
    assert_eq!(read(nested_first), Err(ReadError::DuplicateKey("k".to_owned())));
}

#[test]
fn params_meta_is_set_aside_as_read_and_the_rest_keeps_its_order() {
    let text = r#"{"method":"tools/call","params":{"_meta":{"progressToken":3},"z":1,"a":[2],"m":{}}}"#;
    let envelope = read(text).expect("an envelope");
    let params = envelope.params_object().expect("an object");
    assert_eq!(params.keys().collect::<Vec<_>>(), ["z", "a", "m"], "wire order, without _meta");
    assert_eq!(envelope.meta().progress_token(), Some(&json!(3)));
    let repeated = r#"{"params":{"\u005fmeta":{},"_meta":1}}"#;
    assert_eq!(read(repeated), Err(ReadError::DuplicateKey("_meta".to_owned())));
    assert_eq!(read(r#"{"params":[{"_meta":1}]}"#).expect("an envelope").meta().value(), None);
}

#[test]
fn a_repeat_after_a_syntax_error_is_a_parse_error() {
    assert_eq!(read(r#"{"id":1,"id":2,"#), Err(ReadError::Parse));
}

#[test]
fn a_top_level_value_that_is_not_an_object_is_read_whole_then_refused_by_its_kind() {
    assert_eq!(read("[1,2]"), Err(ReadError::NotAnObject(JsonKind::Array)));
    assert_eq!(read(r#"[{"a":1,"a":2}]"#), Err(ReadError::DuplicateKey("a".to_owned())));
    assert_eq!(read("[1,"), Err(ReadError::Parse));
    assert_eq!(read(r#""x""#), Err(ReadError::NotAnObject(JsonKind::String)));
    assert_eq!(read("1.5"), Err(ReadError::NotAnObject(JsonKind::Number)));
    assert_eq!(read("true"), Err(ReadError::NotAnObject(JsonKind::Bool)));
    assert_eq!(read("null"), Err(ReadError::NotAnObject(JsonKind::Null)));
    assert_eq!(read(" \n"), Err(ReadError::Empty));
}

#[test]
fn the_depth_cap_holds_inside_the_members_read_without_a_copy() {
    for member in ["jsonrpc", "method", "x"] {
        let deep = format!(r#"{{"{member}":{}{}}}"#, "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(read(&deep), Err(ReadError::TooDeep), "{member}");
        let fits = format!(r#"{{"{member}":{}{}}}"#, "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
        assert!(read(&fits).is_ok(), "{member}");
    }
}

#[test]
fn jsonrpc_and_method_that_are_not_strings_are_kept_as_such() {
    let envelope = read(r#"{"jsonrpc":2.0,"method":["tools/call"],"id":1}"#).expect("an envelope");
    assert!(!envelope.is_jsonrpc());
    assert_eq!(envelope.method(), None);
    assert!(!envelope.is_response(), "a method member was sent");
    let escaped = read(r#"{"jsonrpc":"2\u002e0","method":"tools\/call"}"#).expect("an envelope");
    assert!(escaped.is_jsonrpc());
    assert_eq!(escaped.method(), Some(&Method::known("tools/call").expect("known")));
    let other = read(r#"{"method":"vendor/thing"}"#).expect("an envelope");
    assert_eq!(other.method(), Some(&Method::Other("vendor/thing".to_owned())));
}

/// A member's key: the seven an envelope reads, others, and escaped spellings of both.
fn key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "jsonrpc",
        "id",
        "method",
        "params",
        "_meta",
        "result",
        "error",
        "x",
        "y",
        r"\u006dethod",
        r"i\u0064",
        r"\u0078",
    ])
}

/// A member's value: the strings that matter, other scalars, and nested values with repeats.
fn value() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        r#""2.0""#,
        r#""2\u002e0""#,
        r#""tools/call""#,
        r#""initialize""#,
        r#""vendor/x""#,
        "1",
        "-2.5",
        "null",
        "true",
        r#"{"_meta":{"p":1},"name":"echo"}"#,
        r#"{"_meta":7}"#,
        r#"{"x":1,"_meta":{"a":1},"y":[2]}"#,
        r#"{"_meta":{},"name":"t","arguments":{},"task":{}}"#,
        r#"{"\u005fmeta":{"a":1},"_meta":2}"#,
        r#"{"_meta":{"k":1,"k":1}}"#,
        r#"{"x":1,"x":{"_meta":1}}"#,
        r#"{"k":1,"k":2}"#,
        "[[[1]]]",
        r#"["a",{"b":null}]"#,
        "1e400",
    ])
    .prop_map(str::to_owned)
}

/// An object of such members, at times mangled: cut short, a byte that is not UTF-8, a stray quote;
/// or a top-level value of another kind.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let object = prop::collection::vec((key(), value()), 0..7).prop_map(|members| {
        let members: Vec<String> = members.iter().map(|(k, v)| format!(r#""{k}":{v}"#)).collect();
        format!("{{{}}}", members.join(","))
    });
    let other =
        prop::sample::select(vec!["[1]", r#""s""#, "0", "false", "null", "", "  "]).prop_map(str::to_owned);
    (prop_oneof![6 => object, 1 => other], any::<prop::sample::Index>(), 0u8..8)
        .prop_map(|(text, at, mutation)| crate::reader::tests::mangle(text.into_bytes(), at, at, mutation))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    #[test]
    fn reads_what_the_map_and_from_object_read(bytes in body()) {
        let (once, oracle) = (read_envelope(&bytes), two_steps(&bytes));
        prop_assert_eq!(ordered(&once), ordered(&oracle), "{}", String::from_utf8_lossy(&bytes));
        prop_assert_eq!(once, oracle);
    }
}
