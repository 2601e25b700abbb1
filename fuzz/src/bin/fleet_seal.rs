//! libFuzzer harness for [`bardo_fuzz::fleet_seal`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::fleet_seal::run(data));
