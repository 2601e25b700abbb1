//! The peers benchmark's guest work ([`bench_work::run`]) exported to Extism as `build_call`.

use extism_pdk::{FnResult, plugin_fn};

/// JSON params in, the built call as JSON out.
#[plugin_fn]
pub fn build_call(input: Vec<u8>) -> FnResult<Vec<u8>> {
    Ok(bench_work::run(&input).map_err(extism_pdk::Error::msg)?)
}
