//! One request on its way through the core: what a transport asks about it and attaches to it
//! (`admit.rs`, its answer in `admitted.rs`, `inbound.rs`), what the
//! host is handed (its arguments, extensions, the client's input on a retry) and what is checked on the
//! way (client capabilities, `inputResponses` shapes, `_meta` key names, cursors), the one place host
//! code runs (the panic guard), reaching the caller, and the answer before and after the era's decoration.

pub(crate) mod admit;
pub(crate) mod admitted;
pub(crate) mod answer;
pub(crate) mod arguments;
pub(crate) mod caller;
pub(crate) mod capability;
pub(crate) mod cursor;
pub(crate) mod decoration;
pub(crate) mod extensions;
pub(crate) mod guard;
pub(crate) mod inbound;
pub(crate) mod input;
pub(crate) mod meta_keys;
pub(crate) mod reader_error;
pub(crate) mod responses;
