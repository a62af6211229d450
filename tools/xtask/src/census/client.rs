//! Never a client (will-not-implement H-9): no library code line opens an outbound connection.
//!
//! `cargo xtask boundary` keeps HTTP client crates out of the dependency graph; this rule covers what
//! the graph cannot see, a library line that connects with what is already there (`tokio::net`,
//! `std::net`, hyper's and h2's client modules). The package accepts connections and answers `initialize`; it
//! never opens one, so no code line may name a `connect` call, a UDP socket or a client module.
//! Limits: a call spelled through an alias (`use TcpStream as T; T::connect`) is still found by the
//! word `connect`; a connection opened by a host-supplied closure is the host's, not the package's.
//!
//! One exception, by crate ([`SHARED_STORE_CRATES`]): `mcp-kernel-redis` exists to connect to the one
//! Redis the host configures (the store many instances share). It is a client of that engine only —
//! never of an MCP peer, never over HTTP (`cargo xtask boundary` still keeps HTTP clients out of it).

use super::lines::words;
use super::{Library, Outcome};

/// Words that name opening a connection, or a client, as whole runs of word characters.
const WORDS: &[&str] = &["connect", "connect_timeout", "UdpSocket", "TcpSocket"];
/// Paths that name an HTTP client module.
const PATHS: &[&str] =
    &["hyper::client", "hyper_util::client", "h2::client", "client::conn", "client::legacy"];

/// Crates whose purpose is a connection to the host's own shared store, and only there.
pub const SHARED_STORE_CRATES: &[&str] = &["mcp-kernel-redis"];

/// The first fragment of `line` that opens a connection, if any.
pub fn matched(line: &str) -> Option<String> {
    if let Some(path) = PATHS.iter().find(|p| line.contains(**p)) {
        return Some((*path).to_owned());
    }
    words(line).into_iter().find(|(_, w)| WORDS.contains(w)).map(|(_, w)| w.to_owned())
}

/// Runs the rule over `library`.
pub fn check(library: &[Library]) -> Outcome {
    let served: Vec<Library> =
        library.iter().filter(|file| !SHARED_STORE_CRATES.contains(&file.krate.as_str())).cloned().collect();
    Outcome::per_line(
        &served,
        "no-client",
        |line| matched(&line.text),
        |fragment| format!("`{fragment}`: the package is never a client and opens no connection"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that accepts connections is not a client.
    #[test]
    fn accepting_and_serving_is_not_a_client() {
        let clean = Library::parse(
            "crates/kernel/http/src/serve.rs",
            "let (stream, _) = listener.accept().await?;\nasync fn shows_its_protocol(stream: &tokio::net::TcpStream) -> bool {}\nlet connected = true; // connect in a comment\nhyper::server::conn::http1::Builder::new();\n",
        );
        assert_eq!(check(&[clean]).findings, vec![]);
    }

    /// An outbound connection is found.
    #[test]
    fn an_outbound_connection_is_found() {
        let planted = Library::parse(
            "crates/kernel/router/src/x.rs",
            "fn a() {}\nlet s = tokio::net::TcpStream::connect(addr).await?;\nlet u = std::net::UdpSocket::bind(a)?;\nlet (tx, conn) = hyper::client::conn::http1::handshake(io).await?;\n",
        );
        let findings = check(&[planted]).findings;
        assert_eq!(findings.iter().map(|f| f.line).collect::<Vec<_>>(), [2, 3, 4]);
        assert!(
            findings[0].to_string().starts_with("crates/kernel/router/src/x.rs:2: [no-client] `connect`")
        );
    }

    /// The shared store's crate connects to its engine; the same line elsewhere is found.
    #[test]
    fn only_the_shared_store_crate_may_connect_to_its_engine() {
        let line = "pub async fn connect(config: RedisConfig) -> Result<Redis, ConnectError> {\n";
        let store = Library::parse("crates/kernel/redis/src/lib.rs", line);
        assert_eq!(check(&[store]).findings, vec![]);
        let router = Library::parse("crates/kernel/router/src/lib.rs", line);
        assert_eq!(check(&[router]).findings.len(), 1);
    }

    /// An HTTP/2 client handshake through h2 is found (`no-client`).
    #[test]
    fn an_h2_client_is_found() {
        let planted = Library::parse(
            "crates/kernel/http/src/x.rs",
            "let (send, conn) = h2::client::handshake(io).await?;\nuse h2::client;\nlet s = h2::server::handshake(io).await?;\n",
        );
        let findings = check(&[planted]).findings;
        assert_eq!(findings.iter().map(|f| f.line).collect::<Vec<_>>(), [1, 2], "{findings:?}");
    }
}
