//! A stdio server whose tools ask the user for input, written once, the `2026-07-28` way (an "input
//! required" answer, then a retry with the responses), and served to both kinds of client: a
//! `2026-07-28` client is answered `input_required`, a `2025-11-25` client that declared elicitation
//! in `initialize` is asked by the server itself (`elicitation/create` over the same pipes) and gets
//! the tool's final answer.
//!
//! ```sh
//! cargo run -q -p mcp-kernel-stdio --example asking
//! ```
//!
//! * `greet` asks for a name and answers `Hello, <name>!`;
//! * `two_step` asks for a name, then (a second round, its state carried) for a colour, and answers
//!   `<name> likes <colour>`.
//!
//! Options: `--client-wait-ms N` (`StdioOptions::client_wait`), `--max-client-requests N`
//! (`StdioOptions::max_client_requests`), `--max-in-flight N` (`StdioOptions::max_in_flight`). Logs go
//! to stderr (`RUST_LOG=debug`).

use std::time::Duration;

use mcp_kernel_router::sealing::HmacSealer;
use mcp_kernel_router::{InputRequired, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_stdio::StdioOptions;
use serde_json::{Value, json};

/// The options the command line set.
fn options() -> Result<StdioOptions, String> {
    let mut options = StdioOptions::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let number = args.next().and_then(|value| value.parse::<u64>().ok());
        options = match (arg.as_str(), number) {
            ("--client-wait-ms", Some(ms)) => options.client_wait(Duration::from_millis(ms)),
            ("--max-client-requests", Some(n)) => {
                options.max_client_requests(usize::try_from(n).map_err(|e| e.to_string())?)
            }
            ("--max-in-flight", Some(n)) => {
                options.max_in_flight(usize::try_from(n).map_err(|e| e.to_string())?)
            }
            _ => {
                return Err(
                    "usage: asking [--client-wait-ms N] [--max-client-requests N] [--max-in-flight N]".into(),
                );
            }
        };
    }
    Ok(options)
}

fn form(field: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]})
}

async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let input = call.context.retry_input();
    let answer = |key: &str, field: &str| {
        input
            .and_then(|i| i.accepted(key))
            .and_then(|c| c.get(field))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let state = input.and_then(|i| i.state.as_deref()).map(|s| String::from_utf8_lossy(s).into_owned());
    let ask = |required: InputRequired| Ok(ToolOutput::input_required(required));
    match &*call.name {
        "greet" => match answer("name", "name") {
            Some(name) => Ok(ToolOutput::text(format!("Hello, {name}!"))),
            None => ask(InputRequired::new().elicit("name", "What is your name?", form("name"))),
        },
        "two_step" => match (state, answer("name", "name"), answer("colour", "colour")) {
            (Some(name), _, Some(colour)) => Ok(ToolOutput::text(format!("{name} likes {colour}"))),
            (None, Some(name), _) => ask(InputRequired::new()
                .elicit("colour", "Favourite colour?", form("colour"))
                .with_state(name)),
            _ => ask(InputRequired::new().elicit("name", "What is your name?", form("name"))),
        },
        _ => Err(ToolError::new("no such tool")),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let options = options()?;
    let tools = ["greet", "two_step"].map(|name| ToolSpec::new(name, Mode::ReadOnly)).to_vec();
    let server = Server::builder(Listing { tools, ..Listing::default() })
        .server_name("asking")
        .dispatch(dispatch)
        // A 2026-07-28 client's retries carry the state sealed; a 2025-11-25 client's never leave the
        // process. The key is the example's own: a host's is at least 32 random bytes of its own.
        .request_state_sealer(HmacSealer::new(&[7; 32])?)
        .build()?;
    mcp_kernel_stdio::serve_with(server, options).await?;
    Ok(())
}
