//! `cargo xtask bench touched [--only kernel,floor] [--no-build] [--seconds S]`: how much data one
//! HTTP request touches, in each server, against the first-level data cache.
//!
//! A request whose loads and stores reach more distinct 64-byte lines than the L1 data cache holds
//! evicts, in each set it overfills, the lines it will need again next time: it misses on every
//! request, one connection or many. Per server, this run starts the HTTP server under `valgrind
//! --tool=lackey --trace-mem=yes`, which writes every instruction address and every data access,
//! loads it with `bench-load http` on one keep-alive connection for `--seconds` (default 2), and reads
//! the server's mappings (`/proc/PID/maps`) before stopping it. The trace is cut into one window a
//! request at each entry into hyper's request-head parser (`Http1Transaction::parse` of hyper's
//! server role, which both servers run once a request); the first [`WARM_WINDOWS`] windows and the
//! last are left out. Per window it counts the distinct 64-byte lines the data accesses fall in, in
//! all and by the mapping that holds them (the binary's segments, each library's, and each anonymous
//! mapping: the worker's stack, the allocator's arenas), and the lines the window touches that the
//! window before it did not. It reports the means beside the machine's L1 data cache (from
//! `/sys/devices/system/cpu/cpu0/cache`), and writes `target/bench/touched.json`.
//!
//! `docs/performance.md`, "Thirteenth round", reads the figures. Needs valgrind and binutils' `nm`;
//! nothing here runs in CI. The trace is written under `target/bench/touched/` and removed once read
//! (a few hundred MB a server).

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use super::super::LOAD;
use super::super::options::parse_only;
use super::super::report::finish;
use super::super::servers::{Pinning, run_load, start_http_argv};
use super::symbols::{self, Symbol};
use super::{Setup, answered, setup};

/// Windows left out at the start: the connection's first requests warm what later ones reuse.
const WARM_WINDOWS: usize = 5;
/// Fewest windows counted for a server's figures to be reported.
const MIN_WINDOWS: usize = 5;
/// Mappings named in the report per server, the most touched first; the rest are summed.
const NAMED_MAPPINGS: usize = 8;

/// The command line, for a refused one.
const USAGE: &str = "usage: cargo xtask bench touched [--only kernel,floor] [--no-build] [--seconds S]";

/// What `cargo xtask bench touched` was asked for.
#[derive(Debug, PartialEq)]
struct Options {
    only: Vec<&'static str>,
    build: bool,
    seconds: f64,
}

/// Reads `touched …` (the subcommand first).
fn parse(args: &[String]) -> Result<Options, String> {
    let mut it = args.iter();
    if it.next().map(String::as_str) != Some("touched") {
        return Err(USAGE.into());
    }
    let mut options = Options { only: vec!["kernel", "floor"], build: true, seconds: 2.0 };
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--no-build" => options.build = false,
            "--only" => options.only = parse_only(value()?)?,
            "--seconds" => {
                let v = value()?;
                options.seconds = v
                    .parse::<f64>()
                    .ok()
                    .filter(|s| (1.0..=30.0).contains(s))
                    .ok_or_else(|| format!("--seconds: 1 to 30, not {v:?}"))?;
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(options)
}

/// One mapping of the server's address space (a line of `/proc/PID/maps`).
#[derive(Debug, PartialEq)]
pub(crate) struct Mapping {
    /// Its first address.
    start: u64,
    /// One past its last address.
    end: u64,
    /// Its offset in the file it maps (0 for an anonymous one).
    offset: u64,
    /// What it is: the file's name, the permissions and the offset mapped (a binary maps its
    /// read-only data twice: constants before its code, relocated tables after), or `anonymous` with
    /// the permissions, its size and its address (each thread's stack is a mapping of its own).
    label: String,
    /// The file it maps, if any.
    path: Option<String>,
}

/// The mappings of a `/proc/PID/maps` text, sorted by address.
pub(crate) fn parse_maps(text: &str) -> Vec<Mapping> {
    let mut maps: Vec<Mapping> = text
        .lines()
        .filter_map(|line| {
            // address perms offset device inode [path], the path being the rest of the line.
            let mut fields = line.splitn(6, ' ').filter(|f| !f.is_empty());
            let (start, end) = fields.next()?.split_once('-')?;
            let (start, end) = (u64::from_str_radix(start, 16).ok()?, u64::from_str_radix(end, 16).ok()?);
            let perms = fields.next()?;
            let offset = u64::from_str_radix(fields.next()?, 16).ok()?;
            let path = fields.nth(2).map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned);
            let label = match &path {
                Some(p) => format!("{} {perms} at {offset:#x}", p.rsplit('/').next().unwrap_or(p)),
                None => format!("anonymous {perms} {} KiB at {start:#x}", (end - start) / 1024),
            };
            Some(Mapping { start, end, offset, label, path })
        })
        .collect();
    maps.sort_by_key(|m| m.start);
    maps
}

/// The index of the mapping holding `address`.
fn mapping_of(maps: &[Mapping], address: u64) -> Option<usize> {
    let i = maps.partition_point(|m| m.start <= address).checked_sub(1)?;
    (address < maps[i].end).then_some(i)
}

/// Where the request-head parser's code lies while the server runs: the addresses of hyper's
/// server-role `Http1Transaction::parse` in `symbols`, moved to where `maps` put `binary` (a
/// position-independent binary's symbols count from the mapping at file offset 0).
fn window_marks(
    symbols: &[Symbol],
    maps: &[Mapping],
    binary: &Path,
    pie: bool,
) -> Result<HashSet<u64>, String> {
    let name = binary.display().to_string();
    let base = if pie {
        maps.iter()
            .find(|m| m.offset == 0 && m.path.as_deref() == Some(name.as_str()))
            .map(|m| m.start)
            .ok_or_else(|| format!("{name} is not among the server's mappings"))?
    } else {
        0
    };
    let marks: HashSet<u64> =
        symbols.iter().filter(|s| is_head_parser(&s.name)).map(|s| base + s.start).collect();
    if marks.is_empty() {
        return Err(format!("{name}: no hyper server-role Http1Transaction::parse among its symbols"));
    }
    Ok(marks)
}

/// Whether a mangled name is hyper's server-role request-head parser.
fn is_head_parser(mangled: &str) -> bool {
    mangled.contains("hyper..proto..h1..role..Server")
        && mangled.contains("Http1Transaction")
        && mangled.contains("5parse17h")
}

/// Whether `binary` is position-independent (ELF type `ET_DYN`).
fn is_pie(binary: &Path) -> Result<bool, String> {
    let mut head = [0u8; 18];
    let read = std::fs::File::open(binary).and_then(|mut file| file.read_exact(&mut head));
    match read {
        Ok(()) if head.starts_with(b"\x7fELF") => Ok(u16::from_le_bytes([head[16], head[17]]) == 3),
        Ok(()) => Err(format!("{} is not an ELF binary", binary.display())),
        Err(e) => Err(format!("{}: {e}", binary.display())),
    }
}

/// What one server's requests touched, averaged over the windows counted.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Touched {
    /// Entries into the request-head parser in the whole trace: one a request served.
    pub(crate) heads: usize,
    /// Windows (requests) counted.
    pub(crate) windows: usize,
    /// Distinct 64-byte data lines a request, in all.
    pub(crate) lines: f64,
    /// Those the window before did not touch.
    pub(crate) new_lines: f64,
    /// By mapping label, most first.
    pub(crate) by_mapping: Vec<(String, f64)>,
}

/// Reads a lackey trace: windows begin at an instruction address in `marks`; the first
/// [`WARM_WINDOWS`] and the last (cut short when the server stopped) are left out.
pub(crate) fn count(trace: impl BufRead, marks: &HashSet<u64>, maps: &[Mapping]) -> Result<Touched, String> {
    let mut windows: Vec<HashSet<u64>> = Vec::new();
    for line in trace.lines() {
        let line = line.map_err(|e| format!("the trace: {e}"))?;
        let Some((kind, address, size)) = access(&line) else { continue };
        if kind == 'I' {
            if marks.contains(&address) {
                windows.push(HashSet::new());
            }
        } else if let Some(window) = windows.last_mut() {
            // An access that crosses a line's end touches both lines.
            let last = address.saturating_add(size.max(1) - 1);
            window.extend((address >> 6)..=(last >> 6));
        }
    }
    let heads = windows.len();
    if heads == 0 {
        return Err("the trace never enters the request-head parser: no request to count".into());
    }
    windows.pop();
    let counted: Vec<HashSet<u64>> = windows.into_iter().skip(WARM_WINDOWS).collect();
    if counted.len() < MIN_WINDOWS {
        return Err(format!("{} requests traced past the first {WARM_WINDOWS}: too few", counted.len()));
    }
    let n = counted.len() as f64;
    let mut by_index: HashMap<Option<usize>, usize> = HashMap::new();
    for window in &counted {
        for line in window {
            *by_index.entry(mapping_of(maps, line << 6)).or_default() += 1;
        }
    }
    let label = |index: Option<usize>| {
        index.map_or_else(|| "outside every mapping".to_owned(), |i| maps[i].label.clone())
    };
    let mut by_mapping: Vec<(String, f64)> =
        by_index.into_iter().map(|(index, c)| (label(index), c as f64 / n)).collect();
    by_mapping.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let lines = counted.iter().map(HashSet::len).sum::<usize>() as f64 / n;
    let new_lines = counted.windows(2).map(|pair| pair[1].difference(&pair[0]).count()).sum::<usize>() as f64
        / (n - 1.0).max(1.0);
    Ok(Touched { heads, windows: counted.len(), lines, new_lines, by_mapping })
}

/// A trace line's kind (`I` an instruction; `L`, `S`, `M` a load, a store, both), address and size.
fn access(line: &str) -> Option<(char, u64, u64)> {
    let kind = match line.as_bytes() {
        [b'I', b' ', ..] => 'I',
        [b' ', k @ (b'L' | b'S' | b'M'), b' ', ..] => char::from(*k),
        _ => return None,
    };
    let (address, size) = line.get(2..)?.trim_start().split_once(',')?;
    Some((kind, u64::from_str_radix(address, 16).ok()?, size.trim().parse().ok()?))
}

/// The machine's first-level data cache, in bytes, as Linux describes cpu0's caches.
fn l1_data_bytes() -> Option<u64> {
    let dir = Path::new("/sys/devices/system/cpu/cpu0/cache");
    std::fs::read_dir(dir).ok()?.flatten().find_map(|entry| {
        let read = |name: &str| std::fs::read_to_string(entry.path().join(name)).ok();
        let data = read("level")?.trim() == "1" && read("type")?.trim() == "Data";
        let size = read("size")?;
        let kib: u64 = size.trim().strip_suffix('K')?.parse().ok()?;
        data.then_some(kib * 1024)
    })
}

/// `cargo xtask bench touched …`.
pub(in super::super) fn run(args: &[String], root: &Path) -> Result<(), String> {
    let options = parse(args)?;
    super::require(&["valgrind", "nm"])?;
    let Setup { servers, release, dir, pinning } = setup(root, &options.only, options.build, "touched")?;
    let started = Instant::now();
    let mut results = Vec::new();
    for (name, binary) in &servers {
        let touched =
            trace_server(&pinning, &release, binary, &dir.join(format!("{binary}.lackey")), options.seconds)?;
        results.push((*name, touched));
    }
    report(root, &results, started.elapsed().as_secs_f64())
}

/// Runs `binary` under lackey on one loaded connection and counts what its requests touched.
fn trace_server(
    pinning: &Pinning,
    release: &Path,
    binary: &str,
    trace: &Path,
    seconds: f64,
) -> Result<Touched, String> {
    // /proc/PID/maps names the binary by its resolved path; its symbols are read before the long run.
    let path = std::fs::canonicalize(release.join(binary)).map_err(|e| format!("{binary}: {e}"))?;
    let (symbols, pie) = (symbols::of(&path)?, is_pie(&path)?);
    let _ = std::fs::remove_file(trace);
    let _removed_when_done = TraceFile(trace);
    let flags = ["-q", "--tool=lackey", "--trace-mem=yes"];
    let mut argv = pinning.command(0, Path::new("valgrind"), &flags);
    // valgrind reads `%p` and `%q{…}` in a log file's name; `%%` is a `%`.
    argv.push(format!("--log-file={}", trace.display().to_string().replace('%', "%%")));
    argv.extend([path.display().to_string(), "http".into(), "127.0.0.1:0".into()]);
    eprintln!("xtask: bench: {binary} under lackey");
    let server = start_http_argv(&argv, &path, &[])?;
    let duration = format!("{seconds}");
    let load = ["http", "--url", &server.url, "--connections", "1", "--warmup", "0", "--duration", &duration];
    let answered = answered(&run_load(&pinning.command(1, &release.join(LOAD), &load))?, &path)?;
    let maps_path = format!("/proc/{}/maps", server.child.id());
    let maps = parse_maps(&std::fs::read_to_string(&maps_path).map_err(|e| format!("{maps_path}: {e}"))?);
    drop(server);
    let marks = window_marks(&symbols, &maps, &path, pie)?;
    let file = std::fs::File::open(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let touched = count(BufReader::with_capacity(1 << 20, file), &marks, &maps)
        .map_err(|e| format!("{binary}: {e}"))?;
    // One head a request answered, and one for each of the start's probes (one, or a few).
    let heads = touched.heads as u64;
    if !(answered + 1..=answered + MAX_PROBES).contains(&heads) {
        return Err(format!(
            "{binary}: the trace enters the request-head parser {heads} times for {answered} requests \
             answered and the start's probe: its windows are not one a request"
        ));
    }
    Ok(touched)
}

/// The most probes the server's start may have sent before the load.
const MAX_PROBES: u64 = 3;

/// A trace file, removed when the run is done with it, whichever way it ends.
struct TraceFile<'a>(&'a Path);

impl Drop for TraceFile<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

/// Prints each server's figures (and the kernel's ratio to the floor) and writes
/// `target/bench/touched.json`.
fn report(root: &Path, results: &[(&str, Touched)], elapsed: f64) -> Result<(), String> {
    let l1 = l1_data_bytes();
    match l1 {
        Some(bytes) => {
            println!("this machine's L1 data cache: {} KiB, {} lines of 64 bytes", bytes / 1024, bytes / 64)
        }
        None => println!("this machine's L1 data cache: not described in /sys"),
    }
    let floor = results.iter().find(|(n, _)| *n == "floor").map(|(_, t)| t.lines);
    let mut json_servers = serde_json::Map::new();
    for (name, t) in results {
        let ratio = floor.filter(|_| *name != "floor").map(|f| format!(", {:.2}× the floor's", t.lines / f));
        println!(
            "{name}: {:.0} distinct data lines a request ({:.0} KiB{}), {:.0} not touched by the request before; {} requests counted",
            t.lines,
            t.lines * 64.0 / 1024.0,
            ratio.unwrap_or_default(),
            t.new_lines,
            t.windows
        );
        let (named, rest) = t.by_mapping.split_at(t.by_mapping.len().min(NAMED_MAPPINGS));
        for (label, lines) in named {
            println!("  {lines:>7.1}  {label}");
        }
        let other: f64 = rest.iter().map(|(_, l)| l).sum();
        if !rest.is_empty() {
            println!("  {other:>7.1}  {} other mappings", rest.len());
        }
        let mappings: serde_json::Map<String, Value> =
            t.by_mapping.iter().map(|(label, lines)| (label.clone(), json!(lines))).collect();
        json_servers.insert(
            (*name).to_owned(),
            json!({
                "request_heads": t.heads,
                "windows_counted": t.windows,
                "lines": t.lines,
                "new_lines": t.new_lines,
                "by_mapping": mappings
            }),
        );
    }
    let out = json!({"l1_data_bytes": l1, "line_bytes": 64, "servers": json_servers});
    finish(root, "target/bench/touched.json", &out, elapsed, &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args;

    #[test]
    fn options_default_to_kernel_and_floor_for_two_seconds() {
        let o = parse(&args(&["touched"])).unwrap();
        assert_eq!(o, Options { only: vec!["kernel", "floor"], build: true, seconds: 2.0 });
        let o = parse(&args(&["touched", "--only", "floor", "--no-build", "--seconds", "5"])).unwrap();
        assert_eq!(o, Options { only: vec!["floor"], build: false, seconds: 5.0 });
        for bad in [
            &["touched", "--seconds", "0.5"][..],
            &["touched", "--seconds"],
            &["touched", "--x"],
            &["footprint"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    const MAPS: &str = "\
00108000-0010a000 r--p 00000000 fe:00 42                         /x/bench kernel/bench-kernel
0010a000-0010c000 r-xp 00002000 fe:00 42                         /x/bench kernel/bench-kernel
04b2a000-04d2a000 rw-p 00000000 00:00 0 
04e00000-05000000 rw-p 00000000 00:00 0 
05000000-05001000 r--p 00010000 fe:00 7                          /lib/libc.so.6
";

    #[test]
    fn labels_mappings_by_file_or_as_anonymous_with_their_size_and_address() {
        let maps = parse_maps(MAPS);
        let labels: Vec<&str> = maps.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "bench-kernel r--p at 0x0",
                "bench-kernel r-xp at 0x2000",
                "anonymous rw-p 2048 KiB at 0x4b2a000",
                "anonymous rw-p 2048 KiB at 0x4e00000",
                "libc.so.6 r--p at 0x10000"
            ]
        );
        assert_eq!(maps[0].path.as_deref(), Some("/x/bench kernel/bench-kernel"), "a path with a space");
        assert_eq!((maps[1].offset, maps[2].path.as_deref()), (0x2000, None));
        assert_eq!(mapping_of(&maps, 0x0010_9fff), Some(0));
        assert_eq!(mapping_of(&maps, 0x0010_c000), None);
        assert_eq!(mapping_of(&maps, 0x04b2_a040), Some(2));
    }

    #[test]
    fn places_the_head_parser_where_the_binary_is_mapped() {
        let maps = parse_maps(MAPS);
        let parser = "_ZN103_$LT$hyper..proto..h1..role..Server$u20$as$u20$hyper..proto..h1..Http1Transaction$GT$5parse17h0123456789abcdefE";
        let encode = parser.replace("5parse17h", "6encode17h");
        let symbols = vec![
            Symbol { start: 0x2100, size: 0x80, name: parser.to_owned() },
            Symbol { start: 0x2200, size: 0x80, name: encode },
        ];
        let binary = Path::new("/x/bench kernel/bench-kernel");
        assert_eq!(window_marks(&symbols, &maps, binary, true).unwrap(), HashSet::from([0x0010_a100]));
        assert_eq!(window_marks(&symbols, &maps, binary, false).unwrap(), HashSet::from([0x2100]));
        assert!(window_marks(&symbols, &maps, Path::new("/y/other"), true).is_err());
        assert!(window_marks(&symbols[1..], &maps, binary, true).is_err(), "no parser, no windows");
    }

    /// `windows` windows, each starting at the mark: two accesses to one line of the first stack, one
    /// to a second line of it, one to libc; a line of the second anonymous mapping new in each window;
    /// and, in the first `warm`, a line of their own on the first stack.
    fn trace_of(windows: u64, warm: u64) -> String {
        let mut trace = String::from("==1== lackey\nI  0010a000,4\n L 04b2a000,8\n");
        for window in 0..windows {
            trace.push_str("I  0010a100,3\n L 04b2a000,8\n S 04b2a008,8\n M 04b2a040,4\n L 05000010,8\n");
            trace.push_str(&format!(" S {:08x},8\nI  0010a104,2\n", 0x04e0_0000 + window * 64));
            if window < warm {
                trace.push_str(&format!(" L {:08x},8\n", 0x04b2_b000 + window * 64));
            }
        }
        trace
    }

    #[test]
    fn counts_distinct_lines_a_request_past_the_warm_windows_and_not_the_last() {
        let maps = parse_maps(MAPS);
        let marks = HashSet::from([0x0010_a100]);
        // Eleven windows: five warm (one line more each) left out, five counted, the last left out.
        let mut trace = trace_of(11, WARM_WINDOWS as u64);
        trace.push_str(" L 04b2a080,8\n L 04b2a0c0,8\n");
        let t = count(trace.as_bytes(), &marks, &maps).unwrap();
        assert_eq!((t.heads, t.windows, t.lines, t.new_lines), (11, 5, 4.0, 1.0));
        assert_eq!(
            t.by_mapping,
            [
                ("anonymous rw-p 2048 KiB at 0x4b2a000".to_owned(), 2.0),
                ("anonymous rw-p 2048 KiB at 0x4e00000".to_owned(), 1.0),
                ("libc.so.6 r--p at 0x10000".to_owned(), 1.0)
            ]
        );
        let fewest = (WARM_WINDOWS + MIN_WINDOWS + 1) as u64;
        assert_eq!(count(trace_of(fewest, 0).as_bytes(), &marks, &maps).unwrap().windows, MIN_WINDOWS);
        let short = trace_of(fewest - 1, 0);
        assert!(
            count(short.as_bytes(), &marks, &maps).is_err(),
            "one window too few once the last is left out"
        );
        let unmarked = trace_of(12, 0).replace("I  0010a100", "I  0010a101");
        let said = count(unmarked.as_bytes(), &marks, &maps).unwrap_err();
        assert!(said.contains("never enters the request-head parser"), "{said}");
    }

    #[test]
    fn an_access_across_a_line_end_touches_both_lines() {
        let maps = parse_maps(MAPS);
        let marks = HashSet::from([0x0010_a100]);
        let window = "I  0010a100,3\n L 04b2a03c,8\n";
        let t = count(window.repeat(WARM_WINDOWS + MIN_WINDOWS + 1).as_bytes(), &marks, &maps).unwrap();
        assert_eq!(t.lines, 2.0, "bytes 0x3c to 0x43: two lines");
        let within = "I  0010a100,3\n L 04b2a038,8\n";
        let t = count(within.repeat(WARM_WINDOWS + MIN_WINDOWS + 1).as_bytes(), &marks, &maps).unwrap();
        assert_eq!(t.lines, 1.0, "bytes 0x38 to 0x3f: one line");
    }

    #[test]
    fn reads_lackey_lines_and_skips_the_rest() {
        assert_eq!(access("I  0010a100,3"), Some(('I', 0x0010_a100, 3)));
        assert_eq!(access(" L 1ffefffd78,8"), Some(('L', 0x1f_feff_fd78, 8)));
        assert_eq!(access(" M 04b2a040,32"), Some(('M', 0x04b2_a040, 32)));
        for other in ["==12== Lackey", "", " X 1000,8", "I  zz,3", " L", " L 1000", " S 1000,x"] {
            assert_eq!(access(other), None, "{other:?}");
        }
    }
}
