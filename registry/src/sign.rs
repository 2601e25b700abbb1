//! Signatures: ECDSA P-256 over cosign's "simple signing" payload, which names the manifest digest.
//! The signature is stored as its own small artifact under the tag `sha256-<hex>.sig` (cosign's
//! tag scheme; the test registry has no referrers API), so `cosign verify --key` can read it too.

use crate::RegistryError;
use base64::Engine as _;
use p256::ecdsa::signature::{Signer as _, Verifier as _};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The signature layer's media type (cosign).
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation carrying the base64 DER signature (cosign).
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";

/// The tag a manifest's signature lives under: `sha256-<hex>.sig`.
pub fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", manifest_digest.replace(':', "-"))
}

/// cosign's simple signing payload.
#[derive(Debug, Serialize, Deserialize)]
pub struct Payload {
    /// The signed claims.
    pub critical: Critical,
    /// Free-form annotations (none written here).
    #[serde(default)]
    pub optional: Option<serde_json::Value>,
}

/// The payload's `critical` section: what the signature vouches for.
#[derive(Debug, Serialize, Deserialize)]
pub struct Critical {
    /// The repository signed for.
    pub identity: Identity,
    /// The manifest signed.
    pub image: Image,
    /// `cosign container image signature`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// The repository a signature is for.
#[derive(Debug, Serialize, Deserialize)]
pub struct Identity {
    /// `registry/repository`, without tag or digest.
    #[serde(rename = "docker-reference")]
    pub docker_reference: String,
}

/// The manifest a signature is for.
#[derive(Debug, Serialize, Deserialize)]
pub struct Image {
    /// The manifest digest, `sha256:<hex>`.
    #[serde(rename = "docker-manifest-digest")]
    pub docker_manifest_digest: String,
}

/// The payload signing `digest` of `repository` (`registry/repo`).
pub fn payload(repository: &str, digest: &str) -> Vec<u8> {
    let p = Payload {
        critical: Critical {
            identity: Identity { docker_reference: repository.to_owned() },
            image: Image { docker_manifest_digest: digest.to_owned() },
            kind: "cosign container image signature".into(),
        },
        optional: None,
    };
    serde_json::to_vec(&p).unwrap_or_default()
}

/// Sign a payload: base64 of the DER signature.
pub fn sign(key: &SigningKey, payload: &[u8]) -> String {
    let sig: Signature = key.sign(payload);
    base64::engine::general_purpose::STANDARD.encode(sig.to_der())
}

/// Whether `signature_b64` is `key`'s signature of `payload`.
pub fn verify(key: &VerifyingKey, payload: &[u8], signature_b64: &str) -> bool {
    let Ok(der) = base64::engine::general_purpose::STANDARD.decode(signature_b64.trim()) else {
        return false;
    };
    Signature::from_der(&der).is_ok_and(|sig| key.verify(payload, &sig).is_ok())
}

/// A new key pair as PEM: (PKCS#8 private key, SPKI public key).
pub fn generate() -> Result<(String, String), RegistryError> {
    let key = SigningKey::random(&mut rand_core::OsRng);
    let bad = |reason: String| RegistryError::Key { path: "<new>".into(), reason };
    let private = key.to_pkcs8_pem(LineEnding::LF).map_err(|e| bad(e.to_string()))?;
    let public = key.verifying_key().to_public_key_pem(LineEnding::LF).map_err(|e| bad(e.to_string()))?;
    Ok((private.to_string(), public))
}

/// Read a PKCS#8 PEM private key (as `generate` writes it).
pub fn read_signing_key(path: &Path) -> Result<SigningKey, RegistryError> {
    let bad = |reason: String| RegistryError::Key { path: path.display().to_string(), reason };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    SigningKey::from_pkcs8_pem(&text).map_err(|e| {
        bad(format!("not a PKCS#8 PEM P-256 private key ({e}); create one with `bardo plugin keygen`"))
    })
}

/// Read an SPKI PEM public key.
pub fn read_verifying_key(path: &Path) -> Result<VerifyingKey, RegistryError> {
    let bad = |reason: String| RegistryError::Key { path: path.display().to_string(), reason };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    VerifyingKey::from_public_key_pem(&text).map_err(|e| {
        bad(format!("not a PEM P-256 public key ({e}); use the `.pub` file `bardo plugin keygen` wrote"))
    })
}

pub use p256::ecdsa::{SigningKey as PrivateKey, VerifyingKey as PublicKey};
