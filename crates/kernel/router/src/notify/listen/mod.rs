//! `subscriptions/listen` (MCP `2026-07-28`): one long-lived request over which a client is told of
//! the changes it asked for.
//!
//! [`Server::open_listen`] settles the request as any other (malformed, legacy-era and bare requests
//! get exactly the answers [`Server::handle_envelope`] gives them) and returns a [`Listen`]: the
//! acknowledgment to write first, then each tagged notification [`Listen::next`] yields, then, when the
//! server ends the stream, the completion result [`Listen::completion`]. What the transport does
//! around it — how long a stream may stay, how many are open, how far behind a reader may fall — is the
//! transport's; which messages go on the stream, in which order and with which tag is decided here:
//!
//! - the acknowledgment (`notifications/subscriptions/acknowledged`) is the stream's first message
//!   and names the subset honoured: what was asked ∩ what this server announces, uris only if the
//!   caller may read them, task ids only for the caller's own tasks still running (`filter`); a
//!   listen asking for task ids without declaring the tasks extension is -32021;
//! - only the kinds acknowledged are sent, each tagged with
//!   `io.modelcontextprotocol/subscriptionId` (the listen request's id, its JSON type kept), a
//!   resource update only for an acknowledged uri; request-scoped notifications (progress, logs) never;
//! - a server without notifications, or a filter nothing of which is honoured, is acknowledged empty
//!   and completed at once ([`Listen::completes_at_once`]);
//! - when the hub's feed ends (the hub fell behind for this listener or lost its source),
//!   [`Listen::next`] returns `None`: the transport writes the completion result, so a client never
//!   holds a stream that silently stopped.

pub(crate) mod filter;

use std::sync::Arc;

use serde_json::{Map, Value, json};

use mcp_kernel_wire::types::method::{
    NOTIFICATION_PROMPTS_LIST_CHANGED, NOTIFICATION_RESOURCE_UPDATED, NOTIFICATION_RESOURCES_LIST_CHANGED,
    NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED, NOTIFICATION_TOOLS_LIST_CHANGED,
};
use mcp_kernel_wire::version::META_SUBSCRIPTION_ID;
use mcp_kernel_wire::{Envelope, Method, Response};

use crate::contract::{BoxFuture, RequestContext};
use crate::notify::change::ChangeKind;
use crate::notify::hub::ChangeFeed;
use crate::request::inbound::Inbound;
use crate::server::{Handled, Server};
use crate::tasks::feed::{TaskFeed, TaskNext, task_notification};
use filter::{Asked, Honoured};

/// The longest string id a `subscriptions/listen` may have, in bytes: every message of the stream
/// repeats it, so a client-chosen megabyte would be multiplied by every notification queued for a
/// reader that does not read. A longer id is -32602.
pub const MAX_LISTEN_ID_BYTES: usize = 256;

/// One open `subscriptions/listen` stream, as the core sees it.
pub struct Listen {
    id: Value,
    acknowledgment: Value,
    honoured: Honoured,
    key: Option<Arc<str>>,
    /// The hub's changes; `None` when no change the hub carries is honoured.
    feed: Option<ChangeFeed>,
    /// The acknowledged tasks (the tasks extension), watched in the task store.
    tasks: TaskFeed,
    completion: Response,
}

impl std::fmt::Debug for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listen")
            .field("id", &self.id)
            .field("honoured", &self.honoured)
            .finish_non_exhaustive()
    }
}

impl Listen {
    /// The listen request's id: the tag of every message of the stream.
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// The acknowledgment, the stream's first message (a whole JSON-RPC notification).
    pub fn acknowledgment(&self) -> &Value {
        &self.acknowledgment
    }

    /// Whether nothing is honoured: write the acknowledgment, then the completion, and end.
    pub fn completes_at_once(&self) -> bool {
        self.honoured.is_empty()
    }

    /// The next notification for this stream (a whole, tagged JSON-RPC notification), or `None` when
    /// the stream must end: write [`Listen::completion`] then — when the hub's feed ends, when the task
    /// store ends the watch of a task still running, or when the stream asked only for tasks and every
    /// one has sent its terminal status. Cancel-safe: a change is
    /// taken from the feed and returned in the same poll, and a task woken is read again on the next
    /// call if this one is dropped.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            let next = match (self.feed.as_mut(), self.tasks.is_open()) {
                (Some(feed), true) => {
                    let change = Box::pin(feed.next());
                    let task = Box::pin(self.tasks.next());
                    match futures_util::future::select(change, task).await {
                        futures_util::future::Either::Left((change, _)) => Next::Change(change),
                        futures_util::future::Either::Right((task, _)) => Next::Task(task),
                    }
                }
                (Some(feed), false) => Next::Change(feed.next().await),
                (None, true) => Next::Task(self.tasks.next().await),
                (None, false) => return None,
            };
            match next {
                Next::Change(None) => return None,
                Next::Change(Some(change)) => {
                    if self.honoured.wants(&change, self.key.as_deref()) {
                        return Some(tagged(&self.id, &change.kind));
                    }
                }
                Next::Task(TaskNext::Changed(record)) => return Some(task_notification(&self.id, &record)),
                // Every task has ended: the hub's changes, if any were asked for, go on.
                Next::Task(TaskNext::AllDone) => {}
                // A running task's watch ended (the store lost its source): the stream ends.
                Next::Task(TaskNext::Lost) => return None,
            }
        }
    }

    /// The completion result that ends the stream gracefully (tagged, with the server's identity).
    pub fn completion(&self) -> &Response {
        &self.completion
    }
}

/// What ended one wait of [`Listen::next`].
enum Next {
    /// A change from the hub (`None`: the feed ended).
    Change(Option<crate::notify::change::Change>),
    /// What the task feed's wait ended with.
    Task(TaskNext),
}

/// The notification of `kind` on the stream of the listen `id`.
fn tagged(id: &Value, kind: &ChangeKind) -> Value {
    let method = match kind {
        ChangeKind::ToolsListChanged => NOTIFICATION_TOOLS_LIST_CHANGED,
        ChangeKind::PromptsListChanged => NOTIFICATION_PROMPTS_LIST_CHANGED,
        ChangeKind::ResourcesListChanged => NOTIFICATION_RESOURCES_LIST_CHANGED,
        ChangeKind::ResourceUpdated { uri } => {
            return json!({
                "jsonrpc": "2.0",
                "method": NOTIFICATION_RESOURCE_UPDATED,
                "params": { "_meta": { META_SUBSCRIPTION_ID: id }, "uri": &**uri },
            });
        }
    };
    json!({ "jsonrpc": "2.0", "method": method, "params": { "_meta": { META_SUBSCRIPTION_ID: id } } })
}

impl Server {
    /// Opens a `subscriptions/listen` request ([`Admitted::listens`](crate::transport::Admitted::listens)
    /// says which messages are): `Ok` with the stream's messages, or `Err` with the answer to write
    /// instead — the same answer [`Server::handle_envelope`] gives any request that is not a
    /// well-formed `2026-07-28` listen (malformed, undeclared, legacy, bad filter).
    pub async fn open_listen(&self, envelope: Envelope, inbound: Inbound) -> Result<Listen, Handled> {
        let served = self.served(&inbound);
        let settled = match envelope.method() {
            Some(Method::SubscriptionsListen)
                if envelope.is_jsonrpc() && envelope.has_valid_id() && envelope.top_level_meta().is_ok() =>
            {
                self.settle_era(served, &Method::SubscriptionsListen, envelope.meta()).ok()
            }
            _ => None,
        };
        let Some((era, client_capabilities)) = settled.filter(|(era, _)| era.is_modern()) else {
            return Err(self.handle_envelope(envelope, inbound).await);
        };
        let (id, _, params, _) = envelope.into_parts();
        let id = id.unwrap_or(Value::Null);
        let context = RequestContext::new(era, client_capabilities).with_extensions(inbound.extensions);
        match self.listen_from(id.clone(), params.as_ref(), context, true).await {
            Ok(listen) => Ok(listen),
            Err(error) => Err(Handled::reply(Response::error(id, error))),
        }
    }

    /// [`Server::listen_at_once`]'s future, allocated first (as in `contract.rs`, `Dispatch for F`)
    /// and returned as a `dyn Future`: awaited as its own type, its `poll` was inlined into
    /// `Server::handle_envelope`'s, whose stack frame kept room for it on every request. Not inlined
    /// itself, or the optimizer, seeing the vtable, could inline that `poll` again
    /// (`docs/performance.md`, "Tenth round").
    #[inline(never)]
    pub(crate) fn listen_at_once_boxed<'a>(
        &'a self,
        id: Value,
        params: Option<&'a Value>,
        context: RequestContext,
        sink: Option<&'a crate::notify::progress::NotificationSink>,
    ) -> BoxFuture<'a, Handled> {
        let listening = Box::write(Box::new_uninit(), self.listen_at_once(id, params, context, sink));
        Box::into_pin(listening)
    }

    /// A listen served by a transport that holds no stream ([`Server::handle_envelope`]): nothing is
    /// honoured (the stream cannot stay open), the empty acknowledgment goes to the request's
    /// notification sink, if any, and the completion result is the answer.
    pub(crate) async fn listen_at_once(
        &self,
        id: Value,
        params: Option<&Value>,
        context: RequestContext,
        sink: Option<&crate::notify::progress::NotificationSink>,
    ) -> Handled {
        match self.listen_from(id.clone(), params, context, false).await {
            Ok(listen) => {
                if let Some(sink) = sink {
                    sink(listen.acknowledgment);
                }
                Handled::reply(listen.completion)
            }
            Err(error) => Handled::reply(Response::error(id, error)),
        }
    }

    /// Whether a listen `message` could hold a stream open: the server announces changes and the
    /// filter asks for something. A transport that bounds open streams asks this before the core does
    /// any work for the listen, so a client at its bound costs no look-up; a listen that could not hold
    /// a stream completes at once and needs no room.
    pub fn may_hold_listen(&self, message: &Envelope) -> bool {
        let params = message.params();
        (self.inner.injected.notifications.is_some() && filter::asks_for_changes(params))
            || (self.inner.injected.tasks.is_some() && filter::asks_for_tasks(params))
    }

    /// The listen `id` with `params`, from the caller of `context`, whose era is `2026-07-28`; `held`
    /// is false when the transport holds no stream (nothing is honoured then).
    async fn listen_from(
        &self,
        id: Value,
        params: Option<&Value>,
        context: RequestContext,
        held: bool,
    ) -> Result<Listen, mcp_kernel_wire::ErrorObject> {
        if params.is_some_and(|p| !p.is_object()) {
            return Err(mcp_kernel_wire::ErrorObject::invalid_params("params must be an object"));
        }
        if matches!(&id, Value::String(text) if text.len() > MAX_LISTEN_ID_BYTES) {
            return Err(mcp_kernel_wire::ErrorObject::invalid_params(
                "a subscriptions/listen id is at most 256 bytes (every message of the stream repeats it)",
            ));
        }
        let asked = Asked::read(params)?;
        // The extension (on a server that offers it): a listen that asks for task notifications must
        // have declared it. A server without tasks honours no task id, like any kind it cannot announce.
        let offers_tasks = self.inner.injected.tasks.is_some();
        if offers_tasks && !asked.task_ids.is_empty() && !crate::tasks::run::declares_tasks(&context) {
            return Err(mcp_kernel_wire::ErrorObject::missing_capability(
                crate::tasks::run::tasks_capability(),
            ));
        }
        // Subscribed (and each task watched) before what is honoured is decided, and so before the
        // acknowledgment is written: a change announced while the filter is read — a task that ends
        // after its status was read — or as soon as the client reads the acknowledgment is not missed.
        let notifications = self.inner.injected.notifications.as_ref().filter(|_| held);
        let early = match notifications.map(|notifications| notifications.hub.try_subscribe()) {
            Some(Ok(feed)) => Some(feed),
            Some(Err(unavailable)) => {
                tracing::warn!(error = %unavailable, "a listen was refused retry-later");
                return Err(mcp_kernel_wire::ErrorObject::unavailable(1));
            }
            None => None,
        };
        let mut tasks = match (&self.inner.injected.tasks, held) {
            (Some(opted), true) => TaskFeed::over(Arc::clone(&opted.store)),
            _ => TaskFeed::default(),
        };
        let honoured =
            if held { self.honour(asked, &context, &mut tasks).await? } else { Honoured::default() };
        let (key, feed) = match (notifications, early) {
            (Some(notifications), Some(feed)) if !honoured.wants_no_change() => {
                (notifications.key_of(&context), Some(feed))
            }
            _ => (None, None),
        };
        let acknowledgment = json!({
            "jsonrpc": "2.0",
            "method": NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
            "params": { "_meta": { META_SUBSCRIPTION_ID: &id }, "notifications": honoured.to_filter() },
        });
        let mut meta = Map::new();
        meta.insert(META_SUBSCRIPTION_ID.into(), id.clone());
        let completion = self.inner.decoration.apply(json!({ "_meta": meta }));
        let completion = Response::result(id.clone(), completion);
        Ok(Listen { id, acknowledgment, honoured, key, feed, tasks, completion })
    }

    /// What of `asked` this server honours for the caller of `context`; each acknowledged task is
    /// watched in `tasks`. `Err` (retryable) when the task store is unreachable.
    async fn honour(
        &self,
        asked: Asked,
        context: &RequestContext,
        tasks: &mut TaskFeed,
    ) -> Result<Honoured, mcp_kernel_wire::ErrorObject> {
        let mut honoured = Honoured::default();
        if self.inner.injected.notifications.is_some() {
            honoured.tools = asked.tools;
            honoured.prompts = asked.prompts;
            honoured.resources = asked.resources;
            for uri in asked.uris {
                if self.is_listed_resource(&uri, context).await {
                    honoured.uris.insert(Arc::from(uri.as_str()));
                    honoured.uris_in_order.push(uri);
                }
            }
        }
        for id in asked.task_ids {
            let Some(watch) = tasks.watch(&id) else { break };
            if self.is_live_task_of(&id, context).await? {
                tasks.keep(watch);
                honoured.task_ids_in_order.push(id);
            }
        }
        Ok(honoured)
    }
}
