//! The command line of one subcommand: flags (`--flag value`, `--flag=value`, a short alias), repeated
//! or not, `--help`, and positional arguments; anything else is a usage refusal.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use connectome_render::escape::excerpt;

use crate::fail::Failure;

/// A flag a subcommand takes: its long name, an optional short alias, and whether it may repeat.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    /// `--name`.
    pub long: &'static str,
    /// `-p`, say.
    pub short: Option<&'static str>,
    /// Whether the flag may be given more than once.
    pub repeat: bool,
}

impl Flag {
    /// A flag given at most once.
    pub const fn once(long: &'static str) -> Flag {
        Flag { long, short: None, repeat: false }
    }

    /// A flag that may repeat.
    pub const fn many(long: &'static str) -> Flag {
        Flag { long, short: None, repeat: true }
    }
}

/// What a command line held: the flags' values and the positional arguments.
#[derive(Debug, Default)]
pub struct Parsed {
    /// The subcommand, for messages.
    command: &'static str,
    /// Each flag's values, in the order given.
    values: BTreeMap<&'static str, Vec<OsString>>,
    /// The positional arguments, in order.
    pub positional: Vec<OsString>,
    /// `--help` or `-h` was given.
    pub help: bool,
}

/// Parses the arguments after the subcommand's name against its flags.
pub fn parse(command: &'static str, flags: &[Flag], args: &[OsString]) -> Result<Parsed, Failure> {
    let usage = |message: String| Failure::usage(command, message);
    let mut parsed = Parsed { command, ..Parsed::default() };
    let mut it = args.iter();
    let mut only_positional = false;
    while let Some(arg) = it.next() {
        let Some(text) = arg.to_str() else {
            if arg.as_encoded_bytes().starts_with(b"-") && !only_positional {
                return Err(usage("a non-UTF-8 flag".to_owned()));
            }
            parsed.positional.push(arg.clone());
            continue;
        };
        if only_positional || !text.starts_with('-') || text == "-" {
            parsed.positional.push(arg.clone());
            continue;
        }
        if text == "--" {
            only_positional = true;
            continue;
        }
        if text == "-h" || text == "--help" {
            parsed.help = true;
            continue;
        }
        let (name, inline) = match text.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(OsString::from(v))),
            _ => (text, None),
        };
        let Some(flag) = flags.iter().find(|f| f.long == name || f.short == Some(name)) else {
            return Err(usage(format!("unknown flag {}", excerpt(name))));
        };
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or_else(|| usage(format!("{} needs a value", flag.long)))?,
        };
        let slot = parsed.values.entry(flag.long).or_default();
        if !flag.repeat && !slot.is_empty() {
            return Err(usage(format!("{} given twice", flag.long)));
        }
        slot.push(value);
    }
    Ok(parsed)
}

impl Parsed {
    /// A usage refusal of this subcommand.
    pub fn usage(&self, message: impl Into<String>) -> Failure {
        Failure::usage(self.command, message.into())
    }

    /// The value of a flag given at most once, as a path.
    pub fn path(&self, long: &str) -> Option<PathBuf> {
        self.values.get(long).and_then(|v| v.first()).map(PathBuf::from)
    }

    /// Every value of a repeatable flag, as text.
    pub fn texts(&self, long: &str) -> Result<Vec<String>, Failure> {
        let values = self.values.get(long).map(Vec::as_slice).unwrap_or_default();
        values
            .iter()
            .map(|v| v.to_str().map(str::to_owned).ok_or_else(|| self.usage(format!("{long} needs UTF-8"))))
            .collect()
    }

    /// The value of a flag given at most once, as text.
    pub fn text(&self, long: &str) -> Result<Option<String>, Failure> {
        Ok(self.texts(long)?.into_iter().next())
    }

    /// Exactly `names.len()` positional arguments, as paths, or a usage refusal naming the missing one.
    pub fn exactly(&self, names: &[&str]) -> Result<Vec<PathBuf>, Failure> {
        if let Some(missing) = names.get(self.positional.len()) {
            return Err(self.usage(format!("missing {missing}")));
        }
        if let Some(extra) = self.positional.get(names.len()) {
            return Err(self.usage(format!("unexpected argument {}", excerpt(&extra.to_string_lossy()))));
        }
        Ok(self.positional.iter().map(PathBuf::from).collect())
    }
}
