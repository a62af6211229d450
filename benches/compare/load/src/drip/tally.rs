//! What the drips came to: their outcomes counted by kind, the times at which the server ended
//! them (min, median, max), and the first reasons of those that failed.

use super::drips::Outcome;
use crate::Errors;

/// What the drips came to.
#[derive(Default)]
pub(crate) struct Outcomes {
    /// Drips whose head got out.
    pub(crate) opened: usize,
    /// Drips that never connected or never got their head out.
    pub(crate) failed: usize,
    /// Drips the server answered with 408.
    pub(crate) answered_408: usize,
    /// Drips the server answered with another status.
    pub(crate) answered_other: usize,
    /// The first status other than 408, if any.
    pub(crate) other_status: Option<u16>,
    /// Drips the server closed without an answer.
    pub(crate) closed: usize,
    /// Drips still open and unanswered when the wait ended.
    pub(crate) held: usize,
    /// Seconds after the head at which answered or closed drips ended: min, median, max.
    pub(crate) ended_s: Option<[f64; 3]>,
    /// The first few distinct reasons of failed drips.
    pub(crate) failures: Errors,
}

/// Counts the drips' outcomes by kind.
pub(crate) fn tally(outcomes: &[Outcome]) -> Outcomes {
    let mut t = Outcomes::default();
    let mut ended = Vec::new();
    for outcome in outcomes {
        match outcome {
            Outcome::Failed(e) => {
                t.failed += 1;
                t.failures.add(e.clone());
            }
            Outcome::Answered { status, after_s } => {
                if *status == 408 {
                    t.answered_408 += 1;
                } else {
                    t.answered_other += 1;
                    t.other_status.get_or_insert(*status);
                }
                ended.push(*after_s);
            }
            Outcome::Closed { after_s } => {
                t.closed += 1;
                ended.push(*after_s);
            }
            Outcome::Held => t.held += 1,
        }
    }
    t.opened = outcomes.len() - t.failed;
    ended.sort_by(f64::total_cmp);
    if let (Some(&min), Some(&max)) = (ended.first(), ended.last()) {
        let mid = ended.len() / 2;
        let median = if ended.len() % 2 == 1 { ended[mid] } else { (ended[mid - 1] + ended[mid]) / 2.0 };
        t.ended_s = Some([min, median, max]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_tallied() {
        let t = tally(&[
            Outcome::Answered { status: 408, after_s: 15.2 },
            Outcome::Answered { status: 408, after_s: 15.0 },
            Outcome::Closed { after_s: 16.0 },
            Outcome::Answered { status: 503, after_s: 0.1 },
            Outcome::Held,
            Outcome::Failed("connect: refused".into()),
            Outcome::Failed("connect: refused".into()),
        ]);
        assert_eq!(
            (t.opened, t.failed, t.answered_408, t.answered_other, t.closed, t.held),
            (5, 2, 2, 1, 1, 1)
        );
        assert_eq!(t.other_status, Some(503));
        assert_eq!(t.ended_s, Some([0.1, 15.1, 16.0]));
        assert_eq!((t.failures.count, t.failures.kept.len()), (2, 1));
        let held = tally(&[Outcome::Held, Outcome::Held]);
        assert_eq!((held.opened, held.held, held.ended_s), (2, 2, None));
        assert_eq!(tally(&[]).ended_s, None);
    }
}
