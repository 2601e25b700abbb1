//! libFuzzer harness for [`bardo_fuzz::permit_journal`] (`make fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bardo_fuzz::permit_journal::run(data));
