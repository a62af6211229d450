//! `connectome render`: the renderer of the `connectome-render` library, after one check of its own:
//! every input must be exactly its canonical bytes (the renderer alone reads any well-formed export).

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use connectome_graph::read::{Canonicity, ReadFault, read_export, read_sidecar, verify_record};
use connectome_render::Command;

use crate::fail::{self, Failure};

/// Which reader judges an input's bytes.
#[derive(Clone, Copy)]
enum Reader {
    /// A graph export (`--declared`, `--observed`).
    Graph,
    /// A sidecar (`--sidecar`).
    Sidecar,
    /// A record: the diff record (`--diff`) or the effective export (`--effective`).
    Record,
}

/// Refuses the input at `path` if it reads as its document but its bytes are not canonical; every
/// other refusal is left to the renderer, which words its own.
fn canonical(role: &str, path: &Path, reader: Reader) -> Result<(), Failure> {
    let Ok(bytes) = std::fs::read(path) else { return Ok(()) };
    let offset = match reader {
        Reader::Graph => read_export(&bytes).err().map(|e| e.fault),
        Reader::Sidecar => read_sidecar(&bytes).err().map(|e| e.fault),
        Reader::Record => match verify_record(&bytes).map(|v| v.canonical) {
            Ok(Canonicity::Differs { offset, .. }) => Some(ReadFault::NotCanonical { offset }),
            _ => None,
        },
    };
    match offset {
        Some(ReadFault::NotCanonical { offset }) => Err(Failure::Input(format!(
            "{role}: {}: not canonical: the bytes differ from their canonical form at byte {offset}",
            fail::quoted(path)
        ))),
        _ => Ok(()),
    }
}

/// Runs `connectome render` (`args` start with `render`); `Ok` is the renderer's exit code.
pub fn run(args: &[OsString], stdout: &mut dyn Write) -> Result<u8, Failure> {
    match connectome_render::parse(args) {
        Ok(Command::Render(o)) => {
            canonical("declared export", &o.declared, Reader::Graph)?;
            for (role, path, reader) in [
                ("observed export", &o.observed, Reader::Graph),
                ("sidecar", &o.sidecar, Reader::Sidecar),
                ("diff record", &o.diff, Reader::Record),
            ] {
                if let Some(path) = path {
                    canonical(role, path, reader)?;
                }
            }
        }
        Ok(Command::Effective(o)) => canonical("effective export", &o.effective, Reader::Record)?,
        Ok(Command::Help) | Err(_) => {}
    }
    let mut stderr = std::io::stderr().lock();
    Ok(connectome_render::cli::main(args, stdout, &mut stderr))
}
