//! Long-running tools: the tasks extension (`io.modelcontextprotocol/tasks`), and the runtime that
//! runs a task on tokio ([`TokioRuntime`]). See the router's [`mcp_kernel_router::tasks`] for the whole
//! story, and the manual's tasks chapter.
//!
//! ```
//! # #[cfg(any(feature = "stdio", feature = "http"))] {
//! use mcp_kernel::tasks::{TaskMode, Tasks, TokioRuntime};
//! use mcp_kernel::{Listing, Mode, Server, ToolSpec};
//!
//! let tasks = Tasks::in_process(TokioRuntime).owner(|cx| cx.principal::<String>().cloned());
//! let export = ToolSpec::new("export", Mode::ReadOnly).task_mode(TaskMode::Optional);
//! let listing = Listing { tools: vec![export], ..Listing::default() };
//! let server = Server::builder(listing)
//!     .dispatch(|_call| async { Ok(mcp_kernel::ToolOutput::text("done")) })
//!     .tasks(tasks)
//!     .build()
//!     .expect("a server");
//! # let _ = server; }
//! ```

pub use mcp_kernel_router::tasks::*;

/// Runs tasks on the current tokio runtime: `spawn` is `tokio::spawn`, `sleep` is
/// `tokio::time::sleep`. Build the server inside the runtime that serves it.
#[cfg(any(feature = "stdio", feature = "http"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "stdio", feature = "http"))))]
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioRuntime;

#[cfg(any(feature = "stdio", feature = "http"))]
impl TaskRuntime for TokioRuntime {
    fn spawn(&self, task: mcp_kernel_router::BoxFuture<'static, ()>) {
        tokio::spawn(task);
    }

    fn sleep(&self, duration: std::time::Duration) -> mcp_kernel_router::BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}
