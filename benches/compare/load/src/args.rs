//! The command line: `--name value` flags, then `--` and the server command for the stdio modes;
//! every number is bounded.

use std::time::Duration;

use crate::{MAX_REQUESTS, MAX_SECONDS};

pub(crate) struct Args {
    flags: Vec<(String, String)>,
    command: Vec<String>,
}

impl Args {
    pub(crate) fn parse(raw: &[String]) -> Result<Args, String> {
        let mut flags = Vec::new();
        let mut it = raw.iter();
        let mut command = Vec::new();
        while let Some(arg) = it.next() {
            if arg == "--" {
                command = it.cloned().collect();
                break;
            }
            let name = arg.strip_prefix("--").ok_or_else(|| format!("unexpected argument {arg:?}"))?;
            let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
            flags.push((name.to_owned(), value.clone()));
        }
        Ok(Args { flags, command })
    }

    /// The arguments `list`, parsed (for the settings' tests).
    #[cfg(test)]
    pub(crate) fn of(list: &[&str]) -> Args {
        Args::parse(&list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()).expect("well-formed arguments")
    }

    pub(crate) fn take(&mut self, name: &str) -> Option<String> {
        let at = self.flags.iter().position(|(n, _)| n == name)?;
        Some(self.flags.remove(at).1)
    }

    pub(crate) fn number<T: std::str::FromStr>(
        &mut self,
        name: &str,
        default: Option<T>,
    ) -> Result<T, String> {
        match self.take(name) {
            Some(v) => v.parse().map_err(|_| format!("--{name}: not a number: {v:?}")),
            None => default.ok_or_else(|| format!("--{name} is required")),
        }
    }

    pub(crate) fn finish(self, wants_command: bool) -> Result<Vec<String>, String> {
        if let Some((name, _)) = self.flags.first() {
            return Err(format!("unknown option --{name}"));
        }
        if wants_command && self.command.is_empty() {
            return Err("the server command is missing after --".into());
        }
        if !wants_command && !self.command.is_empty() {
            return Err("this mode takes no command".into());
        }
        Ok(self.command)
    }
}

pub(crate) fn seconds(name: &str, v: f64) -> Result<Duration, String> {
    if !(0.0..=MAX_SECONDS).contains(&v) {
        return Err(format!("--{name} must be between 0 and {MAX_SECONDS} seconds"));
    }
    Ok(Duration::from_secs_f64(v))
}

pub(crate) fn requests(v: u64) -> Result<u64, String> {
    if v == 0 || v > MAX_REQUESTS {
        return Err(format!("--requests must be between 1 and {MAX_REQUESTS}"));
    }
    Ok(v)
}
