//! A multi-round-trip `tools/call` whose retry reaches another instance: several in-process instances,
//! each its own `McpHttp` service served by `mcp_kernel_http::serve` on its own listener, and the key
//! lists of `HmacSealer` through a rotation (`HmacSealer` rustdoc, "Rotating the key").
//!
//! Pins: a state sealed by one instance opens on any other listing its key; an instance without that
//! key, and one on which it is retired, refuse it exactly as they refuse a tampered state (same status,
//! same JSON-RPC error); at every step of the documented rotation, no retry between two instances one
//! rollout apart fails, and skipping the first step is what would fail them.

use serde_json::{Value, json};

use mcp_kernel_http::{AllowedOrigins, McpHttp, McpService};
use mcp_kernel_router::sealing::HmacSealer;
use mcp_kernel_router::{InputRequired, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};

use crate::support::*;

/// Three keys of a fleet's history (hosts draw theirs from a secure random source).
const KEY1: [u8; 32] = [0x11; 32];
const KEY2: [u8; 32] = [0x22; 32];
const KEY3: [u8; 32] = [0x33; 32];

/// The message the core answers a state that does not verify with (-32602).
const TAMPERED: &str = "Invalid params: requestState failed verification for this request";

/// The one tool: asks for a name on its first round (its state names the instance that sealed it),
/// and on the retry greets, saying which instance sealed the state and which one answered.
fn instance_server(name: &'static str, sealer: HmacSealer) -> Server {
    let catalog = Listing { tools: vec![ToolSpec::new("greet", Mode::ReadOnly)], ..Listing::default() };
    Server::builder(catalog)
        .dispatch(move |call: ToolCall| async move {
            let Some(input) = call.context.retry_input() else {
                let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                let ask = InputRequired::new().elicit("user", "Your name?", form).with_state(name);
                return Ok::<_, ToolError>(ToolOutput::input_required(ask));
            };
            let user = input.accepted("user").and_then(|c| c.get("name")).and_then(Value::as_str);
            let sealed_by = input.state.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
            let text = format!("hello {}: sealed by {sealed_by}, answered by {name}", user.unwrap_or("?"));
            Ok(ToolOutput::text(text))
        })
        .request_state_sealer(sealer)
        .build()
        .expect("the instance's catalog builds")
}

/// One instance's service.
fn instance(name: &'static str, sealer: HmacSealer) -> McpService {
    McpHttp::builder(instance_server(name, sealer))
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
        .authorize(|_| Ok(()))
        .build()
}

/// An instance named `name` on its own listener (127.0.0.1, port 0), sealing under `current` and
/// opening under `current` and `previous`.
async fn start_instance(name: &'static str, current: &[u8], previous: &[&[u8]]) -> Running {
    let sealer = HmacSealer::with_keys(current, previous.iter().copied()).expect("a valid key list");
    serve(instance(name, sealer)).await
}

/// A modern `tools/call` of `greet` from a client that declares elicitation.
fn greet(id: i64, retry: Option<(&str, &str)>) -> Value {
    let mut params = json!({"name": "greet", "arguments": {}, "_meta": {
        META_VERSION: MODERN,
        META_CAPABILITIES: {"elicitation": {}},
    }});
    if let Some((state, user)) = retry {
        params["requestState"] = json!(state);
        params["inputResponses"] = json!({"user": {"action": "accept", "content": {"name": user}}});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// The first round on `server`: its `requestState`, after checking it asks for input.
async fn first_round(server: &Running) -> String {
    let reply = post_message(server.addr, Proto::H1, &greet(1, None)).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let result = reply.result();
    assert_eq!(result["resultType"], "input_required", "{reply:?}");
    assert_eq!(result["inputRequests"]["user"]["method"], "elicitation/create", "{reply:?}");
    result["requestState"].as_str().expect("a string requestState").to_owned()
}

/// The retry of a first round, with `state`, sent to `server`.
async fn retry(server: &Running, state: &str) -> Reply {
    post_message(server.addr, Proto::H1, &greet(2, Some((state, "ada")))).await
}

/// The text of a completed retry.
fn completed(reply: &Reply) -> String {
    assert_eq!(reply.status, 200, "{reply:?}");
    let result = reply.result();
    assert_eq!(result["resultType"], "complete", "{reply:?}");
    result["content"][0]["text"].as_str().expect("a text block").to_owned()
}

/// `state` with the first character of its payload changed.
fn tampered(state: &str) -> String {
    let mut bytes = state.as_bytes().to_vec();
    bytes[0] = if bytes[0] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).expect("base64url is ASCII")
}

/// Asserts that `reply` is the very refusal `server` gives a tampered state, and echoes nothing.
async fn assert_refused_as_tampered(server: &Running, state: &str, reply: &Reply) {
    let baseline = retry(server, &tampered(state)).await;
    assert_eq!(baseline.message(), TAMPERED, "{baseline:?}");
    reply.assert_error(200, -32602, &json!(2));
    assert_eq!(reply.body["error"], baseline.body["error"], "{reply:?}");
    assert_eq!(reply.raw, baseline.raw, "byte for byte the tampered refusal: {reply:?}");
    assert!(!String::from_utf8_lossy(&reply.raw).contains(&state[..16]), "{reply:?}");
}

#[tokio::test]
async fn a_retry_completes_on_another_instance_sharing_the_key() {
    bounded(async {
        let a = start_instance("A", &KEY1, &[]).await;
        let b = start_instance("B", &KEY1, &[]).await;
        let state = first_round(&a).await;
        assert_eq!(completed(&retry(&b, &state).await), "hello ada: sealed by A, answered by B");
        let state = first_round(&b).await;
        assert_eq!(completed(&retry(&a, &state).await), "hello ada: sealed by B, answered by A");
    })
    .await;
}

#[tokio::test]
async fn an_instance_with_another_key_refuses_the_state_as_tampered() {
    bounded(async {
        let a = start_instance("A", &KEY1, &[]).await;
        let b = start_instance("B", &KEY2, &[]).await;
        let state = first_round(&a).await;
        let reply = retry(&b, &state).await;
        assert_refused_as_tampered(&b, &state, &reply).await;
        // The state itself is sound: the instance that sealed it completes the retry.
        assert_eq!(completed(&retry(&a, &state).await), "hello ada: sealed by A, answered by A");
    })
    .await;
}

#[tokio::test]
async fn an_instance_listing_the_old_key_as_previous_accepts_its_states() {
    bounded(async {
        let a = start_instance("A", &KEY1, &[]).await;
        let b = start_instance("B", &KEY2, &[&KEY1]).await;
        let state = first_round(&a).await;
        assert_eq!(completed(&retry(&b, &state).await), "hello ada: sealed by A, answered by B");
    })
    .await;
}

#[tokio::test]
async fn refuses_a_state_sealed_under_a_retired_key() {
    bounded(async {
        let a = start_instance("A", &KEY1, &[]).await;
        let b = start_instance("B", &KEY2, &[&KEY1]).await;
        let c = start_instance("C", &KEY2, &[]).await;
        let state = first_round(&a).await;
        assert_eq!(completed(&retry(&b, &state).await), "hello ada: sealed by A, answered by B");
        let reply = retry(&c, &state).await;
        assert_refused_as_tampered(&c, &state, &reply).await;
        // What the instances on the new key seal, C accepts.
        let state = first_round(&b).await;
        assert_eq!(completed(&retry(&c, &state).await), "hello ada: sealed by B, answered by C");
    })
    .await;
}

#[tokio::test]
async fn an_instance_not_yet_promoted_accepts_what_a_promoted_one_seals_under_the_new_key() {
    bounded(async {
        // Step 2 under way: B is promoted to KEY2, A still seals with KEY1 and lists KEY2 from step 1.
        let a = start_instance("A", &KEY1, &[&KEY2]).await;
        let b = start_instance("B", &KEY2, &[&KEY1]).await;
        let sealed_by_b = first_round(&b).await;
        assert_eq!(completed(&retry(&a, &sealed_by_b).await), "hello ada: sealed by B, answered by A");
        let sealed_by_a = first_round(&a).await;
        assert_eq!(completed(&retry(&b, &sealed_by_a).await), "hello ada: sealed by A, answered by B");
        // B sealed under KEY2 indeed: an instance that has not had step 1 refuses it.
        let skipped_step_1 = start_instance("D", &KEY1, &[]).await;
        let reply = retry(&skipped_step_1, &sealed_by_b).await;
        assert_refused_as_tampered(&skipped_step_1, &sealed_by_b, &reply).await;
    })
    .await;
}

#[tokio::test]
async fn no_retry_fails_between_instances_one_rollout_apart_at_any_step_of_a_rotation() {
    bounded(async {
        // Before, after step 1 (add), after step 2 (promote), after step 3 (retire); then a second
        // rotation to KEY3, the same way.
        let steps: [(&[u8], &[&[u8]]); 7] = [
            (&KEY1, &[]),
            (&KEY1, &[&KEY2]),
            (&KEY2, &[&KEY1]),
            (&KEY2, &[]),
            (&KEY2, &[&KEY3]),
            (&KEY3, &[&KEY2]),
            (&KEY3, &[]),
        ];
        for (index, pair) in steps.windows(2).enumerate() {
            let before = start_instance("before", pair[0].0, pair[0].1).await;
            let after = start_instance("after", pair[1].0, pair[1].1).await;
            for ((from, from_name), (to, to_name)) in
                [((&before, "before"), (&after, "after")), ((&after, "after"), (&before, "before"))]
            {
                let state = first_round(from).await;
                let text = completed(&retry(to, &state).await);
                let expected = format!("hello ada: sealed by {from_name}, answered by {to_name}");
                assert_eq!(text, expected, "rollout {index}");
            }
        }
    })
    .await;
}
