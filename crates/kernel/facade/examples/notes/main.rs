//! notes: a small MCP host, written the way the README teaches (typed tools, each name written once).
//!
//! `cargo run --example notes` serves stdio, where every call is the one local user.
//! `NOTES_TOKENS=alice=a-secret,bob=b-secret cargo run --example notes -- --http 127.0.0.1:4000` serves
//! HTTP at `/mcp`, where a bearer token names the caller: each note belongs to who added it. The
//! endpoint is an OAuth protected resource: a request without a token is answered 401 with a
//! challenge naming its metadata document (`/.well-known/oauth-protected-resource/mcp`), which names
//! the authorization server `NOTES_AUTH_SERVER` (default `http://127.0.0.1:9000`) and the scope
//! `notes`. The example verifies only its own static tokens; a host that accepts the authorization
//! server's tokens verifies them in its hook (`tools/tests-rmcp/tests/oauth.rs` does, by introspection).
//!
//! `cargo run --example notes -- --catalog notes.catalog.json` writes the server's catalog export (each
//! tool, resource and prompt with the function that serves it) and exits: the first step of drawing
//! the server (`connectome declare`, docs/connectome.md "A server's picture in four commands").
//!
//! Either way, Ctrl-C or `SIGTERM` drains (`mcp_kernel::shutdown_signal()`): nothing new is taken,
//! what was taken is answered, and the process exits 0.
//!
//! A caller sees only their own notes, and another caller's note is answered exactly as a missing
//! one on every path (the same message, code and shape): ids are numbered per caller (alice's notes
//! are 1, 2, 3 …, bob's 1, 2 …), so an id neither names nor counts anyone else's notes (`store` says
//! why this rather than unguessable ids).
//!
//! Each caller's notes are resources of their own (`notes://note/{id}`, listed for their owner only),
//! and the server announces changes: a `subscriptions/listen` is keyed by its caller, and adding or
//! deleting a note tells that caller's listeners alone that `notes://index` and the note were updated
//! and that their resources list changed (`own_notes`).
//!
//! `export_notes` is slow, and runs as a task for a client that declared the tasks extension
//! (`tasks/get`, `tasks/update`, `tasks/cancel`), owned by its caller: it asks which format before
//! writing, then writes (`export`). `NOTES_EXPORT_PAUSE_MS` (default 2000) sets how long writing takes,
//! `NOTES_TASK_THRESHOLD_MS` (default 500) how long a call may run before it becomes a task.
//!
//! Many instances behind a proxy share their change notifications and tasks through Redis when
//! `NOTES_REDIS_URL` is set (`redis://host:6379`, `rediss://…`, `unix:///path`; the password may come
//! from `NOTES_REDIS_PASSWORD` instead of the URL; keys under `NOTES_REDIS_PREFIX`, default `notes`),
//! built with the facade's `redis` feature: `cargo run -p mcp-kernel --features redis --example notes
//! -- --http 127.0.0.1:4000`. The notes themselves stay in each instance's memory: a note added
//! through one instance is listed by that instance only; a listen on any instance hears of it, and a
//! task is read, answered and cancelled through any.

mod export;
#[cfg(test)]
mod export_tests;
mod host;
#[cfg(test)]
mod listen_tests;
mod own_notes;
mod store;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

use mcp_kernel::Server;
use mcp_kernel::http::{AllowedOrigins, LegacyClients, McpHttp, ProtectedResource, Refused, bearer_token};
use mcp_kernel::stdio::StdioOptions;
use sha2::{Digest, Sha256};

use host::Caller;

/// The callers `NOTES_TOKENS` names (`name=token,…`), keyed by the SHA-256 of their token, so that
/// looking a presented token up compares digests, never the secret itself.
fn callers(spec: &str) -> Result<HashMap<[u8; 32], Caller>, String> {
    let mut callers = HashMap::new();
    for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((name, token)) = pair.split_once('=') else {
            return Err("NOTES_TOKENS holds name=token pairs, separated by commas".into());
        };
        if name.is_empty() || token.is_empty() {
            return Err("NOTES_TOKENS: a name or a token is empty".into());
        }
        if callers.insert(Sha256::digest(token).into(), Caller(name.to_owned())).is_some() {
            return Err("NOTES_TOKENS: two callers share a token".into());
        }
    }
    if callers.is_empty() {
        return Err("set NOTES_TOKENS=name=token,… to serve HTTP: a bearer token names each caller".into());
    }
    Ok(callers)
}

/// The scope the endpoint's challenges and metadata name.
const SCOPE: &str = "notes";

/// The caller a request's one `Authorization: Bearer …` names. No credential is 401 (the client
/// signs in: the challenge names the metadata document); a token nobody holds is 401
/// `invalid_token`; a token in the query string or a repeated header is 400.
fn authorize(callers: &HashMap<[u8; 32], Caller>, parts: &http::request::Parts) -> Result<Caller, Refused> {
    let token = bearer_token(parts).map_err(|error| Refused::from(error).with_scope([SCOPE]))?;
    let digest: [u8; 32] = Sha256::digest(token).into();
    let caller = callers.get(&digest).cloned();
    caller.ok_or_else(|| Refused::invalid_token("unknown bearer token").with_scope([SCOPE]))
}

/// Serves `/mcp` and its metadata document on `addr` until Ctrl-C or SIGTERM (then drains: the
/// requests already read are answered), to `2026-07-28` and `2025-11-25` clients alike.
async fn serve_http(server: Server, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let callers = callers(&std::env::var("NOTES_TOKENS").unwrap_or_default())?;
    let auth_server =
        std::env::var("NOTES_AUTH_SERVER").unwrap_or_else(|_| "http://127.0.0.1:9000".to_owned());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let resource =
        ProtectedResource::new(&format!("http://{local}/mcp"), [auth_server])?.scopes_supported([SCOPE]);
    // The service answers `/mcp` alone, and serves its metadata document itself: no router needed.
    let service = McpHttp::builder(server)
        .path("/mcp")
        .allowed_origins(AllowedOrigins::loopback(local.port()))
        .protected_resource(resource.clone())
        .authorize(move |parts| authorize(&callers, parts))
        .legacy_clients(LegacyClients::Stateless)
        .build();
    tracing::info!("serving {} (metadata at {})", resource.resource(), resource.metadata_url());
    mcp_kernel::http::serve(listener, service, mcp_kernel::shutdown_signal()).await?;
    Ok(())
}

/// Where notifications and tasks live: Redis when `NOTES_REDIS_URL` is set, else this process.
fn sharing() -> Result<host::Sharing, Box<dyn std::error::Error>> {
    let Ok(url) = std::env::var("NOTES_REDIS_URL") else { return Ok(host::Sharing::InProcess) };
    #[cfg(feature = "redis")]
    {
        use mcp_kernel::redis::{Redis, RedisConfig};
        let prefix = std::env::var("NOTES_REDIS_PREFIX").unwrap_or_else(|_| "notes".to_owned());
        let config =
            RedisConfig::from_url(&url)?.password_from_env("NOTES_REDIS_PASSWORD").key_prefix(prefix);
        tracing::info!("notifications and tasks shared through Redis");
        Ok(host::Sharing::Redis(Redis::start(config)))
    }
    #[cfg(not(feature = "redis"))]
    {
        drop(url);
        Err("NOTES_REDIS_URL is set, but notes was built without Redis: \
             cargo run -p mcp-kernel --features redis --example notes"
            .into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(ansi).with_env_filter("info").init();
    let server =
        host::server_sharing(&Arc::new(store::Store::default()), export::Pace::from_env()?, sharing()?)?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            // Run by hand, the program would sit silent waiting for input: one line says why, on
            // stderr, only when stdin is a terminal (a client's pipe never sees it; stdout carries
            // JSON-RPC alone).
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                eprintln!("notes: reading JSON-RPC lines on stdin; see README");
            }
            // SIGTERM (or Ctrl-C) drains the session as end of input does: what was read is answered.
            let local = StdioOptions::default()
                .principal(Caller("local".to_owned()))
                .shutdown_on(mcp_kernel::shutdown_signal());
            mcp_kernel::stdio::serve_with(server, local).await?;
        }
        [flag, addr] if flag == "--http" => serve_http(server, addr).await?,
        // The catalog export (docs/connectome.md CB-9): each tool, resource and prompt with the
        // function that serves it, for `connectome declare`; nothing is served.
        [flag, path] if flag == "--catalog" => {
            std::fs::write(path, server.catalog_export()).map_err(|e| format!("cannot write {path}: {e}"))?;
        }
        _ => return Err("usage: notes [--http ADDR | --catalog FILE]".into()),
    }
    Ok(())
}
