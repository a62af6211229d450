//! Deserializing validated arguments into a handler's type, with errors that name the argument and
//! never quote what the caller sent.
//!
//! The arguments were validated against the advertised schema first, so a failure here means the
//! schema admits what the handler's type refuses (a hand-written schema looser than the struct, or a
//! derive attribute that changes one side only). It is answered as the tool's error, naming the
//! top-level argument (always a key the host's schema declares), or serde's "missing field" (a name
//! from the host's type); serde's other messages can quote the caller's value and are not passed on.

use crate::request::arguments::Arguments;
use serde::de::DeserializeOwned;
use serde::de::value::MapDeserializer;

/// Reads `arguments` as `T` for `reader` ("tool", "prompt"); the error is a sentence fit for the caller.
pub(crate) fn arguments_as<T: DeserializeOwned>(arguments: &Arguments, reader: &str) -> Result<T, String> {
    let entries = arguments.iter().map(|(key, value)| (key.as_ref(), value));
    let deserializer = MapDeserializer::<_, serde_json::Error>::new(entries);
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let top = error.path().iter().next().map(|segment| match segment {
            serde_path_to_error::Segment::Map { key } => key.clone(),
            other => other.to_string(),
        });
        match top {
            Some(key) if arguments.get(&key).is_some() => {
                format!("argument {key} does not have the form the {reader} reads")
            }
            _ => missing_field(&error.into_inner().to_string())
                .map(|field| format!("argument {field} is required by the {reader}"))
                .unwrap_or_else(|| format!("the arguments do not have the form the {reader} reads")),
        }
    })
}

/// The field of serde's "missing field `x`" message (the host's own field name).
fn missing_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Search {
        query: String,
        limit: Option<u8>,
    }

    fn args(value: Value) -> Arguments {
        Arguments::from_map(value.as_object().cloned().unwrap())
    }

    #[test]
    fn a_type_mismatch_names_the_argument_and_never_the_value() {
        let error = arguments_as::<Search>(&args(json!({"query": "q", "limit": "secret-value"})), "tool")
            .unwrap_err();
        assert_eq!(error, "argument limit does not have the form the tool reads");
    }

    #[test]
    fn a_missing_field_names_the_host_field() {
        let error = arguments_as::<Search>(&args(json!({"limit": 3})), "tool").unwrap_err();
        assert_eq!(error, "argument query is required by the tool");
    }

    #[test]
    fn well_formed_arguments_deserialize() {
        let search = arguments_as::<Search>(&args(json!({"query": "q", "limit": 3})), "tool").unwrap();
        assert_eq!((search.query.as_str(), search.limit), ("q", Some(3)));
    }
}
