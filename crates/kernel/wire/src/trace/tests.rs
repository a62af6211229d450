//! The parsers against W3C Trace Context level 1 and W3C Baggage: each rule a value can break.

use serde_json::json;

use super::*;

const VALID: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

fn meta(value: serde_json::Value) -> RequestMeta {
    RequestMeta::new(Some(value))
}

#[test]
fn a_version_00_traceparent_gives_its_ids_and_flags() {
    let parent = TraceParent::parse(VALID).expect("valid");
    assert_eq!(parent.version(), 0);
    assert_eq!(parent.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(parent.trace_id().to_bytes()[0], 0x0a);
    assert_eq!(parent.parent_id().to_string(), "00f067aa0ba902b7");
    assert_eq!(parent.parent_id().to_bytes()[7], 0xb7);
    assert_eq!((parent.flags(), parent.is_sampled()), (1, true));
    assert_eq!(parent.to_string(), VALID);
    let unsampled = TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00").unwrap();
    assert!(!unsampled.is_sampled());
    // Version 00 defines only `sampled`, but keeps every flag it was sent.
    assert_eq!(
        TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-09").unwrap().flags(),
        9
    );
}

#[test]
fn refuses_a_traceparent_of_each_malformed_shape() {
    for value in [
        "",
        "00",
        // One digit short, one too many.
        "00-0af7651916cd43dd8448eb211c80319-00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-011",
        // Version 00 has nothing after the flags.
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra",
        // Separators.
        "00_0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c_00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7_01",
        // Not hex.
        "00-0af7651916cd43dd8448eb211c80319g-00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902bz-01",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-0x",
        "0x-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
        // White space is not trimmed.
        " 00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01 ",
        // Version ff is invalid.
        "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
    ] {
        assert_eq!(TraceParent::parse(value), None, "{value:?}");
    }
}

#[test]
fn refuses_uppercase_hex_in_every_field() {
    for value in [
        "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c-00F067AA0BA902B7-01",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-0A",
        "0A-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
    ] {
        assert_eq!(TraceParent::parse(value), None, "{value}");
    }
}

#[test]
fn refuses_all_zero_trace_and_parent_ids() {
    assert_eq!(TraceParent::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01"), None);
    assert_eq!(TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"), None);
}

#[test]
fn reads_a_future_version_by_the_level_1_rules() {
    // A later version may add fields after a `-`; only `sampled` of its flags is kept.
    let later = TraceParent::parse("cc-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-03-what-ever")
        .expect("a later version with more fields");
    assert_eq!((later.version(), later.flags()), (0xcc, 1));
    assert_eq!(later.to_string(), VALID, "passed on as version 00");
    assert!(TraceParent::parse("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00").is_some());
    // After the flags: the end or a dash, nothing else; never shorter than 55 bytes.
    assert_eq!(TraceParent::parse("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01x"), None);
    assert_eq!(TraceParent::parse("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-1"), None);
    // The fixed fields keep their rules in any version.
    assert_eq!(TraceParent::parse("01-00000000000000000000000000000000-00f067aa0ba902b7-01-x"), None);
    assert_eq!(TraceParent::parse("01-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01-x"), None);
}

#[test]
fn tracestate_is_kept_normalized_and_bounded() {
    let state = TraceState::parse("rojo=00f067aa0ba902b7 , congo=t61rcWkgMzE,,\t").expect("valid");
    assert_eq!(state.as_str(), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    assert_eq!(state.members().collect::<Vec<_>>(), [("rojo", "00f067aa0ba902b7"), ("congo", "t61rcWkgMzE")]);
    assert!(TraceState::parse("tenant1@sys=x,a-b*c/d_e=v a").is_some());
    // A space after a value is the list's optional white space, not part of the value.
    assert_eq!(TraceState::parse("a=b ").map(|s| s.as_str().to_owned()), Some("a=b".to_owned()));
    assert_eq!(format!("{state:?}"), "TraceState(2 members)", "Debug shows no member");
    // Several header values are one list.
    let two = TraceState::parse_all(["a=1", "b=2"]).expect("valid");
    assert_eq!(two.as_str(), "a=1,b=2");
}

#[test]
fn refuses_a_tracestate_that_breaks_its_grammar() {
    for value in [
        "Rojo=1",              // uppercase key
        "1abc=1",              // simple key starts with a letter
        "a=",                  // empty value
        "a=b=c",               // `=` in a value
        "a",                   // no value
        "a=1,a=2",             // repeated key
        "@sys=1",              // empty tenant
        "t@=1",                // empty system
        "t@1sys=1",            // system starts with a letter
        "t@abcdefghijklmno=1", // system over 14
        "a=\u{7f}",            // not printable
        "a=é",                 // not ASCII
    ] {
        assert_eq!(TraceState::parse(value), None, "{value:?}");
    }
    let long_key = format!("{}=1", "a".repeat(257));
    assert_eq!(TraceState::parse(long_key), None);
    let long_value = format!("a={}", "v".repeat(257));
    assert_eq!(TraceState::parse(long_value), None);
}

#[test]
fn refuses_a_tracestate_over_32_members_or_512_bytes() {
    let members = |n: usize| (0..n).map(|i| format!("k{i}=v")).collect::<Vec<_>>().join(",");
    assert!(TraceState::parse(members(32)).is_some());
    assert_eq!(TraceState::parse(members(33)), None);
    let at_cap = format!("a={}", "v".repeat(MAX_TRACESTATE_BYTES - 2));
    assert_eq!(at_cap.len(), MAX_TRACESTATE_BYTES);
    // A value is at most 256: the bytes bound is reached with several members.
    let filler = |n| (0..n).map(|i| format!("k{i:02}={}", "v".repeat(250))).collect::<Vec<_>>();
    assert!(TraceState::parse_all(filler(1)).is_some());
    assert_eq!(TraceState::parse_all(filler(3)), None, "over 512 bytes across three values");
}

#[test]
fn baggage_is_kept_normalized_and_decoded_on_request() {
    let baggage =
        Baggage::parse("userId=alice, serverNode=DF%2028 ;p1;p2 = x,isProduction=false").expect("valid");
    assert_eq!(baggage.as_str(), "userId=alice,serverNode=DF%2028;p1;p2=x,isProduction=false");
    let members: Vec<_> = baggage.members().collect();
    assert_eq!(members.len(), 3);
    assert_eq!(
        (members[1].key, members[1].raw_value, members[1].properties),
        ("serverNode", "DF%2028", "p1;p2=x")
    );
    assert_eq!(members[1].value(), "DF 28");
    assert_eq!(members[0].value(), "alice");
    assert!(Baggage::parse("k=").is_some(), "an empty value is a value");
    assert_eq!(Baggage::parse("k=%C3%A9").unwrap().members().next().unwrap().value(), "é");
    assert_eq!(format!("{baggage:?}"), "Baggage(3 members)", "Debug shows no member");
}

#[test]
fn refuses_baggage_that_breaks_its_grammar() {
    for value in [
        "",
        "k",
        "=v",
        "k=v,",
        ",k=v",
        "k=v v",
        "k=\"v\"",
        "k=v\\",
        "k y=v",
        "k=%2",
        "k=%zz",
        "k=%FF",
        "k=v;",
        "k=v;=x",
        "k=v;p=a b",
    ] {
        assert_eq!(Baggage::parse(value), None, "{value:?}");
    }
}

#[test]
fn refuses_baggage_over_64_members_or_8192_bytes() {
    let members = |n: usize| (0..n).map(|i| format!("k{i}=v")).collect::<Vec<_>>().join(",");
    assert!(Baggage::parse(members(64)).is_some());
    assert_eq!(Baggage::parse(members(65)), None);
    let at_cap = format!("k={}", "v".repeat(MAX_BAGGAGE_BYTES - 2));
    assert!(Baggage::parse(&at_cap).is_some());
    assert_eq!(Baggage::parse(format!("{at_cap}v")), None);
}

#[test]
fn the_meta_carrier_reads_the_three_reserved_keys_and_ignores_what_is_not_a_string() {
    let carrier = TraceCarrier::from_meta(&meta(json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "traceparent": VALID, "tracestate": "rojo=1", "baggage": "k=v"
    })));
    let context = carrier.context().expect("a context");
    assert_eq!(context.parent().to_string(), VALID);
    assert_eq!(context.state().map(TraceState::as_str), Some("rojo=1"));
    assert_eq!(carrier.baggage().map(Baggage::as_str), Some("k=v"));
    let numbers = TraceCarrier::from_meta(&meta(json!({"traceparent": 7, "baggage": ["k=v"]})));
    assert!(numbers.is_empty());
    assert!(TraceCarrier::from_meta(&meta(json!("traceparent"))).is_empty());
    assert!(TraceCarrier::from_meta(&RequestMeta::default()).is_empty());
}

#[test]
fn a_tracestate_without_a_valid_traceparent_is_dropped_with_it() {
    let carrier = TraceCarrier::from_meta(&meta(json!({"traceparent": "00-bad", "tracestate": "a=1"})));
    assert!(carrier.is_empty());
    // An invalid tracestate does not spoil a valid traceparent.
    let kept = TraceCarrier::from_meta(&meta(json!({"traceparent": VALID, "tracestate": "A=1"})));
    assert_eq!(kept.context().map(|c| c.state().is_none()), Some(true));
}

#[test]
fn a_traceparent_sent_twice_is_invalid() {
    let twice = TraceCarrier::from_values([VALID, VALID], None::<&str>, None::<&str>);
    assert!(twice.context().is_none());
}

#[test]
fn the_first_source_with_a_valid_traceparent_wins_and_the_other_is_linked() {
    let other = "00-11111111111111111111111111111111-2222222222222222-00";
    let meta_carrier = TraceCarrier::from_values([VALID], ["m=1"], None::<&str>);
    let header = TraceCarrier::from_values([other], ["h=1"], ["k=v"]);
    let both = meta_carrier.clone().or(header.clone());
    assert_eq!(both.context().map(|c| c.parent().to_string()), Some(VALID.to_owned()));
    assert_eq!(both.context().and_then(TraceContext::state).map(TraceState::as_str), Some("m=1"));
    assert_eq!(both.linked().map(ToString::to_string), Some(other.to_owned()));
    assert_eq!(
        both.baggage().map(Baggage::as_str),
        Some("k=v"),
        "baggage from the first source that has one"
    );
    // A malformed first source falls back whole to the second.
    let malformed = TraceCarrier::from_values(["00-nope"], ["m=1"], None::<&str>);
    let fallen = malformed.or(header.clone());
    assert_eq!(fallen.context().map(|c| c.parent().to_string()), Some(other.to_owned()));
    assert_eq!(fallen.context().and_then(TraceContext::state).map(TraceState::as_str), Some("h=1"));
    assert!(fallen.linked().is_none());
    // The same span twice is no link.
    assert!(meta_carrier.clone().or(meta_carrier).linked().is_none());
    assert_eq!(TraceCarrier::default().or(TraceCarrier::default()), TraceCarrier::default());
}
