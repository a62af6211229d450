//! Log capture: one global subscriber per test binary writing the package's events into a shared
//! buffer. Only the `mcp_kernel*` targets are recorded: the binary holds many test modules, and
//! formatting every hyper and h2 event of all of them would slow the whole run.

use std::sync::{Arc, Mutex, OnceLock};

static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();

/// A writer appending to the shared log buffer.
struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs (once per test binary) a global subscriber writing the package's events into a shared buffer.
pub fn capture_logs() {
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&buffer);
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_env_filter(tracing_subscriber::EnvFilter::new("mcp_kernel=trace"))
            .with_writer(move || LogWriter(Arc::clone(&writer)))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
        buffer
    });
}

/// Everything logged so far in this test binary.
pub fn logs() -> String {
    let buffer = LOGS.get().expect("capture_logs() was called");
    String::from_utf8_lossy(&buffer.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
}
