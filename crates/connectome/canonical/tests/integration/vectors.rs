//! Test vectors of docs/connectome.md §C, byte for byte and hash for hash: CC-15, CC-16, CC-17, plus the
//! CC-4…CC-14 cases, the CC-11 float placement and the CC-13 verifier.

use std::collections::BTreeMap;

use connectome_canonical::{
    Algorithm, CanonicalGraph, EdgeKind, GraphReason, HashValueError, Integer, Labels, Level, NodeKind,
    Provenance, Sign, Uncanonical, Value, VerifyError, Weight, check, digest, encode, encode_sidecar,
    encode_value, format_float, hash_hex, labels_from_json, text_from_bytes, to_hex, verify,
};

use crate::common::{ECHO, cc15_graph, edge, golden_graph, labels, node};

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&digest(Algorithm::Sha256, bytes))
}

// ---------------------------------------------------------------------------------------------- CC-15

const CC15_BYTES: &str = r#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"s/server","kind":"server","labels":{},"level":"server"},{"id":"s/tool/t","kind":"tool","labels":{"mode":"read_only"},"level":"server"}],"edges":[{"from":"s/server","kind":"invoke","provenance":"declared","sign":"unset","to":"s/tool/t"}]}"#;
const CC15_SHA256: &str = "a401cd47f0f0410d17248538eb8a3ef00018f6a31bf6fb6a7b9b0ba3377f570e";
const CC15_SHA384: &str =
    "f5b9b2f4fe21a4bfe88721d804f4f82d167f73f7dd59b1a64ae0196f4cf78f05a6b9a3efa6d02e7362469796dbba53dd";
const CC15_SHA512: &str = "26cacb025eeaeabb0c441a293882ab81ec2436b80559618fd700dc494f9a5d2e2c6d46cee69a68cbdc84746aa9d64a4a11da027df7b0bc733ba1091031ee2e78";
const CC15_V2_SHA256: &str = "de6db70dc7316885176c4a7493ee07c46e33ec3bb90951dc54908a74e81dc90d";

/// The same bytes with another algorithm member.
fn with_algorithm(bytes: &str, name: &str) -> String {
    bytes.replacen(r#""algorithm":"sha256""#, &format!(r#""algorithm":"{name}""#), 1)
}

/// The schema-2 (or 1) form: no algorithm member.
fn legacy(bytes: &str, version: u8) -> String {
    bytes.replacen(
        r#""schema_version":3,"algorithm":"sha256","#,
        &format!(r#""schema_version":{version},"#),
        1,
    )
}

#[test]
fn cc15_bytes_and_sha256() {
    let bytes = encode(&cc15_graph(), Algorithm::Sha256).unwrap();
    assert_eq!(text(&bytes), CC15_BYTES);
    assert_eq!(hash_hex(&cc15_graph(), Algorithm::Sha256).unwrap(), CC15_SHA256);
    assert_eq!(hash_hex(&cc15_graph(), Algorithm::default()).unwrap(), CC15_SHA256);
}

#[test]
fn cc15_sha384_and_sha512() {
    for (alg, expected) in [(Algorithm::Sha384, CC15_SHA384), (Algorithm::Sha512, CC15_SHA512)] {
        let bytes = encode(&cc15_graph(), alg).unwrap();
        assert_eq!(text(&bytes), with_algorithm(CC15_BYTES, alg.name()));
        let hex = hash_hex(&cc15_graph(), alg).unwrap();
        assert_eq!(hex, expected);
        assert_eq!(hex.len(), alg.output_len() * 2);
    }
}

#[test]
fn cc15_v2_hash() {
    let v2 = legacy(CC15_BYTES, 2);
    assert!(v2.starts_with(r#"{"schema_version":2,"nodes":"#));
    assert_eq!(sha256_hex(v2.as_bytes()), CC15_V2_SHA256);
}

// ---------------------------------------------------------------------------------------------- CC-16

const GOLDEN_BYTES: &str = r#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"srv/boundary/application/beam_mcp","kind":"module","labels":{},"level":"boundary"},{"id":"srv/module/Enum","kind":"module","labels":{},"level":"module"},{"id":"srv/resource/r:%2F%2Fa","kind":"resource","labels":{},"level":"server"},{"id":"srv/server","kind":"server","labels":{},"level":"server"},{"id":"srv/tool/écho","kind":"tool","labels":{"command_class":"observe","mode":"read_only","nested":{"n":2,"ok":true},"title":"café"},"level":"server"}],"edges":[{"from":"srv/module/Enum","kind":"message","provenance":"observed","sign":"unset","to":"srv/boundary/application/beam_mcp"},{"from":"srv/server","kind":"invoke","provenance":"declared","sign":"unset","to":"srv/tool/écho"},{"from":"srv/tool/écho","kind":"invoke","provenance":"declared","sign":"unset","to":"srv/module/Enum"},{"from":"srv/tool/écho","kind":"read","provenance":"observed","sign":"unset","to":"srv/resource/r:%2F%2Fa"}]}"#;
const GOLDEN_SHA256: &str = "e442feaaccd752ddfe3a907a88bcfb19c1d31f4be3fc20a3125ba7b85584caf7";
const GOLDEN_SHA384: &str =
    "24d90e232e23d85ced6c9e92e34d7b202ed01fbacf4fec2032951214327970e5b5904dd04d27a79ae17b7c124c213685";
const GOLDEN_SHA512: &str = "21637ad9bbfb72132e751e2f4ead2e9a902d42dedba664c8f199527dd05304158116d0499b02b8441c028e8cf60de7783c398ffdcb97115b9c7a2ba90f495fe4";
const GOLDEN_V2_SHA256: &str = "026b514b8e8d24c8310fae7a9b2fc74e0afec46339ddae4dc2d34b400261726d";
const GOLDEN_V1_SHA256: &str = "74495cc3cf4c6c4a3453d6dad0fefeb5313c5009f0866794f45d81e96fd4ed73";
const GOLDEN_SIDECAR: &str = r#"{"schema_version":3,"weights":[{"from":"srv/module/Enum","kind":"message","provenance":"observed","to":"srv/boundary/application/beam_mcp","weight":1},{"from":"srv/tool/écho","kind":"read","provenance":"observed","to":"srv/resource/r:%2F%2Fa","weight":3}]}"#;

#[test]
fn cc16_golden_bytes() {
    let bytes = encode(&golden_graph(), Algorithm::Sha256).unwrap();
    assert_eq!(text(&bytes), GOLDEN_BYTES);
    assert_eq!(bytes.len(), 955);
}

#[test]
fn cc16_golden_hashes() {
    let g = golden_graph();
    assert_eq!(hash_hex(&g, Algorithm::Sha256).unwrap(), GOLDEN_SHA256);
    assert_eq!(hash_hex(&g, Algorithm::Sha384).unwrap(), GOLDEN_SHA384);
    assert_eq!(hash_hex(&g, Algorithm::Sha512).unwrap(), GOLDEN_SHA512);
    for alg in Algorithm::ALL {
        // CC-1: envelopes of one graph differ only in the algorithm value.
        assert_eq!(text(&encode(&g, alg).unwrap()), with_algorithm(GOLDEN_BYTES, alg.name()));
    }
}

#[test]
fn cc16_golden_v2_and_v1_hashes() {
    assert_eq!(sha256_hex(legacy(GOLDEN_BYTES, 2).as_bytes()), GOLDEN_V2_SHA256);
    let v1 = legacy(GOLDEN_BYTES, 1).replace(r#""sign":"unset""#, r#""sign":"unknown""#);
    assert_eq!(sha256_hex(v1.as_bytes()), GOLDEN_V1_SHA256);
}

#[test]
fn cc16_golden_sidecar() {
    assert_eq!(text(&encode_sidecar(&golden_graph()).unwrap()), GOLDEN_SIDECAR);
}

// ---------------------------------------------------------------------------------------------- CC-18 properties

#[test]
fn bytes_do_not_depend_on_input_order() {
    let mut g = golden_graph();
    g.nodes.reverse();
    g.edges.reverse();
    assert_eq!(text(&encode(&g, Algorithm::Sha256).unwrap()), GOLDEN_BYTES);
    g.nodes.rotate_left(2);
    g.edges.rotate_left(1);
    assert_eq!(text(&encode(&g, Algorithm::Sha256).unwrap()), GOLDEN_BYTES);
}

#[test]
fn bytes_do_not_depend_on_weights() {
    let mut g = golden_graph();
    for e in &mut g.edges {
        e.weight = Some(Weight::Float(0.5));
    }
    assert_eq!(text(&encode(&g, Algorithm::Sha256).unwrap()), GOLDEN_BYTES);
}

#[test]
fn one_label_change_flips_the_hash() {
    let mut g = golden_graph();
    let echo = g.nodes.iter_mut().find(|n| n.id == ECHO).unwrap();
    echo.labels.insert("mode".to_owned(), "read_write".into());
    assert_ne!(hash_hex(&g, Algorithm::Sha256).unwrap(), GOLDEN_SHA256);
}

// ---------------------------------------------------------------------------------------------- CC-17

fn record<const N: usize>(entries: [(&str, Value); N]) -> String {
    String::from_utf8(encode_value(&labels(entries)).unwrap()).unwrap()
}

#[test]
fn cc17_escaping() {
    let s = "a\"b\\c\n\t\u{8}\u{c}\r\u{1}\u{1f}\u{e9}/\u{0}\u{7f}\u{2028}\u{2029}\u{1F600}";
    let expected =
        concat!(r#"{"s":"a\"b\\c\n\t\b\f\r\u0001\u001fé/\u0000"#, "\u{7f}\u{2028}\u{2029}\u{1F600}\"}");
    assert_eq!(record([("s", s.into())]), expected);
}

#[test]
fn cc8_every_other_control_is_lowercase_u00xx() {
    for cp in 0u32..0x20 {
        let c = char::from_u32(cp).unwrap();
        let written = record([("s", c.to_string().into())]);
        let expected = match cp {
            0x08 => r"\b".to_owned(),
            0x09 => r"\t".to_owned(),
            0x0a => r"\n".to_owned(),
            0x0c => r"\f".to_owned(),
            0x0d => r"\r".to_owned(),
            _ => format!("\\u{cp:04x}"),
        };
        assert_eq!(written, format!("{{\"s\":\"{expected}\"}}"));
    }
}

#[test]
fn cc17_mixed_labels() {
    let inner: BTreeMap<String, Value> = labels([("k", "atom".into())]);
    let list = Value::Array(vec![1.into(), "a".into(), Value::Null, false.into(), Value::Object(inner)]);
    let written = record([
        ("flag", true.into()),
        ("none", Value::Null),
        ("n", (-3).into()),
        ("zero", 0.into()),
        ("list", list.clone()),
    ]);
    assert_eq!(
        written,
        r#"{"flag":true,"list":[1,"a",null,false,{"k":"atom"}],"n":-3,"none":null,"zero":0}"#
    );
    // The same labels on a node.
    let g = CanonicalGraph {
        nodes: vec![node(
            "x",
            NodeKind::Server,
            Level::Server,
            labels([
                ("flag", true.into()),
                ("none", Value::Null),
                ("n", (-3).into()),
                ("zero", 0.into()),
                ("list", list),
            ]),
        )],
        edges: vec![],
    };
    assert_eq!(
        text(&encode(&g, Algorithm::Sha256).unwrap()),
        r#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"x","kind":"server","labels":{"flag":true,"list":[1,"a",null,false,{"k":"atom"}],"n":-3,"none":null,"zero":0},"level":"server"}],"edges":[]}"#
    );
}

#[test]
fn cc17_bounds() {
    let written = record([
        ("a", (-1).into()),
        ("b", 9_007_199_254_740_993_u64.into()),
        ("c", Value::Object(BTreeMap::new())),
        ("d", Value::Array(vec![])),
    ]);
    assert_eq!(written, r#"{"a":-1,"b":9007199254740993,"c":{},"d":[]}"#);
    let huge = Integer::parse("-123456789012345678901234567890123456789012345").unwrap();
    assert_eq!(record([("h", huge.into())]), r#"{"h":-123456789012345678901234567890123456789012345}"#);
    assert_eq!(record([("m", i128::MIN.into())]), format!(r#"{{"m":{}}}"#, i128::MIN));
    for bad in ["", "-", "-0", "01", "+1", "1e3", "1.0", " 1"] {
        assert!(Integer::parse(bad).is_none(), "{bad:?}");
    }
}

#[test]
fn cc17_node_order_after_nfc() {
    let g = CanonicalGraph {
        nodes: vec![
            node("cafe\u{301}b", NodeKind::Server, Level::Server, Labels::new()),
            node("caf\u{e9} a", NodeKind::Server, Level::Server, Labels::new()),
        ],
        edges: vec![],
    };
    assert!("cafe\u{301}b" < "caf\u{e9} a", "raw order is the reverse");
    assert_eq!(
        text(&encode(&g, Algorithm::Sha256).unwrap()),
        r#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"café a","kind":"server","labels":{},"level":"server"},{"id":"caféb","kind":"server","labels":{},"level":"server"}],"edges":[]}"#
    );
}

#[test]
fn cc17_edge_order_to_before_kind_then_provenance() {
    let g = CanonicalGraph {
        nodes: ["a", "b", "c"].map(|id| node(id, NodeKind::Module, Level::Module, Labels::new())).into(),
        edges: vec![
            edge("a", "c", EdgeKind::Invoke, Provenance::Declared, None),
            edge("a", "b", EdgeKind::Read, Provenance::Observed, None),
            edge("a", "b", EdgeKind::Read, Provenance::Declared, None),
            edge("a", "b", EdgeKind::Invoke, Provenance::Observed, None),
        ],
    };
    let bytes = String::from_utf8(encode(&g, Algorithm::Sha256).unwrap()).unwrap();
    let edges = bytes.split(r#""edges":"#).nth(1).unwrap();
    assert_eq!(
        edges,
        r#"[{"from":"a","kind":"invoke","provenance":"observed","sign":"unset","to":"b"},{"from":"a","kind":"read","provenance":"declared","sign":"unset","to":"b"},{"from":"a","kind":"read","provenance":"observed","sign":"unset","to":"b"},{"from":"a","kind":"invoke","provenance":"declared","sign":"unset","to":"c"}]}"#
    );
}

#[test]
fn cc3_edge_order_uses_normalised_endpoints() {
    let (x, y) = ("cafe\u{301}b", "caf\u{e9} a");
    let g = CanonicalGraph {
        nodes: ["s", x, y].map(|id| node(id, NodeKind::Module, Level::Module, Labels::new())).into(),
        edges: vec![
            edge("s", x, EdgeKind::Invoke, Provenance::Declared, None),
            edge("s", y, EdgeKind::Invoke, Provenance::Declared, None),
        ],
    };
    let bytes = String::from_utf8(encode(&g, Algorithm::Sha256).unwrap()).unwrap();
    let edges = bytes.split(r#""edges":"#).nth(1).unwrap();
    assert_eq!(
        edges,
        r#"[{"from":"s","kind":"invoke","provenance":"declared","sign":"unset","to":"café a"},{"from":"s","kind":"invoke","provenance":"declared","sign":"unset","to":"caféb"}]}"#
    );
}

// ---------------------------------------------------------------------------------------------- CC-4 … CC-9

#[test]
fn cc4_keys_by_utf16_ids_by_bytes() {
    assert_eq!(record([("\u{ff01}", 1.into()), ("\u{1F600}", 2.into())]), r#"{"😀":2,"！":1}"#);
    let g = CanonicalGraph {
        nodes: ["\u{1F600}", "\u{ff01}"]
            .map(|id| node(id, NodeKind::Server, Level::Server, Labels::new()))
            .into(),
        edges: vec![],
    };
    let bytes = String::from_utf8(encode(&g, Algorithm::Sha256).unwrap()).unwrap();
    assert!(bytes.find("\"！\"").unwrap() < bytes.find("\"😀\"").unwrap());
}

#[test]
fn cc6_nfc_not_nfkc() {
    assert_eq!(record([("\u{212b}", "\u{212b}".into())]), "{\"\u{c5}\":\"\u{c5}\"}");
    assert_eq!(record([("\u{fb01}", 1.into()), ("fi", 2.into())]), "{\"fi\":2,\"\u{fb01}\":1}");
    let g = CanonicalGraph {
        nodes: ["\u{fb01}", "fi", "\u{212b}"]
            .map(|id| node(id, NodeKind::Server, Level::Server, Labels::new()))
            .into(),
        edges: vec![],
    };
    let bytes = String::from_utf8(encode(&g, Algorithm::Sha256).unwrap()).unwrap();
    assert!(bytes.contains("\"id\":\"\u{c5}\""));
    assert!(bytes.contains("\"id\":\"fi\"") && bytes.contains("\"id\":\"\u{fb01}\""));
}

#[test]
fn cc6_duplicate_id_after_nfc() {
    let g = CanonicalGraph {
        nodes: ["e\u{301}", "\u{e9}"]
            .map(|id| node(id, NodeKind::Server, Level::Server, Labels::new()))
            .into(),
        edges: vec![],
    };
    assert_eq!(check(&g), Err(Uncanonical::DuplicateIdAfterNfc { id: "\u{e9}".to_owned() }));
}

#[test]
fn cc6_duplicate_label_key_after_nfc() {
    let g = CanonicalGraph {
        nodes: vec![node(
            "n",
            NodeKind::Server,
            Level::Server,
            labels([("e\u{301}", 1.into()), ("\u{e9}", 2.into())]),
        )],
        edges: vec![],
    };
    let expected = Uncanonical::DuplicateLabelKey { id: "n".to_owned(), key: "\u{e9}".to_owned() };
    assert_eq!(check(&g), Err(expected.clone()));
    assert_eq!(encode(&g, Algorithm::Sha512), Err(expected));
    // Nested objects too.
    let nested: BTreeMap<String, Value> = labels([("\u{212b}", 1.into()), ("\u{c5}", 2.into())]);
    let g = CanonicalGraph {
        nodes: vec![node("n", NodeKind::Server, Level::Server, labels([("o", Value::Object(nested))]))],
        edges: vec![],
    };
    assert_eq!(
        check(&g),
        Err(Uncanonical::DuplicateLabelKey { id: "n".to_owned(), key: "\u{c5}".to_owned() })
    );
}

#[test]
fn cc7_invalid_utf8_refused_and_nonchars_accepted() {
    let cases: [&[u8]; 5] = [
        b"\xc0\xaf",         // overlong '/'
        b"\xe0\x80\xaf",     // overlong, three bytes
        b"\xed\xa0\x80",     // encoded surrogate U+D800
        b"\xf4\x90\x80\x80", // U+110000
        b"a\xe2\x82",        // truncated
    ];
    for bytes in cases {
        assert_eq!(
            text_from_bytes("n", "id", bytes),
            Err(Uncanonical::InvalidUtf8 { id: "n".to_owned(), field: "id".to_owned() }),
            "{bytes:?}"
        );
    }
    let ok = text_from_bytes("n", "labels", "\u{fffe}\u{ffff}\u{feff}".as_bytes()).unwrap();
    assert_eq!(record([("s", ok.into())]).as_bytes(), "{\"s\":\"\u{fffe}\u{ffff}\u{feff}\"}".as_bytes());
}

#[test]
fn cc9_floats_refused_first_label_named_with_whole_value() {
    let json: serde_json::Value =
        serde_json::from_str(r#"{"z":0.5,"b":{"x":[1,2.5]},"a":1,"big":9007199254740993}"#).unwrap();
    let err = labels_from_json("n", json.as_object().unwrap()).unwrap_err();
    assert_eq!(
        err,
        Uncanonical::LabelValue {
            id: "n".to_owned(),
            key: "b".to_owned(),
            value: serde_json::json!({"x":[1,2.5]}),
        }
    );
    let json: serde_json::Value = serde_json::from_str(r#"{"one":1.0}"#).unwrap();
    assert!(matches!(labels_from_json("n", json.as_object().unwrap()), Err(Uncanonical::LabelValue { .. })));
    let json: serde_json::Value =
        serde_json::from_str(r#"{"big":9007199254740993,"neg":-3,"s":"x","l":[null,true,{}]}"#).unwrap();
    let converted = labels_from_json("n", json.as_object().unwrap()).unwrap();
    assert_eq!(
        String::from_utf8(encode_value(&converted).unwrap()).unwrap(),
        r#"{"big":9007199254740993,"l":[null,true,{}],"neg":-3,"s":"x"}"#
    );
}

// ---------------------------------------------------------------------------------------------- CC-14 invalid_graph

#[test]
fn cc14_invalid_graph() {
    let mut g = cc15_graph();
    g.edges.push(edge("s/server", "s/tool/missing", EdgeKind::Invoke, Provenance::Declared, None));
    assert_eq!(
        check(&g),
        Err(Uncanonical::InvalidGraph(GraphReason::DanglingEdge("s/tool/missing".to_owned())))
    );

    let mut g = cc15_graph();
    g.nodes.push(g.nodes[0].clone());
    assert_eq!(check(&g), Err(Uncanonical::InvalidGraph(GraphReason::DuplicateNode("s/server".to_owned()))));

    let mut g = cc15_graph();
    let mut dup = g.edges[0].clone();
    dup.sign = Sign::Deny;
    dup.weight = Some(Weight::Int(9));
    g.edges.push(dup);
    assert!(matches!(check(&g), Err(Uncanonical::InvalidGraph(GraphReason::DuplicateEdge { .. }))));

    let mut g = cc15_graph();
    g.edges[0].weight = Some(Weight::Float(-1.0));
    assert!(matches!(encode_sidecar(&g), Err(Uncanonical::InvalidGraph(GraphReason::InvalidWeight { .. }))));
    g.edges[0].weight = Some(Weight::Float(-0.0));
    assert_eq!(
        text(&encode_sidecar(&g).unwrap()),
        r#"{"schema_version":3,"weights":[{"from":"s/server","kind":"invoke","provenance":"declared","to":"s/tool/t","weight":-0.0}]}"#
    );
}

#[test]
fn sidecar_refused_with_the_graph_reason() {
    let mut g = golden_graph();
    g.nodes.push(node("srv/tool/e\u{301}cho", NodeKind::Tool, Level::Server, Labels::new()));
    let reason = encode(&g, Algorithm::Sha256).unwrap_err();
    assert_eq!(encode_sidecar(&g), Err(reason));
}

#[test]
fn supplied_signs_are_written() {
    let mut g = cc15_graph();
    g.edges[0].sign = Sign::Ungoverned;
    assert!(text(&encode(&g, Algorithm::Sha256).unwrap()).contains(r#""sign":"ungoverned""#));
}

// ---------------------------------------------------------------------------------------------- CC-12

#[test]
fn cc12_algorithm_names() {
    for alg in Algorithm::ALL {
        assert_eq!(Algorithm::from_name(alg.name()), Ok(alg));
        assert_eq!(digest(alg, b"").len(), alg.output_len());
    }
    for bad in ["SHA256", "sha-256", "sha1", "sha3_256", ""] {
        assert!(Algorithm::from_name(bad).is_err(), "{bad}");
    }
    assert_eq!(Algorithm::default(), Algorithm::Sha256);
}

// ---------------------------------------------------------------------------------------------- CC-11

#[test]
fn cc11_float_vectors() {
    let cases: [(f64, &str); 15] = [
        (0.1, "0.1"),
        (0.0001, "0.0001"),
        (999999999999999.0, "999999999999999.0"),
        (1.0e15, "1.0e15"),
        (1.0e-5, "1.0e-5"),
        (1.0e20, "1.0e20"),
        (9.99e14, "9.99e14"),
        (3.0e6, "3.0e6"),
        (1.23456e-4, "1.23456e-4"),
        (0.001234, "0.001234"),
        (12340.0, "12340.0"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1000.0, "1.0e3"),
        (100.0, "100.0"),
    ];
    for (f, expected) in cases {
        assert_eq!(format_float(f).as_deref(), Some(expected), "{f:?}");
    }
    assert_eq!(format_float(f64::NAN), None);
    assert_eq!(format_float(f64::INFINITY), None);
}

#[test]
fn cc11_sidecar_float_weight() {
    let mut g = cc15_graph();
    g.edges[0].weight = Some(Weight::Float(1.23456e-4));
    assert!(text(&encode_sidecar(&g).unwrap()).ends_with(r#""weight":1.23456e-4}]}"#));
}

// ---------------------------------------------------------------------------------------------- CC-13

#[test]
fn cc13_verifies_v3_all_algorithms() {
    for (alg, expected) in [
        (Algorithm::Sha256, GOLDEN_SHA256),
        (Algorithm::Sha384, GOLDEN_SHA384),
        (Algorithm::Sha512, GOLDEN_SHA512),
    ] {
        let bytes = with_algorithm(GOLDEN_BYTES, alg.name());
        let v = verify(bytes.as_bytes(), expected).unwrap();
        assert_eq!((v.schema_version, v.algorithm), (3, alg));
    }
    let c15 = with_algorithm(CC15_BYTES, "sha512");
    assert_eq!(verify(c15.as_bytes(), CC15_SHA512).unwrap().algorithm, Algorithm::Sha512);
}

#[test]
fn cc13_verifies_v1_and_v2_as_held() {
    let v2 = legacy(GOLDEN_BYTES, 2);
    assert_eq!(verify(v2.as_bytes(), GOLDEN_V2_SHA256).unwrap().schema_version, 2);
    let v2 = legacy(CC15_BYTES, 2);
    assert_eq!(verify(v2.as_bytes(), CC15_V2_SHA256).unwrap().algorithm, Algorithm::Sha256);
    let v1 = legacy(GOLDEN_BYTES, 1).replace(r#""sign":"unset""#, r#""sign":"unknown""#);
    assert_eq!(verify(v1.as_bytes(), GOLDEN_V1_SHA256).unwrap().schema_version, 1);
}

#[test]
fn cc13_refusals() {
    // A v3 record without the member.
    let no_member = CC15_BYTES.replacen(r#""algorithm":"sha256","#, "", 1);
    assert_eq!(verify(no_member.as_bytes(), CC15_SHA256), Err(VerifyError::MissingAlgorithm));
    // A v2 record with one.
    let v2_member = CC15_BYTES.replacen(r#""schema_version":3"#, r#""schema_version":2"#, 1);
    assert_eq!(verify(v2_member.as_bytes(), CC15_SHA256), Err(VerifyError::UnexpectedAlgorithm));
    // An unknown algorithm name.
    let bad_name = with_algorithm(CC15_BYTES, "SHA-256");
    assert!(matches!(verify(bad_name.as_bytes(), CC15_SHA256), Err(VerifyError::UnknownAlgorithm(_))));
    // Any other version.
    for v in ["0", "4", "\"3\"", "3.0"] {
        let other = CC15_BYTES.replacen(r#""schema_version":3"#, &format!(r#""schema_version":{v}"#), 1);
        assert!(matches!(
            verify(other.as_bytes(), CC15_SHA256),
            Err(VerifyError::UnsupportedSchemaVersion(_))
        ));
    }
    // A wrong digest.
    assert!(matches!(verify(CC15_BYTES.as_bytes(), CC15_V2_SHA256), Err(VerifyError::DigestMismatch { .. })));
    // Never re-encoded: a whitespace change no longer verifies.
    let spaced = CC15_BYTES.replacen(',', ", ", 1);
    assert!(matches!(verify(spaced.as_bytes(), CC15_SHA256), Err(VerifyError::DigestMismatch { .. })));
}

#[test]
fn cc13_sign_vocabulary_by_version() {
    // v1 sign `unset` is outside its vocabulary, even though the hash matches.
    let v1_unset = legacy(CC15_BYTES, 1);
    let hex = sha256_hex(v1_unset.as_bytes());
    assert!(matches!(verify(v1_unset.as_bytes(), &hex), Err(VerifyError::MalformedSign { edge: 0, .. })));
    // v2 / v3 sign `unknown` likewise.
    for bytes in [legacy(CC15_BYTES, 2), CC15_BYTES.to_owned()] {
        let unknown = bytes.replace(r#""sign":"unset""#, r#""sign":"unknown""#);
        let hex = sha256_hex(unknown.as_bytes());
        assert!(matches!(verify(unknown.as_bytes(), &hex), Err(VerifyError::MalformedSign { .. })));
    }
    let ungoverned = CC15_BYTES.replace(r#""sign":"unset""#, r#""sign":"ungoverned""#);
    assert!(verify(ungoverned.as_bytes(), &sha256_hex(ungoverned.as_bytes())).is_ok());
}

// ---------------------------------------------------------------------------------------------- CC-12

#[test]
fn cc12_hash_value_refuses_a_record_naming_another_algorithm() {
    let record: BTreeMap<String, Value> =
        [("algorithm".to_owned(), Value::from("sha256")), ("n".to_owned(), Value::from(1))].into();
    for algorithm in [Algorithm::Sha384, Algorithm::Sha512] {
        assert_eq!(
            connectome_canonical::hash_value(&record, algorithm),
            Err(HashValueError::AlgorithmMismatch { requested: algorithm })
        );
    }
    let spelled: BTreeMap<String, Value> = [("algorithm".to_owned(), Value::from("SHA256"))].into();
    assert!(matches!(
        connectome_canonical::hash_value(&spelled, Algorithm::Sha256),
        Err(HashValueError::AlgorithmMismatch { .. })
    ));
    let not_a_string: BTreeMap<String, Value> = [("algorithm".to_owned(), Value::Null)].into();
    assert!(connectome_canonical::hash_value(&not_a_string, Algorithm::Sha256).is_err());
}

#[test]
fn cc12_hash_value_hashes_exactly_the_record_bytes() {
    let record: BTreeMap<String, Value> =
        [("algorithm".to_owned(), Value::from("sha384")), ("n".to_owned(), Value::from(1))].into();
    let bytes = connectome_canonical::encode_value(&record).unwrap();
    assert_eq!(text(&bytes), r#"{"algorithm":"sha384","n":1}"#);
    assert_eq!(
        connectome_canonical::hash_value(&record, Algorithm::Sha384).unwrap(),
        connectome_canonical::digest(Algorithm::Sha384, &bytes)
    );
    let without: BTreeMap<String, Value> = [("n".to_owned(), Value::from(1))].into();
    assert_eq!(
        connectome_canonical::hash_value(&without, Algorithm::Sha512).unwrap(),
        connectome_canonical::digest(Algorithm::Sha512, b"{\"n\":1}")
    );
}

#[test]
fn cc12_hash_value_passes_record_refusals_through() {
    let record: BTreeMap<String, Value> =
        [("\u{212b}".to_owned(), Value::from(1)), ("\u{c5}".to_owned(), Value::from(2))].into();
    assert!(matches!(
        connectome_canonical::hash_value(&record, Algorithm::Sha256),
        Err(HashValueError::Uncanonical(Uncanonical::DuplicateLabelKey { .. }))
    ));
}

#[test]
fn cb3_writer_checks_weights_before_duplicate_ids() {
    let mut g = CanonicalGraph {
        nodes: vec![
            node("a", NodeKind::Tool, Level::Server, Labels::new()),
            node("a", NodeKind::Tool, Level::Server, Labels::new()),
        ],
        edges: vec![edge("a", "a", EdgeKind::Invoke, Provenance::Declared, Some(Weight::Float(f64::NAN)))],
    };
    assert!(matches!(check(&g), Err(Uncanonical::InvalidGraph(GraphReason::InvalidWeight { .. }))));
    g.edges[0].weight = None;
    assert_eq!(check(&g), Err(Uncanonical::InvalidGraph(GraphReason::DuplicateNode("a".into()))));
}

/// `levels` nested arrays around an integer.
fn nested(levels: usize) -> Value {
    (0..levels).fold(Value::from(1), |inner, _| Value::Array(vec![inner]))
}

#[test]
fn refuses_labels_nested_deeper_than_the_bound_instead_of_exhausting_the_stack() {
    let fits = labels([("deep", nested(connectome_canonical::MAX_LABEL_DEPTH - 1))]);
    assert!(encode_value(&fits).is_ok(), "a record (level 1) and 126 arrays are 127 levels");
    let too_deep = labels([("deep", nested(connectome_canonical::MAX_LABEL_DEPTH))]);
    assert_eq!(encode_value(&too_deep), Err(Uncanonical::TooDeep { id: "record".into() }));
    // Far deeper than a 512 KiB stack survives if the writer recursed without a bound: the refusal must
    // come first. The tree is taken apart iteratively, since dropping it recursively would overflow too.
    let outcome = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(|| {
            let mut very_deep = labels([("deep", nested(100_000))]);
            let answer = encode_value(&very_deep);
            let mut next = very_deep.remove("deep");
            while let Some(Value::Array(mut items)) = next {
                next = items.pop();
            }
            answer
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(outcome, Err(Uncanonical::TooDeep { id: "record".into() }));
}
