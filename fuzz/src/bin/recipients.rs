//! libFuzzer harness for [`bardo_fuzz::recipients`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::recipients::run(data));
