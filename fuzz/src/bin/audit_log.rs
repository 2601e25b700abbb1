//! libFuzzer harness for [`bardo_fuzz::audit_log`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::audit_log::run(data));
