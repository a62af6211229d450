//! A `ClientChannel` written in the test: it records what the bridge sends, answers as the test's
//! script says, and counts the requests whose futures are still alive (so a test sees them dropped).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_kernel_router::BoxFuture;
use mcp_kernel_router::transport::{ClientChannel, ClientFault, SharedChannel};
use serde_json::{Value, json};

/// What the scripted client does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Answers with this `result`.
    Result(Value),
    /// Fails with this fault.
    Fault(ClientFault),
    /// Never answers.
    Never,
}

type Script = dyn Fn(&str, &Value, usize) -> Reply + Send + Sync;

/// The scripted client.
pub struct Scripted {
    capabilities: Option<Arc<Value>>,
    script: Box<Script>,
    /// Every request sent, as `(method, params)`, in order.
    pub sent: Mutex<Vec<(String, Value)>>,
    /// Requests whose futures are alive (not yet resolved nor dropped).
    pub alive: Arc<AtomicUsize>,
}

impl Scripted {
    /// A client that declared `capabilities` (`None`: no `initialize` known) and answers the `n`th
    /// request (from 0) of `method` with `params` as `script` says.
    pub fn new(
        capabilities: Option<Value>,
        script: impl Fn(&str, &Value, usize) -> Reply + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            capabilities: capabilities.map(Arc::new),
            script: Box::new(script),
            sent: Mutex::default(),
            alive: Arc::default(),
        })
    }

    /// A client that declared every capability and answers every request with `reply`.
    pub fn always(reply: Reply) -> Arc<Self> {
        Self::new(Some(every_capability()), move |_, _, _| reply.clone())
    }

    /// The channel, as an `Inbound` takes it.
    pub fn shared(self: &Arc<Self>) -> SharedChannel {
        Arc::clone(self) as SharedChannel
    }

    /// The methods sent so far.
    pub fn methods(&self) -> Vec<String> {
        self.sent.lock().unwrap().iter().map(|(method, _)| method.clone()).collect()
    }

    /// The params sent so far.
    pub fn params(&self) -> Vec<Value> {
        self.sent.lock().unwrap().iter().map(|(_, params)| params.clone()).collect()
    }
}

/// Form and URL elicitation, sampling with tools and context, roots.
pub fn every_capability() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}, "context": {}}, "roots": {}})
}

/// Decrements the live count when the request's future ends, answered or dropped.
struct Alive(Arc<AtomicUsize>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ClientChannel for Scripted {
    fn capabilities(&self) -> Option<Arc<Value>> {
        self.capabilities.clone()
    }

    fn request(&self, method: &'static str, params: Value) -> BoxFuture<'static, Result<Value, ClientFault>> {
        let index = {
            let mut sent = self.sent.lock().unwrap();
            let index = sent.iter().filter(|(m, _)| m == method).count();
            sent.push((method.to_owned(), params.clone()));
            index
        };
        let reply = (self.script)(method, &params, index);
        self.alive.fetch_add(1, Ordering::SeqCst);
        let alive = Alive(Arc::clone(&self.alive));
        Box::pin(async move {
            let _alive = alive;
            match reply {
                Reply::Result(result) => Ok(result),
                Reply::Fault(fault) => Err(fault),
                Reply::Never => std::future::pending().await,
            }
        })
    }
}
