//! The `echo` servers both benchmarks time: the same tool served by a plain `dispatch` function and by
//! a typed `Tools` registry, and one call through the core with no runtime; `catalog` holds the
//! catalog the other `core/*` benches send their requests to.

use futures_util::FutureExt;
use mcp_kernel_router::transport::Inbound;
use mcp_kernel_router::{
    Listing, Mode, RequestContext, Server, ToolCall, ToolError, ToolOutput, ToolSpec, Tools,
};
use serde_json::json;

pub mod catalog;
// The baseline of the read benches is the plain template scan, which only `fuzzing` exposes.
#[cfg(feature = "fuzzing")]
pub mod scale;

/// A `2026-07-28` call of `echo`.
pub const MODERN_CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"message":"hello"}}}"#;

/// `echo`'s input schema.
pub fn echo_schema() -> serde_json::Value {
    json!({"type":"object","properties":{"message":{"type":"string"}},"required":["message"],"additionalProperties":false})
}

/// `echo` served by a plain dispatch function, reading its argument by key.
pub fn plain_server() -> Server {
    Server::builder(Listing {
        tools: vec![ToolSpec::new("echo", Mode::ReadOnly).input_schema(echo_schema())],
        ..Default::default()
    })
    .dispatch(|call: ToolCall| {
        let text = call.arguments.get_str("message").unwrap_or_default().to_owned();
        std::future::ready(Ok::<_, ToolError>(ToolOutput::text(text)))
    })
    .build()
    .expect("bench catalog")
}

/// The same tool registered typed: its arguments deserialized into a struct, the name written once.
pub fn typed_server() -> Server {
    #[derive(serde::Deserialize)]
    struct Echo {
        message: String,
    }
    let tools = Tools::new().add(
        ToolSpec::new("echo", Mode::ReadOnly).input_schema(echo_schema()),
        |args: Echo, _cx: RequestContext| {
            std::future::ready(Ok::<_, ToolError>(ToolOutput::text(args.message)))
        },
    );
    Server::builder(Listing::new()).tools(tools).build().expect("bench catalog")
}

/// One call through the core as the transports make it: the bounded decode straight into the
/// envelope, the core (its dispatch future is ready at once), encode.
pub fn one_call(server: &Server, bytes: &[u8]) -> Vec<u8> {
    let envelope = mcp_kernel_router::wire::read_envelope(bytes).expect("valid request");
    let handled = server.handle_envelope(envelope, Inbound::new()).now_or_never().expect("ready");
    handled.response.expect("a response").to_bytes()
}
