//! libFuzzer harness for [`bardo_fuzz::component`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::component::run(data));
