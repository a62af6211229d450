//! `notes-rmcp [--http ADDR]`: the same "notes" server as mcp-kernel's `notes` example (tools
//! `add_note`, `search_notes` and `delete_note`, resource `notes://index`, resource template
//! `notes://note/{id}`, prompt `summarize`; stdio by default, stateless streamable HTTP at `/mcp`
//! with bearer tokens from `NOTES_TOKENS` under `--http`), written idiomatically against rmcp 3.11.0
//! and its macros for a line-count comparison of the two libraries.

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, HashMap};
use std::error::Error;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{StatusCode, header::AUTHORIZATION, request::Parts};
use axum::middleware::{self, Next};
use axum::response::Response;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    Extensions, Implementation, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::stdio;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use rmcp::{prompt, prompt_handler, prompt_router, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, JsonSchema)]
struct Note {
    id: u64,
    title: String,
    body: String,
    tags: Vec<String>,
    owner: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddNote {
    title: String,
    body: String,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
struct Added {
    id: u64,
}

#[derive(Deserialize, JsonSchema)]
struct SearchNotes {
    query: String,
    /// How many notes to return at most (default 10).
    #[schemars(range(min = 1, max = 50))]
    limit: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
struct Found {
    notes: Vec<Note>,
}

#[derive(Deserialize, JsonSchema)]
struct DeleteNote {
    id: u64,
}

#[derive(Deserialize, JsonSchema)]
struct Summarize {
    topic: String,
}

/// The authenticated caller, put in the HTTP request's extensions by [`authenticate`].
#[derive(Clone)]
struct Caller(String);

/// Who owns what the request touches: the HTTP caller, or "local" over stdio.
fn owner(extensions: &Extensions) -> String {
    let caller = extensions.get::<Parts>().and_then(|parts| parts.extensions.get::<Caller>());
    caller.map_or("local", |caller| &caller.0).to_owned()
}

#[derive(Default)]
struct Store {
    last_id: u64,
    notes: BTreeMap<u64, Note>,
}

#[derive(Clone, Default)]
struct Notes(Arc<Mutex<Store>>);

impl Notes {
    /// The owner's notes whose title or body contains `query`, oldest first.
    fn matching(&self, owner: &str, query: &str) -> Vec<Note> {
        let store = self.0.lock().unwrap();
        let matches = |note: &&Note| note.title.contains(query) || note.body.contains(query);
        store.notes.values().filter(|note| note.owner == owner).filter(matches).cloned().collect()
    }
}

#[tool_router]
impl Notes {
    /// Adds a note and returns its id.
    #[tool]
    async fn add_note(&self, ext: Extensions, Parameters(args): Parameters<AddNote>) -> Json<Added> {
        let mut store = self.0.lock().unwrap();
        store.last_id += 1;
        let id = store.last_id;
        let AddNote { title, body, tags } = args;
        store.notes.insert(id, Note { id, title, body, tags, owner: owner(&ext) });
        Json(Added { id })
    }

    /// Finds your notes whose title or body contains the query.
    #[tool]
    async fn search_notes(
        &self,
        ext: Extensions,
        Parameters(SearchNotes { query, limit }): Parameters<SearchNotes>,
    ) -> Result<Json<Found>, String> {
        let limit = limit.unwrap_or(10);
        if !(1..=50).contains(&limit) {
            return Err(format!("limit must be between 1 and 50, not {limit}"));
        }
        let notes = self.matching(&owner(&ext), &query).into_iter().take(limit).collect();
        Ok(Json(Found { notes }))
    }

    /// Deletes one of your notes.
    #[tool(annotations(destructive_hint = true))]
    async fn delete_note(
        &self,
        ext: Extensions,
        Parameters(DeleteNote { id }): Parameters<DeleteNote>,
    ) -> Result<String, String> {
        let mut store = self.0.lock().unwrap();
        match store.notes.get(&id) {
            None => Err(format!("there is no note {id}")),
            Some(note) if note.owner != owner(&ext) => Err(format!("note {id} is not yours")),
            Some(_) => {
                store.notes.remove(&id);
                Ok(format!("deleted note {id}"))
            }
        }
    }
}

#[prompt_router]
impl Notes {
    /// Asks to summarize your notes about a topic.
    #[prompt]
    async fn summarize(
        &self,
        ext: Extensions,
        Parameters(Summarize { topic }): Parameters<Summarize>,
    ) -> Vec<PromptMessage> {
        let notes: String = self
            .matching(&owner(&ext), &topic)
            .iter()
            .map(|note| format!("\n\n# {}\n{}", note.title, note.body))
            .collect();
        vec![PromptMessage::new_text(Role::User, format!("Summarize my notes about {topic}:{notes}"))]
    }
}

#[tool_handler]
#[prompt_handler]
impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources();
        ServerConfig::new(capabilities.build())
            .with_server_info(Implementation::new("notes-rmcp", env!("CARGO_PKG_VERSION")))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let index = Resource::new("notes://index", "index")
            .with_description("Your notes, one `<id>\\t<title>` line each.")
            .with_mime_type("text/plain");
        Ok(ListResourcesResult::with_all_items(vec![index]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let note = ResourceTemplate::new("notes://note/{id}", "note")
            .with_description("One of your notes.")
            .with_mime_type("text/plain");
        Ok(ListResourceTemplatesResult::with_all_items(vec![note]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let notes = self.matching(&owner(&context.extensions), "");
        let uri = request.uri;
        let text = if uri == "notes://index" {
            notes.iter().map(|note| format!("{}\t{}\n", note.id, note.title)).collect()
        } else {
            let not_found = |reason: String| ErrorData::resource_not_found(reason, None);
            let id =
                uri.strip_prefix("notes://note/").ok_or_else(|| not_found(format!("no resource {uri}")))?;
            let id: u64 = id.parse().map_err(|_| not_found(format!("note id {id:?} is not a number")))?;
            let note =
                notes.iter().find(|note| note.id == id).ok_or_else(|| not_found(format!("no note {id}")))?;
            format!("{}\n\n{}\n\ntags: {}\n", note.title, note.body, note.tags.join(", "))
        };
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]).into())
    }
}

/// Refuses a request without a known bearer token (401) and records its caller.
async fn authenticate(
    State(tokens): State<Arc<HashMap<String, String>>>,
    mut request: Request,
    next: Next,
) -> Result<Response, StatusCode> {
    let header = request.headers().get(AUTHORIZATION).and_then(|value| value.to_str().ok());
    let token = header.and_then(|value| value.strip_prefix("Bearer "));
    let name = token.and_then(|token| tokens.get(token)).ok_or(StatusCode::UNAUTHORIZED)?;
    request.extensions_mut().insert(Caller(name.clone()));
    Ok(next.run(request).await)
}

async fn serve_http(addr: &str) -> Result<(), Box<dyn Error>> {
    // `NOTES_TOKENS=alice=secret1,bob=secret2`, kept as token -> name.
    let tokens: HashMap<String, String> = std::env::var("NOTES_TOKENS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, token)| (token.to_owned(), name.to_owned()))
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*"]);
    let notes = Notes::default();
    let mcp = StreamableHttpService::new(
        move || Ok(notes.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let app = axum::Router::new()
        .route_service("/mcp", mcp)
        .route_layer(middleware::from_fn_with_state(Arc::new(tokens), authenticate));
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("notes-rmcp: serving http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => {
            Notes::default().serve(stdio()).await?.waiting().await?;
        }
        [flag, addr] if flag == "--http" => serve_http(addr).await?,
        _ => return Err("usage: notes-rmcp [--http ADDR]".into()),
    }
    Ok(())
}
