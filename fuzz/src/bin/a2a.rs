//! libFuzzer harness for [`bardo_fuzz::a2a`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::a2a::run(data));
