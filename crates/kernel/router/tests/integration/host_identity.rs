//! Host identity in `serverInfo`: `server_info(host_identity!())` advertises the host crate's own name
//! and version, `server_version` the version alone; the default is `mcp-kernel` at this package's
//! version. Every place the identity appears says the same.

use crate::support::*;
use mcp_kernel_router::options::{DEFAULT_SERVER_NAME, HostIdentity, PACKAGE_VERSION};
use mcp_kernel_router::{Listing, Server, ServerBuilder};
use serde_json::{Value, json};

/// The identity as `initialize`, `server/discover` and a modern result's `_meta` advertise it.
async fn advertised(server: &Server) -> [Value; 3] {
    let init = send(server, bare(1, "initialize", json!({"protocolVersion": LEGACY}))).await;
    let discover = send(server, bare(1, "server/discover", json!({}))).await;
    let list = send(server, modern(1, "tools/list", json!({}))).await;
    let key = "io.modelcontextprotocol/serverInfo";
    [
        init["result"]["serverInfo"].clone(),
        discover["result"]["_meta"][key].clone(),
        list["result"]["_meta"][key].clone(),
    ]
}

fn builder() -> ServerBuilder {
    Server::builder(Listing::new())
}

#[tokio::test]
async fn server_info_of_host_identity_advertises_the_host_crates_name_and_version() {
    let server = builder().server_info(mcp_kernel_router::options::host_identity!()).build().unwrap();
    let expected = json!({"name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION")});
    assert_eq!(advertised(&server).await, [expected.clone(), expected.clone(), expected]);
    assert_eq!(env!("CARGO_PKG_NAME"), "mcp-kernel-router");
    assert_ne!(
        env!("CARGO_PKG_NAME"),
        DEFAULT_SERVER_NAME,
        "the test tells the host's name from the default"
    );
    assert_eq!(server.options().server_name(), "mcp-kernel-router");
    assert_eq!(server.options().server_version(), env!("CARGO_PKG_VERSION"));
}

#[tokio::test]
async fn server_info_advertises_any_host_identity() {
    let server = builder().server_info(HostIdentity::new("notes", "1.2.3")).build().unwrap();
    let expected = json!({"name": "notes", "version": "1.2.3"});
    assert_eq!(advertised(&server).await, [expected.clone(), expected.clone(), expected]);
}

#[tokio::test]
async fn server_version_alone_changes_only_the_version() {
    let server = builder().server_version("9.9.9-host").build().unwrap();
    let expected = json!({"name": "mcp-kernel", "version": "9.9.9-host"});
    assert_eq!(advertised(&server).await, [expected.clone(), expected.clone(), expected]);
    let server = builder().server_name("notes").build().unwrap();
    assert_eq!(advertised(&server).await[0], json!({"name": "notes", "version": PACKAGE_VERSION}));
}

#[tokio::test]
async fn the_last_identity_setting_wins_field_by_field() {
    let server =
        builder().server_info(HostIdentity::new("notes", "1.2.3")).server_version("2.0.0").build().unwrap();
    assert_eq!(advertised(&server).await[0], json!({"name": "notes", "version": "2.0.0"}));
    let server =
        builder().server_version("2.0.0").server_info(HostIdentity::new("notes", "1.2.3")).build().unwrap();
    assert_eq!(advertised(&server).await[0], json!({"name": "notes", "version": "1.2.3"}));
}

#[tokio::test]
async fn the_default_identity_is_mcp_kernel_at_this_packages_version() {
    assert_eq!(PACKAGE_VERSION, env!("CARGO_PKG_VERSION"));
    assert_eq!(DEFAULT_SERVER_NAME, "mcp-kernel");
    let server = builder().build().unwrap();
    let expected = json!({"name": "mcp-kernel", "version": env!("CARGO_PKG_VERSION")});
    assert_eq!(advertised(&server).await, [expected.clone(), expected.clone(), expected]);
}
