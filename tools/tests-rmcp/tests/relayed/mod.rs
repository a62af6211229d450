//! Shared by the stdio tests: a stdio server spawned as a child, with every line in both directions
//! recorded by a relay between it and rmcp's client.

use std::process::Stdio;

use crate::common::Transcript;

/// The most lines a relay forwards in one direction before it gives up (a bound, never reached).
const MAX_RELAYED_LINES: usize = 10_000;

/// Copies lines from `from` to `to`, recording each as `<arrow> <line>`, until end of input.
async fn relay(
    from: impl tokio::io::AsyncRead + Unpin,
    mut to: impl tokio::io::AsyncWrite + Unpin,
    arrow: &str,
    log: Transcript,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut lines = tokio::io::BufReader::new(from).lines();
    for _ in 0..MAX_RELAYED_LINES {
        let Ok(Some(line)) = lines.next_line().await else { break };
        log.push(format!("{arrow} {line}"));
        let line = format!("{line}\n");
        if to.write_all(line.as_bytes()).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
    // Dropping `to` closes the child's stdin (or the client's input), which ends the other side.
}

/// Spawns `command` (a stdio server) and returns it with the (read, write) pair rmcp's client speaks
/// through, every line in both directions recorded in `log` by a relay between the two.
pub fn spawn_relayed(
    mut command: tokio::process::Command,
    log: &Transcript,
) -> (tokio::process::Child, (tokio::io::DuplexStream, tokio::io::DuplexStream)) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the stdio server");
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let (client_write, relay_in) = tokio::io::duplex(1 << 16);
    let (relay_out, client_read) = tokio::io::duplex(1 << 16);
    tokio::spawn(relay(relay_in, stdin, "->", log.clone()));
    tokio::spawn(relay(stdout, relay_out, "<-", log.clone()));
    (child, (client_read, client_write))
}
