//! A `tracing` layer that keeps every span it sees with the fields recorded on it, and every event's
//! fields: what a plain `tracing` subscriber (no OpenTelemetry) is given.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Registry;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// One span: its name and its fields as `(name, Debug of the value)`, in the order recorded.
#[derive(Debug, Clone, Default)]
pub struct SeenSpan {
    pub name: String,
    pub fields: Vec<(String, String)>,
}

impl SeenSpan {
    /// The Debug text of field `name` (a `&str` shows quoted, a `%` value bare).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.iter().rev().find(|(f, _)| f == name).map(|(_, v)| v.as_str())
    }

    /// The names of the fields that were given a value.
    pub fn field_names(&self) -> std::collections::BTreeSet<&str> {
        self.fields.iter().map(|(f, _)| f.as_str()).collect()
    }
}

#[derive(Default)]
struct Inner {
    spans: Vec<SeenSpan>,
    ids: HashMap<u64, usize>,
    events: Vec<Vec<(String, String)>>,
}

/// The recorder; clones share what was seen.
#[derive(Clone, Default)]
pub struct Spans(Arc<Mutex<Inner>>);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

impl<S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut span = SeenSpan { name: attrs.metadata().name().to_owned(), fields: Vec::new() };
        attrs.record(&mut Fields(&mut span.fields));
        let mut inner = self.0.lock().unwrap();
        let index = inner.spans.len();
        inner.spans.push(span);
        inner.ids.insert(id.into_u64(), index);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut inner = self.0.lock().unwrap();
        if let Some(&index) = inner.ids.get(&id.into_u64()) {
            values.record(&mut Fields(&mut inner.spans[index].fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().events.push(fields);
    }
}

impl Spans {
    /// A recorder installed as this thread's default subscriber until the guard is dropped.
    pub fn install() -> (Spans, tracing::subscriber::DefaultGuard) {
        let spans = Spans::default();
        let guard = tracing::subscriber::set_default(Registry::default().with(spans.clone()));
        (spans, guard)
    }

    /// Every span seen, in the order opened.
    pub fn all(&self) -> Vec<SeenSpan> {
        self.0.lock().unwrap().spans.clone()
    }

    /// The spans named `name`.
    pub fn named(&self, name: &str) -> Vec<SeenSpan> {
        self.all().into_iter().filter(|s| s.name == name).collect()
    }

    /// Every value recorded anywhere (span fields and event fields), for "never recorded" checks.
    pub fn every_value(&self) -> Vec<String> {
        let inner = self.0.lock().unwrap();
        let spans = inner.spans.iter().flat_map(|s| s.fields.iter().map(|(_, v)| v.clone()));
        let events = inner.events.iter().flat_map(|e| e.iter().map(|(_, v)| v.clone()));
        spans.chain(events).collect()
    }
}
