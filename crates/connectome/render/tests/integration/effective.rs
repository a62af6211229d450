//! The weighted view of the effective export (docs/connectome.md CW-6): strict reading, thickness by
//! count, never-observed edges dashed at zero, undeclared edges flagged, SVG and DOT, the command line.

use std::path::PathBuf;

use crate::common::{data, run_cli};

use connectome_render::effective::{self, EffectiveFormat, thickness};
use connectome_render::vocab::DiffClass;
use connectome_render::{EffectiveExport, Error};

/// The CW-5 worked example, as the library writes it.
const W5: &[u8] = include_bytes!("../data/effective.json");

fn w5() -> EffectiveExport {
    EffectiveExport::from_json(W5).unwrap()
}

/// The refusal of `text` with one replacement made in the worked example.
fn refused(from: &str, to: &str) -> String {
    let text = std::str::from_utf8(W5).unwrap().replacen(from, to, 1);
    assert_ne!(text.as_bytes(), W5, "{from} is in the example");
    match EffectiveExport::from_json(text.as_bytes()) {
        Err(e @ (Error::Format { .. } | Error::Json { .. })) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn cw6_reads_the_library_export() {
    let export = w5();
    assert_eq!(export.nodes.len(), 4);
    let classes: Vec<DiffClass> = export.edges.iter().map(|e| e.class).collect();
    assert_eq!(
        classes,
        [DiffClass::DeclaredAndObserved, DiffClass::DeclaredNeverObserved, DiffClass::ObservedButUndeclared]
    );
    assert_eq!((export.edges[0].count, export.edges[0].timing), (3, Some((4500, 2000))));
    assert_eq!(export.window.len(), 2);
}

#[test]
fn cw6_refusals_name_the_place() {
    assert!(refused(r#""schema_version":3"#, r#""schema_version":2"#).contains("must be 3"));
    assert!(refused(r#","window""#, r#","extra":1,"window""#).contains("unexpected member \"extra\""));
    let e = refused(r#""class":"declared_and_observed""#, r#""class":"changed_sign""#);
    assert!(e.starts_with("effective export: edges[0].class: changed_sign is the diff's class"), "{e}");
    let e = refused(r#""count":0"#, r#""count":3"#);
    assert!(e.contains("edges[1].count: a declared edge never observed counts 0, found 3"), "{e}");
    let e = refused(r#""max_ns":2000"#, r#""max_ns":null"#);
    assert!(e.contains("edges[0]: sum_ns and max_ns must both be integers or both null"), "{e}");
    let e = refused(r#""declared_graph":"dce2"#, r#""declared_graph":"DCE2"#);
    assert!(e.contains("declared_graph: expected 64 lowercase hex digits"), "{e}");
    let e = refused(r#""to":"srv/tool/c""#, r#""to":"srv/tool/z""#);
    assert!(e.contains("edges[2]: endpoint \"srv/tool/z\" is not a node"), "{e}");
    let e = refused(r#""to":"srv/tool/b""#, r#""to":"srv/tool/a""#);
    assert!(e.contains("edges[1]: duplicate edge"), "{e}");
    let e = refused(r#""count":1"#, r#""count":-1"#);
    assert!(e.contains("edges[2].count: expected a non-negative integer"), "{e}");
    assert!(refused("}}", "}").contains("not JSON"));
}

#[test]
fn cw6_thickness_grows_with_the_count() {
    let widths: Vec<u32> = [0, 1, 2, 7, 8, 31, 32, 1 << 20, u64::MAX].into_iter().map(thickness).collect();
    assert_eq!(widths, [1, 1, 2, 2, 3, 3, 4, 8, 8]);
    assert!((0..5_000u64).all(|n| thickness(n) <= thickness(n + 1)), "never thinner with more calls");
}

#[test]
fn cw6_dot_thickness_dashes_and_flags() {
    let out = effective::dot(&w5());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "digraph effective {");
    let starts = |p: &str| lines.iter().any(|l| l.starts_with(p));
    assert!(starts("    n0 [label=\"srv/server\", shape=box, peripheries=2, tooltip="));
    assert!(starts("    n0 -> n1 [color=\"#2a9d8f\", penwidth=2, arrowhead=normal, label=\"3\", tooltip="));
    assert!(starts(
        "    n0 -> n2 [color=\"#8d99ae\", penwidth=1, style=dashed, arrowhead=normal, label=\"0\", tooltip="
    ));
    assert!(starts(
        "    n0 -> n3 [color=\"#e63946\", penwidth=1, arrowhead=normal, label=\"1 undeclared\", tooltip="
    ));
    assert!(out.contains("count 3 · total 4500 ns · longest 2000 ns · mean 1500 ns"));
    assert!(out.contains("subgraph cluster_legend {"));
}

#[test]
fn cw6_svg_is_standalone_and_deterministic() {
    let out = effective::svg(&w5());
    assert!(out.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(out.ends_with("</svg>\n"));
    assert!(!out.contains("<script") && !out.contains("href"), "nothing fetched, nothing run");
    let edge = |colour: &str| {
        out.lines().find(|l| l.contains("path d=\"M") && l.contains(colour)).unwrap().to_owned()
    };
    assert!(edge("stroke=\"#2a9d8f\"").contains("stroke-width=\"2\""));
    let never = edge("stroke=\"#8d99ae\"");
    assert!(never.contains("stroke-dasharray=\"6 4\"") && never.contains(">0</text>"), "{never}");
    assert!(edge("stroke=\"#e63946\"").contains(">1 undeclared</text>"));
    assert_eq!(out, effective::svg(&w5()));
    assert_eq!(effective::render(&w5(), EffectiveFormat::Svg), out);
}

#[test]
fn cw6_cli_draws_the_effective_export_alone() {
    let run = |args: &[&str]| run_cli(args);
    let svg = run(&["render", "--effective", &data("effective.json"), "--format", "svg"]);
    assert_eq!(Some(svg.code), Some(0), "{}", String::from_utf8_lossy(&svg.stderr));
    assert_eq!(svg.stdout, effective::svg(&w5()).into_bytes());
    let dot = run(&["render", "--view", "effective", "--effective", &data("effective.json"), "--format=dot"]);
    assert_eq!(dot.stdout, effective::dot(&w5()).into_bytes());
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("effective.svg");
    let written = run(&[
        "render",
        "--effective",
        &data("effective.json"),
        "--format",
        "svg",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert!(written.code == 0 && written.stdout.is_empty());
    assert_eq!(std::fs::read(&out).unwrap(), svg.stdout);
    for (args, message) in [
        (
            &["render", "--view", "effective", "--format", "svg"][..],
            "--view effective needs --effective input",
        ),
        (
            &["render", "--effective", "e.json", "--declared", "d.json", "--format", "svg"],
            "--effective is drawn alone",
        ),
        (
            &["render", "--effective", "e.json", "--format", "html"],
            "--effective draws svg or dot, not \"html\"",
        ),
        (&["render", "--effective", "e.json"], "--format is required"),
        (
            &["render", "--effective", "/nonexistent/e.json", "--format", "svg"],
            "effective export: cannot read",
        ),
    ] {
        let refused = run(args);
        assert_eq!(Some(refused.code), Some(2));
        let err = String::from_utf8(refused.stderr).unwrap();
        assert!(err.contains(message) && err.lines().count() == 1, "{err}");
    }
}
