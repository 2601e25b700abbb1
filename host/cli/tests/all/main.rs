//! Integration tests of the host against real guest components (built by tests/artifacts).

mod a2a;
mod aave;
mod adapter;
mod attacks;
mod audit;
mod catalog;
mod chain;
mod cli;
mod cluster;
mod cross_check;
mod devnet;
mod hostile;
mod inline;
mod intelligence;
mod loading;
mod mcp;
mod plugin_env;
mod registry;
mod routes;
mod safety;
mod scaffold;
mod schema_versions;
mod secrets;
mod sidecar;
mod simulate;
mod speculation;
mod streaming;
mod testnet;
mod tui;
mod uniswap;
mod uniswap_v4;
mod v4_liquidity;
mod valuation;
mod vault;
mod wallet;
mod write_path;

use bardo_core::Runtime;
use bardo_core::profile::Profile;
use bardo_host::Services;
use bardo_host::engine::{Engine, Limits};
use bardo_host::plugin::{Host, WasiPolicy};
use std::sync::{Arc, OnceLock};

/// One engine for the whole binary, with a shared compiled-artifact cache, so each component
/// is compiled once per test run.
pub fn engine() -> Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bardo-cache");
            Engine::new(Some(cache)).expect("engine")
        })
        .clone()
}

/// One async runtime for the whole binary, as a host process has one.
pub fn host_runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::new().expect("runtime"))
}

/// Services with no chains, wallet or settings (hosts that need none share them).
pub fn no_services() -> Arc<Services> {
    static SERVICES: OnceLock<Arc<Services>> = OnceLock::new();
    SERVICES.get_or_init(|| Arc::new(Services::empty(host_runtime()))).clone()
}

/// A host with `profile` and `limits`, and the given guest components loaded.
pub fn host_with(profile: &str, limits: Limits, guests: &[&str]) -> Host {
    let mut host = Host::new(
        engine(),
        no_services(),
        Profile::parse(profile).expect("profile"),
        limits,
        WasiPolicy::default(),
    )
    .expect("host");
    for g in guests {
        host.load_file(std::path::Path::new(g)).unwrap_or_else(|e| panic!("loading {g}: {e}"));
    }
    host
}

/// A `dev`-profile host with default limits.
pub fn host(guests: &[&str]) -> Host {
    host_with("dev", Limits::default(), guests)
}
