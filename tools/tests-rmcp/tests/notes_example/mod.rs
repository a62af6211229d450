//! Shared by the tests that drive the real `notes` example binary: finding it (and refusing a stale
//! one), starting it over HTTP on a free port of 127.0.0.1, and rmcp's HTTP transport as one of its
//! callers.
//!
//! The binary is `target/<profile>/examples/notes`, built by `cargo build --workspace --examples
//! --features mcp-kernel/connectome` (`cargo xtask ci` builds the examples before the tests); a test
//! fails when a source it was built from is newer than it, rather than test a stale one.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use rmcp::model::ProtocolVersion;
use rmcp::service::ClientLifecycleMode;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long the HTTP server may take to say it is serving.
const STARTUP: Duration = Duration::from_secs(20);
/// How many ports are tried when another process takes the one picked before the server binds it.
const BIND_ATTEMPTS: usize = 5;
/// The most lines read from a child's stderr (a bound, never reached).
const MAX_LINES: usize = 10_000;
/// The callers of the HTTP server: alice's token is `a-secret`, bob's `b-secret`.
pub const TOKENS: &str = "alice=a-secret,bob=b-secret";

/// rmcp's `server/discover` lifecycle at `2026-07-28` only.
pub fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

/// The `notes` example, as `cargo build --examples` put it beside the `deps/` directory of this test
/// binary; refused when missing, or older than a source its dep-info lists.
pub fn notes_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let examples = exe.parent().and_then(Path::parent).map(|profile| profile.join("examples"));
    let examples = examples.expect("the test binary is in target/<profile>/deps");
    let path = examples.join(format!("notes{}", std::env::consts::EXE_SUFFIX));
    let rebuild = "cargo build --workspace --examples --features mcp-kernel/connectome,mcp-kernel/redis";
    let built = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| panic!("{} is missing: build it with `{rebuild}`", path.display()));
    let dep_info = std::fs::read_to_string(examples.join("notes.d")).unwrap_or_default();
    if let Some(newer) = newer_source(&dep_info, built) {
        panic!("{} is older than {}: rebuild it with `{rebuild}`", path.display(), newer.display());
    }
    path
}

/// A source that cargo's dep-info (`target: source source …`, spaces escaped) lists and that was
/// modified after `built`.
fn newer_source(dep_info: &str, built: SystemTime) -> Option<PathBuf> {
    let first = dep_info.lines().next()?;
    let (_, sources) = first.split_once(": ")?;
    let escaped = sources.replace("\\ ", "\u{0}");
    escaped.split_whitespace().map(|s| PathBuf::from(s.replace('\u{0}', " "))).find(|source| {
        std::fs::metadata(source).and_then(|m| m.modified()).is_ok_and(|modified| modified > built)
    })
}

/// A port that was free a moment ago on 127.0.0.1.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("the bound address").port()
}

/// Reads `child`'s stderr until the server says it serves `addr` (`Ok`), or it exits (`Err` with what
/// it printed). Bounded by [`STARTUP`] and [`MAX_LINES`]; the rest of stderr is drained in the background.
async fn serving(child: &mut Child, addr: SocketAddr) -> Result<(), String> {
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    let serving = format!("serving http://{addr}/mcp");
    let mut seen = String::new();
    let waited = tokio::time::timeout(STARTUP, async {
        for _ in 0..MAX_LINES {
            match lines.next_line().await {
                Ok(Some(line)) if line.contains(&serving) => return true,
                Ok(Some(line)) => seen.push_str(&format!("{line}\n")),
                _ => return false,
            }
        }
        false
    })
    .await;
    match waited {
        Ok(true) => {
            tokio::spawn(async move {
                for _ in 0..MAX_LINES {
                    if !matches!(lines.next_line().await, Ok(Some(_))) {
                        break;
                    }
                }
            });
            Ok(())
        }
        Ok(false) => Err(seen),
        Err(_) => panic!("notes --http {addr} did not serve within {STARTUP:?}; stderr:\n{seen}"),
    }
}

/// `notes --http 127.0.0.1:PORT` with [`TOKENS`] and `env`, once it serves: the child and its
/// endpoint. Another port is tried (at most [`BIND_ATTEMPTS`] in all) when the one picked was taken
/// meanwhile.
pub async fn start_http(env: &[(&str, &str)]) -> (Child, String) {
    let notes = notes_binary();
    for _ in 0..BIND_ATTEMPTS {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut child = Command::new(&notes)
            .arg("--http")
            .arg(addr.to_string())
            .env("NOTES_TOKENS", TOKENS)
            .env("NO_COLOR", "1")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn notes --http");
        match serving(&mut child, addr).await {
            Ok(()) => return (child, format!("http://{addr}/mcp")),
            Err(stderr) if stderr.contains("Address already in use") || stderr.contains("AddrInUse") => {}
            Err(stderr) => panic!("notes --http {addr} exited before serving; stderr:\n{stderr}"),
        }
    }
    panic!("no free port could be bound in {BIND_ATTEMPTS} attempts");
}

/// rmcp's Streamable HTTP transport with bearer `token`, over a reqwest client that never uses a proxy.
pub fn transport_with_token(url: String, token: &str) -> StreamableHttpClientTransport<reqwest::Client> {
    let client = reqwest::Client::builder().no_proxy().build().expect("reqwest client");
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
    StreamableHttpClientTransport::with_client(client, config)
}
