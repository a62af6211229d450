//! The benchmark harness's program: `cargo xtask bench <args>` runs it with the same arguments (and
//! `cargo run -p mcp-kernel-bench -- <args>` is the same run). It works from the workspace root,
//! wherever it was started.
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = mcp_kernel_workspace::root();
    if let Err(error) = std::env::set_current_dir(&root) {
        eprintln!("xtask: bench: cannot enter the workspace root {}: {error}", root.display());
        return ExitCode::FAILURE;
    }
    match mcp_kernel_bench::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: bench: {error}");
            ExitCode::FAILURE
        }
    }
}
