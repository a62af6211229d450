//! Test support for the rmcp interoperability tests: the `weather` example's own catalog (compiled from
//! its source file), built as a `Server` that both the `weather-stdio` binary and the in-process HTTP
//! test serve.
#![forbid(unsafe_code)]

#[path = "../../../crates/kernel/facade/examples/weather/catalog.rs"]
mod catalog;

pub use catalog::{WeatherHost, weather_host, weather_server};
