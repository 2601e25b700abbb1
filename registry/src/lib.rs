//! bardo-registry: publish and pull plugin components as OCI artifacts, in the Wasm layout `wkg`
//! reads (config `application/vnd.wasm.config.v0+json` listing the component's imports and
//! exports, one `application/wasm` layer), signed with cosign's tag scheme.
//!
//! No wasmtime here: the host reads the config's imports and decides, before the layer is
//! downloaded, whether the component may be pulled at all.
#![deny(unsafe_code)]

mod client;
pub mod credentials;
mod error;
pub mod layout;
pub mod sign;

pub use client::{Artifact, Published, RegistryClient, Resolved, Transfer};
pub use credentials::Credential;
pub use error::RegistryError;
pub use layout::{Component, WasmConfig};
pub use oci_client::Reference;

/// Parse an image reference (`127.0.0.1:5000/bardo/uniswap:0.1.0`, `…@sha256:…`).
pub fn parse_reference(text: &str) -> Result<Reference, RegistryError> {
    text.parse::<Reference>().map_err(|e| RegistryError::Reference {
        reference: text.to_owned(),
        reason: format!(
            "{e}; write it as REGISTRY/REPOSITORY:VERSION, e.g. 127.0.0.1:5000/bardo/uniswap:0.1.0"
        ),
    })
}

/// `sha256:<hex>` of `bytes`, the form OCI digests take.
pub fn sha256_digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}
