//! The real `weather` binary over every kind of stdin and stdout (issue 14): each row of the matrix is
//! its own test, so a failure names the combination.
//!
//! stdin and stdout are each a pipe, a FIFO, a regular file, a terminal (a pseudo-terminal), `/dev/null`,
//! or closed (by the shell, `<&-` / `>&-`, before it runs the binary; the Rust runtime then reopens the
//! descriptor as `/dev/null`, so a closed stdin reads as empty and a closed stdout swallows everything).
//! Where the input is interactive (a pipe, a FIFO, a terminal) the requests arrive one by one with a
//! pause between them: a server that made its shared stdin non-blocking and then read it the blocking
//! way failed with `EAGAIN` at the second one. Every row checks each answer by id (where the output can
//! be read back), exit status 0, a stderr without an error line, and that no descriptor the binary was
//! handed has different flags after the run (or during it) than before.
//!
//! The binary is `target/<profile>/examples/weather`, which needs the `connectome` feature (off by
//! default, so these tests are compiled with it only): `cargo test -p mcp-kernel --features connectome`
//! and `cargo xtask ci` build it (`cargo test --all-targets` alone builds examples only as test
//! harnesses, and a run narrowed with `--test stdio_wiring` builds none), so build it first when in
//! doubt (`cargo build -p mcp-kernel --features connectome --example weather`): every row fails when a
//! source the binary is built from is newer than it, rather than test a stale one.
#![cfg(all(target_os = "linux", feature = "connectome"))]
#![forbid(unsafe_code)]

mod support;

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use rustix::fs::{FileType, Mode, OFlags};
use serde_json::Value;

/// The binary must exit within this.
const LIMIT: Duration = Duration::from_secs(30);

/// How long the output and stderr may take to reach end of file once the binary has exited.
const DRAIN: Duration = Duration::from_secs(10);

/// How soon the binary must exit once its session has ended with a terminal stdin left open.
const SILENT_EXIT: Duration = Duration::from_secs(5);

/// The pause between two requests on an interactive input.
const PAUSE: Duration = Duration::from_millis(200);

/// The ids of the requests sent, in order.
const IDS: [u64; 3] = [1, 2, 3];

/// What the binary's stdin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum In {
    Pipe,
    Fifo,
    File,
    Tty,
    Null,
    Closed,
}

/// What the binary's stdout is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    Pipe,
    Fifo,
    File,
    Tty,
    Null,
    Closed,
    /// A pipe whose read end is already closed: the first write fails with `EPIPE`.
    PipeWithoutReader,
    /// A FIFO nobody has open for reading: it cannot be reopened (`ENXIO`), and writes fail with `EPIPE`.
    FifoWithoutReader,
}

impl In {
    /// Whether requests can be written to it.
    fn carries_requests(self) -> bool {
        matches!(self, In::Pipe | In::Fifo | In::File | In::Tty)
    }
}

impl Out {
    /// Whether what is written to it can be read back.
    fn readable(self) -> bool {
        matches!(self, Out::Pipe | Out::Fifo | Out::File | Out::Tty)
    }
}

/// The `weather` example `cargo test` builds, refused when a source it is built from (as cargo's
/// dep-info lists them) is newer: a run narrowed with `--test` does not rebuild examples.
fn weather() -> PathBuf {
    support::example("weather")
}

/// An empty directory of this test's own under `CARGO_TARGET_TMPDIR`.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stdio_wiring").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// One request line, well under a terminal's 4 KiB line limit.
fn request(id: u64) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
}

/// A FIFO at `path`, opened without blocking: `(read end, write end)`.
///
/// Opened read-write first, so that neither single-ended open waits for the other side; the read-write
/// description is then closed, so that the reader sees end of file once every writer is gone.
fn fifo(path: &Path) -> (File, File) {
    rustix::fs::mknodat(rustix::fs::CWD, path, FileType::Fifo, Mode::RUSR | Mode::WUSR, 0).expect("a FIFO");
    let both = OpenOptions::new().read(true).write(true).open(path).expect("the FIFO, read-write");
    let reader = File::open(path).expect("the FIFO's read end");
    let writer = OpenOptions::new().write(true).open(path).expect("the FIFO's write end");
    drop(both);
    (reader, writer)
}

/// A pseudo-terminal in its default (canonical, echoing) mode: `(master, the terminal)`.
fn pty() -> (File, File) {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).expect("a pty");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("the terminal's name");
    let terminal =
        rustix::fs::open(name.as_c_str(), OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC, Mode::empty())
            .expect("the terminal");
    (File::from(master), File::from(terminal))
}

/// Reads `from` to its end (or, for a pty master, until the terminal is closed) on a thread of its own.
fn drain(mut from: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (done, read) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut chunk = [0; 4096];
        // A pty master reports EIO once the last terminal descriptor is closed: that is its end.
        while let Ok(n @ 1..) = from.read(&mut chunk) {
            bytes.extend_from_slice(&chunk[..n]);
        }
        let _ = done.send(bytes);
    });
    read
}

/// The flags of every description the binary was handed, as this test sees them through its own copy.
fn flags(kept: &[(&'static str, OwnedFd)]) -> Vec<(&'static str, OFlags)> {
    kept.iter().map(|(what, fd)| (*what, rustix::fs::fcntl_getfl(fd.as_fd()).expect("F_GETFL"))).collect()
}

/// Waits for `child` until `deadline`; past it the child is killed and the test fails.
fn wait(child: &mut Child, deadline: Instant, row: &str) -> ExitStatus {
    loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{row}: the binary did not exit in time; killed");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// What one run of the binary left behind.
#[derive(Debug)]
struct Outcome {
    /// The row, for messages.
    row: String,
    status: ExitStatus,
    /// Everything written to stdout, when it can be read back.
    output: Option<Vec<u8>>,
    stderr: String,
    /// The handed descriptions' flags before the binary started, while it ran, and after it exited.
    before: Vec<(&'static str, OFlags)>,
    during: Vec<(&'static str, OFlags)>,
    after: Vec<(&'static str, OFlags)>,
}

/// Runs the binary with this stdin and stdout, sending [`IDS`] (where the input carries requests).
fn run(input: In, output: Out, row: &str) -> Outcome {
    let dir = scratch(row);
    let weather = weather();
    let closes = match (input, output) {
        (In::Closed, Out::Closed) => Some(" <&- >&-"),
        (In::Closed, _) => Some(" <&-"),
        (_, Out::Closed) => Some(" >&-"),
        _ => None,
    };
    let mut command = match closes {
        Some(closes) => {
            let mut shell = Command::new("sh");
            shell.arg("-c").arg(format!("exec \"$0\"{closes}")).arg(&weather);
            shell
        }
        None => Command::new(&weather),
    };
    command.stderr(Stdio::piped());

    // The test's own copies of every description handed to the binary, to read their flags.
    let mut kept: Vec<(&'static str, OwnedFd)> = Vec::new();
    let terminal = (input == In::Tty || output == Out::Tty).then(pty);
    let mut feed: Option<Box<dyn Write>> = None;
    let requests: String = IDS.iter().map(|&id| request(id)).collect();

    match input {
        In::Pipe => {
            let (reader, writer) = std::io::pipe().expect("a pipe");
            kept.push(("stdin pipe", reader.try_clone().expect("a copy").into()));
            command.stdin(reader);
            feed = Some(Box::new(writer));
        }
        In::Fifo => {
            let (reader, writer) = fifo(&dir.join("stdin.fifo"));
            kept.push(("stdin FIFO", reader.try_clone().expect("a copy").into()));
            command.stdin(reader);
            feed = Some(Box::new(writer));
        }
        In::File => {
            let path = dir.join("stdin.jsonl");
            std::fs::write(&path, &requests).expect("the requests file");
            let file = File::open(&path).expect("the requests file");
            kept.push(("stdin file", file.try_clone().expect("a copy").into()));
            command.stdin(file);
        }
        In::Tty => {
            let (master, tty) = terminal.as_ref().expect("a pty");
            kept.push(("stdin tty", tty.try_clone().expect("a copy").into()));
            command.stdin(tty.try_clone().expect("a copy"));
            feed = Some(Box::new(master.try_clone().expect("a copy")));
        }
        In::Null | In::Closed => {
            command.stdin(Stdio::null());
        }
    }

    let mut collected = None;
    let mut written_file = None;
    match output {
        Out::Pipe => {
            let (reader, writer) = std::io::pipe().expect("a pipe");
            kept.push(("stdout pipe", writer.try_clone().expect("a copy").into()));
            command.stdout(writer);
            collected = Some(drain(reader));
        }
        Out::Fifo => {
            let (reader, writer) = fifo(&dir.join("stdout.fifo"));
            kept.push(("stdout FIFO", writer.try_clone().expect("a copy").into()));
            command.stdout(writer);
            collected = Some(drain(reader));
        }
        Out::File => {
            let path = dir.join("stdout.jsonl");
            let file = File::create(&path).expect("the output file");
            kept.push(("stdout file", file.try_clone().expect("a copy").into()));
            command.stdout(file);
            written_file = Some(path);
        }
        Out::Tty => {
            let (_, tty) = terminal.as_ref().expect("a pty");
            if input != In::Tty {
                kept.push(("stdout tty", tty.try_clone().expect("a copy").into()));
            }
            command.stdout(tty.try_clone().expect("a copy"));
        }
        Out::Null | Out::Closed => {
            command.stdout(Stdio::null());
        }
        Out::PipeWithoutReader => {
            let (reader, writer) = std::io::pipe().expect("a pipe");
            drop(reader);
            kept.push(("stdout pipe", writer.try_clone().expect("a copy").into()));
            command.stdout(writer);
        }
        Out::FifoWithoutReader => {
            let (reader, writer) = fifo(&dir.join("stdout.fifo"));
            drop(reader);
            kept.push(("stdout FIFO", writer.try_clone().expect("a copy").into()));
            command.stdout(writer);
        }
    }
    // The master also takes the echo of a terminal stdin, which is read and dropped.
    let screen = terminal.map(|(master, tty)| {
        drop(tty);
        drain(master)
    });
    if output == Out::Tty {
        collected = screen;
    }

    let before = flags(&kept);
    let deadline = Instant::now() + LIMIT;
    let mut child =
        command.spawn().unwrap_or_else(|error| panic!("{row}: spawning {}: {error}", weather.display()));
    // The command holds the parent's copies of the child's ends: a FIFO or pipe reaches end of file only
    // once they are closed.
    drop(command);
    let stderr = drain(child.stderr.take().expect("stderr is piped"));

    let mut during = Vec::new();
    // A terminal whose session ends at its first write (the output has no reader) gets one request and
    // nothing more, not even ^D: it stays open and silent, and the process must exit all the same.
    let silent_after_one =
        input == In::Tty && matches!(output, Out::PipeWithoutReader | Out::FifoWithoutReader);
    let ids = if silent_after_one { &IDS[..1] } else { &IDS[..] };
    match feed {
        Some(mut feed) => {
            for (sent, id) in ids.iter().enumerate() {
                // A write error (the binary is gone) shows as missing answers below.
                let _ = feed.write_all(request(*id).as_bytes()).and_then(|()| feed.flush());
                thread::sleep(PAUSE);
                if sent == 0 {
                    during = flags(&kept);
                }
            }
            // End of input on a terminal: ^D at the start of a line.
            if input == In::Tty && !silent_after_one {
                let _ = feed.write_all(&[0x04]);
            }
        }
        None => {
            thread::sleep(PAUSE);
            during = flags(&kept);
        }
    }

    // The silent terminal stays open (its reader holds it) until the binary exits, which it must do
    // soon after its failed write: nothing will come to end a read that is still waiting.
    let deadline = if silent_after_one { deadline.min(Instant::now() + SILENT_EXIT) } else { deadline };
    let status = wait(&mut child, deadline, row);
    let after = flags(&kept);
    drop(kept);
    let output = match (collected, written_file) {
        (Some(collected), _) => Some(
            collected
                .recv_timeout(DRAIN)
                .unwrap_or_else(|_| panic!("{row}: stdout did not end after the exit")),
        ),
        (None, Some(path)) => Some(std::fs::read(path).expect("the output file")),
        (None, None) => None,
    };
    let stderr =
        stderr.recv_timeout(DRAIN).unwrap_or_else(|_| panic!("{row}: stderr did not end after the exit"));
    Outcome {
        row: row.to_owned(),
        status,
        output,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        before,
        during,
        after,
    }
}

/// The response objects in what the binary wrote: lines holding an object with `result` or `error` and
/// no `method` (a terminal adds `\r`, and may show echoed input or `^D` before an answer).
fn answers(output: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(output)
        .lines()
        .filter_map(|line| {
            let start = line.find('{')?;
            serde_json::from_str::<Value>(line[start..].trim_end_matches('\r')).ok()
        })
        .filter(|value| {
            value.get("method").is_none() && (value.get("result").is_some() || value.get("error").is_some())
        })
        .collect()
}

impl Outcome {
    /// Exit status 0, no error on stderr, and every description's flags as they were.
    fn assert_clean(&self) {
        let Outcome { row, status, stderr, .. } = self;
        assert!(status.success(), "{row}: the binary exited {status}; stderr:\n{stderr}");
        let errors: Vec<&str> =
            stderr.lines().filter(|line| line.contains("ERROR") || line.starts_with("Error")).collect();
        assert!(errors.is_empty(), "{row}: stderr reports an error:\n{stderr}");
        assert_eq!(self.during, self.before, "{row}: a handed description's flags changed while it ran");
        assert_eq!(self.after, self.before, "{row}: a handed description's flags were left changed");
    }

    /// The hint line on stderr exactly once when stdin is a terminal, never otherwise, and never on
    /// stdout.
    fn assert_hint_only_on_a_terminal(&self, input: In) {
        let Outcome { row, stderr, .. } = self;
        let shown = stderr.lines().filter(|line| line.trim_end_matches('\r') == TERMINAL_HINT).count();
        let expected = usize::from(input == In::Tty);
        assert_eq!(shown, expected, "{row}: the terminal hint on stderr; stderr:\n{stderr}");
        if let Some(output) = &self.output {
            let text = String::from_utf8_lossy(output);
            assert!(!text.contains(TERMINAL_HINT), "{row}: the hint is never on stdout:\n{text}");
        }
    }

    /// One successful answer to every request sent, matched by id, and nothing else.
    fn assert_answered(&self, expected: &[u64]) {
        let row = &self.row;
        let output = self.output.as_deref().expect("a readable output");
        let text = String::from_utf8_lossy(output);
        let answers = answers(output);
        let mut ids: Vec<u64> = answers.iter().filter_map(|answer| answer["id"].as_u64()).collect();
        ids.sort_unstable();
        assert_eq!(ids, expected, "{row}: answered ids; stdout:\n{text}\nstderr:\n{}", self.stderr);
        for answer in &answers {
            assert!(answer.get("result").is_some(), "{row}: not a success: {answer}");
        }
    }
}

/// The line `weather` writes to stderr when its stdin is a terminal (issue 21: first contact).
const TERMINAL_HINT: &str = "weather: reading JSON-RPC lines on stdin; see README";

/// Runs one row of the matrix and checks it.
fn check(input: In, output: Out, row: &str) {
    let outcome = run(input, output, row);
    outcome.assert_clean();
    outcome.assert_hint_only_on_a_terminal(input);
    if output.readable() {
        let expected: &[u64] = if input.carries_requests() { &IDS } else { &[] };
        outcome.assert_answered(expected);
    }
}

/// One `#[test]` per row: `name: stdin, stdout;`.
macro_rules! rows {
    ($($name:ident: $input:ident, $output:ident;)*) => {
        $(
            #[test]
            fn $name() {
                check(In::$input, Out::$output, stringify!($name));
            }
        )*
    };
}

rows! {
    stdin_pipe_stdout_pipe_answers_every_request: Pipe, Pipe;
    stdin_pipe_stdout_fifo_answers_every_request: Pipe, Fifo;
    stdin_pipe_stdout_tty_answers_every_request: Pipe, Tty;
    stdin_pipe_stdout_dev_null_exits_cleanly: Pipe, Null;
    stdin_pipe_stdout_closed_exits_cleanly: Pipe, Closed;

    stdin_fifo_stdout_pipe_answers_every_request: Fifo, Pipe;
    stdin_fifo_stdout_fifo_answers_every_request: Fifo, Fifo;
    stdin_fifo_stdout_regular_file_answers_every_request: Fifo, File;
    stdin_fifo_stdout_tty_answers_every_request: Fifo, Tty;
    stdin_fifo_stdout_closed_exits_cleanly: Fifo, Closed;

    stdin_regular_file_stdout_pipe_answers_every_request: File, Pipe;
    stdin_regular_file_stdout_fifo_answers_every_request: File, Fifo;
    stdin_regular_file_stdout_regular_file_answers_every_request: File, File;
    stdin_regular_file_stdout_tty_answers_every_request: File, Tty;
    stdin_regular_file_stdout_dev_null_exits_cleanly: File, Null;
    stdin_regular_file_stdout_closed_exits_cleanly: File, Closed;

    stdin_tty_stdout_pipe_answers_every_request: Tty, Pipe;
    stdin_tty_stdout_fifo_answers_every_request: Tty, Fifo;
    stdin_tty_stdout_regular_file_answers_every_request: Tty, File;
    stdin_tty_stdout_dev_null_exits_cleanly: Tty, Null;
    stdin_tty_stdout_closed_exits_cleanly: Tty, Closed;

    stdin_dev_null_stdout_pipe_is_an_empty_session: Null, Pipe;
    stdin_dev_null_stdout_fifo_is_an_empty_session: Null, Fifo;
    stdin_dev_null_stdout_regular_file_is_an_empty_session: Null, File;
    stdin_dev_null_stdout_tty_is_an_empty_session: Null, Tty;
    stdin_dev_null_stdout_dev_null_exits_cleanly: Null, Null;
    stdin_dev_null_stdout_closed_exits_cleanly: Null, Closed;

    stdin_closed_stdout_pipe_is_an_empty_session: Closed, Pipe;
    stdin_closed_stdout_fifo_is_an_empty_session: Closed, Fifo;
    stdin_closed_stdout_regular_file_is_an_empty_session: Closed, File;
    stdin_closed_stdout_tty_is_an_empty_session: Closed, Tty;
    stdin_closed_stdout_dev_null_exits_cleanly: Closed, Null;
    stdin_closed_stdout_closed_exits_cleanly: Closed, Closed;
}

// A reader that went away ends the session quietly: exit 0 at the first failed write, no error line.
rows! {
    stdin_tty_stdout_fifo_without_a_reader_ends_quietly: Tty, FifoWithoutReader;
    stdin_pipe_stdout_fifo_without_a_reader_ends_quietly: Pipe, FifoWithoutReader;
    stdin_regular_file_stdout_pipe_without_a_reader_ends_quietly: File, PipeWithoutReader;
    stdin_regular_file_stdout_fifo_without_a_reader_ends_quietly: File, FifoWithoutReader;
}

// The rows the threat model names (G-25), written out so that the census can find them.

#[test]
fn stdin_pipe_stdout_regular_file_answers_every_request() {
    check(In::Pipe, Out::File, "stdin_pipe_stdout_regular_file_answers_every_request");
}

#[test]
fn stdin_tty_stdout_tty_answers_every_request() {
    check(In::Tty, Out::Tty, "stdin_tty_stdout_tty_answers_every_request");
}

#[test]
fn stdin_fifo_stdout_dev_null_exits_cleanly() {
    check(In::Fifo, Out::Null, "stdin_fifo_stdout_dev_null_exits_cleanly");
}

#[test]
fn stdin_tty_stdout_pipe_without_a_reader_ends_quietly() {
    check(In::Tty, Out::PipeWithoutReader, "stdin_tty_stdout_pipe_without_a_reader_ends_quietly");
}

#[test]
fn stdin_pipe_stdout_pipe_without_a_reader_ends_quietly() {
    check(In::Pipe, Out::PipeWithoutReader, "stdin_pipe_stdout_pipe_without_a_reader_ends_quietly");
}

/// The flags of `row`'s shared descriptions, asserted unchanged during and after the run, and non-empty.
fn assert_flags_kept(outcome: &Outcome, shared: &[&str]) {
    let row = &outcome.row;
    let seen: Vec<&str> = outcome.before.iter().map(|(what, _)| *what).collect();
    assert_eq!(seen, shared, "{row}: the descriptions watched");
    for (what, flags) in &outcome.before {
        assert!(!flags.contains(OFlags::NONBLOCK), "{row}: {what} was blocking before the run");
    }
    for (what, flags) in outcome.during.iter().chain(&outcome.after) {
        assert!(!flags.contains(OFlags::NONBLOCK), "{row}: {what} was made non-blocking");
    }
    outcome.assert_clean();
    outcome.assert_answered(&IDS);
}

#[test]
fn a_shared_stdin_pipe_stays_blocking_when_stdout_is_a_regular_file() {
    // The old fallback: stdin made non-blocking as a pipe, then read blocking because stdout was no pipe.
    let outcome =
        run(In::Pipe, Out::File, "a_shared_stdin_pipe_stays_blocking_when_stdout_is_a_regular_file");
    assert_flags_kept(&outcome, &["stdin pipe", "stdout file"]);
}

#[test]
fn a_shared_stdin_fifo_stays_blocking_when_stdout_is_a_regular_file() {
    let outcome =
        run(In::Fifo, Out::File, "a_shared_stdin_fifo_stays_blocking_when_stdout_is_a_regular_file");
    assert_flags_kept(&outcome, &["stdin FIFO", "stdout file"]);
}

#[test]
fn shared_stdio_pipes_stay_blocking() {
    // Both ends served on the reactor, through descriptions of their own.
    let outcome = run(In::Pipe, Out::Pipe, "shared_stdio_pipes_stay_blocking");
    assert_flags_kept(&outcome, &["stdin pipe", "stdout pipe"]);
}

#[test]
fn shared_stdio_fifos_stay_blocking() {
    let outcome = run(In::Fifo, Out::Fifo, "shared_stdio_fifos_stay_blocking");
    assert_flags_kept(&outcome, &["stdin FIFO", "stdout FIFO"]);
}

#[test]
fn a_terminal_answer_is_picked_out_of_echo_and_end_of_file() {
    // The echoed request, a `^D` echo, then the answer with the terminal's `\r\n`.
    let screen = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n",
        "^D\x08\x08{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n",
    );
    let found = answers(screen.as_bytes());
    assert_eq!(found, vec![serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})]);
}
