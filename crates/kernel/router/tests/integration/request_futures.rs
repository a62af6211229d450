//! The size of the future `Server::handle_envelope` returns. A transport boxes it, and every level of
//! `.await` below it moves its child's whole state machine: a future of many kilobytes is copied
//! several times per request whatever path the request takes. The rarely taken branches (a task, a
//! bridged legacy call, a listen, every method but `tools/call`) are boxed where they are awaited, so
//! that they cost their own path an allocation instead of costing every request their size.

use crate::support::*;
use mcp_kernel_router::transport::Inbound;
use mcp_kernel_wire::{Envelope, read_message};
use serde_json::json;

/// The bound: the state a `tools/call` needs across its awaits, with room for growth, far below the
/// 5,064 bytes the future took before the rare branches were boxed.
const MOST_BYTES: usize = 3 * 1024;

#[test]
fn the_request_future_stays_under_three_kib() {
    let server = server();
    let call = modern(1, "tools/call", json!({"name": "get_weather", "arguments": {"city": "Paris"}}));
    let bytes = serde_json::to_vec(&call).expect("a request encodes");
    let envelope = Envelope::from_object(read_message(&bytes).expect("a valid request"));
    let future = server.handle_envelope(envelope, Inbound::new());
    let size = std::mem::size_of_val(&future);
    assert!(size <= MOST_BYTES, "handle_envelope's future is {size} bytes, above {MOST_BYTES}");
}
