//! libFuzzer harness for [`bardo_fuzz::params`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::params::run(data));
