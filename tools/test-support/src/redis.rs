//! A real `redis-server` per test: started on a free `127.0.0.1` port with a temporary directory and no
//! persistence, ready once it answers `PING`, and killed when dropped. A test can also stop it, pause it
//! (`SIGSTOP`, a Redis that hangs), resume it, and restart it empty on the same port.
//!
//! The binary is `$MCP_KERNEL_REDIS_SERVER`, else `/usr/bin/redis-server` (Debian's `redis-server`
//! package). Nothing else is started: no system service, no port other than the one chosen here.
//!
//! ```no_run
//! let redis = mcp_kernel_test_support::redis::RedisServer::start().unwrap();
//! let url = redis.url(); // redis://127.0.0.1:<port>
//! # drop(url);
//! ```

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

/// The environment variable naming the `redis-server` binary.
pub const REDIS_SERVER_ENV: &str = "MCP_KERNEL_REDIS_SERVER";

/// The binary used when [`REDIS_SERVER_ENV`] is not set.
pub const DEFAULT_REDIS_SERVER: &str = "/usr/bin/redis-server";

/// How long a start waits for the server to answer `PING`.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// How many free ports a start tries (another process may take a port between its choice and the bind).
const START_ATTEMPTS: usize = 3;

/// What a [`RedisServer`] is started with, beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct RedisOptions {
    /// `--requirepass`: clients must authenticate with this password.
    pub password: Option<String>,
    /// Also listen on a unix socket in the server's directory ([`RedisServer::socket_path`]).
    pub unix_socket: bool,
    /// More arguments, appended as given (`["--maxmemory", "10mb"]`).
    pub args: Vec<String>,
}

impl RedisOptions {
    /// Options requiring `password`.
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(password.into());
        self
    }

    /// Options adding a unix socket.
    pub fn unix_socket(mut self) -> Self {
        self.unix_socket = true;
        self
    }

    /// Options with one more argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }
}

/// One `redis-server` process, killed on drop.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    options: RedisOptions,
    binary: PathBuf,
    /// How many times the process was started (its log file is numbered by it).
    starts: usize,
}

impl RedisServer {
    /// A server with the default options, ready.
    pub fn start() -> io::Result<Self> {
        Self::start_with(RedisOptions::default())
    }

    /// A server requiring `password`, ready.
    pub fn start_with_password(password: &str) -> io::Result<Self> {
        Self::start_with(RedisOptions::default().password(password))
    }

    /// A server started with `options`, ready.
    pub fn start_with(options: RedisOptions) -> io::Result<Self> {
        let binary = std::env::var_os(REDIS_SERVER_ENV)
            .map_or_else(|| PathBuf::from(DEFAULT_REDIS_SERVER), PathBuf::from);
        if !binary.exists() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "no redis-server at {} (install Debian's redis-server, or set {REDIS_SERVER_ENV})",
                    binary.display()
                ),
            ));
        }
        let mut last = None;
        for _ in 0..START_ATTEMPTS {
            let dir = tempfile::Builder::new().prefix("mcp-kernel-redis-").tempdir()?;
            let port = free_port()?;
            let mut server =
                Self { child: None, port, dir, options: options.clone(), binary: binary.clone(), starts: 0 };
            match server.spawn() {
                Ok(()) => return Ok(server),
                Err(error) => last = Some(error),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("redis-server did not start")))
    }

    /// The port it listens on (the same across restarts).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>`, without credentials.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The unix socket, when started with [`RedisOptions::unix_socket`].
    pub fn socket_path(&self) -> Option<PathBuf> {
        self.options.unix_socket.then(|| self.dir.path().join("redis.sock"))
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The server's directory (its log files are there).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Everything the server logged so far, every start included.
    pub fn log(&self) -> String {
        (1..=self.starts)
            .filter_map(|n| std::fs::read_to_string(self.dir.path().join(format!("redis-{n}.log"))).ok())
            .collect::<Vec<_>>()
            .join("")
    }

    /// Kills the server (`SIGKILL`: every connection drops at once, as when its host dies).
    pub fn stop(&mut self) {
        self.kill();
    }

    /// Pauses the server (`SIGSTOP`): connections stay open and nothing is answered.
    pub fn pause(&self) -> io::Result<()> {
        self.signal(Signal::STOP)
    }

    /// Resumes a paused server (`SIGCONT`).
    pub fn resume(&self) -> io::Result<()> {
        self.signal(Signal::CONT)
    }

    /// Stops the server if it runs, and starts a new, empty one on the same port; ready when it returns.
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        // The port was ours a moment ago: another bind may still hold it briefly; try for a while.
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            match self.spawn() {
                Ok(()) => return Ok(()),
                Err(error) if Instant::now() >= deadline => return Err(error),
                Err(_) => {
                    self.kill();
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }

    fn signal(&self, signal: Signal) -> io::Result<()> {
        let pid = self.pid().ok_or_else(|| io::Error::other("the redis-server is not running"))?;
        let pid =
            i32::try_from(pid).ok().and_then(Pid::from_raw).ok_or_else(|| io::Error::other("bad pid"))?;
        kill_process(pid, signal).map_err(io::Error::from)
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn spawn(&mut self) -> io::Result<()> {
        self.starts += 1;
        let log = std::fs::File::create(self.dir.path().join(format!("redis-{}.log", self.starts)))?;
        let mut command = Command::new(&self.binary);
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--dir"])
            .arg(self.dir.path())
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        if let Some(password) = &self.options.password {
            command.args(["--requirepass", password]);
        }
        if let Some(socket) = self.socket_path() {
            command.arg("--unixsocket").arg(socket).args(["--unixsocketperm", "700"]);
        }
        command.args(&self.options.args);
        self.child = Some(command.spawn()?);
        self.wait_ready()
    }

    /// Waits until the server answers `PING` (`+PONG`, or `-NOAUTH` when it requires a password).
    fn wait_ready(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                return Err(io::Error::other(format!(
                    "redis-server exited at start ({status}): {}",
                    self.log()
                )));
            }
            if ping(self.port).unwrap_or(false) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("redis-server did not answer PING within {READY_WITHIN:?}"),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port free on `127.0.0.1` a moment ago.
fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port())
}

/// Whether a Redis on `port` answers a `PING`.
fn ping(port: u16) -> io::Result<bool> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_millis(200))?;
    stream.set_read_timeout(Some(Duration::from_millis(500)))?;
    stream.write_all(b"PING\r\n")?;
    let mut reply = [0u8; 16];
    let read = stream.read(&mut reply)?;
    let reply = &reply[..read];
    Ok(reply.starts_with(b"+PONG") || reply.starts_with(b"-NOAUTH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "needs redis-server (cargo xtask edge redis)"]
    fn a_server_answers_until_stopped_and_again_after_a_restart_on_the_same_port() {
        let mut redis = RedisServer::start().unwrap();
        let port = redis.port();
        assert!(ping(port).unwrap());
        redis.stop();
        assert!(ping(port).is_err(), "a stopped server refuses connections");
        redis.restart().unwrap();
        assert_eq!(redis.port(), port);
        assert!(ping(port).unwrap());
    }

    #[test]
    #[ignore = "needs redis-server (cargo xtask edge redis)"]
    fn a_paused_server_answers_nothing_until_resumed() {
        let redis = RedisServer::start().unwrap();
        redis.pause().unwrap();
        assert!(ping(redis.port()).is_err(), "a paused server times out");
        redis.resume().unwrap();
        assert!(ping(redis.port()).unwrap());
    }

    #[test]
    #[ignore = "needs redis-server (cargo xtask edge redis)"]
    fn a_server_with_a_password_and_a_socket_starts() {
        let redis =
            RedisServer::start_with(RedisOptions::default().password("s3cret").unix_socket()).unwrap();
        assert!(redis.socket_path().unwrap().exists());
        let pid = redis.pid().unwrap();
        drop(redis);
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "killed and reaped on drop");
    }
}
