//! `[sidecar]` in bardo.toml: where the sidecar lives, whether the write path cross-checks Uniswap
//! plans with it, and which plugins may route through it.

use bardo_core::config::Section;
use serde::Deserialize;
use std::path::PathBuf;

/// `[sidecar]`: Uniswap's own SDKs in a Node process (`sidecar/`, installed by `make setup`),
/// for the write path's cross-check of every Uniswap swap a plan simulates.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SidecarSettings {
    /// The `sidecar/` directory, relative to this file; none: no sidecar.
    pub dir: Option<PathBuf>,
    /// Run the cross-check (default true when `dir` is set).
    pub cross_check: bool,
    /// The directory its socket lives in (default `.bardo`).
    pub state_dir: PathBuf,
    /// The plugins granted `bardo:host/uniswap-sdk` (routes by the SDKs), by name.
    pub grant: Vec<String>,
}

impl Default for SidecarSettings {
    fn default() -> Self {
        Self { dir: None, cross_check: true, state_dir: PathBuf::from(".bardo"), grant: Vec::new() }
    }
}

impl Section for SidecarSettings {
    const NAME: &'static str = "sidecar";
}
