//! Paths of the guest test programs and the repo's plugins, built for wasm32-wasip2 by
//! `build.rs`. Integration tests and benchmarks load them from here.

include!(concat!(env!("OUT_DIR"), "/artifacts.rs"));

/// Read a guest component's bytes.
pub fn bytes(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read guest component {path}: {e}"))
}
