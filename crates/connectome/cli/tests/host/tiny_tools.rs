//! tiny-tools: the host's own code, a few modules whose functions call each other.

/// Integer arithmetic.
pub mod math {
    /// `a + b`, or `None` beyond the bound.
    pub fn add(a: i64, b: i64) -> Option<i64> {
        crate::check::bounded(a.checked_add(b)?)
    }

    /// The sum of `xs`, or `None` beyond the bound.
    pub fn sum(xs: &[i64]) -> Option<i64> {
        let mut total = 0;
        for x in xs {
            total = add(total, *x)?;
        }
        Some(total)
    }
}

/// Text.
pub mod text {
    /// `s` in capitals, clipped.
    pub fn shout(s: &str) -> String {
        crate::check::clip(&s.to_uppercase())
    }

    /// The number of words of `s`, summed over its lines.
    pub fn count(s: &str) -> i64 {
        let per_line: Vec<i64> = s.lines().map(|l| l.split_whitespace().count() as i64).collect();
        crate::math::sum(&per_line).unwrap_or(i64::MAX)
    }
}

/// The bounds every tool keeps.
pub mod check {
    /// `v` if it is within a million either way.
    pub fn bounded(v: i64) -> Option<i64> {
        (v.abs() <= 1_000_000).then_some(v)
    }

    /// `s`, at most 64 characters of it.
    pub fn clip(s: &str) -> String {
        s.chars().take(64).collect()
    }
}
