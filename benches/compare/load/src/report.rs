//! What a run reports: its errors (a count and the first few distinct messages), latency summaries,
//! the generator's own CPU use, and the outcome of a mode (`Report`).

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::time::Instant;

/// How many distinct error messages a run keeps to show.
const KEPT_ERRORS: usize = 5;

/// Errors of a run: how many, and the first few distinct messages.
#[derive(Default)]
pub(crate) struct Errors {
    pub(crate) count: u64,
    pub(crate) kept: Vec<String>,
}

impl Errors {
    pub(crate) fn add(&mut self, message: impl Into<String>) {
        self.count += 1;
        let message = message.into();
        if self.kept.len() < KEPT_ERRORS && !self.kept.contains(&message) {
            self.kept.push(message);
        }
    }

    pub(crate) fn merge(&mut self, other: Errors) {
        self.count += other.count;
        for m in other.kept {
            if self.kept.len() < KEPT_ERRORS && !self.kept.contains(&m) {
                self.kept.push(m);
            }
        }
    }
}

/// p50, p99, mean and max of latencies in µs.
pub(crate) struct Summary {
    pub(crate) p50: u64,
    pub(crate) p99: u64,
    pub(crate) mean: f64,
    pub(crate) max: u64,
}

pub(crate) fn summarize(mut micros: Vec<u32>) -> Summary {
    micros.sort_unstable();
    let pick = |p: f64| -> u64 {
        if micros.is_empty() {
            return 0;
        }
        let rank = ((p / 100.0) * micros.len() as f64).ceil() as usize;
        u64::from(micros[rank.clamp(1, micros.len()) - 1])
    };
    let mean = if micros.is_empty() {
        0.0
    } else {
        micros.iter().map(|&m| m as f64).sum::<f64>() / micros.len() as f64
    };
    Summary { p50: pick(50.0), p99: pick(99.0), mean, max: micros.last().copied().map_or(0, u64::from) }
}

/// CPU time (user + system) this process has used so far, in seconds: from `/proc/self/stat`, in
/// clock ticks of 1/100 s (the Linux default). Reported so that a run can tell when the generator,
/// not the server, was the bottleneck.
pub(crate) fn own_cpu_seconds() -> f64 {
    cpu_seconds_in(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default())
}

/// CPU time (user + system) process `pid` has used so far, in seconds, as [`own_cpu_seconds`]
/// reads it; `None` when the process is gone.
pub(crate) fn process_cpu_seconds(pid: u32) -> Option<f64> {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().map(|stat| cpu_seconds_in(&stat))
}

/// CPU time of every thread of process `pid` (`"self"` for this one) so far, in nanoseconds: the sum
/// of the first field of `/proc/PID/task/*/schedstat` (time spent on a CPU). Finer than the clock
/// ticks of `/proc/PID/stat`, for windows of milliseconds; a thread that exits takes its time with it,
/// so it is read over windows in which the threads stay. `None` when the process is gone.
pub(crate) fn threads_cpu_ns(pid: &str) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0u64;
    for task in tasks.flatten() {
        let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        total += schedstat_ns(&stat).unwrap_or(0);
    }
    Some(total)
}

/// Every thread's time on a CPU at one moment, by thread id (ns, the first field of
/// `/proc/PID/task/TID/schedstat`): user and system time alike, at nanosecond precision. The CPU a
/// process spent over a window is [`ThreadTimes::since`] of two readings, thread by thread, so that
/// a thread that exits within the window takes only its own time with it (a plain sum would lose
/// its whole life's time and could even go down).
pub(crate) struct ThreadTimes(BTreeMap<u64, u64>);

impl ThreadTimes {
    /// Reads process `pid`'s threads (`"self"` for this one); `None` when the process is gone.
    pub(crate) fn read(pid: &str) -> Option<ThreadTimes> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        let mut times = BTreeMap::new();
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse::<u64>().ok()) else { continue };
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            if let Some(ns) = schedstat_ns(&stat) {
                times.insert(tid, ns);
            }
        }
        Some(ThreadTimes(times))
    }

    /// The CPU time (ns) the threads alive now spent since `before`: each thread's growth, all of a
    /// thread's time when it was not there before (or its count went down: a new thread under a
    /// reused id).
    pub(crate) fn since(&self, before: &ThreadTimes) -> u64 {
        self.0
            .iter()
            .map(|(tid, &now)| match before.0.get(tid) {
                Some(&then) if then <= now => now - then,
                _ => now,
            })
            .sum()
    }
}

/// The time on a CPU (ns) of the text of a `schedstat` file: its first field.
pub(crate) fn schedstat_ns(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The server CPU (ns) between two readings of [`ThreadTimes`], in µs per request of `requests`;
/// `None` without both readings or without a request.
pub(crate) fn cpu_us_per(
    before: Option<&ThreadTimes>,
    after: Option<&ThreadTimes>,
    requests: u64,
) -> Option<f64> {
    let ns = after?.since(before?);
    (requests > 0).then(|| ns as f64 / 1e3 / requests as f64)
}

/// The minor page faults process `pid` has taken so far, all its threads together (`minflt`, the
/// tenth field of `/proc/PID/stat`); `None` when the process is gone. A fault is the operating
/// system mapping a fresh page for the process: at a megabyte per call, whether the allocator maps
/// its blocks afresh for each call (256 faults a MiB) can weigh more than the call's own work.
pub(crate) fn minor_faults(pid: &str) -> Option<u64> {
    minor_faults_in(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// `minflt` of the text of a `/proc/PID/stat`.
fn minor_faults_in(stat: &str) -> Option<u64> {
    stat_field(stat, 10)?.parse().ok()
}

/// Field `n` (numbered from 1, as in `proc(5)`) of the text of a `/proc/PID/stat`, from field 3 on.
/// The name (field 2), in parentheses, may hold spaces and parentheses: fields are counted after its
/// last `)`.
fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(n.checked_sub(3)?)
}

/// Faults per request between two readings of [`minor_faults`]; `None` without both or without a
/// request.
pub(crate) fn faults_per(before: Option<u64>, after: Option<u64>, requests: u64) -> Option<f64> {
    let faults = after?.checked_sub(before?)?;
    (requests > 0).then(|| faults as f64 / requests as f64)
}

/// utime + stime of the text of a `/proc/PID/stat`, in seconds.
fn cpu_seconds_in(stat: &str) -> f64 {
    let ticks = |n: usize| stat_field(stat, n).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime.
    (ticks(14) + ticks(15)) / 100.0
}

/// The generator's CPU use since `cpu0` over `wall` seconds, in percent of one core.
pub(crate) fn cpu_percent(cpu0: f64, wall: f64) -> f64 {
    if wall > 0.0 { (own_cpu_seconds() - cpu0) / wall * 100.0 } else { 0.0 }
}

pub(crate) fn micros_since(t: Instant) -> u32 {
    u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX)
}

/// The outcome of a mode: its JSON line, a human line, and the error count.
pub(crate) struct Report {
    pub(crate) json: Value,
    pub(crate) human: String,
    pub(crate) errors: u64,
}

pub(crate) fn error_suffix(kept: &[String]) -> String {
    if kept.is_empty() { String::new() } else { format!("; first errors: {}", kept.join(" | ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(pairs: &[(u64, u64)]) -> ThreadTimes {
        ThreadTimes(pairs.iter().copied().collect())
    }

    #[test]
    fn the_first_field_of_schedstat_is_the_time_on_a_cpu() {
        assert_eq!(schedstat_ns("123456789 2000 17\n"), Some(123_456_789));
        assert_eq!(schedstat_ns(""), None);
        assert_eq!(schedstat_ns("x 1 2"), None);
    }

    #[test]
    fn cpu_over_a_window_is_summed_thread_by_thread() {
        let before = times(&[(1, 1_000), (2, 50_000), (3, 7_000)]);
        // Thread 2 exited (its time is gone, not subtracted), thread 4 is new (all of its time is
        // the window's), thread 3 is a new thread under a reused id (its count went down).
        let after = times(&[(1, 4_000), (3, 500), (4, 2_500)]);
        assert_eq!(after.since(&before), 3_000 + 500 + 2_500);
        assert_eq!(cpu_us_per(Some(&before), Some(&after), 3), Some(2.0));
        assert_eq!(cpu_us_per(Some(&before), Some(&after), 0), None);
        assert_eq!(cpu_us_per(None, Some(&after), 3), None);
        assert_eq!(cpu_us_per(Some(&before), None, 3), None);
    }

    #[test]
    fn minor_faults_are_the_tenth_field_counted_after_the_name() {
        // A name with a space and a parenthesis of its own; minflt 4711, cminflt 9 after it.
        let stat = "1234 (bench (x) y) S 1 1234 1234 0 -1 4194560 4711 9 0 0 12 3 0 0 20 0 3 0";
        assert_eq!(minor_faults_in(stat), Some(4711));
        assert_eq!(minor_faults_in("1234 (short) S 1"), None);
        assert_eq!(minor_faults_in("no name here"), None);
        assert!(minor_faults("self").is_some_and(|n| n > 0), "this process has mapped pages");
        assert_eq!(faults_per(Some(100), Some(612), 2), Some(256.0));
        assert_eq!(faults_per(Some(100), Some(612), 0), None);
        assert_eq!(faults_per(Some(700), Some(612), 2), None, "a count that went down is no figure");
        assert_eq!(faults_per(None, Some(612), 2), None);
    }

    #[test]
    fn this_process_has_threads_with_time() {
        assert!(!ThreadTimes::read("self").expect("our own threads").0.is_empty());
        assert!(ThreadTimes::read("0").is_none(), "there is no process 0 in /proc");
    }
}
