//! `RequestContext::caller::<P>()?` reaches the caller in a tool, a resource reader and a prompt
//! renderer alike; without a principal a tool answers a fixed error text, and a reader or renderer is
//! answered exactly as an item that is not listed.

use mcp_kernel_router::prompts::{GetPrompt, PromptOutput, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec};
use mcp_kernel_router::wire::types::{
    ContentBlock, PromptMessage, ResourceContents, Role, TextResourceContents,
};
use mcp_kernel_router::{
    Era, Extensions, Listing, Mode, NoCaller, ReaderError, RequestContext, Server, ToolCall, ToolError,
    ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

use crate::support::*;

#[derive(Clone, Debug, PartialEq)]
struct User(String);

async fn whoami(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let user = call.context.caller::<User>()?;
    Ok(ToolOutput::text(format!("you are {}", user.0)))
}

async fn read(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    let user = request.context.caller::<User>()?;
    Ok(vec![TextResourceContents::new(&request.uri, format!("for {}", user.0)).into()])
}

async fn render(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    let user = request.context.caller::<User>()?;
    let text = format!("hello {}", user.0);
    Ok(PromptOutput {
        description: None,
        messages: vec![PromptMessage::new(Role::User, ContentBlock::text(text))],
    })
}

fn server() -> Server {
    let listing = Listing {
        tools: vec![ToolSpec::new("whoami", Mode::ReadOnly)],
        resources: vec![ResourceSpec::new("me://profile", "profile").into()],
        prompts: vec![PromptSpec::new("greet")],
    };
    Server::builder(listing).dispatch(whoami).resource_reader(read).prompt_reader(render).build().unwrap()
}

/// `message` as `user` (a `User` principal) or with no principal at all.
async fn send_by(server: &Server, user: Option<&str>, message: Value) -> Value {
    let mut extensions = Extensions::new();
    if let Some(user) = user {
        extensions.insert(User(user.to_owned()));
    }
    let inbound = mcp_kernel_router::transport::Inbound::new().extensions(extensions);
    server.handle_inbound(message, inbound).await.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

#[tokio::test]
async fn caller_reaches_a_tool_and_without_one_the_tool_answers_a_fixed_error() {
    let server = server();
    let call = modern(1, "tools/call", json!({"name": "whoami", "arguments": {}}));
    let ada = send_by(&server, Some("ada"), call.clone()).await;
    assert_eq!(first_text(&ada), "you are ada");
    let nobody = send_by(&server, None, call.clone()).await;
    assert_eq!(nobody["result"]["isError"], true, "{nobody}");
    assert_eq!(first_text(&nobody), "the request carries no caller");
    // A principal of another type is no caller of this one, and the text does not name the type.
    let other = send_as(&server, Some("ada"), call).await;
    assert_eq!(other, nobody);
    assert!(!other.to_string().contains("User"));
}

#[tokio::test]
async fn caller_reaches_a_reader_and_without_one_the_read_is_answered_as_an_unlisted_uri() {
    let server = server();
    for make in [modern as fn(i64, &str, Value) -> Value, legacy, bare] {
        let read = make(1, "resources/read", json!({"uri": "me://profile"}));
        let ada = send_by(&server, Some("ada"), read.clone()).await;
        assert_eq!(ada["result"]["contents"][0]["text"], "for ada", "{ada}");
        let nobody = send_by(&server, None, read).await;
        let unlisted = Server::builder(Listing::new()).build().unwrap();
        let unknown = send(&unlisted, make(1, "resources/read", json!({"uri": "me://profile"}))).await;
        assert_eq!(nobody, unknown, "the same bytes as a uri no one lists");
    }
}

#[tokio::test]
async fn caller_reaches_a_prompt_and_without_one_the_get_is_answered_as_an_unknown_prompt() {
    let server = server();
    let get = modern(1, "prompts/get", json!({"name": "greet"}));
    let ada = send_by(&server, Some("ada"), get.clone()).await;
    assert_eq!(ada["result"]["messages"][0]["content"]["text"], "hello ada", "{ada}");
    let nobody = send_by(&server, None, get).await;
    let unlisted = Server::builder(Listing::new()).build().unwrap();
    assert_eq!(nobody, send(&unlisted, modern(1, "prompts/get", json!({"name": "greet"}))).await);
    assert_eq!(nobody["error"]["message"], "Invalid params: unknown prompt");
}

#[test]
fn caller_is_the_principal_or_no_caller_and_principal_still_answers() {
    let mut extensions = Extensions::new();
    extensions.insert(User("ada".into()));
    let cx = RequestContext::new(Era::Bare, None).with_extensions(extensions);
    assert_eq!(cx.caller::<User>(), Ok(&User("ada".into())));
    assert_eq!(cx.caller::<String>(), Err(NoCaller));
    assert_eq!(cx.principal::<User>(), Some(&User("ada".into())));
    assert_eq!(NoCaller.to_string(), "the request carries no caller");
}
