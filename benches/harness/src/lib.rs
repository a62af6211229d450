//! mcp-kernel's benchmark harness, beside the servers and the load generator it drives
//! (`benches/compare/`). `cargo xtask bench …` runs its program (`src/main.rs`) with the same
//! arguments, from the workspace root.
//!
//! `cargo xtask bench compare [--quick] [--rounds N] [--only kernel,floor] [--no-build] [--no-payload]`:
//! the same echo tool served by mcp-kernel (`bench-kernel`), by rmcp (`bench-rmcp`) and by the bare
//! minimum of JSON work (`bench-floor`), measured by `bench-load`, all from the separate workspace
//! `benches/compare/` (so that ordinary builds never compile rmcp). Its headline is each server's own
//! CPU time per request over each transport, and per call with large payloads (module `headline`).
//!
//! The servers run interleaved, round by round (kernel, rmcp, floor, kernel, rmcp, floor, …), so that
//! a slow spell of the machine falls on all of them alike. With `taskset` and two CPUs, each server
//! is pinned to CPU 0 and the load generator to CPU 1. What is reported is the median of the rounds
//! per server and the ratios of the medians — kernel/rmcp and kernel/floor — which carry across
//! machines far better than the absolute numbers. The table is printed and written as JSON to
//! `target/bench/compare.json`. See `docs/performance.md`.
//!
//! `--hold` runs only the memory scenario instead: per server and round, `bench-load hold` opens
//! `HOLD_CLIENTS` connections that each send a request head for a `HOLD_BODY_BYTES` body and then
//! half of it, and reads the server's RSS growth per connection; medians and ratios go to
//! `target/bench/compare-hold.json`.
//!
//! `--drip N` runs only the slow-body scenario instead: per server and round, `bench-load drip`
//! opens N connections that each send a request head and then one body byte per second, measures
//! `DRIP_REQUESTS` legitimate `tools/call`s sent one at a time on another connection while they are
//! open (and the same requests before, as a baseline), and records when the server answered (408)
//! or closed the drips, waiting at most `DRIP_WAIT_S` after each head (mcp-kernel's body deadline,
//! 15 s, and a margin); a drip still open then is "held". The kernel is started with
//! `BENCH_KERNEL_MAX_CONNECTIONS` set so that its connection limits admit all N drips. Medians and
//! the ratios of the legitimate p50 and p99 go to `target/bench/compare-drip.json`.
//!
//! `--listen N[,N…]` runs only the change-notification scenario instead (module `listen`), on the
//! kernel alone: per round and N, the server's memory per idle keep-alive connection (`bench-load
//! idle`, the baseline), then per open `subscriptions/listen` stream, its CPU while the streams idle
//! (at the default keep-alive interval and at a short one), and the time until one change reached
//! every stream (`bench-load listen`); medians go to `target/bench/compare-listen.json`.
//!
//! `--tasks N[,N…]` runs only the tasks scenario instead (module `tasks`), on the kernel alone, each
//! figure beside a baseline measured in the same round on the same server binary: `tasks/get` beside a
//! `tools/call` of `echo` (throughput and latency over HTTP, latency over stdio), the memory per live
//! task beside a held ordinary call of the same tool and an idle keep-alive connection (per N), and
//! the time from a task's completion until its listener reads `notifications/tasks` beside the time
//! from an ordinary call's return until its caller reads the answer; medians go to
//! `target/bench/compare-tasks.json`.
//!
//! `--redis` runs only the shared-store scenario instead (module `shared`), on the kernel alone, each
//! figure in process beside the same over Redis (a `redis-server` the run starts, pinned with the
//! servers): `tasks/get` throughput and latency at 32 connections, the time until one change reaches the
//! last of 1,000 listeners on each server (one server in process, three sharing one Redis), and the
//! Redis round trips per `tasks/get` and per task lifecycle, by the server's count and by Redis's;
//! medians go to `target/bench/compare-redis.json`.
//!
//! `--sessions` runs only the legacy-session scenario instead (module `sessions`), on the kernel alone:
//! the `2025-11-25` `tools/call` of `echo` at 32 connections without a session, in a session kept in
//! process and in one kept in Redis (a `redis-server` the run starts), and the `2026-07-28` call for
//! reference, interleaved in every round: throughput, latency and the server's (and Redis's) CPU per
//! request, with each one's ratio to the stateless legacy request; medians go to
//! `target/bench/compare-sessions.json`.
//!
//! `cargo xtask bench curves [--quick] [--rounds N] [--only …] [--curve NAME[,NAME]] [--no-build]`
//! measures how cost grows instead (module `curves`): with HTTP connections, idle and drip
//! connections, catalog size, payload size, h2c streams, listen streams, live tasks and open sessions; it writes `target/bench/curves.json`,
//! prints a Markdown table per curve and draws an SVG plot per curve into `docs/performance/curves/`.
//!
//! `cargo xtask bench features [--rounds N]` measures what each feature of the facade costs a host
//! (module `features`): clean release builds of one small host under several feature sets, their build
//! time, crate count and program size; it writes `target/bench/features.json`.
//!
//! `cargo xtask bench footprint [--only kernel,floor] [--no-build] [--seconds S] [--connections N] [--d1
//! BYTES,WAYS,LINE] [--order FILE]` counts how much code one HTTP request runs through in each server,
//! under callgrind (module `footprint`): instructions, and the distinct hot instructions, 64-byte lines
//! and 4-KiB pages of code, with the simulated cache misses (of the machine's caches, or of the
//! first-level data cache `--d1` shapes) and the cycles they are estimated to cost; it writes
//! `target/bench/footprint.json`, and with `--order` the hot functions as an lld symbol-ordering file.
//! `cargo xtask bench layout [--rounds N] [--no-build]` builds both servers a second time with their hot
//! functions laid out together by lld (from a profile of their own) and measures both builds' CPU per
//! request side by side, round by round; it writes `target/bench/layout.json`. `cargo xtask bench pgo
//! [--rounds N] [--no-build]` does the same with a build optimized from a profile of the servers under
//! the benchmark's load (`-C profile-use`), and reports both builds' estimated cycles; it writes
//! `target/bench/pgo.json`. `cargo xtask bench touched [--only kernel,floor] [--no-build] [--seconds S]`
//! counts the distinct 64-byte lines of data one HTTP request touches in each server, by mapping,
//! beside the L1 data cache, from a lackey trace (module `footprint::touched`); it writes
//! `target/bench/touched.json`.
//!
//! By phase: `options` reads the command line, `build` builds the compare workspace and finds its
//! binaries, `servers` starts the servers and runs `bench-load` against them (pinned), `compare`,
//! `hold`, `drip`, `listen`, `tasks`, `shared` and `sessions` run the rounds of each scenario,
//! `report` tallies the rounds into medians and ratios, prints them and writes the JSON, and
//! `headline` sums up the comparison's CPU per request. `footprint` profiles a server under callgrind
//! and counts its code and its cache misses (`footprint::callgrind` reads the profile,
//! `footprint::symbols` names its functions); `footprint::layout` and `footprint::pgo` build the
//! laid-out and the profile-optimized pair, and `footprint::rounds` runs each pair's paired rounds.
#![forbid(unsafe_code)]

mod build;
mod compare;
mod curves;
mod drip;
mod features;
mod footprint;
mod headline;
mod hold;
mod listen;
mod options;
mod report;
mod servers;
mod sessions;
mod shared;
mod tasks;

use compare::run_compare;
use drip::run_drip;
use hold::run_hold;
use listen::run_listen;
use mcp_kernel_workspace::root;
use options::parse;
use servers::Pinning;
use sessions::run_sessions;
use shared::run_shared;
use tasks::run_tasks;

/// The servers in their interleaving order: (short name, binary).
const SERVERS: [(&str, &str); 3] =
    [("kernel", "bench-kernel"), ("rmcp", "bench-rmcp"), ("floor", "bench-floor")];
const LOAD: &str = "bench-load";

/// The environment of every server in a large-payload measurement (the comparison's rows, the
/// `payload` curve): glibc's malloc with both thresholds fixed, where they otherwise move — the `mmap`
/// threshold at 32 MiB (its ceiling), the trim threshold at 128 MiB, the values `docs/performance.md`
/// gives a host serving megabyte bodies. Over stdio `bench-load`, which spawns the server, runs with it
/// too; over HTTP only the server does.
///
/// With the defaults, freeing a large block raises the `mmap` threshold, and a thread's arena then
/// gives the top of its heap back to the operating system (`madvise`) whenever a free leaves more
/// than the trim threshold there, and faults it in again on the next call. Which process that
/// falls on changes from one start to the next, whatever its code: 64 KiB echoes over HTTP took the
/// floor 34 page faults per call and the kernel 7 in one pair of runs, the kernel 7.9 and the floor
/// 0.07 in the harness the same day. Fixed thresholds stop it for every server alike, so that the rows
/// measure each server's work; `--payload-malloc-default` (comparison) runs them with the defaults.
/// No effect on a server not linked with glibc's malloc.
const PAYLOAD_MALLOC: (&str, &str) =
    ("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=134217728");

/// `cargo xtask bench …`.
pub fn run(args: &[String]) -> Result<(), String> {
    let root = root();
    if args.first().map(String::as_str) == Some("curves") {
        return curves::run(args, &root);
    }
    if args.first().map(String::as_str) == Some("features") {
        return features::run(args, &root);
    }
    if args.first().map(String::as_str) == Some("footprint") {
        return footprint::run(args, &root);
    }
    if args.first().map(String::as_str) == Some("layout") {
        return footprint::run_layout(args, &root);
    }
    if args.first().map(String::as_str) == Some("pgo") {
        return footprint::run_pgo(args, &root);
    }
    if args.first().map(String::as_str) == Some("touched") {
        return footprint::run_touched(args, &root);
    }
    let options = parse(args)?;
    let manifest = root.join("benches/compare/Cargo.toml");
    if !manifest.exists() {
        return Err(format!("{} is missing", manifest.display()));
    }
    // `--listen`, `--tasks`, `--redis` and `--sessions` measure the kernel alone: the others are not built.
    let alone = options.listen.is_some() || options.tasks.is_some() || options.redis || options.sessions;
    let servers: Vec<(&'static str, &'static str)> = SERVERS
        .iter()
        .copied()
        .filter(|(name, _)| options.only.contains(name) && (!alone || *name == "kernel"))
        .collect();
    if options.build {
        build::build(&manifest, &servers)?;
    }
    let release = build::release_dir(&manifest, &servers)?;
    let load = release.join(LOAD);
    let pinning = Pinning::detect();
    let out_dir = root.join("target/bench");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    if options.hold {
        return run_hold(&options, &servers, &pinning, &release, &load, &root);
    }
    if let Some(drips) = options.drip {
        return run_drip(&options, drips, &servers, &pinning, &release, &load, &root);
    }
    if let Some(counts) = &options.listen {
        return run_listen(&options, counts, &servers, &pinning, &release, &load, &root);
    }
    if let Some(counts) = &options.tasks {
        return run_tasks(&options, counts, &servers, &pinning, &release, &load, &root);
    }
    if options.redis {
        return run_shared(&options, &servers, &pinning, &release, &load, &root);
    }
    if options.sessions {
        return run_sessions(&options, &servers, &pinning, &release, &load, &root);
    }
    run_compare(&options, &servers, &pinning, &release, &load, &root, &out_dir)
}

/// A command line as the harness receives it, for the tests of every module's options.
#[cfg(test)]
pub(crate) fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use drip::soft_limit_of;
    use report::{median, spread};

    #[test]
    fn medians_and_spreads() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(spread(&[90.0, 100.0, 110.0]), Some(10.0));
    }

    #[test]
    fn options() {
        let quick = parse(&args(&["compare", "--quick"])).unwrap();
        assert_eq!((quick.rounds, quick.warmup_s, quick.duration_s), (3, 1.0, 2.0));
        let full = parse(&args(&["compare", "--rounds", "7", "--only", "floor,kernel"])).unwrap();
        assert_eq!((full.rounds, full.warmup_s, full.duration_s), (7, 2.0, 5.0));
        assert_eq!(full.only, ["kernel", "floor"]);
        assert!(parse(&args(&["compare", "--only", "other"])).is_err());
        assert!(parse(&args(&["other"])).is_err());
        assert!(!full.hold);
        assert!(parse(&args(&["compare", "--hold"])).unwrap().hold);
    }

    #[test]
    fn the_large_payloads_run_unless_no_payload_is_given() {
        assert!(parse(&args(&["compare", "--quick"])).unwrap().payload);
        assert!(!parse(&args(&["compare", "--quick", "--no-payload"])).unwrap().payload);
    }

    #[test]
    fn the_large_payloads_fix_both_malloc_thresholds_unless_told_not_to() {
        assert!(!parse(&args(&["compare"])).unwrap().payload_malloc_default);
        assert!(parse(&args(&["compare", "--payload-malloc-default"])).unwrap().payload_malloc_default);
        // Setting either stops glibc from moving both; both are set so that both hold a known value.
        let (name, value) = PAYLOAD_MALLOC;
        assert_eq!(name, "GLIBC_TUNABLES");
        let set: Vec<(&str, u64)> = value
            .split(':')
            .map(|pair| pair.split_once('=').map(|(k, v)| (k, v.parse().unwrap())).unwrap())
            .collect();
        assert_eq!(
            set,
            [("glibc.malloc.mmap_threshold", 32 << 20), ("glibc.malloc.trim_threshold", 128 << 20)]
        );
    }

    #[test]
    fn drip_options() {
        assert_eq!(parse(&args(&["compare"])).unwrap().drip, None);
        let drip = parse(&args(&["compare", "--drip", "12000", "--rounds", "1"])).unwrap();
        assert_eq!((drip.drip, drip.rounds, drip.hold), (Some(12_000), 1, false));
        for bad in [&["compare", "--drip"][..], &["compare", "--drip", "0"], &["compare", "--drip", "30001"]]
        {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
        assert!(parse(&args(&["compare", "--drip", "10", "--hold"])).is_err());
    }

    #[test]
    fn listen_takes_ascending_counts_and_runs_alone() {
        assert_eq!(parse(&args(&["compare"])).unwrap().listen, None);
        let listen = parse(&args(&["compare", "--listen", "1000,10000", "--quick"])).unwrap();
        assert_eq!((listen.listen, listen.rounds), (Some(vec![1_000, 10_000]), 3));
        assert_eq!(parse(&args(&["compare", "--listen", "5"])).unwrap().listen, Some(vec![5]));
        for bad in [
            &["compare", "--listen"][..],
            &["compare", "--listen", "0"],
            &["compare", "--listen", "16001"],
            &["compare", "--listen", "10,5"],
            &["compare", "--listen", "1,2,3,4,5"],
            &["compare", "--listen", "x"],
            &["compare", "--listen", "10", "--hold"],
            &["compare", "--listen", "10", "--drip", "10"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn tasks_take_ascending_counts_and_run_alone() {
        assert_eq!(parse(&args(&["compare"])).unwrap().tasks, None);
        let tasks = parse(&args(&["compare", "--tasks", "1000,10000", "--rounds", "3"])).unwrap();
        assert_eq!((tasks.tasks, tasks.rounds, tasks.listen), (Some(vec![1_000, 10_000]), 3, None));
        for bad in [
            &["compare", "--tasks"][..],
            &["compare", "--tasks", "0"],
            &["compare", "--tasks", "16001"],
            &["compare", "--tasks", "10,5"],
            &["compare", "--tasks", "10", "--listen", "10"],
            &["compare", "--tasks", "10", "--hold"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn redis_is_a_run_of_its_own() {
        assert!(!parse(&args(&["compare"])).unwrap().redis);
        let redis = parse(&args(&["compare", "--redis", "--quick"])).unwrap();
        assert_eq!((redis.redis, redis.rounds, redis.tasks, redis.listen), (true, 3, None, None));
        assert_eq!(parse(&args(&["compare", "--redis", "--rounds", "2"])).unwrap().rounds, 2);
        for bad in [&["compare", "--redis", "--tasks", "10"][..], &["compare", "--redis", "--hold"]] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sessions_are_a_run_of_their_own() {
        assert!(!parse(&args(&["compare"])).unwrap().sessions);
        let sessions = parse(&args(&["compare", "--sessions", "--quick"])).unwrap();
        assert_eq!((sessions.sessions, sessions.rounds, sessions.redis), (true, 3, false));
        for bad in [&["compare", "--sessions", "--redis"][..], &["compare", "--sessions", "--tasks", "10"]] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn open_file_limits_are_read() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(soft_limit_of(limits, "Max open files"), Some(1024));
        assert_eq!(soft_limit_of(limits, "Max cpu time"), None);
        assert_eq!(soft_limit_of(limits, "Max processes"), None);
    }
}
