//! Legacy `resources/subscribe` and `resources/unsubscribe` (`2025-11-25`), served only for a
//! transport that keeps a session and a server built with notifications: a connection's session
//! (`notify::session`, stdio) or a stored one (`session/stored.rs`, HTTP), whose subscriptions are
//! edited in its store. The same check either way: a uri is subscribed only if the caller may read it.

use serde_json::Value;

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::Method;
use mcp_kernel_wire::error::ResourceNotFoundData;
use mcp_kernel_wire::types::EmptyResult;

use crate::methods::encoded;
use crate::methods::logging::edited;
use crate::notify::listen::filter::MAX_SUBSCRIBED_URI_BYTES;
use crate::server::{Answer, Request, Server};
use crate::session::store::SessionEdit;

/// The refusal of a subscription past `notify::MAX_SESSION_SUBSCRIPTIONS`.
const SESSION_FULL: &str = "a session may hold at most 1024 resource subscriptions";

impl Server {
    /// Subscribes the session to a uri the caller may read (else -32002, as a read of it would be
    /// refused), or unsubscribes it (always `{}`).
    pub(crate) async fn legacy_subscription(&self, request: Request<'_>) -> Answer {
        let (session, stored) = (request.session, request.stored);
        if session.is_none() && stored.is_none() {
            return Err(ErrorObject::method_not_found());
        }
        let Some(Value::String(uri)) = request.params.as_ref().and_then(|p| p.get("uri")) else {
            return Err(ErrorObject::invalid_params("a string uri is required"));
        };
        if uri.len() > MAX_SUBSCRIBED_URI_BYTES {
            return Err(ErrorObject::invalid_params("a subscribed uri is too long"));
        }
        if *request.method == Method::ResourcesUnsubscribe {
            if let Some(stored) = stored {
                let edit = SessionEdit::Unsubscribe(uri.clone());
                edited(stored.store().edit(stored.id(), edit, stored.limits()).await)?;
            } else if let Some(session) = session {
                session.unsubscribe(uri);
            }
            return encoded(&EmptyResult::default());
        }
        if !self.is_listed_resource(uri, &request.context).await {
            return Err(ErrorObject::resource_not_found(ResourceNotFoundData {
                uri: uri.clone(),
                reason: None,
            }));
        }
        if let Some(stored) = stored {
            let edit = SessionEdit::Subscribe(uri.clone());
            edited(stored.store().edit(stored.id(), edit, stored.limits()).await)?;
        } else if let Some(session) = session
            && !session.subscribe(uri)
        {
            return Err(ErrorObject::invalid_params(SESSION_FULL));
        }
        encoded(&EmptyResult::default())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_full_session_refusal_names_the_real_bound() {
        let bound = crate::notify::session::MAX_SESSION_SUBSCRIPTIONS.to_string();
        assert!(super::SESSION_FULL.contains(&bound));
    }
}
