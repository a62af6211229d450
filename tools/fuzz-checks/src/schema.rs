//! Target `schema`: compiling an arbitrary JSON value as a tool input schema, then validating an instance.
//!
//! Input: a JSON value (the schema, as the trusted host would give it: plain `serde_json`), optionally
//! followed by a second JSON value (the instance, read as a client's arguments are: through the bounded
//! reader). Without a readable instance, `{}` and the schema itself are used. Laws: compiling never
//! panics; a compiled schema validates any instance without panicking, with the same answer every time,
//! and a reason of at most `MAX_REASON_LEN` bytes; `validate` refuses non-objects; the deferring compiler
//! accepts whatever the strict one accepts, with the same header parameters.

use mcp_kernel_schema::{CompiledSchema, MAX_REASON_LEN, compile, compile_deferring_header_faults};
use mcp_kernel_wire::reader::read_value;
use serde_json::{Deserializer, Value, json};

/// Checks the schema compiler's laws on `data`; panics when one is broken.
pub fn schema(data: &[u8]) {
    let mut values = Deserializer::from_slice(data).into_iter::<Value>();
    let Some(Ok(schema)) = values.next() else { return };
    let rest = &data[values.byte_offset()..];

    let strict = compile(&schema);
    let deferring = compile_deferring_header_faults(&schema);
    if let Ok(strict) = &strict {
        let deferring = deferring.as_ref().expect("the deferring compiler accepts what compile accepts");
        assert_eq!(strict.header_params(), deferring.header_params());
        assert!(strict.header_fault().is_none(), "compile keeps no header fault");
        assert_eq!(strict.schema(), &schema, "the schema is advertised as given");
    }
    let mut instances = vec![json!({}), schema.clone()];
    if let Ok(instance) = read_value(rest) {
        instances.push(instance);
    }
    for compiled in [strict.ok(), deferring.ok()].into_iter().flatten() {
        for instance in &instances {
            validates_consistently(&compiled, instance);
        }
        for header in compiled.header_params() {
            assert!(header.header.starts_with("mcp-param-"), "a header parameter outside mcp-param-*");
            assert!(!header.path.is_empty(), "a header parameter without a property path");
        }
    }
}

fn validates_consistently(compiled: &CompiledSchema, instance: &Value) {
    let first = compiled.validate(instance);
    if let Err(violation) = &first {
        assert!(violation.reason().len() <= MAX_REASON_LEN, "a reason longer than MAX_REASON_LEN");
    }
    assert_eq!(first, compiled.validate(instance), "validation is not deterministic");
    if !instance.is_object() {
        assert!(first.is_err(), "validate accepted arguments that are not an object");
    } else {
        assert_eq!(
            first.is_ok(),
            compiled.validate_value(instance).is_ok(),
            "validate disagrees with validate_value"
        );
        if let Value::Object(arguments) = instance {
            let declared = compiled.select_declared(arguments).count();
            assert!(declared <= compiled.declared_keys().len());
        }
    }
    if let Err(violation) = compiled.validate_value(instance) {
        assert!(violation.reason().len() <= MAX_REASON_LEN, "a reason longer than MAX_REASON_LEN");
    }
}
