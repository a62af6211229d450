//! Fuzz target `reader`: the check lives in `mcp_kernel_fuzz_checks::reader` (see docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_kernel_fuzz_checks::reader(data));
