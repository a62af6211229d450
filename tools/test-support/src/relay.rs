//! A TCP relay a test puts between a client and a server to cut one client off while the others still
//! reach the server: it listens on a free `127.0.0.1` port and forwards each connection to a target
//! address, until told otherwise.
//!
//! - [`Relay::freeze`] stops forwarding, both ways, on every connection, and keeps them open: what a
//!   network partition looks like to both ends (nothing arrives, nothing is refused, nothing closes).
//!   A connection accepted while frozen — the kernel completes its handshake — reaches the target only
//!   once thawed. What was held is delivered by [`Relay::thaw`], as TCP delivers what it retransmits
//!   once a partition heals.
//! - [`Relay::cut`] drops every connection (both ends see them close); new ones are relayed again.
//! - Dropping the relay stops it: its port and every connection close.
//!
//! Memory is bounded: one [`BUFFER`] per direction of each connection, at most [`MAX_CONNECTIONS`]
//! connections at once (one more is closed as soon as accepted). Nothing else is ever connected to.
//!
//! ```no_run
//! # async fn partition(redis_port: u16) -> std::io::Result<()> {
//! use mcp_kernel_test_support::relay::Relay;
//! let relay = Relay::start(([127, 0, 0, 1], redis_port).into()).await?;
//! let url = format!("redis://{}", relay.address()); // this instance goes through the relay
//! relay.freeze(); // ... cut off, its connections open
//! relay.thaw(); // ... healed
//! # drop(url); Ok(()) }
//! ```

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinSet};

/// The bytes one direction of one connection holds at most (read from one end, not yet written to the
/// other).
pub const BUFFER: usize = 16 * 1024;

/// How many connections a relay holds at once.
pub const MAX_CONNECTIONS: usize = 256;

/// How long a connection to the target may take before the relayed connection is closed.
const CONNECT_WITHIN: Duration = Duration::from_secs(5);

/// How long the accept loop pauses after a failed accept (out of descriptors, say).
const ACCEPT_PAUSE: Duration = Duration::from_millis(10);

/// The relayed connections, each one task.
type Connections = Arc<Mutex<JoinSet<()>>>;

/// A pausable relay to one target address; stopped when dropped.
#[derive(Debug)]
pub struct Relay {
    address: SocketAddr,
    target: SocketAddr,
    frozen: watch::Sender<bool>,
    connections: Connections,
    accept: AbortHandle,
}

impl Relay {
    /// A relay listening on a free `127.0.0.1` port and forwarding to `target`, flowing. Its tasks run
    /// on the current tokio runtime.
    pub async fn start(target: SocketAddr) -> io::Result<Relay> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let address = listener.local_addr()?;
        let frozen = watch::Sender::new(false);
        let connections: Connections = Arc::default();
        let accept =
            tokio::spawn(accept_forever(listener, target, frozen.subscribe(), Arc::clone(&connections)));
        Ok(Relay { address, target, frozen, connections, accept: accept.abort_handle() })
    }

    /// The address it listens on (`127.0.0.1:<port>`): what the client is given instead of the target.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The address it forwards to.
    pub fn target(&self) -> SocketAddr {
        self.target
    }

    /// Stops forwarding, both ways, on every connection, now and new; they stay open.
    pub fn freeze(&self) {
        self.frozen.send_replace(true);
    }

    /// Forwards again, starting with what was held.
    pub fn thaw(&self) {
        self.frozen.send_replace(false);
    }

    /// Whether it is frozen.
    pub fn is_frozen(&self) -> bool {
        *self.frozen.borrow()
    }

    /// Drops every connection (both ends see them close once the runtime runs their tasks, at once on
    /// a runtime that is not busy); later ones are relayed as before.
    pub fn cut(&self) {
        let all = std::mem::take(&mut *self.connections.lock().unwrap_or_else(PoisonError::into_inner));
        // Dropping the set aborts every task in it, and with each its two sockets.
        drop(all);
    }

    /// How many connections it holds now.
    pub fn connections(&self) -> usize {
        let mut connections = self.connections.lock().unwrap_or_else(PoisonError::into_inner);
        while connections.try_join_next().is_some() {}
        connections.len()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

/// Accepts connections and relays each in its own task, for as long as the relay lives.
async fn accept_forever(
    listener: TcpListener,
    target: SocketAddr,
    frozen: watch::Receiver<bool>,
    connections: Connections,
) {
    loop {
        let client = match listener.accept().await {
            Ok((client, _)) => client,
            Err(_) => {
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        let mut connections = connections.lock().unwrap_or_else(PoisonError::into_inner);
        while connections.try_join_next().is_some() {}
        if connections.len() < MAX_CONNECTIONS {
            connections.spawn(relay_one(client, target, frozen.clone()));
        }
    }
}

/// Relays one connection until both directions end (or the relay drops it).
async fn relay_one(client: TcpStream, target: SocketAddr, mut frozen: watch::Receiver<bool>) {
    // A connection made while frozen reaches the target only once thawed.
    if flowing(&mut frozen).await.is_err() {
        return;
    }
    let Ok(Ok(server)) = tokio::time::timeout(CONNECT_WITHIN, TcpStream::connect(target)).await else {
        return;
    };
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    tokio::join!(pump(client_read, server_write, frozen.clone()), pump(server_read, client_write, frozen));
}

/// Copies `from` to `to` while not frozen, one buffer at a time; at the end of `from`, shuts `to` down
/// for writing (a half-close is relayed as one).
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut frozen: watch::Receiver<bool>) {
    let mut buffer = vec![0u8; BUFFER];
    loop {
        if flowing(&mut frozen).await.is_err() {
            return;
        }
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        // A freeze that comes while a read is under way holds what it read.
        let mut written = 0;
        while written < read {
            if flowing(&mut frozen).await.is_err() {
                return;
            }
            match to.write(&buffer[written..read]).await {
                Ok(0) | Err(_) => return,
                Ok(more) => written += more,
            }
        }
    }
    let _ = to.shutdown().await;
}

/// Waits until the relay is not frozen; `Err` once the relay is gone.
async fn flowing(frozen: &mut watch::Receiver<bool>) -> Result<(), watch::error::RecvError> {
    frozen.wait_for(|frozen| !*frozen).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server on a free `127.0.0.1` port, for as long as the runtime lives.
    async fn echo() -> SocketAddr {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (mut read, mut write) = stream.split();
                    let _ = tokio::io::copy(&mut read, &mut write).await;
                });
            }
        });
        address
    }

    /// Writes `bytes` and reads as many back, within `within`; `None` when they did not come in time.
    async fn round_trip(stream: &mut TcpStream, bytes: &[u8], within: Duration) -> Option<Vec<u8>> {
        stream.write_all(bytes).await.unwrap();
        let mut back = vec![0u8; bytes.len()];
        tokio::time::timeout(within, stream.read_exact(&mut back)).await.ok()?.ok()?;
        Some(back)
    }

    const SOON: Duration = Duration::from_secs(2);

    #[tokio::test]
    async fn a_frozen_relay_holds_everything_with_its_connections_open_and_delivers_it_once_thawed() {
        let relay = Relay::start(echo().await).await.unwrap();
        let mut held = TcpStream::connect(relay.address()).await.unwrap();
        assert_eq!(round_trip(&mut held, b"one", SOON).await.as_deref(), Some(&b"one"[..]));
        relay.freeze();
        assert!(relay.is_frozen());
        assert_eq!(round_trip(&mut held, b"two", Duration::from_millis(300)).await, None, "nothing passes");
        // A connection made while frozen is accepted, and relayed only once thawed.
        let mut late = TcpStream::connect(relay.address()).await.unwrap();
        late.write_all(b"late").await.unwrap();
        let deadline = tokio::time::Instant::now() + SOON;
        while relay.connections() < 2 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(relay.connections(), 2, "both are open");
        relay.thaw();
        let mut back = [0u8; 4];
        tokio::time::timeout(SOON, late.read_exact(&mut back)).await.unwrap().unwrap();
        assert_eq!(&back, b"late");
        let mut back = [0u8; 3];
        tokio::time::timeout(SOON, held.read_exact(&mut back)).await.unwrap().unwrap();
        assert_eq!(&back, b"two", "what was held is delivered, in order");
        assert_eq!(round_trip(&mut held, b"three", SOON).await.as_deref(), Some(&b"three"[..]));
    }

    #[tokio::test]
    async fn a_cut_closes_every_connection_and_a_dropped_relay_its_port() {
        let relay = Relay::start(echo().await).await.unwrap();
        let mut first = TcpStream::connect(relay.address()).await.unwrap();
        assert!(round_trip(&mut first, b"x", SOON).await.is_some());
        relay.cut();
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(SOON, first.read_to_end(&mut rest)).await.expect("closed in time");
        assert!(closed.is_err() || rest.is_empty(), "closed with nothing more: {closed:?} {rest:?}");
        let mut second = TcpStream::connect(relay.address()).await.unwrap();
        assert!(round_trip(&mut second, b"y", SOON).await.is_some(), "relayed again after a cut");
        let address = relay.address();
        drop(relay);
        let refused = tokio::time::timeout(SOON, async {
            for _ in 0..100 {
                if TcpStream::connect(address).await.is_err() {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            false
        });
        assert!(refused.await.unwrap(), "the port is closed once the relay is dropped");
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(SOON, second.read_to_end(&mut rest)).await.expect("closed in time");
        assert!(closed.is_err() || rest.is_empty(), "its connections too");
    }
}
