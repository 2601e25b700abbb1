//! libFuzzer harness for [`bardo_fuzz::calldata`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::calldata::run(data));
