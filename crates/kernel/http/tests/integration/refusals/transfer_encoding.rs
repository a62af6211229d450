//! Step 3: `Transfer-Encoding` — a body of undeclared length is 411, answered before any body byte
//! is read and before `authorize` runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{assert_raw_pre_body, raw_head_only};
use crate::support::*;

#[tokio::test]
async fn transfer_encoding_is_411_before_any_body_byte_is_read() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let service = builder()
            .authorize(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
            .build();
        let server = serve(service).await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("transfer-encoding", "chunked".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        // The head only: not one chunk of the body is ever sent, and the answer still comes.
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 411);
        assert_eq!(calls.load(Ordering::SeqCst), 0, "length is checked before authorize");
    })
    .await;
}
