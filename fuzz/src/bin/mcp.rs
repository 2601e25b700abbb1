//! libFuzzer harness for [`bardo_fuzz::mcp`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::mcp::run(data));
