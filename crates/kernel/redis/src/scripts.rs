//! The Lua scripts the store runs atomically in Redis (the `lua/` files beside this one), and how each
//! is invoked: by its SHA-1 (`EVALSHA`), learnt from `SCRIPT LOAD` each time a connection is made, so
//! a Redis restarted empty has them again before the first command; a script Redis no longer knows
//! (a `SCRIPT FLUSH`) is sent whole (`EVAL`) once.

use std::sync::OnceLock;

/// One script: its source, and its SHA-1 once Redis has told it.
pub(crate) struct LuaScript {
    /// A short name, for logs.
    pub(crate) name: &'static str,
    /// The source.
    pub(crate) source: &'static str,
    sha: OnceLock<String>,
}

impl LuaScript {
    const fn new(name: &'static str, source: &'static str) -> Self {
        Self { name, source, sha: OnceLock::new() }
    }

    /// The SHA-1 Redis named the script by, once loaded.
    pub(crate) fn sha(&self) -> Option<&str> {
        self.sha.get().map(String::as_str)
    }

    /// Remembers the SHA-1 Redis named the script by (the same every time: it is the source's).
    pub(crate) fn loaded(&self, sha: String) {
        let _ = self.sha.set(sha);
    }

    /// The command running the script with `keys` and `args`: `EVALSHA` when its SHA-1 is known,
    /// else `EVAL` with the source.
    pub(crate) fn invocation(&self, keys: &[&str], args: &[&[u8]], whole: bool) -> redis::Cmd {
        let mut command = match (self.sha(), whole) {
            (Some(sha), false) => {
                let mut command = redis::cmd("EVALSHA");
                command.arg(sha);
                command
            }
            _ => {
                let mut command = redis::cmd("EVAL");
                command.arg(self.source);
                command
            }
        };
        command.arg(keys.len());
        for key in keys {
            command.arg(*key);
        }
        for arg in args {
            command.arg(*arg);
        }
        command
    }
}

/// Reads a task, its version and whether its lease is held (`read.lua`).
pub(crate) static READ: LuaScript = LuaScript::new("read", include_str!("lua/read.lua"));
/// Creates a task within its bounds (`create.lua`).
pub(crate) static CREATE: LuaScript = LuaScript::new("create", include_str!("lua/create.lua"));
/// Compare-and-swap of a task's record (`swap.lua`).
pub(crate) static SWAP: LuaScript = LuaScript::new("swap", include_str!("lua/swap.lua"));

/// Creates a legacy session within its bounds (`session_create.lua`).
pub(crate) static SESSION_CREATE: LuaScript =
    LuaScript::new("session_create", include_str!("lua/session_create.lua"));
/// Reads a session and pushes its idle expiry (`session_resume.lua`).
pub(crate) static SESSION_RESUME: LuaScript =
    LuaScript::new("session_resume", include_str!("lua/session_resume.lua"));
/// Reads a session's record and its version (`session_read.lua`).
pub(crate) static SESSION_READ: LuaScript =
    LuaScript::new("session_read", include_str!("lua/session_read.lua"));
/// Compare-and-swap of a session's record (`session_swap.lua`).
pub(crate) static SESSION_SWAP: LuaScript =
    LuaScript::new("session_swap", include_str!("lua/session_swap.lua"));
/// Ends a session (`session_end.lua`).
pub(crate) static SESSION_END: LuaScript = LuaScript::new("session_end", include_str!("lua/session_end.lua"));
/// Registers a server-to-client request of a session (`session_expect.lua`).
pub(crate) static SESSION_EXPECT: LuaScript =
    LuaScript::new("session_expect", include_str!("lua/session_expect.lua"));
/// Takes a waiting request of a session, once (`session_deliver.lua`).
pub(crate) static SESSION_DELIVER: LuaScript =
    LuaScript::new("session_deliver", include_str!("lua/session_deliver.lua"));

/// Every script, loaded at each connection.
pub(crate) static ALL: [&LuaScript; 10] = [
    &READ,
    &CREATE,
    &SWAP,
    &SESSION_CREATE,
    &SESSION_RESUME,
    &SESSION_READ,
    &SESSION_SWAP,
    &SESSION_END,
    &SESSION_EXPECT,
    &SESSION_DELIVER,
];
