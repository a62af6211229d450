//! The weather catalog served over stdio, for the rmcp stdio test to spawn as a child process.

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // stdout carries protocol lines only; reports go to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(std::env::var("WEATHER_LOG").unwrap_or_else(|_| "warn".to_owned()))
        .init();
    let server = mcp_kernel_rmcp_tests::weather_server().map_err(|e| -> Box<dyn std::error::Error> { e })?;
    mcp_kernel::stdio::serve(server).await?;
    Ok(())
}
