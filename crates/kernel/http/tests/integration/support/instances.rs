//! Several instances of one MCP server, each served by `mcp_kernel_http::serve` on its own
//! 127.0.0.1:0 listener: what a test of requests that cross instances starts (the trace tests; a
//! harness that puts a proxy in front of several instances starts the same).

use mcp_kernel_http::{AllowedHosts, AllowedOrigins, McpHttp, McpService};
use mcp_kernel_router::Server;
use std::num::NonZeroUsize;

use super::{ALLOWED_ORIGIN, ALLOWED_ORIGIN_2, Running, catalog, dispatch, get_prompt, read_resource, serve};

/// The name instance `index` advertises in `serverInfo`, which its spans record as `server`.
pub fn instance_name(index: usize) -> String {
    format!("instance-{index}")
}

/// Instance `index`'s service: the fixture catalog under [`instance_name`], the fixture's origins,
/// `hosts` as the allowed names (`AllowedHosts::default()`: the loopback names), every caller admitted.
pub fn instance_service(index: usize, hosts: AllowedHosts) -> McpService {
    let server = Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .page_size(NonZeroUsize::new(50).expect("non-zero"))
        .defer_header_annotation_faults(true)
        .server_name(instance_name(index))
        .build()
        .expect("the fixture catalog builds");
    McpHttp::builder(server)
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN, ALLOWED_ORIGIN_2]))
        .allowed_hosts(hosts)
        .authorize(|_| Ok(()))
        .build()
}

/// `count` instances, each on its own listener, stopped when dropped.
pub async fn start_instances(count: usize) -> Vec<Running> {
    let mut running = Vec::with_capacity(count);
    for index in 0..count {
        running.push(serve(instance_service(index, AllowedHosts::default())).await);
    }
    running
}
