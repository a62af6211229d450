//! A binary's function symbols (`nm -S --defined-only`), to name the code a profile ran: which
//! functions hold the hot instructions, hottest first, as lld's `--symbol-ordering-file` takes them.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// A function symbol: where it starts, how long it is, its (mangled) name.
#[derive(Debug, PartialEq)]
pub(crate) struct Symbol {
    /// Its first byte's address in the binary.
    pub(crate) start: u64,
    /// Its length in bytes (never 0: empty symbols are left out).
    pub(crate) size: u64,
    /// Its name as linked (mangled), which a symbol-ordering file names.
    pub(crate) name: String,
}

/// The function symbols of `binary`, sorted by address (`nm` from binutils).
pub(crate) fn of(binary: &Path) -> Result<Vec<Symbol>, String> {
    let out = Command::new("nm")
        .args(["-S", "--defined-only"])
        .arg(binary)
        .output()
        .map_err(|e| format!("nm (binutils) is needed: {e}"))?;
    if !out.status.success() {
        return Err(format!("nm {}: {}", binary.display(), out.status));
    }
    Ok(parse_nm(&String::from_utf8_lossy(&out.stdout)))
}

/// `nm -S` lines (`address size type name`) of code symbols (`t`, `T`, `w`, `W`) with a size,
/// sorted by address (an empty symbol at a function's address would hide the function).
pub(crate) fn parse_nm(text: &str) -> Vec<Symbol> {
    let mut symbols: Vec<Symbol> = text
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_ascii_whitespace();
            let start = u64::from_str_radix(fields.next()?, 16).ok()?;
            let size = u64::from_str_radix(fields.next()?, 16).ok()?;
            let kind = fields.next()?;
            let name = fields.next()?;
            (matches!(kind, "t" | "T" | "w" | "W") && size > 0).then(|| Symbol {
                start,
                size,
                name: name.to_owned(),
            })
        })
        .collect();
    symbols.sort_by_key(|s| s.start);
    symbols
}

/// The symbol whose bytes hold `address`, if any.
fn holding(symbols: &[Symbol], address: u64) -> Option<&Symbol> {
    let i = symbols.partition_point(|s| s.start <= address).checked_sub(1)?;
    let s = &symbols[i];
    (address - s.start < s.size).then_some(s)
}

/// The symbols holding `hot` addresses (address, instructions run there), hottest first; an error
/// when there are none, or fewer than nine in ten of them fall inside a symbol, which means the
/// profile's addresses are not this binary's.
pub(crate) fn hottest(symbols: &[Symbol], hot: &[(u64, u64)]) -> Result<Vec<String>, String> {
    let mut heat: HashMap<&str, u64> = HashMap::new();
    let mut placed = 0usize;
    for &(address, ir) in hot {
        if let Some(s) = holding(symbols, address) {
            let h = heat.entry(s.name.as_str()).or_default();
            *h = h.saturating_add(ir);
            placed += 1;
        }
    }
    if hot.is_empty() {
        return Err("the profile ran no hot code in this binary (is it the binary profiled?)".into());
    }
    if placed * 10 < hot.len() * 9 {
        return Err(format!(
            "only {placed} of {} hot addresses fall inside the binary's symbols: the profile is not of this build",
            hot.len()
        ));
    }
    let mut ranked: Vec<(&str, u64)> = heat.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    Ok(ranked.into_iter().map(|(name, _)| name.to_owned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NM: &str = "\
0000000000001000 0000000000000010 T hot_one
0000000000001010 0000000000000020 t hot_two
0000000000002000 0000000000000008 D a_datum
0000000000003000 0000000000000004 W weak_code
0000000000003000 0000000000000000 t empty_alias
                 U undefined_elsewhere
";

    #[test]
    fn keeps_only_code_symbols_in_address_order() {
        let symbols = parse_nm(NM);
        let names: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["hot_one", "hot_two", "weak_code"]);
        assert_eq!(symbols[1], Symbol { start: 0x1010, size: 0x20, name: "hot_two".into() });
    }

    #[test]
    fn ranks_symbols_by_the_instructions_run_inside_them() {
        let symbols = parse_nm(NM);
        let hot = [(0x1000, 5), (0x100c, 5), (0x1010, 30), (0x102f, 1), (0x3000, 2)];
        assert_eq!(hottest(&symbols, &hot).unwrap(), ["hot_two", "hot_one", "weak_code"]);
        // An address past a symbol's end belongs to none.
        assert_eq!(holding(&symbols, 0x1030), None);
    }

    #[test]
    fn refuses_a_profile_of_another_build() {
        let symbols = parse_nm(NM);
        let hot = [(0x9000, 5), (0x9100, 5), (0x1000, 1)];
        assert!(hottest(&symbols, &hot).unwrap_err().contains("not of this build"));
        // No hot address in the binary at all is no ordering either.
        assert!(hottest(&symbols, &[]).is_err());
    }
}
