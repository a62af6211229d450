//! The Redis a run shares between its servers: `redis-server` started on a free `127.0.0.1` port with a
//! directory of its own under `target/bench/` and no persistence, pinned with the servers, ready once it
//! answers `PING`, killed (and its directory removed) when dropped.
//!
//! The binary is `$MCP_KERNEL_REDIS_SERVER`, else `/usr/bin/redis-server` (Debian's `redis-server`).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::servers::Pinning;

/// The variable naming the `redis-server` binary.
pub(crate) const REDIS_SERVER_ENV: &str = "MCP_KERNEL_REDIS_SERVER";
/// The binary used when [`REDIS_SERVER_ENV`] is not set.
const DEFAULT_REDIS_SERVER: &str = "/usr/bin/redis-server";
/// How long a start waits for `PING` to be answered.
const READY_WITHIN: Duration = Duration::from_secs(10);
/// Free ports tried (another process may take one between its choice and the bind).
const START_ATTEMPTS: usize = 3;

/// The `redis-server` binary this run uses, if it exists.
pub(crate) fn redis_binary() -> Result<PathBuf, String> {
    let binary =
        std::env::var_os(REDIS_SERVER_ENV).map_or_else(|| PathBuf::from(DEFAULT_REDIS_SERVER), PathBuf::from);
    if binary.exists() {
        Ok(binary)
    } else {
        Err(format!(
            "no redis-server at {} (install Debian's redis-server, or set {REDIS_SERVER_ENV})",
            binary.display()
        ))
    }
}

/// One `redis-server`, killed when dropped.
pub(crate) struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl RedisServer {
    /// Starts `binary` on CPU 0 (when pinning) in a fresh directory under `parent`, ready.
    pub(crate) fn start(pinning: &Pinning, binary: &Path, parent: &Path) -> Result<RedisServer, String> {
        let mut last = String::new();
        for attempt in 0..START_ATTEMPTS {
            let dir = parent.join(format!("redis-{}-{attempt}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("no free port: {e}"))?
                .port();
            let log = std::fs::File::create(dir.join("redis.log")).map_err(|e| format!("redis.log: {e}"))?;
            let err = log.try_clone().map_err(|e| e.to_string())?;
            let args = [
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--dir",
                &dir.display().to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ]
            .map(str::to_owned);
            let argv = pinning.command(0, binary, &args.iter().map(String::as_str).collect::<Vec<_>>());
            let child = Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::null())
                .stdout(log)
                .stderr(err)
                .spawn()
                .map_err(|e| format!("{}: {e}", binary.display()))?;
            let mut server = RedisServer { child, port, dir };
            match server.wait_ready() {
                Ok(()) => return Ok(server),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// `redis://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// `127.0.0.1:PORT`.
    pub(crate) fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The process id (`taskset` execs the server, so the child's is the server's).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default();
                return Err(format!("redis-server exited at start ({status}): {}", log.trim()));
            }
            if ping(self.port) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!("redis-server did not answer PING within {READY_WITHIN:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether a Redis on `port` answers `PING` with `+PONG`.
fn ping(port: u16) -> bool {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut reply = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
}
