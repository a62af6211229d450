//! The committed rendering of the weather host (`docs/connectome-example/weather.html` and
//! `weather.md`) is what the renderer draws from the committed exports beside it.

use std::path::Path;

/// What one in-process run of the `render` command gave: its exit code and both streams.
struct Output {
    code: u8,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Runs the `render` command in-process, as the `connectome` program does.
fn run_cli<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    let args: Vec<std::ffi::OsString> = args.iter().map(|a| a.as_ref().to_owned()).collect();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let code = connectome_render::cli::main(&args, &mut stdout, &mut stderr);
    Output { code, stdout, stderr }
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../docs/connectome-example")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn render(format: &str) -> Vec<u8> {
    let out = run_cli(&[
        "render",
        "--declared",
        &example("weather.declared.json"),
        "--observed",
        &example("weather.observed.json"),
        "--sidecar",
        &example("weather.observed.sidecar.json"),
        "--diff",
        &example("weather.diff.json"),
        "--format",
        format,
    ]);
    assert!(out.code == 0, "{}", String::from_utf8_lossy(&out.stderr));
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
