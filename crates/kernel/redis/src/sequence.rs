//! Sequence numbers: how an instance learns that a publication meant for it was lost.
//!
//! Threat: **another instance silently deaf**. A publication this instance drops (its queue full,
//! or Redis not answering the `PUBLISH` after the task's compare-and-swap succeeded) never reaches
//! the other instances: a listen stream there would miss the change, and a runner there would never
//! learn of a `tasks/cancel` or a `tasks/update` made here. So every publication of one family —
//! changes and wake-ups alike — carries the family's id and a number from one counter ([`Counter`]),
//! taken also by a publication that is then dropped; at every heartbeat beat the family publishes the
//! number of its last publication sent or dropped (a *beat*); and each instance's subscription keeps
//! the last number it heard from each publisher ([`Heard`]). A number skipped — by a publication or
//! by a beat — is a publication lost: every local feed and watch then ends, as when the subscription
//! drops (clients listen again, runners read their tasks again).
//!
//! A publisher's first message after a loss also says so, with the last number it dropped
//! (`"lost": 12`), so that an instance that does not know its numbers yet (it subscribed since, or
//! forgot it) learns of the loss as well, and one that does is not told twice.
//!
//! On the wire every message is JSON: `{"from": "<id>", "seq": 7, "change": {…}}` on
//! `<prefix>:changes`; `{"from": "<id>", "seq": 8, "task": "<task id>"}` (a wake-up) or
//! `{"from": "<id>", "seq": 8, "beat": true}` (a beat, which takes no number) on `<prefix>:wake`.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_kernel_router::notify::Change;
use serde_json::{Value, json};

/// The most publishers one subscription remembers; past it, the one heard from longest ago is
/// forgotten.
pub(crate) const MAX_PUBLISHERS: usize = 4096;
/// A publisher not heard from for this many of the subscriber's beats (and at least
/// [`MIN_FORGET_AFTER`]) is forgotten: it stopped, or it is cut off from Redis.
pub(crate) const FORGET_AFTER_BEATS: u32 = 30;
/// The shortest time a silent publisher is remembered.
pub(crate) const MIN_FORGET_AFTER: Duration = Duration::from_secs(60);

/// A new instance id: the process id, the start time and 64 random bits, so that two instances
/// never share one (containers often all run as process 1).
pub(crate) fn instance_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
    );
    format!("{:x}-{:x}-{:016x}", std::process::id(), mcp_kernel_router::tasks::now_ms(), hasher.finish())
}

/// One family's publication counter: which numbers were given, sent or dropped, and whether a loss
/// is yet to be announced.
#[derive(Default)]
pub(crate) struct Counter {
    state: Mutex<CounterState>,
}

#[derive(Default, Clone, Copy)]
struct CounterState {
    /// The last number given.
    assigned: u64,
    /// The highest number sent or dropped: a beat announces it (nothing at or below it that was not
    /// dropped is still waiting to be sent).
    settled: u64,
    /// Publications dropped, in all.
    losses: u64,
    /// How many of them a message that reached Redis has announced (`"lost"`).
    announced: u64,
    /// The last number dropped.
    last_dropped: u64,
}

/// What a beat or a batch says: the number to announce and whether a loss is unannounced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The number a beat announces.
    pub(crate) settled: u64,
    /// Losses counted when the mark was taken.
    losses: u64,
    /// The last number dropped, if a loss is not announced yet.
    pub(crate) lost: Option<u64>,
}

impl Counter {
    fn lock(&self) -> std::sync::MutexGuard<'_, CounterState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives the next number to a publication and queues it with `queue`, under one lock, so that
    /// numbers enter the queue in order; `queue` says whether it was queued. One that was not is
    /// counted as dropped. Returns whether it was queued.
    pub(crate) fn assign(&self, queue: impl FnOnce(u64) -> bool) -> bool {
        let mut state = self.lock();
        state.assigned += 1;
        let seq = state.assigned;
        let queued = queue(seq);
        if !queued {
            state.settled = state.settled.max(seq);
            state.last_dropped = state.last_dropped.max(seq);
            state.losses += 1;
        }
        queued
    }

    /// Where the counter stands now.
    pub(crate) fn mark(&self) -> Mark {
        let state = self.lock();
        let lost = (state.losses > state.announced).then_some(state.last_dropped);
        Mark { settled: state.settled, losses: state.losses, lost }
    }

    /// The publications up to `last` were sent, in a message sequence that began with `mark`'s
    /// announcement of its losses (if it had any).
    pub(crate) fn sent(&self, last: u64, mark: Mark) {
        let mut state = self.lock();
        state.settled = state.settled.max(last);
        if mark.lost.is_some() {
            state.announced = state.announced.max(mark.losses);
        }
    }

    /// The publications up to `last` could not be sent.
    pub(crate) fn dropped(&self, last: u64, count: u64) {
        let mut state = self.lock();
        state.settled = state.settled.max(last);
        state.last_dropped = state.last_dropped.max(last);
        state.losses += count;
    }

    /// A beat taken at `mark` reached Redis: the losses it announced are announced.
    pub(crate) fn beat_sent(&self, mark: Mark) {
        self.sent(0, mark);
    }
}

/// A publication's body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Body {
    /// A change, on `<prefix>:changes`.
    Change(Change),
    /// A task's wake-up, on `<prefix>:wake`.
    Wake(String),
    /// A beat (no number of its own), on `<prefix>:wake`.
    Beat,
}

/// A message as received.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Envelope {
    pub(crate) from: String,
    pub(crate) seq: u64,
    /// The last number its publisher dropped, when this is its first message since.
    pub(crate) lost: Option<u64>,
    pub(crate) body: Body,
}

/// The JSON of a message from `from`, numbered `seq`, whose body is `body` (`"change": …`,
/// `"task": …` or `"beat": true`).
pub(crate) fn encode(from: &str, seq: u64, lost: Option<u64>, body: (&str, Value)) -> String {
    let mut message = json!({"from": from, "seq": seq});
    message[body.0] = body.1;
    if let Some(lost) = lost {
        message["lost"] = Value::from(lost);
    }
    message.to_string()
}

/// Reads a message of `<prefix>:changes` (`change` true) or of `<prefix>:wake`.
pub(crate) fn decode(bytes: &[u8], change: bool) -> Result<Envelope, String> {
    let mut value: Value = serde_json::from_slice(bytes)
        .map_err(|error| format!("not JSON (line {}, column {})", error.line(), error.column()))?;
    let from = value.get("from").and_then(Value::as_str).ok_or("no \"from\"")?.to_owned();
    let seq = value.get("seq").and_then(Value::as_u64).ok_or("no \"seq\"")?;
    let lost = match value.get("lost") {
        None => None,
        Some(lost) => Some(lost.as_u64().ok_or("a \"lost\" that is not a number")?),
    };
    let body = if change {
        let change = value.get_mut("change").map(Value::take).ok_or("no \"change\"")?;
        Body::Change(serde_json::from_value(change).map_err(|_| "a change that does not parse")?)
    } else if let Some(task) = value.get("task") {
        Body::Wake(task.as_str().ok_or("a task id that is not a string")?.to_owned())
    } else if value.get("beat").and_then(Value::as_bool) == Some(true) {
        Body::Beat
    } else {
        return Err("neither a task nor a beat".into());
    };
    Ok(Envelope { from, seq, lost, body })
}

/// What one subscription heard from each publisher: its last number, and when.
pub(crate) struct Heard {
    own: String,
    forget_after: Duration,
    publishers: HashMap<String, (u64, Instant)>,
}

impl Heard {
    /// Nothing heard yet, by the subscription of the instance `own` beating every `beat`.
    pub(crate) fn new(own: &str, beat: Duration) -> Self {
        let forget_after = beat.saturating_mul(FORGET_AFTER_BEATS).max(MIN_FORGET_AFTER);
        Self { own: own.to_owned(), forget_after, publishers: HashMap::new() }
    }

    /// Takes `message` in at `now`; `Some(reason)` when it shows that a publication was lost.
    pub(crate) fn hear(&mut self, message: &Envelope, now: Instant) -> Option<String> {
        let from = message.from.as_str();
        // This instance's own losses ended its listeners when they happened.
        let mut lost = match message.lost {
            Some(number) if from != self.own => {
                Some(format!("the instance {from} says it lost its publication number {number}"))
            }
            _ => None,
        };
        let beat = message.body == Body::Beat;
        // Where the publisher stands: past its last dropped number too (those are counted now).
        let stands = message.seq.max(message.lost.unwrap_or(0));
        match self.publishers.get_mut(from) {
            Some((last, at)) => {
                *at = now;
                let skipped = if beat { message.seq > *last } else { message.seq > *last + 1 };
                if skipped {
                    let missed = if beat { message.seq - *last } else { message.seq - *last - 1 };
                    lost.get_or_insert_with(|| {
                        format!(
                            "{missed} publication(s) of the instance {from} after number {last} never arrived"
                        )
                    });
                }
                // An older number (sent after a beat or a message announced a later loss) is
                // delivered, and moves nothing.
                *last = (*last).max(stands);
            }
            None => {
                if self.publishers.len() >= MAX_PUBLISHERS {
                    self.forget_stalest();
                }
                // A publisher heard first now: its number is where it stands.
                self.publishers.insert(from.to_owned(), (stands, now));
            }
        }
        lost
    }

    /// Forgets the publishers not heard from for a while (they stopped, or are cut off).
    pub(crate) fn sweep(&mut self, now: Instant) {
        let forget_after = self.forget_after;
        self.publishers.retain(|_, (_, at)| now.saturating_duration_since(*at) < forget_after);
    }

    fn forget_stalest(&mut self) {
        let stalest = self.publishers.iter().min_by_key(|(_, (_, at))| *at).map(|(from, _)| from.clone());
        if let Some(from) = stalest {
            self.publishers.remove(&from);
        }
    }

    /// How many publishers are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.publishers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_kernel_router::notify::ChangeKind;

    fn message(from: &str, seq: u64, body: Body) -> Envelope {
        Envelope { from: from.into(), seq, lost: None, body }
    }

    fn wake(from: &str, seq: u64) -> Envelope {
        message(from, seq, Body::Wake("t".into()))
    }

    #[test]
    fn numbers_in_order_from_several_publishers_show_no_loss() {
        let mut heard = Heard::new("me", Duration::from_millis(200));
        let now = Instant::now();
        for seq in 5..50 {
            assert_eq!(heard.hear(&wake("a", seq), now), None);
            assert_eq!(heard.hear(&wake("b", seq * 2), now).is_some(), seq > 5, "b skips");
            assert_eq!(heard.hear(&message("a", seq, Body::Beat), now), None, "a beat at the last number");
        }
    }

    #[test]
    fn a_skipped_number_or_a_beat_ahead_is_a_loss_and_an_older_number_is_not() {
        let mut heard = Heard::new("me", Duration::from_millis(200));
        let now = Instant::now();
        assert_eq!(heard.hear(&wake("a", 1), now), None);
        let reason = heard.hear(&wake("a", 3), now).expect("number 2 skipped");
        assert!(reason.contains("1 publication(s)") && reason.contains("after number 1"), "{reason}");
        assert!(heard.hear(&message("a", 5, Body::Beat), now).is_some(), "a beat announcing 4 and 5");
        assert_eq!(heard.hear(&wake("a", 4), now), None, "sent after the beat: delivered, no loss");
        assert_eq!(heard.hear(&wake("a", 6), now), None);
    }

    #[test]
    fn a_loss_said_by_another_publisher_counts_once_even_unknown_and_ones_own_does_not() {
        let mut heard = Heard::new("me", Duration::from_millis(200));
        let now = Instant::now();
        let lost = |from: &str| Envelope { lost: Some(12), ..wake(from, 1) };
        assert!(heard.hear(&lost("stranger"), now).is_some());
        assert_eq!(heard.hear(&lost("me"), now), None);
        // The numbers queued before the dropped one arrive after the announcement, then a beat at it.
        for seq in 2..12 {
            assert_eq!(heard.hear(&wake("stranger", seq), now), None, "{seq}");
        }
        assert_eq!(heard.hear(&message("stranger", 12, Body::Beat), now), None, "told once, not twice");
        assert_eq!(heard.hear(&wake("stranger", 13), now), None);
    }

    #[test]
    fn silent_publishers_are_forgotten_and_the_map_is_bounded() {
        let mut heard = Heard::new("me", Duration::from_millis(200));
        let start = Instant::now();
        heard.hear(&wake("old", 1), start);
        heard.hear(&wake("young", 1), start + Duration::from_secs(50));
        heard.sweep(start + MIN_FORGET_AFTER + Duration::from_secs(1));
        assert_eq!(heard.len(), 1, "the one silent for the whole window is forgotten");
        for n in 0..MAX_PUBLISHERS + 10 {
            heard.hear(&wake(&format!("p{n}"), 1), start + Duration::from_secs(60 + n as u64));
        }
        assert_eq!(heard.len(), MAX_PUBLISHERS);
        assert!(!heard.publishers.contains_key("young") && heard.publishers.contains_key("p4105"));
    }

    #[test]
    fn a_counter_numbers_in_order_counts_a_drop_and_announces_it_once() {
        let counter = Counter::default();
        assert!(counter.assign(|seq| seq == 1));
        assert!(!counter.assign(|_| false), "dropped");
        let mark = counter.mark();
        assert_eq!((mark.settled, mark.lost), (2, Some(2)), "a beat announces the dropped number");
        assert!(counter.assign(|seq| seq == 3));
        counter.sent(3, mark);
        assert_eq!((counter.mark().settled, counter.mark().lost), (3, None));
        counter.dropped(7, 4);
        assert_eq!(counter.mark().lost, Some(7));
        counter.beat_sent(counter.mark());
        assert_eq!(counter.mark().lost, None);
    }

    #[test]
    fn every_message_is_readable_json_and_reads_back() {
        let change = Change::to_everyone(ChangeKind::ToolsListChanged);
        let text = encode("i-1", 7, None, ("change", serde_json::to_value(&change).unwrap()));
        assert!(text.contains(r#""from":"i-1""#) && text.contains(r#""seq":7"#), "{text}");
        let back = decode(text.as_bytes(), true).unwrap();
        assert_eq!(back, Envelope { from: "i-1".into(), seq: 7, lost: None, body: Body::Change(change) });
        let text = encode("i-1", 8, Some(5), ("task", json!("t")));
        assert_eq!(decode(text.as_bytes(), false).unwrap().body, Body::Wake("t".into()));
        assert_eq!(decode(text.as_bytes(), false).unwrap().lost, Some(5));
        let text = encode("i-1", 8, None, ("beat", json!(true)));
        assert_eq!(decode(text.as_bytes(), false).unwrap().body, Body::Beat);
        for bad in [
            &b"t1"[..],
            br#"{"seq":1,"task":"t"}"#,
            br#"{"from":"a","seq":-1,"task":"t"}"#,
            br#"{"from":"a","seq":1}"#,
            br#"{"from":"a","seq":1,"beat":true,"lost":true}"#,
        ] {
            assert!(decode(bad, false).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
