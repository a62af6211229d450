//! The sidecar float placement of [CC-11] (Erlang `float_to_binary(f, [:short])`).
//!
//! [CC-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

/// Writes a finite float per [CC-11]; `None` for NaN or an infinity.
///
/// [CC-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn format_float(f: f64) -> Option<String> {
    if !f.is_finite() {
        return None;
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return Some(format!("{sign}0.0"));
    }
    // `{:e}` prints the shortest round-trip digits: `d[.ddd]e[-]x`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e')?;
    let exp: i64 = exp.parse().ok()?;
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let len = i64::try_from(digits.len()).ok()?;
    // value = D × 10^e
    let e = exp - (len - 1);
    let plain = if len == 1 {
        (-4..=2).contains(&e)
    } else {
        // The exponent the scientific form would show: e + L - 1.
        let shown = e + len - 1;
        let upper = if shown >= 10 { 2 } else { 1 };
        -(len + 2) <= e && e <= upper
    };
    let d: u64 = digits.parse().ok()?;
    let forced = (e == 0 && d >= 1 << 53) || (e == 1 && d > (1 << 52) / 5) || (e == 2 && d > (1 << 51) / 25);
    let body = if plain && !forced {
        if e >= 0 {
            format!("{digits}{}.0", "0".repeat(usize::try_from(e).ok()?))
        } else if len + e > 0 {
            let at = usize::try_from(len + e).ok()?;
            format!("{}.{}", &digits[..at], &digits[at..])
        } else {
            format!("0.{}{digits}", "0".repeat(usize::try_from(-(len + e)).ok()?))
        }
    } else {
        let rest = if digits.len() > 1 { &digits[1..] } else { "0" };
        format!("{}.{rest}e{}", &digits[..1], e + len - 1)
    };
    Some(format!("{sign}{body}"))
}
