//! The four tools that ask, driven as a `2026-07-28` client drives them: the question the suite
//! checks on the first round, the answer it sends on the retry, the content it reads.

use std::sync::Arc;

use mcp_kernel::testing::TestClient;
use serde_json::{Value, json};

use super::*;
use crate::live::Harness;

/// A client of the whole harness that declares what `capabilities` says.
fn client(capabilities: Value) -> (Arc<Harness>, TestClient) {
    let sealer = crate::catalog::request_state_sealer().expect("randomness for the key");
    let (harness, live) = Harness::start(sealer).expect("the catalog builds");
    (harness, TestClient::new(live).client_capabilities(capabilities))
}

fn both() -> Value {
    json!({"sampling": {}, "elicitation": {}})
}

/// The first round of `tool`: an `input_required` result; returns it whole.
async fn first_round(client: &TestClient, tool: &str, arguments: Value) -> Value {
    let params = json!({"name": tool, "arguments": arguments});
    let first = client.request("tools/call", params).await.expect("the first round is answered");
    assert_eq!(first.result["resultType"], "input_required", "{}", first.result);
    first.result
}

/// The retry of `tool` carrying `responses` and the first round's state: its first text block.
async fn retry(client: &TestClient, tool: &str, arguments: Value, first: &Value, responses: Value) -> String {
    let params = json!({"name": tool, "arguments": arguments, "inputResponses": responses,
                        "requestState": first["requestState"]});
    let second = client.request("tools/call", params).await.expect("the retry is answered");
    assert_eq!(second.result["resultType"], "complete", "{}", second.result);
    assert_eq!(second.result["isError"], false, "{}", second.result);
    second.result["content"][0]["text"].as_str().expect("a text block").to_owned()
}

#[tokio::test]
async fn test_sampling_asks_the_model_the_prompt_then_returns_its_answer() {
    let (_harness, client) = client(both());
    let arguments = json!({"prompt": "What is 2 + 2?"});
    let first = first_round(&client, SAMPLING, arguments.clone()).await;
    let asked = &first["inputRequests"][SAMPLING_KEY];
    assert_eq!(asked["method"], "sampling/createMessage");
    assert_eq!(
        asked["params"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "What is 2 + 2?"}}])
    );
    assert_eq!(asked["params"]["maxTokens"], 100);
    let answer = json!({SAMPLING_KEY: {"role": "assistant", "model": "test-model",
                        "content": {"type": "text", "text": "4"}}});
    assert_eq!(retry(&client, SAMPLING, arguments, &first, answer).await, "LLM response: 4");
}

#[tokio::test]
async fn test_elicitation_asks_for_a_username_and_an_email_with_the_message_then_returns_them() {
    let (_harness, client) = client(both());
    let arguments = json!({"message": "Who are you?"});
    let first = first_round(&client, ELICITATION, arguments.clone()).await;
    let asked = &first["inputRequests"][ELICITATION_KEY];
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(asked["params"]["message"], "Who are you?");
    let schema = &asked["params"]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["username"]["type"], "string");
    assert_eq!(schema["properties"]["email"]["type"], "string");
    assert_eq!(schema["required"], json!(["username", "email"]));
    let content = json!({"username": "testuser", "email": "test@example.com"});
    let answer = json!({ELICITATION_KEY: {"action": "accept", "content": content}});
    let text = retry(&client, ELICITATION, arguments, &first, answer).await;
    let (label, body) = text.split_once(": ").expect("a label");
    assert_eq!(label, "User response");
    let body: Value = serde_json::from_str(body).expect("the answer as JSON");
    assert_eq!(body, json!({"action": "accept", "content": content}));
}

#[tokio::test]
async fn the_sep1034_form_gives_each_primitive_type_its_default() {
    let (_harness, client) = client(both());
    let first = first_round(&client, SEP1034_DEFAULTS, json!({})).await;
    let asked = &first["inputRequests"][SEP1034_KEY];
    assert_eq!(asked["method"], "elicitation/create");
    let properties = &asked["params"]["requestedSchema"]["properties"];
    for (field, kind, default) in [
        ("name", "string", json!("John Doe")),
        ("age", "integer", json!(30)),
        ("score", "number", json!(95.5)),
        ("status", "string", json!("active")),
        ("verified", "boolean", json!(true)),
    ] {
        assert_eq!(properties[field]["type"], kind, "{field}");
        assert_eq!(properties[field]["default"], default, "{field}");
    }
    let members = properties["status"]["enum"].as_array().expect("status is an enum");
    assert!(members.contains(&json!("active")), "the default is a member");
    // The suite's client answers with other values than the defaults.
    let content =
        json!({"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": false});
    let answer = json!({SEP1034_KEY: {"action": "accept", "content": content}});
    let text = retry(&client, SEP1034_DEFAULTS, json!({}), &first, answer).await;
    assert!(text.starts_with("Elicitation completed: ") && text.contains("Jane Smith"), "{text}");
}

#[tokio::test]
async fn the_sep1330_form_carries_the_five_enum_shapes_and_nothing_of_the_others() {
    let (_harness, client) = client(both());
    let first = first_round(&client, SEP1330_ENUMS, json!({})).await;
    let properties = &first["inputRequests"][SEP1330_KEY]["params"]["requestedSchema"]["properties"];
    let untitled = &properties["untitledSingle"];
    assert!(
        untitled["enum"].is_array() && untitled.get("oneOf").is_none() && untitled.get("enumNames").is_none()
    );
    let titled = &properties["titledSingle"];
    assert!(titled.get("enum").is_none());
    for option in titled["oneOf"].as_array().expect("oneOf") {
        assert!(option["const"].is_string() && option["title"].is_string(), "{option}");
    }
    let legacy = &properties["legacyEnum"];
    let (members, names) =
        (legacy["enum"].as_array().expect("enum"), legacy["enumNames"].as_array().expect("names"));
    assert_eq!(members.len(), names.len());
    let multi = &properties["untitledMulti"];
    assert_eq!((multi["type"].as_str(), multi["items"]["type"].as_str()), (Some("array"), Some("string")));
    assert!(multi["items"]["enum"].is_array() && multi["items"].get("anyOf").is_none());
    let titled_multi = &properties["titledMulti"];
    assert_eq!(titled_multi["type"], "array");
    assert!(titled_multi["items"].get("enum").is_none());
    for option in titled_multi["items"]["anyOf"].as_array().expect("anyOf") {
        assert!(option["const"].is_string() && option["title"].is_string(), "{option}");
    }
    let content = json!({"untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
                         "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"]});
    let answer = json!({SEP1330_KEY: {"action": "accept", "content": content}});
    let text = retry(&client, SEP1330_ENUMS, json!({}), &first, answer).await;
    assert!(text.starts_with("Elicitation completed: ") && text.contains("value2"), "{text}");
}

#[tokio::test]
async fn a_retry_without_the_answer_is_asked_again_and_a_declined_form_is_reported() {
    let (_harness, client) = client(both());
    let arguments = json!({"message": "Who are you?"});
    let first = first_round(&client, ELICITATION, arguments.clone()).await;
    let params = json!({"name": ELICITATION, "arguments": arguments, "inputResponses": {},
                        "requestState": first["requestState"]});
    let again = client.request("tools/call", params).await.expect("answered");
    assert_eq!(again.result["resultType"], "input_required", "{}", again.result);
    assert_eq!(again.result["inputRequests"], first["inputRequests"]);
    let declined = json!({ELICITATION_KEY: {"action": "decline"}});
    let text = retry(&client, ELICITATION, arguments, &first, declined).await;
    assert_eq!(text, r#"User response: {"action":"decline"}"#);
}

#[tokio::test]
async fn a_client_without_the_capability_is_refused_minus_32021_naming_it() {
    for (tool, arguments, declared, missing) in [
        (SAMPLING, json!({"prompt": "hi"}), json!({"elicitation": {}}), "sampling"),
        (ELICITATION, json!({"message": "hi"}), json!({"sampling": {}}), "elicitation"),
        (SEP1034_DEFAULTS, json!({}), json!({}), "elicitation"),
    ] {
        let (_harness, client) = client(declared);
        let params = json!({"name": tool, "arguments": arguments});
        let refused = client.request("tools/call", params).await.expect_err("refused");
        let error = refused.rpc().expect("a JSON-RPC error");
        assert_eq!(error.code, -32021, "{tool}");
        let required = &error.data.as_ref().expect("data")["requiredCapabilities"];
        assert!(required.get(missing).is_some(), "{tool}: {required}");
    }
}

#[tokio::test]
async fn the_four_tools_are_listed_after_test_simple_text_with_their_argument_schemas() {
    let (_harness, client) = client(both());
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools[0].name, "test_simple_text", "the suite calls tools[0]");
    for name in [SAMPLING, ELICITATION, SEP1034_DEFAULTS, SEP1330_ENUMS] {
        let tool = tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{name} listed"));
        assert!(tool.description.as_deref().is_some_and(|d| !d.is_empty()), "{name}");
    }
    let missing = client.call_tool(SAMPLING, json!({})).await.expect("a tool error");
    assert_eq!(missing.result.is_error, Some(true), "prompt is required");
}
