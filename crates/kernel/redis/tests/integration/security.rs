//! Credentials: a password from the environment overrides the URL's and works, and no password —
//! right or wrong — ever appears in an error, in `Debug`, or in what the crate logs.

use std::time::Duration;

use mcp_kernel_redis::{Redis, RedisConfig};
use mcp_kernel_router::notify::ChangeHub;
use mcp_kernel_router::tasks::TaskStore;
use mcp_kernel_test_support::redis::RedisServer;

use crate::support::{LIMITS, capture, task};

const PASSWORD: &str = "s3cr3t-Pa55word";
const WRONG: &str = "wr0ng-Pa55word";
const PASSWORD_VAR: &str = "MCP_KERNEL_REDIS_TEST_PASSWORD";
const URL_VAR: &str = "MCP_KERNEL_REDIS_TEST_URL";

fn short(config: RedisConfig) -> RedisConfig {
    config
        .response_timeout(Duration::from_millis(300))
        .connect_timeout(Duration::from_millis(500))
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(100))
        .lease(Duration::from_millis(600))
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_wrong_password_never_appears_in_an_error_a_debug_or_a_log_line() {
    let redis = RedisServer::start_with_password(PASSWORD).unwrap();
    // A current-thread runtime: the background tasks log on this thread, under this subscriber.
    let (captured, _guard) = capture(tracing::Level::TRACE);
    let url = format!("redis://user:{WRONG}@127.0.0.1:{}", redis.port());
    let mut shown = Vec::new();
    let config = short(RedisConfig::from_url(&url).unwrap());
    shown.push(format!("{config:?}"));
    let refused = Redis::connect(config.clone()).await.unwrap_err();
    shown.extend([refused.to_string(), format!("{refused:?}")]);
    let redis_value = Redis::start(config);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let read = redis_value.task_store().read("t").await.unwrap_err();
    shown.extend([read.to_string(), format!("{read:?}")]);
    let created = redis_value.task_store().create(task("t", None, None), LIMITS).await.unwrap_err();
    shown.extend([created.to_string(), format!("{redis_value:?}")]);
    let listen = redis_value.change_hub().try_subscribe().unwrap_err();
    shown.extend([listen.to_string(), format!("{listen:?}")]);
    for bad in [format!("redis://:{WRONG}@127.0.0.1:1/x"), format!("unix:///nowhere?pass={WRONG}&protocol=9")]
    {
        let error = RedisConfig::from_url(&bad).unwrap_err();
        shown.extend([error.to_string(), format!("{error:?}")]);
    }
    drop(redis_value);
    let logged = captured.text();
    assert!(logged.contains("Redis"), "the failures were logged: {logged}");
    for text in shown.iter().chain(std::iter::once(&logged)) {
        assert!(!text.contains(WRONG) && !text.contains(PASSWORD), "a password leaked: {text}");
    }
}

#[test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
fn a_password_from_the_environment_overrides_the_urls_and_is_never_shown() {
    let redis = RedisServer::start_with_password(PASSWORD).unwrap();
    // The variable is set for a child run of this test binary (setting it here would be `unsafe`).
    let url = format!("redis://:{WRONG}@127.0.0.1:{}", redis.port());
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "security::child_with_the_password_from_the_environment",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(PASSWORD_VAR, PASSWORD)
        .env(URL_VAR, &url)
        .output()
        .unwrap();
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran: {text}");
    assert!(text.contains("RedisConfig"), "the child showed its configuration: {text}");
    assert!(!text.contains(PASSWORD) && !text.contains(WRONG), "a password leaked: {text}");
}

/// Run by [`a_password_from_the_environment_overrides_the_urls_and_is_never_shown`] in a child
/// process with the variables set; does nothing otherwise.
#[test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
fn child_with_the_password_from_the_environment() {
    let Ok(url) = std::env::var(URL_VAR) else { return };
    tracing_subscriber::fmt().with_max_level(tracing::Level::TRACE).with_writer(std::io::stderr).init();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let config = short(RedisConfig::from_url(&url).unwrap().password_from_env(PASSWORD_VAR));
        println!("{config:?}");
        let redis = Redis::connect(config).await.expect("the environment's password works");
        let store = redis.task_store();
        let _running = store.watch_running("t");
        assert_eq!(store.create(task("t", None, None), LIMITS).await, Ok(Ok(())));
        assert!(store.read("t").await.unwrap().is_some());
        println!("{redis:?} {store:?}");
    });
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_rediss_url_to_a_server_without_tls_fails_as_unavailable_and_never_panics() {
    let redis = RedisServer::start().unwrap();
    let config = short(RedisConfig::from_url(&format!("rediss://127.0.0.1:{}", redis.port())).unwrap());
    assert!(config.is_tls());
    let refused = Redis::connect(config.clone()).await.unwrap_err();
    assert!(!refused.reason.contains("panicked"), "rustls found its crypto provider: {refused}");
    let started = Redis::start(config);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let read = started.task_store().read("t").await;
    assert!(matches!(read, Err(mcp_kernel_router::tasks::StoreError::Unavailable(_))), "{read:?}");
}

#[tokio::test]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn an_unreachable_or_tls_mismatched_redis_never_shows_a_percent_encoded_password() {
    let redis = RedisServer::start_with_password(PASSWORD).unwrap();
    let (captured, _guard) = capture(tracing::Level::TRACE);
    // "s3cr3t-Pa55word" spelled with escapes: what Redis is sent is the decoded one.
    let encoded = "s3cr3t%2DPa55word";
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut shown = Vec::new();
    for url in [
        format!("rediss://:{encoded}@127.0.0.1:{}", redis.port()),
        format!("redis://:{encoded}@127.0.0.1:{closed}"),
        format!("unix:///nonexistent/redis.sock?pass={encoded}"),
    ] {
        let config = short(RedisConfig::from_url(&url).unwrap());
        shown.push(format!("{config:?}"));
        let refused = Redis::connect(config.clone()).await.unwrap_err();
        shown.extend([refused.to_string(), format!("{refused:?}")]);
        let started = Redis::start(config);
        tokio::time::sleep(Duration::from_millis(150)).await;
        let read = started.task_store().read("t").await.unwrap_err();
        shown.extend([read.to_string(), format!("{read:?}"), format!("{started:?}")]);
    }
    // And the right one, spelled so, works.
    let config =
        short(RedisConfig::from_url(&format!("redis://:{encoded}@127.0.0.1:{}", redis.port())).unwrap());
    Redis::connect(config).await.expect("the decoded password is the one sent");
    let logged = captured.text();
    assert!(logged.contains("Redis"), "the failures were logged: {logged}");
    for text in shown.iter().chain(std::iter::once(&logged)) {
        assert!(!text.contains(PASSWORD) && !text.contains(encoded), "a password leaked: {text}");
    }
}
