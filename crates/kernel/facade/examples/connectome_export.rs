//! Writes the weather host's connectome exports after a fixed set of calls: `weather.declared.json`,
//! `weather.observed.json`, `weather.observed.sidecar.json` and `weather.diff.json`, into the folder
//! given (default `docs/connectome-example`). The window is fixed, so the files are reproducible; the
//! committed copies are checked by `crates/kernel/facade/tests/connectome_example.rs`.
//!
//! ```sh
//! cargo run --features connectome --example connectome_export -- docs/connectome-example
//! ```

#[allow(dead_code)] // the example uses only part of the shared catalog
#[path = "weather/catalog.rs"]
mod catalog;
#[path = "weather/export.rs"]
mod export;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "docs/connectome-example".to_owned());
    let files = export::exports().map_err(|e| -> Box<dyn std::error::Error> { e })?;
    std::fs::create_dir_all(&dir)?;
    for (name, bytes) in files {
        std::fs::write(std::path::Path::new(&dir).join(name), bytes)?;
    }
    eprintln!("wrote the weather connectome exports to {dir}");
    Ok(())
}
