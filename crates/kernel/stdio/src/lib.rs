//! The stdio transport of mcp-kernel: newline-delimited JSON-RPC over stdin and stdout ([D-26] to [D-30],
//! MCP `2026-07-28` [S-54]/[S-55]).
//!
//! ```no_run
//! # async fn run(server: mcp_kernel_router::Server) -> std::io::Result<()> {
//! // Logs must go to stderr: stdout carries nothing but protocol lines.
//! mcp_kernel_stdio::serve(server).await
//! # }
//! ```
//!
//! # What the loop does
//!
//! * **Framing ([D-27]).** One message per line. A line holds at most [`MAX_LINE_BYTES`] bytes before its
//!   `\n`, a trailing `\r` included (which is then trimmed); a longer line is refused once (-32600, no
//!   id) and the rest of it is skipped unread. Blank lines are skipped. A line beginning
//!   `Content-Length:` (any case) switches that one message to LSP-style framing: header lines up to a
//!   blank line, then exactly the declared number of bytes, under the same cap. The header block holds
//!   at most 8 KiB and 32 lines; past either bound it is refused once (-32700) and what follows is read
//!   as lines again. A line beginning `{` or `[` is never a header: it ends the block, which is refused
//!   (-32700, a framing error), and is then served as a message of its own, so a stray `Content-Length:`
//!   line swallows no request. Every frame begun is answered once, even at end of input: -32600 for a
//!   frame over the cap, -32700 for a header block or a body the input cut short.
//! * **Parsing.** Each message goes through the one bounded reader, straight into its envelope
//!   ([`mcp_kernel_wire::read_envelope`]: depth, duplicate keys, objects only); a client's answer to a
//!   request the server is waiting on is read again whole ([`mcp_kernel_wire::read_message`]). A
//!   refusal is answered as an error whose id could not be read (`null`, which the wire crate writes by
//!   omitting `id`) and never repeats the input.
//! * **Concurrency.** Each message is served on its own task, so a slow tool does not hold up a
//!   `tools/list` sent after it; responses are written in completion order, each as one whole line,
//!   through one output under one lock (an answer the read loop makes at once is written by it when
//!   nothing is queued ahead of it; every other line goes through the writer task).
//! * **Cancellation.** `notifications/cancelled` aborts the named request (its future is dropped) and that
//!   request is never answered. An unknown or finished id is ignored.
//! * **Change notifications.** A `subscriptions/listen` request stays open: its acknowledgment, then
//!   each notification it asked for, every line tagged with its id, then its completion result when the
//!   server ends it (its change feed ended, or the session drains: every open listen completes before
//!   the output closes). `notifications/cancelled` ends it with no further line. Listens hold places of
//!   their own, never request places: at most [`StdioOptions::max_listens`] ([`DEFAULT_MAX_LISTENS`])
//!   at once, past which a listen is refused [`TOO_MANY_LISTENS`]. The connection is also a
//!   `2025-11-25` session: after a legacy `initialize` (on a server built with notifications) list
//!   changes and updates of `resources/subscribe`d uris are written untagged, and when that session's
//!   change feed ends the session ends as at end of input.
//! * **Asking a `2025-11-25` client.** When a legacy request's host asks for input, the core's bridge
//!   sends the client `elicitation/create` (or `sampling/createMessage`, `roots/list`) over this
//!   connection, as lines with ids the transport mints, and the client's JSON-RPC responses go to the
//!   request waiting for their id (never answered; one for an id nothing waits on is dropped). At most
//!   [`StdioOptions::max_client_requests`] wait at once, each for at most
//!   [`StdioOptions::client_wait`]; one given up or whose request was cancelled is cancelled to the
//!   client, and at end of input every one still waiting is answered at once.
//! * **Identity and replacement.** What [`StdioOptions::extensions`] (or [`StdioOptions::principal`])
//!   holds is attached to every request of the session; the host reads it from `RequestContext`. The
//!   server may be a `LiveServer` ([`serve_with`], [`serve_io`]): each message is served to its end by
//!   the server current when it was read, and the next message sees a replacement.
//! * **Stopping.** `shutdown` and `exit` are answered inline; then, as at end of input, nothing more is
//!   read, every request already read is answered, the output is flushed and the loop returns `Ok`.
//!   The host's own signal does the same ([`StdioOptions::shutdown_on`]; the one line for `SIGTERM` and
//!   Ctrl-C is `.shutdown_on(mcp_kernel::shutdown_signal())`): it ends the input where it stands — the
//!   bytes already taken in are served, nothing sent after it is read — and starts
//!   [`StdioOptions::shutdown_grace`] (30 s by default), past which the requests still running are cut
//!   unanswered and the session returns `Ok` all the same, so the process exits 0 before an
//!   orchestrator's `SIGKILL`. End of input sets no deadline of its own (the MCP client waits, then
//!   signals); a signal during that wait starts the grace. The transport installs no signal handler
//!   unless asked: catching `SIGTERM` changes how the whole process answers it, for as long as it runs,
//!   which is the host's decision (one embedding stdio beside other work may stop it otherwise).
//! * **Tasks** (a server built with the tasks extension). `tasks/get`, `tasks/update` and
//!   `tasks/cancel` are requests like any other. A task's handler outlives the request that created it,
//!   so when the session ends, once every request read is answered, its tasks get
//!   [`StdioOptions::task_grace`] ([`DEFAULT_TASK_GRACE`], 5 s) to finish, and each one still running is
//!   then failed with the shutdown reason and its handler cancelled: the process exits within the grace
//!   with no task left `working` (which a store shared with other processes would otherwise keep).
//! * **Wiring ([`serve()`]).** stdin and stdout are classified independently (`fstat`) before anything
//!   is changed. A pipe or FIFO is served non-blocking on the runtime's reactor through a *new* open file
//!   description of the same pipe (`/proc/self/fd/N`, Linux), never by setting `O_NONBLOCK` on the
//!   description the parent shares; anything else (a file, a terminal, `/dev/null`, a socket, or a pipe
//!   that cannot be reopened) is served blocking: stdin on a thread of its own (the runtime's shutdown never
//!   waits for it), stdout by Tokio's blocking stdout. A closed stdin reads as empty.
//!
//! # Threat model
//!
//! Whoever can write to the server's stdin already runs with the host's privileges (they started the
//! process, or own its parent), so this transport authenticates no one: the caller the host's code sees
//! (`RequestContext::principal`) is the one the host named when it started serving
//! ([`StdioOptions::principal`]), never anything the peer sent. What it defends is the process
//! itself, against a buggy or hostile peer:
//!
//! * **Memory is bounded by construction.** At most one line or frame body of at most the cap is ever
//!   buffered; an oversized line or frame is skipped in fixed-size steps without being kept. The reader
//!   stops reading while [`StdioOptions::max_in_flight`] requests are being served (it holds at most one
//!   more parsed message, waiting), open listens are bounded by [`StdioOptions::max_listens`], and
//!   answers queue in a bounded channel, so a peer that floods the pipe,
//!   or stops reading answers, meets back-pressure instead of growing the heap.
//! * **stdout is protocol-only.** Only the output's one writer (`writer.rs`) writes to it, and it writes only encoded
//!   responses and notifications. Panics and failures are reported through `tracing` (install a subscriber that writes to
//!   stderr: `tracing-subscriber`'s `fmt()` writes to stdout unless told otherwise).
//! * **Faults stay contained.** A panic while serving a message is answered -32603 with the request's id
//!   and the loop goes on. A failed output ends the session: [`serve_io`] returns its error; [`serve()`]
//!   returns `Ok` when nobody is left to read (a broken pipe, a closed stdout) and the error otherwise
//!   (a full disk).
//! * **Shared descriptors are left as found.** No flag of stdin's or stdout's open file description,
//!   which other processes share, is ever changed, so neither they nor a blocking fallback in this
//!   process meet `EAGAIN`.
//!
//! [D-26]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-27]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-30]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [S-54]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-55]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
#![forbid(unsafe_code)]

mod blocking;
mod client;
mod drain;
mod framing;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod in_flight;
mod legacy;
mod listen;
mod options;
mod serve;
mod session;
mod wiring;
mod writer;

pub use listen::{DEFAULT_MAX_LISTENS, TOO_MANY_LISTENS};
pub use options::{
    DEFAULT_CLIENT_WAIT, DEFAULT_MAX_CLIENT_REQUESTS, DEFAULT_MAX_IN_FLIGHT, DEFAULT_TASK_GRACE,
    MAX_LINE_BYTES, SHUTDOWN_GRACE, StdioOptions,
};
pub use serve::{serve, serve_io, serve_with};

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
