//! The weather host's connectome exports after a fixed set of calls, with a fixed window, so the files
//! are reproducible. Shared by the `connectome_export` example and the test that checks the committed
//! copies under `docs/connectome-example/`.

use futures_util::FutureExt;
use mcp_kernel::connectome::Which;

use crate::catalog;

/// The calls the export records: three readings, one refused place, one read of the declared graph
/// through the tool. (A read of a resource is not a dispatch and records nothing.)
const CALLS: &[&str] = &[
    r#""name":"get_weather","arguments":{"place":"Oslo"}"#,
    r#""name":"get_weather","arguments":{"place":"Lima"}"#,
    r#""name":"get_weather","arguments":{"place":"Oslo"}"#,
    r#""name":"get_weather","arguments":{"place":"Atlantis"}"#,
    r#""name":"connectome","arguments":{"graph":"declared"}"#,
];

/// The four exports, by file name: declared, observed, the observed sidecar and the diff.
pub fn exports() -> Result<Vec<(&'static str, Vec<u8>)>, catalog::HostError> {
    let host = catalog::weather_host_with_window(
        || serde_json::json!({"started_at": "2026-11-30T00:00:00Z", "ended_at": "2026-11-30T01:00:00Z"}),
    )?;
    for (id, call) in CALLS.iter().enumerate() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},{call}}}}}"#
        );
        let message = mcp_kernel::wire::read_message(line.as_bytes())?;
        host.server
            .handle(serde_json::Value::Object(message))
            .now_or_never()
            .ok_or("the host answers at once")?;
    }
    let surface = &host.surface;
    Ok(vec![
        ("weather.declared.json", surface.bytes(Which::Declared)?),
        ("weather.observed.json", surface.bytes(Which::Observed)?),
        ("weather.observed.sidecar.json", surface.sidecar_bytes()?),
        ("weather.diff.json", surface.bytes(Which::Diff)?),
    ])
}
