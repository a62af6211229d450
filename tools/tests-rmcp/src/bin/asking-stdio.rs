//! Tools that ask the user for input, written once the `2026-07-28` way, served over stdio for the
//! rmcp bridge test to spawn: `greet` asks for a name, `two_step` for a name and then, in a second
//! round with its state carried, a colour. A `2025-11-25` client is asked through the bridge; a
//! `2026-07-28` one is answered `input_required`.

use mcp_kernel::sealing::HmacSealer;
use mcp_kernel::{InputRequired, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

fn form(field: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": "string", "title": field}}, "required": [field]})
}

async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let input = call.context.retry_input();
    let answer = |key: &str| {
        input
            .and_then(|i| i.accepted(key))
            .and_then(|c| c.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let state = input.and_then(|i| i.state.as_deref()).map(|s| String::from_utf8_lossy(s).into_owned());
    let ask = |required: InputRequired| Ok(ToolOutput::input_required(required));
    match &*call.name {
        "greet" => match answer("name") {
            Some(name) => Ok(ToolOutput::text(format!("Hello, {name}!"))),
            None => ask(InputRequired::new().elicit("name", "What is your name?", form("name"))),
        },
        "two_step" => match (state, answer("name"), answer("colour")) {
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
    // stdout carries protocol lines only; reports go to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(std::env::var("ASKING_LOG").unwrap_or_else(|_| "warn".to_owned()))
        .init();
    let tools = ["greet", "two_step"].map(|name| ToolSpec::new(name, Mode::ReadOnly)).to_vec();
    let server = Server::builder(Listing { tools, ..Listing::default() })
        .server_name("asking")
        .dispatch(dispatch)
        // For the 2026-07-28 retries only; the test's key, never a deployment's.
        .request_state_sealer(HmacSealer::new(&[7; 32])?)
        .build()?;
    mcp_kernel::stdio::serve(server).await?;
    Ok(())
}
