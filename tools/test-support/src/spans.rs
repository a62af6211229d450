//! The OpenTelemetry SDK exporting into memory: what a test installs to read the spans a server exports
//! through a `tracing-opentelemetry` layer (their trace and parent ids, kinds, links and attributes).
//!
//! The layer is the installing thread's default subscriber while the [`Exported`] value lives: a test
//! whose servers run on its own thread (`#[tokio::test]`, current-thread) sees every span they open.

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt;

/// How often [`Exported::spans_when`] looks again for spans that have not ended yet.
const POLL: Duration = Duration::from_millis(20);

/// An SDK exporting into memory, behind a `tracing-opentelemetry` layer that is this thread's default
/// subscriber while the value lives.
pub struct Exported {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Exported {
    /// Installs the exporter, its tracer named `tracer` (the instrumentation scope of every span).
    pub fn install(tracer: &'static str) -> Exported {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer(tracer));
        let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
        Exported { exporter, provider, _guard: guard }
    }

    /// The finished spans named `name`, as they are now.
    pub fn spans(&self, name: &str) -> Vec<SpanData> {
        self.provider.force_flush().expect("flushed");
        let all = self.exporter.get_finished_spans().expect("the exported spans");
        all.into_iter().filter(|s| s.name == name).collect()
    }

    /// The finished spans named `name`, once there are `count` of them, looking again every 20 ms for
    /// `tries` times (a bounded wait: a span ends when its request's future is dropped, which may follow
    /// the answer); panics when there are still fewer.
    pub async fn spans_when(&self, name: &str, count: usize, tries: u32) -> Vec<SpanData> {
        for _ in 0..tries {
            let named = self.spans(name);
            if named.len() >= count {
                return named;
            }
            tokio::time::sleep(POLL).await;
        }
        panic!("fewer than {count} spans named {name}");
    }
}

/// The value of attribute `key` of `span`, as text.
pub fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
}
