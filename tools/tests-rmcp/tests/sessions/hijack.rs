//! The hijack attempts of `tests/legacy_sessions.rs`, through real listeners and across instances:
//! another principal's session id, a guessed id, an id the client chose itself, and an answer to a
//! question asked on another session.

use serde_json::json;

use crate::raw::{NOT_AWAITED, Reply, SESSION_NOT_FOUND, Session, accept, guessed_id, tool_call};
use crate::setup::{Shared, nonce};

/// The instances' names, in the upstream's order.
const NAMES: [&str; 3] = ["a", "b", "c"];

/// Checks that `reply` is the unknown session's 404, exactly.
fn assert_not_found(reply: &Reply, what: &str) {
    assert_eq!((reply.status, reply.body.as_str()), (404, SESSION_NOT_FOUND), "{what}: {reply:?}");
}

/// Alice's session, initialized through `a`: bob presenting its id through each instance gets the
/// bytes (status, headers but `date`, body) a guessed id gets there, for a POST, a GET and a DELETE;
/// alice's session is untouched (served through each instance afterwards); a client that presents
/// an id of its choosing at `initialize` is given a fresh one, and the chosen one stays unknown.
pub async fn foreign_and_guessed_ids(shared: &Shared) {
    let (alice_token, bob_token) = (format!("alice-{}", nonce()), format!("bob-{}", nonce()));
    let alice = Session::initialize(&shared.direct(0), &alice_token).await;
    let bob = alice.as_principal(&bob_token);
    let guessed = bob.presenting(&guessed_id(7));
    let whoami = tool_call(3, "whoami", json!({}));
    for (index, name) in NAMES.iter().enumerate() {
        let url = shared.direct(index);
        let (hers, none) = (bob.post(&url, &whoami).await, guessed.post(&url, &whoami).await);
        assert_not_found(&hers, &format!("bob's POST with alice's id via {name}"));
        assert_eq!(hers, none, "POST via {name}: a foreign id is answered as a guessed one");
        let (hers, none) = (bob.get(&url).await, guessed.get(&url).await);
        assert_not_found(&hers, &format!("bob's GET with alice's id via {name}"));
        assert_eq!(hers, none, "GET via {name}");
        let (hers, none) = (bob.delete(&url).await, guessed.delete(&url).await);
        assert_not_found(&hers, &format!("bob's DELETE with alice's id via {name}"));
        assert_eq!(hers, none, "DELETE via {name}");
        // The same principal with a guessed id: the same bytes again.
        let alice_guessing = alice.presenting(&guessed_id(11)).post(&url, &whoami).await;
        assert_eq!(alice_guessing, none, "alice guessing via {name}");
    }
    for (index, name) in NAMES.iter().enumerate() {
        let answer = alice.result(&shared.direct(index), &whoami).await;
        let content = &answer["structuredContent"];
        assert_eq!(
            (content["instance"].as_str(), content["caller"].as_str()),
            (Some(*name), Some(&*alice_token))
        );
    }

    // Fixation: the id a client brings to `initialize` is never adopted.
    let chosen = guessed_id(13);
    let reply = Session::initialize_presenting(&shared.direct(1), &alice_token, Some(&chosen)).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let minted = reply.header("mcp-session-id").expect("a fresh id");
    assert_ne!(minted, chosen, "the chosen id is not adopted");
    let presented = alice.presenting(&chosen);
    for index in 0..3 {
        assert_not_found(&presented.post(&shared.direct(index), &whoami).await, "the chosen id");
    }
}

/// A question asked on alice's session by `a`: its answer POSTed in bob's session through `b`, in
/// another of alice's sessions through `c`, and under an id never issued in alice's own session
/// through `b`, is refused 400, always the same bytes; then alice's answer through `c` is accepted and
/// the tool completes on `a`; answered again through `b`, it is refused the same way.
pub async fn foreign_answers(shared: &Shared) {
    let (alice_token, bob_token) = (format!("alice-{}", nonce()), format!("bob-{}", nonce()));
    let alice = Session::initialize(&shared.direct(0), &alice_token).await;
    let alice_other = Session::initialize(&shared.direct(1), &alice_token).await;
    let bob = Session::initialize(&shared.direct(2), &bob_token).await;

    let mut stream = alice.open(&shared.direct(0), &tool_call(9, "confirm", json!({"item": "safe"}))).await;
    let asked = stream.next().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let answer = accept(&asked, true);
    let mut never_issued = answer.clone();
    never_issued["id"] = json!(guessed_id(17));

    let attempts = [
        ("bob's session via b", bob.post(&shared.direct(1), &answer).await),
        ("bob's session via a", bob.post(&shared.direct(0), &answer).await),
        ("alice's other session via c", alice_other.post(&shared.direct(2), &answer).await),
        ("alice's session, an id never issued, via b", alice.post(&shared.direct(1), &never_issued).await),
    ];
    for (what, reply) in &attempts {
        assert_eq!((reply.status, reply.body.as_str()), (400, NOT_AWAITED), "{what}: {reply:?}");
        assert_eq!(reply, &attempts[0].1, "{what}: the same bytes as every refusal");
    }

    let delivered = alice.post(&shared.direct(2), &answer).await;
    assert_eq!((delivered.status, delivered.body.as_str()), (202, ""), "{delivered:?}");
    let done = stream.next().await;
    let content = &done["result"]["structuredContent"];
    assert_eq!(
        content,
        &json!({"instance": "a", "asked_by": "a", "item": "safe", "confirmed": true}),
        "{done}"
    );
    let again = alice.post(&shared.direct(1), &answer).await;
    assert_eq!(again, attempts[0].1, "an answer given already is refused as one never asked for");
}
