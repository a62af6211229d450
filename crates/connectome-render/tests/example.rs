//! The committed rendering of the weather host (`docs/connectome-example/weather.html` and
//! `weather.md`) is what the renderer draws from the committed exports beside it.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_connectome");

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/connectome-example")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn render(format: &str) -> Vec<u8> {
    let out = Command::new(BIN)
        .args(["render", "--declared", &example("weather.declared.json")])
        .args(["--observed", &example("weather.observed.json")])
        .args(["--sidecar", &example("weather.observed.sidecar.json")])
        .args(["--diff", &example("weather.diff.json"), "--format", format])
        .output()
        .expect("the renderer runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn committed_weather_rendering_is_current() {
    for (format, file) in [("html", "weather.html"), ("mermaid", "weather.md")] {
        let committed = std::fs::read(example(file)).expect("committed");
        assert!(
            render(format) == committed,
            "{file} is stale: re-render it as docs/connectome-render.md shows"
        );
    }
}
