//! The `h2` client, for control of DATA frames: a connection, a POST head, a response read whole.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, Version};
use tokio::net::TcpStream;

use super::EXCHANGE_TIMEOUT;

/// An HTTP/2 connection driven by the `h2` crate.
pub async fn h2_connect(addr: SocketAddr) -> h2::client::SendRequest<Bytes> {
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, connection) = h2::client::handshake(stream).await.expect("h2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender
}

/// An HTTP/2 connection driven by the `h2` crate, from the loopback address `source`.
pub async fn h2_connect_from(source: std::net::IpAddr, addr: SocketAddr) -> h2::client::SendRequest<Bytes> {
    let stream = super::edge::connect_from(source, addr).await.expect("connect");
    let (sender, connection) = h2::client::handshake(stream).await.expect("h2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender
}

/// A POST head for the `h2` client.
pub fn h2_request(addr: SocketAddr, headers: HeaderMap) -> Request<()> {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(format!("http://{addr}/mcp"))
        .version(Version::HTTP_2)
        .body(())
        .expect("a request");
    request.headers_mut().extend(headers);
    request
}

/// Reads an `h2` response whole: (status, headers, body).
pub async fn h2_read(response: h2::client::ResponseFuture) -> (StatusCode, HeaderMap, Bytes) {
    tokio::time::timeout(EXCHANGE_TIMEOUT, async {
        let response = response.await.expect("an HTTP/2 response");
        let (parts, mut body) = response.into_parts();
        let mut data = Vec::new();
        for _ in 0..100_000 {
            match body.data().await {
                None => break,
                Some(Ok(chunk)) => {
                    let _ = body.flow_control().release_capacity(chunk.len());
                    data.extend_from_slice(&chunk);
                }
                // A reset after the response (the request body was never finished) ends the body.
                Some(Err(_)) => break,
            }
        }
        (parts.status, parts.headers, Bytes::from(data))
    })
    .await
    .expect("an HTTP/2 response in time")
}
