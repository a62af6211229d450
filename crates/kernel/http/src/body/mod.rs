//! The request body: its bounded read and the budget of bytes it is charged to (steps 5 to 6 of
//! [`McpService`](crate::McpService)'s table).
//!
//! Threats: a slow client dripping a body to hold a task and its buffer; a body, declared or sent,
//! larger than the server will ever accept; many clients (or one client on many connections) each
//! holding a body near the cap, so that memory grows with the number of clients rather than with the
//! work. A body is read under one deadline and one cap, and its bytes are charged as they arrive to a
//! budget across the service and to its client's share of it (the client is decided in `client.rs`:
//! the principal `authorize` named, else the address prefix), so that heads alone hold nothing and
//! one client cannot spend the others' room.
//!
//! | module | guards | refusal |
//! |---|---|---|
//! | `read.rs` | the declared length, the cap while streaming, one deadline over the whole body | 413 / 408 |
//! | `budget.rs` | the bytes held across the service and per client, given back when the answer is handed to the transport | 503, `retry-after: 1` |

pub(crate) mod budget;
pub(crate) mod read;
