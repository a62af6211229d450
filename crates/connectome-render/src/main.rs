//! `connectome`: renders connectome JSON exports; see `connectome --help`.

#![forbid(unsafe_code)]

use std::io::Write as _;
use std::process::ExitCode;

use connectome_render::cli::{self, USAGE, io_reason, shown};
use connectome_render::{Command, Error};

fn run() -> Result<(), Error> {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let (text, out) = match cli::parse(&args)? {
        Command::Help => {
            print!("{USAGE}");
            return Ok(());
        }
        Command::Render(o) => (cli::render(&cli::load(&o)?, o.format, o.view)?, o.out),
        Command::Effective(o) => (connectome_render::effective::run(&o)?, o.out),
    };
    match &out {
        Some(path) => std::fs::write(path, text.as_bytes())
            .map_err(|e| Error::Write { path: shown(path), reason: io_reason(&e) }),
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .map_err(|e| Error::Write { path: "stdout".to_owned(), reason: io_reason(&e) })
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("connectome: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
