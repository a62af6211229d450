//! The router's integration tests, one module a file, in one test binary: one link instead of one a file
//! (about 38 MB of target/ each). `cargo test -p mcp-kernel-router --test integration <module>::` runs one file.
//! The modules behind `fuzzing` use internals that feature exposes (the workspace build turns it on).
//! Apart: `dispatch_span` and `trace_context` (they record through scoped subscribers) and
//! `trace_opentelemetry` (feature `opentelemetry`).

mod support;

mod argument_interning;
mod bridge;
mod bridge_forms;
mod build_errors;
mod caller;
mod catalog_export;
mod completion;
#[cfg(feature = "fuzzing")]
mod cursor_properties;
mod derived_schemas;
mod dispatch_observer;
mod dispatch_order;
mod dispatch_recorder;
mod echo_bound;
mod host_identity;
#[cfg(feature = "fuzzing")]
mod hostile_input;
mod input_required;
mod live_server;
mod log_notifications;
mod no_catalog;
mod notifications;
#[cfg(feature = "fuzzing")]
mod official_schema;
mod output_schema;
mod progress;
mod request_futures;
mod resource_source;
mod resources_prompts;
mod stored_sessions;
mod tasks;
mod tasks_drain;
mod tasks_hostile;
mod tasks_outage;
mod tasks_races;
mod tasks_unreachable;
#[cfg(feature = "fuzzing")]
mod template_index;
mod template_variables;
mod test_client;
mod tool_metadata;
mod tools_call;
mod transport_support;
mod typed_prompts;
mod typed_retry_input;
mod typed_tools;
mod visibility;
