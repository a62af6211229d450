//! The package verifies no token (`docs/will-not-implement.md` H-8): the `authorization` header is
//! read only by the host's `authorize` hook. An admitted request is answered the same with or without
//! one, and neither an answer nor a plain refusal (`Refused::because`) names an authentication scheme
//! (`www-authenticate`): only the challenges a hook asks for do (the `challenges` module).

use std::sync::{Arc, Mutex};

use crate::support::*;
use mcp_kernel_http::Refused;
use serde_json::json;

/// A credential the package must neither read nor answer about.
const TOKEN: &[u8] = b"Bearer not-a-token";

#[tokio::test]
async fn the_authorization_header_is_read_only_by_the_hook() {
    bounded(async {
        let message = request(1, "tools/list", json!({}));
        let admitting = start_default().await;
        for proto in BOTH {
            let plain = post_message(admitting.addr, proto, &message).await;
            let headers = with(headers_for(&message), "authorization", TOKEN);
            let with_token = post(admitting.addr, proto, headers, bytes(&message)).await;
            assert_eq!(plain.status, 200, "{plain:?}");
            assert_eq!((plain.status, &plain.raw), (with_token.status, &with_token.raw), "byte-identical");
            assert!(with_token.headers.get("www-authenticate").is_none(), "{with_token:?}");
        }

        let seen: Arc<Mutex<Vec<Option<Vec<u8>>>>> = Arc::default();
        let hook_seen = Arc::clone(&seen);
        let hook = move |parts: &http::request::Parts| {
            let credential = parts.headers.get("authorization").map(|v| v.as_bytes().to_vec());
            hook_seen.lock().expect("not poisoned").push(credential);
            Err::<(), _>(Refused::because("no credential accepted"))
        };
        let refusing = serve(builder().authorize(hook).build()).await;
        for proto in BOTH {
            let headers = with(headers_for(&message), "authorization", TOKEN);
            let reply = post(refusing.addr, proto, headers, bytes(&message)).await;
            assert_eq!(reply.status, 403, "{reply:?}");
            assert!(reply.headers.get("www-authenticate").is_none(), "{reply:?}");
        }
        assert_eq!(*seen.lock().expect("not poisoned"), vec![Some(TOKEN.to_vec()); 2], "the hook saw it");
    })
    .await;
}
