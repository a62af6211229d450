//! The command line of `cargo xtask bench curves`.

use super::CURVES;
use crate::options::parse_only;

/// Rounds by default, and with `--quick`.
const ROUNDS: u32 = 3;
const QUICK_ROUNDS: u32 = 1;

const USAGE: &str = "usage: cargo xtask bench curves [--quick] [--rounds N] [--only kernel,rmcp,floor] \
                     [--curve NAME[,NAME]] [--no-build]";

/// What `cargo xtask bench curves` was asked for.
#[derive(Debug, PartialEq)]
pub(crate) struct CurveOptions {
    /// Shorter runs and one round.
    pub(crate) quick: bool,
    /// How many rounds.
    pub(crate) rounds: u32,
    /// The servers, in their interleaving order.
    pub(crate) only: Vec<&'static str>,
    /// The curves, in their running order.
    pub(crate) curves: Vec<&'static str>,
    /// Build the compare workspace first.
    pub(crate) build: bool,
}

/// Reads `curves …` (the subcommand first).
pub(crate) fn parse(args: &[String]) -> Result<CurveOptions, String> {
    let mut it = args.iter();
    if it.next().map(String::as_str) != Some("curves") {
        return Err(USAGE.into());
    }
    let (mut quick, mut rounds, mut build) = (false, None, true);
    let mut only = parse_only("kernel,rmcp,floor")?;
    let mut curves: Vec<&'static str> = CURVES.iter().map(|c| c.0).collect();
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--quick" => quick = true,
            "--no-build" => build = false,
            "--rounds" => {
                let v = value()?;
                rounds =
                    Some(v.parse::<u32>().ok().filter(|r| (1..=20).contains(r)).ok_or("--rounds: 1 to 20")?);
            }
            "--only" => only = parse_only(value()?)?,
            "--curve" => {
                let v = value()?;
                let mut chosen = Vec::new();
                for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    let known = CURVES.iter().find(|c| c.0 == name).ok_or_else(|| {
                        format!(
                            "--curve: unknown curve {name:?} ({})",
                            CURVES.iter().map(|c| c.0).collect::<Vec<_>>().join(", ")
                        )
                    })?;
                    if !chosen.contains(&known.0) {
                        chosen.push(known.0);
                    }
                }
                if chosen.is_empty() {
                    return Err("--curve names no curve".into());
                }
                // The fixed running order, whatever the order given.
                chosen.sort_by_key(|n| CURVES.iter().position(|c| c.0 == *n));
                curves = chosen;
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(CurveOptions {
        quick,
        rounds: rounds.unwrap_or(if quick { QUICK_ROUNDS } else { ROUNDS }),
        only,
        curves,
        build,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args;

    #[test]
    fn defaults() {
        let o = parse(&args(&["curves"])).unwrap();
        assert_eq!((o.quick, o.rounds, o.build), (false, 3, true));
        assert_eq!(o.only, ["kernel", "rmcp", "floor"]);
        assert_eq!(o.curves, CURVES.map(|c| c.0));
        let quick = parse(&args(&["curves", "--quick", "--no-build"])).unwrap();
        assert_eq!((quick.quick, quick.rounds, quick.build), (true, 1, false));
        assert_eq!(parse(&args(&["curves", "--quick", "--rounds", "2"])).unwrap().rounds, 2);
    }

    #[test]
    fn curves_and_servers_are_chosen_in_their_fixed_order() {
        let o =
            parse(&args(&["curves", "--curve", "payload,h2c,payload", "--only", "floor,kernel"])).unwrap();
        assert_eq!(o.curves, ["h2c", "payload"]);
        assert_eq!(o.only, ["kernel", "floor"]);
    }

    #[test]
    fn bad_options_are_refused() {
        for bad in [
            &["compare"][..],
            &["curves", "--curve"],
            &["curves", "--curve", "other"],
            &["curves", "--curve", ","],
            &["curves", "--only", "other"],
            &["curves", "--rounds", "0"],
            &["curves", "--rounds", "21"],
            &["curves", "--hold"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }
}
