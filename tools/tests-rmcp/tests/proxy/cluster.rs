//! The proxy tests' cluster: three `cluster-host` instances and an nginx in front of them, each a
//! child process bound to 127.0.0.1, each stopped when dropped. `tests/proxy.rs` runs it stateless;
//! `tests/shared_state.rs` gives every instance an environment of its own (`Cluster::start_with`:
//! the Redis they share) and also kills one (`Instance::kill`).
//!
//! nginx runs with the configuration `docs/deploy.md` shows (`nginx.conf` beside this file, its
//! `@…@` placeholders filled with the addresses), under a prefix of its own in the system's temporary
//! directory: its pid file, logs and temporary files stay there, and the directory is removed when the
//! proxy is dropped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The nginx configuration the tests run, exactly as `docs/deploy.md` shows it.
pub const NGINX_CONF: &str = include_str!("nginx.conf");

/// Where nginx is looked for when `MCP_KERNEL_NGINX` is not set (Debian's package puts it there).
const DEFAULT_NGINX: &str = "/usr/sbin/nginx";

/// The longest an instance may take to drain and exit once asked (its grace period is 30 s).
const EXIT_DEADLINE: Duration = Duration::from_secs(40);

/// The longest a process may take to start serving.
const START_DEADLINE: Duration = Duration::from_secs(15);

/// A request-state key: 32 bytes of `byte`, in hex.
pub fn key(byte: u8) -> String {
    format!("{byte:02x}").repeat(32)
}

/// Lines a child wrote on stderr, shared with the task reading them.
#[derive(Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<String>>>);

impl Lines {
    fn push(&self, line: String) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(line);
    }

    /// Every line so far.
    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// Sends `signal` (a name `kill -s` knows: `TERM`, `QUIT`) to process `pid`, with the shell's own
/// `kill`, so the tests need no signal crate.
pub fn signal(pid: u32, signal: &str) -> std::io::Result<ExitStatus> {
    std::process::Command::new("sh")
        .args(["-c", r#"kill -s "$0" "$1""#, signal, &pid.to_string()])
        .stdin(Stdio::null())
        .status()
}

/// One `cluster-host` process.
pub struct Instance {
    /// Its name, in every answer it gives.
    pub name: String,
    /// Where it listens (the same address across restarts).
    pub addr: SocketAddr,
    /// `CLUSTER_STATE_KEYS` and whatever else it is started with, across restarts.
    env: Vec<(String, String)>,
    child: Option<Child>,
    /// What it wrote on stderr, across restarts.
    pub stderr: Lines,
    /// What it wrote on stdout, across restarts.
    pub stdout: Lines,
}

impl Instance {
    /// Starts `name` on an ephemeral port of 127.0.0.1, with `keys` (`CLUSTER_STATE_KEYS`).
    pub async fn start(name: &str, keys: &str) -> Self {
        Self::start_with(name, keys, &[]).await
    }

    /// The same, with `env` set too.
    pub async fn start_with(name: &str, keys: &str, env: &[(String, String)]) -> Self {
        let mut env = env.to_vec();
        env.push(("CLUSTER_STATE_KEYS".to_owned(), keys.to_owned()));
        let (stderr, stdout) = (Lines::default(), Lines::default());
        let spawned = spawn(name, "127.0.0.1:0", &env, &stderr, &stdout).await;
        let (child, addr) =
            spawned.unwrap_or_else(|| panic!("instance {name} did not start: {:?}", stderr.all()));
        Self { name: name.to_owned(), addr, env, child: Some(child), stderr, stdout }
    }

    /// Kills it (SIGKILL: no drain, as when its machine dies) and reaps it.
    pub async fn kill(&mut self) {
        let mut child = self.child.take().expect("the instance is running");
        child.kill().await.expect("SIGKILL the instance");
    }

    /// Its health document, or `None` when it does not answer.
    pub async fn health(&self) -> Option<Value> {
        let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(2)).build().ok()?;
        let response = client.get(format!("http://{}/healthz", self.addr)).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        response.json().await.ok()
    }

    /// Waits (bounded) until its health document satisfies `ready`.
    pub async fn wait_health(&self, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            if let Some(health) = self.health().await.filter(|h| ready(h)) {
                return health;
            }
            assert!(
                started.elapsed() < START_DEADLINE,
                "instance {}: {what}: not within {START_DEADLINE:?}",
                self.name
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends SIGTERM and waits (bounded) for it to drain and exit.
    pub async fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("the instance is running");
        let pid = child.id().expect("a running child has a pid");
        signal(pid, "TERM").expect("kill -s TERM");
        match tokio::time::timeout(EXIT_DEADLINE, child.wait()).await {
            Ok(status) => status.expect("wait for the instance"),
            Err(_) => panic!("instance {} did not exit within {EXIT_DEADLINE:?} of SIGTERM", self.name),
        }
    }

    /// Starts it again on the same address, with the same keys and environment.
    /// Three tries, 100 ms apart: another process may hold the port for a moment.
    pub async fn restart(&mut self) {
        assert!(self.child.is_none(), "instance {} is still running", self.name);
        for _ in 0..3 {
            if let Some((child, addr)) =
                spawn(&self.name, &self.addr.to_string(), &self.env, &self.stderr, &self.stdout).await
            {
                assert_eq!(addr, self.addr, "instance {} came back on its own address", self.name);
                self.child = Some(child);
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("instance {} did not start again on {}: {:?}", self.name, self.addr, self.stderr.all());
    }
}

/// Spawns `cluster-host <addr> <name>` with `env` and waits (bounded) for its `listening` line;
/// `None` when it exits without one (it could not bind, say).
async fn spawn(
    name: &str,
    addr: &str,
    env: &[(String, String)],
    stderr: &Lines,
    stdout: &Lines,
) -> Option<(Child, SocketAddr)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cluster-host"))
        .args([addr, name])
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn cluster-host");
    let mut err = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let (lines, prefix) = (stderr.clone(), name.to_owned());
    tokio::spawn(async move {
        while let Ok(Some(line)) = err.next_line().await {
            eprintln!("[{prefix}] {line}");
            lines.push(line);
        }
    });
    let mut out = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let first = tokio::time::timeout(START_DEADLINE, out.next_line()).await;
    let line = match first {
        Ok(Ok(Some(line))) => line,
        Ok(_) => return None,
        Err(_) => panic!("instance {name} did not report its address within {START_DEADLINE:?}"),
    };
    stdout.push(line.clone());
    let lines = stdout.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = out.next_line().await {
            lines.push(line);
        }
    });
    let bound = line.strip_prefix("listening http://").and_then(|a| a.parse().ok());
    let bound = bound.unwrap_or_else(|| panic!("instance {name} printed {line:?}"));
    Some((child, bound))
}

/// The nginx program: `MCP_KERNEL_NGINX`, else Debian's `/usr/sbin/nginx`.
pub fn nginx_program() -> PathBuf {
    let path =
        std::env::var_os("MCP_KERNEL_NGINX").map_or_else(|| PathBuf::from(DEFAULT_NGINX), PathBuf::from);
    assert!(
        path.is_file(),
        "nginx not found at {} (apt-get install nginx, or set MCP_KERNEL_NGINX; `cargo xtask edge proxy` checks this)",
        path.display()
    );
    path
}

/// The configuration with its placeholders filled: nginx on `listen`, the instances at `upstreams`.
pub fn render(listen: SocketAddr, upstreams: [SocketAddr; 3]) -> String {
    let mut conf = NGINX_CONF.replace("@LISTEN@", &listen.to_string());
    for (index, upstream) in upstreams.iter().enumerate() {
        conf = conf.replace(&format!("@INSTANCE_{}@", index + 1), &upstream.to_string());
    }
    let placeholder = conf.split('@').skip(1).step_by(2).find(|name| {
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    });
    assert_eq!(placeholder, None, "every placeholder is filled:\n{conf}");
    conf
}

/// A running nginx, stopped (and its directory removed) when dropped.
pub struct Nginx {
    dir: PathBuf,
    child: std::process::Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

/// Makes each proxy's directory name unique within the test process.
static PROXIES: AtomicUsize = AtomicUsize::new(0);

impl Nginx {
    /// Starts nginx in front of `upstreams` on a free port of 127.0.0.1 and waits (bounded) until
    /// it accepts connections; three tries, should another process take the port first.
    pub async fn start(upstreams: [SocketAddr; 3]) -> Self {
        for _ in 0..3 {
            if let Some(nginx) = Self::try_start(upstreams).await {
                return nginx;
            }
        }
        panic!("nginx could not bind a free port in three tries");
    }

    /// One try: `None` when nginx found its port taken.
    async fn try_start(upstreams: [SocketAddr; 3]) -> Option<Self> {
        let program = nginx_program();
        // A free port: bound, read and released (nginx binds it a moment later).
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port on 127.0.0.1");
        let conf = render(addr, upstreams);
        let serial = PROXIES.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("mcp-kernel-proxy-{}-{serial}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["logs", "temp"] {
            std::fs::create_dir_all(dir.join(sub)).expect("create the proxy's directories");
        }
        std::fs::write(dir.join("nginx.conf"), conf).expect("write nginx.conf");
        let stderr = std::fs::File::create(dir.join("stderr")).expect("create the stderr file");
        let child = std::process::Command::new(program)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("spawn nginx");
        let mut nginx = Self { dir, child, addr };
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = nginx.child.try_wait() {
                let errors = nginx.errors();
                assert!(
                    errors.contains("Address already in use"),
                    "nginx exited ({status}) at start:\n{errors}"
                );
                return None;
            }
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                return Some(nginx);
            }
            assert!(
                started.elapsed() < START_DEADLINE,
                "nginx did not listen within {START_DEADLINE:?}:\n{}",
                nginx.errors()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The MCP endpoint through the proxy.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The access log's lines so far (`log_format mcp`).
    pub fn access_log(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.join("logs/access.log")).unwrap_or_default();
        text.lines().map(str::to_owned).collect()
    }

    /// nginx's error log and stderr, for a failure message.
    pub fn errors(&self) -> String {
        let read = |name: &str| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        format!("{}{}", read("stderr"), read("logs/error.log"))
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers and exits; SIGKILL only if it has not within 5 s.
        let _ = signal(self.child.id(), "TERM");
        let started = Instant::now();
        while matches!(self.child.try_wait(), Ok(None)) && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Three instances, `a`, `b` and `c`, with the keys given, behind one nginx.
pub struct Cluster {
    /// `a`, `b`, `c`, in the upstream's order.
    pub instances: Vec<Instance>,
    /// The proxy.
    pub nginx: Nginx,
}

impl Cluster {
    /// Starts the instances, waits until each is healthy, then starts the proxy in front of them.
    pub async fn start(keys: [&str; 3]) -> Self {
        Self::start_with(keys, [&[], &[], &[]]).await
    }

    /// The same, each instance with its environment in `env` too.
    pub async fn start_with(keys: [&str; 3], env: [&[(String, String)]; 3]) -> Self {
        let mut instances = Vec::new();
        for ((name, keys), env) in ["a", "b", "c"].into_iter().zip(keys).zip(env) {
            instances.push(Instance::start_with(name, keys, env).await);
        }
        for instance in &instances {
            instance.wait_health("healthy at start", |_| true).await;
        }
        let nginx = Nginx::start([instances[0].addr, instances[1].addr, instances[2].addr]).await;
        Self { instances, nginx }
    }

    /// The MCP endpoint through the proxy.
    pub fn url(&self) -> String {
        self.nginx.url()
    }

    /// Waits (bounded) until the instances' health documents, in order, satisfy `ready`, and returns
    /// them. For what the proxy decides: which instance receives a given request depends on the order
    /// in which every client's requests reach nginx's one round-robin turn, not on the test.
    pub async fn wait_all_health(&self, what: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let mut documents = Vec::new();
            for instance in &self.instances {
                documents.push(instance.health().await.unwrap_or(Value::Null));
            }
            if ready(&documents) {
                return documents;
            }
            assert!(
                started.elapsed() < START_DEADLINE,
                "the instances: {what}: not within {START_DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
