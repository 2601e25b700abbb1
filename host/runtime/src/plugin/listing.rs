//! The listing cache: what a load read from a component — its surface and its manifest — kept
//! beside its compiled code under the component's digest, so a later load of the same bytes
//! lists its tools without mapping the component or running its code. The surface policy and
//! the manifest's validation still run on every load; only the reading is skipped.

use super::Surface;
use crate::engine::Engine;
use bardo_core::tool::Manifest;
use serde::{Deserialize, Serialize};

/// Bumped when what a load derives from a component changes: an older listing is not used.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Listing {
    format: u32,
    /// The host that wrote it: another build reads the component again.
    host: String,
    surface: Surface,
    manifest: Manifest,
}

fn host() -> String {
    format!("bardo-runtime {}", env!("CARGO_PKG_VERSION"))
}

/// The surface and manifest an earlier load read from the component of digest `sha256`.
pub(crate) fn read(engine: &Engine, sha256: &str) -> Option<(Surface, Manifest)> {
    let bytes = engine.read_listing(sha256)?;
    match serde_json::from_slice::<Listing>(&bytes) {
        Ok(l) if l.format == FORMAT && l.host == host() => Some((l.surface, l.manifest)),
        Ok(_) => None,
        Err(e) => {
            tracing::debug!(sha256, "ignoring an unusable plugin listing: {e}");
            None
        }
    }
}

/// Keep what this load read from the component of digest `sha256`.
pub(crate) fn write(engine: &Engine, sha256: &str, surface: &Surface, manifest: &Manifest) {
    let listing =
        Listing { format: FORMAT, host: host(), surface: surface.clone(), manifest: manifest.clone() };
    match serde_json::to_vec(&listing) {
        Ok(bytes) => engine.write_listing(sha256, &bytes),
        Err(e) => tracing::warn!(sha256, "cannot encode a plugin listing: {e}"),
    }
}
