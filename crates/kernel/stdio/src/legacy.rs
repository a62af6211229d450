//! A `2025-11-25` client's change notifications: on stdio the connection is the session, so once the
//! core has answered its `initialize` (on a server built with notifications) the client is told of
//! every list change, and of each uri it `resources/subscribe`d to, untagged, among the other lines.
//!
//! Threat: a session that silently stops delivering. A legacy client keeps its lists cached for as long
//! as it is told of no change; when the session's change feed ends (the hub fell too far behind for
//! this reader, or lost its source) nothing would tell it that its cache may now be stale. So the end
//! of the feed ends the session: the input is closed as at end of input, every request read is
//! answered, every open listen completes, and the server closes its output (the process exits), which
//! a client takes as the end of the session and may start a new one.

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use mcp_kernel_router::transport::LegacyNotifications;

use crate::writer::Line;

/// The task writing a session's legacy notifications; stopped when dropped.
#[derive(Debug)]
pub(crate) struct LegacyWriter(JoinHandle<()>);

impl LegacyWriter {
    /// Writes every notification of `notifications` to `lines` (waiting for room: none is dropped),
    /// and says on `ended` when the feed has ended after the session opened.
    pub(crate) fn start(
        mut notifications: LegacyNotifications,
        lines: mpsc::Sender<Line>,
        ended: oneshot::Sender<()>,
    ) -> Self {
        Self(tokio::spawn(async move {
            while let Some(notification) = notifications.next().await {
                if lines.send(Line::notification(&notification)).await.is_err() {
                    // The output is gone: the session ends through its writer.
                    return;
                }
            }
            tracing::info!("the legacy session's change feed ended: ending the session");
            let _ = ended.send(());
        }))
    }

    /// Stops writing (the session drains or ends): nothing more is queued.
    pub(crate) fn stop(&self) {
        self.0.abort();
    }
}

impl Drop for LegacyWriter {
    fn drop(&mut self) {
        self.0.abort();
    }
}
