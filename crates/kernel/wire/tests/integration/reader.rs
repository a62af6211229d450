//! Pins the bounded reader's rules: emptiness, depth, decoding, duplicate keys, shape, and their order.

use mcp_kernel_wire::reader::{JsonKind, read_value};
use mcp_kernel_wire::{ErrorObject, MAX_DEPTH, ReadError, code, read_message};
use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};

/// `depth` nested arrays around `inner`.
fn nested_arrays(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
}

/// `depth` nested objects, each `{"k": …}`, innermost `{}`.
fn nested_objects(depth: usize) -> String {
    format!("{}{{}}{}", r#"{"k":"#.repeat(depth - 1), "}".repeat(depth - 1))
}

#[test]
fn whitespace_only_is_empty() {
    for body in [&b""[..], b" ", b"\t\r\n ", b"\n\n\n"] {
        assert_eq!(read_message(body), Err(ReadError::Empty));
        assert_eq!(read_value(body), Err(ReadError::Empty));
    }
    // Form feed and no-break space are not JSON whitespace.
    assert_eq!(read_value(b"\x0c"), Err(ReadError::Parse));
    assert_eq!(read_value("\u{a0}".as_bytes()), Err(ReadError::Parse));
}

#[test]
fn refuses_65_levels_admits_64() {
    assert_eq!(MAX_DEPTH, 64);
    assert!(read_value(nested_arrays(64, "").as_bytes()).is_ok());
    assert_eq!(read_value(nested_arrays(65, "").as_bytes()), Err(ReadError::TooDeep));
    assert!(read_message(nested_objects(64).as_bytes()).is_ok());
    assert_eq!(read_message(nested_objects(65).as_bytes()), Err(ReadError::TooDeep));
    // A top-level `{}` is depth 1: 63 arrays inside one object are 64 levels.
    let mixed = format!(r#"{{"a":{}}}"#, nested_arrays(63, "1"));
    assert!(read_message(mixed.as_bytes()).is_ok());
    let mixed = format!(r#"{{"a":{}}}"#, nested_arrays(64, "1"));
    assert_eq!(read_message(mixed.as_bytes()), Err(ReadError::TooDeep));
    // Depth is nesting, not the number of containers.
    let wide = format!("[{}]", vec![nested_arrays(63, ""); 100].join(","));
    assert!(read_value(wide.as_bytes()).is_ok());
}

#[test]
fn refuses_100000_deep_nesting_before_decoding() {
    let deep = nested_arrays(100_000, "");
    assert_eq!(read_value(deep.as_bytes()), Err(ReadError::TooDeep));
    assert_eq!(read_message(deep.as_bytes()), Err(ReadError::TooDeep));
    // Truncated and invalid past the cap: the depth refusal comes first, without decoding.
    let mut truncated = "{\"a\":".repeat(100_000).into_bytes();
    truncated.extend_from_slice(b"\xff\xfe garbage");
    assert_eq!(read_message(&truncated), Err(ReadError::TooDeep));
    // Depth wins over a later duplicate key and a later syntax error.
    let both = format!(r#"{{"a":1,"a":2,"b":{}"#, nested_arrays(70, ""));
    assert_eq!(read_message(both.as_bytes()), Err(ReadError::TooDeep));
}

#[test]
fn brackets_inside_strings_do_not_count() {
    let inside = format!(r#"{{"a":"{}","b":"\"{}\\"}}"#, "[{".repeat(500), "[".repeat(500));
    let value = read_message(inside.as_bytes()).unwrap();
    assert_eq!(value["a"], Value::String("[{".repeat(500)));
    // An escaped backslash closes nothing: the quote after it ends the string.
    let escaped = format!(r#"["\\",{}]"#, nested_arrays(64, ""));
    assert_eq!(read_value(escaped.as_bytes()), Err(ReadError::TooDeep));
}

#[test]
fn refuses_duplicate_key_at_top_level() {
    let e = read_message(br#"{"jsonrpc":"2.0","method":"ping","method":"tools/call","id":1}"#);
    assert_eq!(e, Err(ReadError::DuplicateKey("method".into())));
}

#[test]
fn refuses_duplicate_key_at_depth() {
    let body = br#"{"params":{"arguments":{"list":[{"x":1},{"y":2,"z":{"q":1,"q":1}}]}}}"#;
    assert_eq!(read_message(body), Err(ReadError::DuplicateKey("q".into())));
    assert_eq!(read_value(br#"[[{"q":1,"q":1}]]"#), Err(ReadError::DuplicateKey("q".into())));
    // The same key in sibling or nested objects is not a repeat.
    assert!(read_message(br#"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#).is_ok());
}

#[test]
fn refuses_duplicate_after_unescaping() {
    assert_eq!(read_message(br#"{"a":1,"\u0061":2}"#), Err(ReadError::DuplicateKey("a".into())));
    assert_eq!(read_message(br#"{"\u00e9":1,"\u00E9":2}"#), Err(ReadError::DuplicateKey("\u{e9}".into())));
    assert_eq!(read_message("{\"é\":1,\"\\u00e9\":2}".as_bytes()), Err(ReadError::DuplicateKey("é".into())));
    assert_eq!(read_message(br#"{"a\/b":1,"a/b":2}"#), Err(ReadError::DuplicateKey("a/b".into())));
    // Different decoded strings are different keys.
    assert!(read_message(br#"{"a":1,"A":2,"a ":3}"#).is_ok());
}

#[test]
fn names_the_first_repeated_key() {
    let body = br#"{"a":1,"b":{"c":1,"c":2},"a":2}"#;
    assert_eq!(read_message(body), Err(ReadError::DuplicateKey("c".into())));
    let body = br#"{"a":1,"a":{"c":1,"c":2},"b":1,"b":2}"#;
    assert_eq!(read_message(body), Err(ReadError::DuplicateKey("a".into())));
}

#[test]
fn a_syntax_error_anywhere_outranks_a_duplicate_key() {
    assert_eq!(read_message(br#"{"a":1,"a":2"#), Err(ReadError::Parse));
    assert_eq!(read_message(br#"{"a":1,"a":2,"b":nul}"#), Err(ReadError::Parse));
    assert_eq!(read_message(br#"{"a":1,"a":{"b":[1,}}"#), Err(ReadError::Parse));
    assert_eq!(read_message(br#"{"a":1,"a":2} x"#), Err(ReadError::Parse));
}

#[test]
fn a_duplicate_key_outranks_the_shape() {
    assert_eq!(read_message(br#"[{"a":1,"a":2}]"#), Err(ReadError::DuplicateKey("a".into())));
}

#[test]
fn key_text_cannot_forge_duplicate_error() {
    let forgeries: [&[u8]; 5] = [
        br#"{"duplicate key":1}"#,
        br#"{"duplicate key `a`":1,"Request body repeats a key: duplicate key \"a\"":2}"#,
        br#"{"duplicate key":1"#,
        br#"{"duplicate field `a`": }"#,
        br#"{"a":"duplicate key \"a\"" "#,
    ];
    let results: Vec<_> = forgeries.iter().map(|b| read_message(b)).collect();
    assert!(results[0].is_ok());
    assert!(results[1].is_ok());
    assert_eq!(&results[2..], &[Err(ReadError::Parse), Err(ReadError::Parse), Err(ReadError::Parse)]);
}

#[test]
fn refuses_batch_as_not_an_object() {
    let batch = br#"[{"jsonrpc":"2.0","method":"ping","id":1}]"#;
    assert_eq!(read_message(batch), Err(ReadError::NotAnObject(JsonKind::Array)));
    assert!(read_value(batch).unwrap().is_array());
    assert_eq!(read_message(b"[]"), Err(ReadError::NotAnObject(JsonKind::Array)));
}

#[test]
fn refuses_every_other_top_level_kind() {
    let cases: [(&[u8], JsonKind); 6] = [
        (b"\"hi\"", JsonKind::String),
        (b"  -1.5e3 ", JsonKind::Number),
        (b"0", JsonKind::Number),
        (b"true", JsonKind::Bool),
        (b"false", JsonKind::Bool),
        (b"null", JsonKind::Null),
    ];
    for (body, kind) in cases {
        assert_eq!(read_message(body), Err(ReadError::NotAnObject(kind)));
        assert!(read_value(body).is_ok());
    }
}

#[test]
fn trailing_garbage_is_parse_error() {
    for body in [&br#"{} {}"#[..], b"{}x", b"{}\0", b"{}}", b"1 2", b"{},", b"{}\x0c"] {
        assert_eq!(read_value(body), Err(ReadError::Parse), "{:?}", String::from_utf8_lossy(body));
    }
    // Trailing JSON whitespace is fine.
    assert!(read_message(b" {} \r\n\t").is_ok());
}

#[test]
fn invalid_utf8_is_parse_error() {
    for body in [
        &b"{\"a\":\"\xff\"}"[..],
        b"{\"\xc3\":1}",
        b"{\"a\":\"\xed\xa0\x80\"}", // an encoded surrogate
        b"\xef\xbb\xbf{}",           // a byte-order mark is not JSON
        b"\xff",
    ] {
        assert_eq!(read_value(body), Err(ReadError::Parse), "{body:?}");
    }
    // A lone surrogate escape is not a Unicode string either.
    assert_eq!(read_value(br#""\ud800""#), Err(ReadError::Parse));
}

#[test]
fn other_decode_failures_are_parse_errors() {
    for body in
        [&b"{"[..], b"{'a':1}", b"{\"a\":1,}", b"[1,]", b"NaN", b"1e400", b"01", b"{\"a\"}", b"\"\x01\""]
    {
        assert_eq!(read_value(body), Err(ReadError::Parse), "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn agrees_with_serde_json_on_valid_input() {
    let bodies = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2.5,-3,null,true,"s"]}}}"#,
        r#"{"big":18446744073709551615,"neg":-9223372036854775808,"f":1.0e-7,"z":-0,"e":"\ud83d\ude00\n\u0000"}"#,
        r#"{"z":1,"a":2,"m":{"y":[],"b":{}}}"#,
        r#"[1,"two",{"three":3},[[]]]"#,
        r#""just a string""#,
        "12345678901234567890123",
    ];
    for body in bodies {
        let ours = read_value(body.as_bytes()).unwrap();
        let theirs: Value = serde_json::from_str(body).unwrap();
        assert_eq!(ours, theirs, "{body}");
        // Key order is preserved as written.
        assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&theirs).unwrap());
    }
    let message = read_message(bodies[2].as_bytes()).unwrap();
    assert_eq!(message.keys().collect::<Vec<_>>(), ["z", "a", "m"]);
    assert_eq!(Value::Object(message), json!({"z":1,"a":2,"m":{"y":[],"b":{}}}));
}

#[test]
fn errors_map_to_their_objects_codes_and_status() {
    let cases = [
        (ReadError::Empty, ErrorObject::empty_body(), code::PARSE_ERROR),
        (ReadError::Parse, ErrorObject::parse_error(), code::PARSE_ERROR),
        (ReadError::TooDeep, ErrorObject::too_deep(MAX_DEPTH), code::INVALID_REQUEST),
        (ReadError::DuplicateKey("k".into()), ErrorObject::duplicate_key("k"), code::INVALID_REQUEST),
        (
            ReadError::NotAnObject(JsonKind::Array),
            ErrorObject::not_an_object("an array"),
            code::INVALID_REQUEST,
        ),
        (
            ReadError::NotAnObject(JsonKind::String),
            ErrorObject::not_an_object("a string"),
            code::INVALID_REQUEST,
        ),
        (
            ReadError::NotAnObject(JsonKind::Number),
            ErrorObject::not_an_object("a number"),
            code::INVALID_REQUEST,
        ),
        (
            ReadError::NotAnObject(JsonKind::Bool),
            ErrorObject::not_an_object("a boolean"),
            code::INVALID_REQUEST,
        ),
        (ReadError::NotAnObject(JsonKind::Null), ErrorObject::not_an_object("null"), code::INVALID_REQUEST),
    ];
    for (error, object, code) in cases {
        assert_eq!(error.code(), code, "{error:?}");
        assert_eq!(error.to_error_object(), object, "{error:?}");
        assert_eq!(object.code, code);
        assert_eq!(error.http_status(), 400);
        assert_eq!(error.to_string(), object.message);
    }
    let boxed: Box<dyn std::error::Error> = Box::new(ReadError::TooDeep);
    assert!(boxed.to_string().contains("64"));
}

#[test]
fn a_long_duplicate_key_is_shortened_in_the_error_object() {
    let key = "k".repeat(10_000);
    let body = format!(r#"{{"{key}":1,"{key}":2}}"#);
    let error = read_message(body.as_bytes()).unwrap_err();
    assert_eq!(error, ReadError::DuplicateKey(key));
    assert!(error.to_error_object().message.len() < 300);
}

/// Arbitrary JSON values, depth-bounded, with unique keys; floats exactly representable in short decimals.
fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        // Few significant digits: serde_json (without `float_roundtrip`) reads these back exactly.
        (any::<i16>(), 0u32..=10).prop_map(|(m, e)| Value::from(f64::from(m) / f64::from(1u32 << e))),
        any::<String>().prop_map(Value::String),
        "[\"\\\\/a\u{0}\u{1f}\u{7f}\u{e9}\u{1f600}]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 128, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #[test]
    fn round_trips_arbitrary_values(value in arb_value()) {
        let compact = serde_json::to_vec(&value).unwrap();
        prop_assert_eq!(read_value(&compact), Ok(value.clone()));
        let pretty = serde_json::to_vec_pretty(&value).unwrap();
        prop_assert_eq!(read_value(&pretty), Ok(value.clone()));
        match value {
            Value::Object(map) => prop_assert_eq!(read_message(&compact), Ok(map)),
            _ => prop_assert!(matches!(read_message(&compact), Err(ReadError::NotAnObject(_)))),
        }
    }

    #[test]
    fn agrees_with_serde_json_on_arbitrary_floats(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        let bytes = serde_json::to_vec(&Value::Number(Number::from_f64(f).unwrap())).unwrap();
        prop_assert_eq!(read_value(&bytes), Ok(serde_json::from_slice::<Value>(&bytes).unwrap()));
    }

    #[test]
    fn depth_is_refused_exactly_past_the_cap(depth in 1usize..200, object in any::<bool>()) {
        let body = if object { nested_objects(depth) } else { nested_arrays(depth, "") };
        let result = read_value(body.as_bytes());
        if depth > MAX_DEPTH {
            prop_assert_eq!(result, Err(ReadError::TooDeep));
        } else {
            prop_assert!(result.is_ok());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check_against_serde_json(&bytes)?;
    }

    #[test]
    fn json_ish_strings_never_panic(text in "[{}\\[\\]\":,\\\\ a1]{0,256}") {
        check_against_serde_json(text.as_bytes())?;
    }
}

/// Whatever the reader answers is consistent with what plain `serde_json` makes of the same bytes.
fn check_against_serde_json(bytes: &[u8]) -> Result<(), TestCaseError> {
    let ours = read_value(bytes);
    let theirs = serde_json::from_slice::<Value>(bytes);
    match &ours {
        Ok(value) => prop_assert_eq!(theirs.ok(), Some(value.clone())),
        // Every syntax error we report, serde_json reports too.
        Err(ReadError::Parse) => prop_assert!(theirs.is_err()),
        // A repeat is only reported for bytes that otherwise decode.
        Err(ReadError::DuplicateKey(_)) => prop_assert!(theirs.is_ok()),
        Err(ReadError::Empty) => prop_assert!(bytes.iter().all(|b| b" \t\r\n".contains(b))),
        Err(ReadError::TooDeep) => {
            let openers = bytes.iter().filter(|&&b| matches!(b, b'[' | b'{')).count();
            prop_assert!(openers > MAX_DEPTH);
        }
        Err(ReadError::NotAnObject(_)) => prop_assert!(false, "read_value never checks the shape"),
    }
    match read_message(bytes) {
        Ok(map) => prop_assert_eq!(ours, Ok(Value::Object(map))),
        Err(ReadError::NotAnObject(_)) => prop_assert!(ours.is_ok_and(|v| !v.is_object())),
        Err(e) => prop_assert_eq!(ours, Err(e)),
    }
    Ok(())
}

#[test]
fn a_malformed_repeated_value_is_a_parse_error_not_a_duplicate() {
    assert_eq!(read_value(b"{\"a\":1,\"a\":\"\xff\"}"), Err(ReadError::Parse));
    assert_eq!(read_value(br#"{"a":1,"a":"\ud800"}"#), Err(ReadError::Parse));
    assert_eq!(read_value(br#"{"a":1,"a":1e400}"#), Err(ReadError::Parse));
    assert_eq!(read_value(b"{\"a\":1,\"a\":\"\xed\xa0\x80\"}"), Err(ReadError::Parse));
}
