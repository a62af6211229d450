//! Change notifications over stdio, through a real server process (the `notifying` example) and real
//! pipes: `subscriptions/listen` streams (`2026-07-28`) and legacy sessions (`2025-11-25`); and, with
//! `--tasks`, the tasks extension over the same pipes (`tasks`). Beside them, the bridge through the
//! `asking` example: a `2025-11-25` client asked for input by the server over the same pipes (`bridge`).

mod bridge;
mod drain;
mod legacy;
mod listen;
mod process;
mod tasks;
