//! libFuzzer harness for [`bardo_fuzz::plan`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::plan::run(data));
