//! Push and pull: every manifest, config and layer is checked against its sha256 digest here,
//! whatever the registry's headers say.

use crate::credentials::Credential;
use crate::layout::{
    COMPONENT_OS, WASM_LAYER_MEDIA_TYPE, WASM_MANIFEST_CONFIG_MEDIA_TYPE, WASM_MANIFEST_MEDIA_TYPE,
    WasmConfig,
};
use crate::sign::{self, SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE};
use crate::{RegistryError, sha256_digest};
use futures_util::StreamExt as _;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::{OciDescriptor, OciImageManifest, OciManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::Digest as _;
use std::collections::BTreeMap;
use std::time::Duration;

/// The largest component this client downloads (a hostile registry could announce anything).
const MAX_COMPONENT_BYTES: i64 = 256 << 20;
/// The largest manifest, config or signature payload accepted.
const MAX_SMALL_BLOB: i64 = 1 << 20;

/// A transfer's progress, for a progress bar: `done` of `total` bytes in `phase`.
#[derive(Debug, Clone, Copy)]
pub struct Transfer {
    /// What is being transferred (`layer`).
    pub phase: &'static str,
    /// Bytes transferred so far.
    pub done: u64,
    /// Bytes in all.
    pub total: u64,
}

/// What is published along with the component bytes.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The plugin's version (semver); becomes `org.opencontainers.image.version`.
    pub version: String,
    /// The component's file name (`org.opencontainers.image.title` on the layer).
    pub title: String,
    /// A one-line description (`org.opencontainers.image.description`).
    pub description: Option<String>,
    /// The author, recorded in the Wasm config.
    pub author: Option<String>,
}

/// A published component.
#[derive(Debug, Clone)]
pub struct Published {
    /// `registry/repository:tag`.
    pub reference: String,
    /// The manifest digest (what `bardo.lock` pins and signatures sign).
    pub digest: String,
    /// The layer (component bytes) digest.
    pub layer: String,
    /// The component's size in bytes.
    pub size: u64,
}

/// A manifest and config read and verified, the layer not yet downloaded.
#[derive(Debug)]
pub struct Resolved {
    /// The reference as asked for.
    pub reference: Reference,
    /// The manifest's digest (sha256 of the bytes the registry sent, checked).
    pub digest: String,
    /// The manifest: one `application/wasm` layer, with its Wasm config.
    pub manifest: OciImageManifest,
    /// The Wasm config: the component's imports and exports.
    pub config: WasmConfig,
}

impl Resolved {
    /// The component layer's descriptor.
    pub fn layer(&self) -> &OciDescriptor {
        &self.manifest.layers[0]
    }

    /// `org.opencontainers.image.version`, if the publisher set it.
    pub fn version(&self) -> Option<&str> {
        self.manifest.annotations.as_ref()?.get("org.opencontainers.image.version").map(String::as_str)
    }

    /// The component's imports, from the config.
    pub fn imports(&self) -> &[String] {
        self.config.component.as_ref().map_or(&[], |c| c.imports.as_slice())
    }

    /// The component's exports, from the config.
    pub fn exports(&self) -> &[String] {
        self.config.component.as_ref().map_or(&[], |c| c.exports.as_slice())
    }

    /// `registry/repository@digest`: exactly this manifest.
    pub fn pinned(&self) -> Reference {
        self.reference.clone_with_digest(self.digest.clone())
    }
}

/// An OCI registry client for plugin components.
pub struct RegistryClient {
    client: Client,
    /// Logins by registry host; a registry not listed is spoken to anonymously.
    credentials: BTreeMap<String, Credential>,
}

impl RegistryClient {
    /// A client speaking HTTPS, except to the `insecure` registries (`host:port`), which get plain
    /// HTTP. Connection attempts give up after 5 s, reads after 60 s.
    pub fn new(insecure: &[String]) -> Self {
        let config = ClientConfig {
            protocol: ClientProtocol::HttpsExcept(insecure.to_vec()),
            connect_timeout: Some(Duration::from_secs(5)),
            read_timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        };
        Self { client: Client::new(config), credentials: BTreeMap::new() }
    }

    /// Log in to `registry` (`host[:port]`, as written in references) with `credential`.
    pub fn with_credential(mut self, registry: impl Into<String>, credential: Credential) -> Self {
        self.credentials.insert(registry.into(), credential);
        self
    }

    /// How to authenticate to `reference`'s registry; an unavailable login is an error here, so
    /// nothing goes out anonymously to a registry the operator meant to log in to.
    fn auth(&self, reference: &Reference) -> Result<RegistryAuth, RegistryError> {
        let login = self
            .credentials
            .get(reference.registry())
            .or_else(|| self.credentials.get(reference.resolve_registry()));
        match login {
            None => Ok(RegistryAuth::Anonymous),
            // oci-client takes the password as a plain String: the one copy, per request.
            Some(Credential::Basic { username, password }) => {
                Ok(RegistryAuth::Basic(username.clone(), password.expose_secret().to_owned()))
            }
            Some(Credential::Unavailable(reason)) => {
                Err(RegistryError::unauthorized(reference, reason.clone()))
            }
        }
    }

    /// Publish `wasm` under `reference` (which must carry a tag) in the Wasm OCI layout.
    pub async fn publish(
        &self,
        reference: &Reference,
        wasm: Vec<u8>,
        artifact: &Artifact,
        progress: &(dyn Fn(Transfer) + Sync),
    ) -> Result<Published, RegistryError> {
        let oci = |e| RegistryError::from_oci(reference, e);
        let layout = |reason: String| RegistryError::Layout { reference: reference.whole(), reason };
        let layer_digest = sha256_digest(&wasm);
        let config =
            WasmConfig::for_component(&wasm, &layer_digest, artifact.author.clone()).map_err(layout)?;
        let layer =
            ImageLayer { data: wasm.into(), media_type: WASM_LAYER_MEDIA_TYPE.into(), annotations: None };
        let size = layer.data.len() as u64;
        let config_blob = Config {
            data: serde_json::to_vec(&config).map_err(|e| layout(e.to_string()))?.into(),
            media_type: WASM_MANIFEST_CONFIG_MEDIA_TYPE.into(),
            annotations: None,
        };
        let layer = ImageLayer {
            annotations: Some(BTreeMap::from([(
                "org.opencontainers.image.title".to_owned(),
                artifact.title.clone(),
            )])),
            ..layer
        };
        let mut annotations = BTreeMap::from([
            ("org.opencontainers.image.version".to_owned(), artifact.version.clone()),
            ("org.opencontainers.image.created".to_owned(), config.created.clone()),
            ("org.opencontainers.image.title".to_owned(), artifact.title.clone()),
        ]);
        if let Some(d) = &artifact.description {
            annotations.insert("org.opencontainers.image.description".into(), d.clone());
        }
        let mut manifest =
            OciImageManifest::build(std::slice::from_ref(&layer), &config_blob, Some(annotations));
        manifest.media_type = Some(WASM_MANIFEST_MEDIA_TYPE.into());

        self.client.store_auth_if_needed(reference.resolve_registry(), &self.auth(reference)?).await;
        // The layer goes up in chunks so the caller can show progress.
        const CHUNK: usize = 256 << 10;
        let data = layer.data.clone();
        let chunks: Vec<bytes::Bytes> =
            (0..data.len()).step_by(CHUNK).map(|at| data.slice(at..(at + CHUNK).min(data.len()))).collect();
        let mut sent = 0u64;
        progress(Transfer { phase: "layer", done: 0, total: size });
        let stream = futures_util::stream::iter(chunks).map(|chunk| {
            sent += chunk.len() as u64;
            progress(Transfer { phase: "layer", done: sent, total: size });
            Ok::<_, oci_client::errors::OciDistributionError>(chunk)
        });
        self.client.push_blob_stream(reference, stream, &layer_digest).await.map_err(oci)?;
        self.client.push_blob(reference, config_blob.data, &manifest.config.digest).await.map_err(oci)?;
        self.client.push_manifest(reference, &OciManifest::Image(manifest)).await.map_err(oci)?;
        // Read the manifest back: its digest is what gets pinned and signed.
        let resolved = self.resolve(reference).await?;
        if resolved.layer().digest != layer_digest {
            return Err(RegistryError::Tampered {
                reference: reference.whole(),
                what: "the layer listed in the manifest read back".into(),
                expected: layer_digest,
                actual: resolved.layer().digest.clone(),
            });
        }
        Ok(Published { reference: reference.whole(), digest: resolved.digest, layer: layer_digest, size })
    }

    /// Sign manifest `digest` of `reference`'s repository with `key`, stored under cosign's tag.
    pub async fn sign(
        &self,
        reference: &Reference,
        digest: &str,
        key: &sign::PrivateKey,
    ) -> Result<Reference, RegistryError> {
        let oci = |e| RegistryError::from_oci(reference, e);
        let repository = format!("{}/{}", reference.registry(), reference.repository());
        let payload = sign::payload(&repository, digest);
        let signature = sign::sign(key, &payload);
        let layer = ImageLayer {
            data: payload.into(),
            media_type: SIMPLE_SIGNING_MEDIA_TYPE.into(),
            annotations: Some(BTreeMap::from([(SIGNATURE_ANNOTATION.to_owned(), signature)])),
        };
        let config = Config {
            data: b"{}".to_vec().into(),
            media_type: "application/vnd.oci.image.config.v1+json".into(),
            annotations: None,
        };
        let tag = Reference::with_tag(
            reference.registry().to_owned(),
            reference.repository().to_owned(),
            sign::signature_tag(digest),
        );
        self.client.push(&tag, &[layer], config, &self.auth(reference)?, None).await.map_err(oci)?;
        Ok(tag)
    }

    /// Read and verify `reference`'s manifest and config (not the layer). Refuses anything that
    /// is not exactly one `application/wasm` layer with a Wasm config naming it.
    pub async fn resolve(&self, reference: &Reference) -> Result<Resolved, RegistryError> {
        let (bytes, digest) = self.manifest_bytes(reference).await?;
        let layout = |reason: String| RegistryError::Layout { reference: reference.whole(), reason };
        let manifest: OciImageManifest =
            serde_json::from_slice(&bytes).map_err(|e| layout(format!("unreadable manifest: {e}")))?;
        if manifest.media_type.as_deref().is_some_and(|m| m != WASM_MANIFEST_MEDIA_TYPE) {
            return Err(layout(format!("manifest media type {:?}", manifest.media_type)));
        }
        if manifest.config.media_type != WASM_MANIFEST_CONFIG_MEDIA_TYPE {
            return Err(layout(format!(
                "config media type `{}`, not `{WASM_MANIFEST_CONFIG_MEDIA_TYPE}`",
                manifest.config.media_type
            )));
        }
        if manifest.layers.len() != 1 || manifest.layers[0].media_type != WASM_LAYER_MEDIA_TYPE {
            return Err(layout(format!(
                "{} layer(s) of types {:?}; a component has exactly one `{WASM_LAYER_MEDIA_TYPE}` layer",
                manifest.layers.len(),
                manifest.layers.iter().map(|l| l.media_type.as_str()).collect::<Vec<_>>()
            )));
        }
        let config_bytes = self.small_blob(reference, &manifest.config).await?;
        let config: WasmConfig = serde_json::from_slice(&config_bytes)
            .map_err(|e| layout(format!("unreadable Wasm config: {e}")))?;
        if config.os != COMPONENT_OS || config.component.is_none() {
            return Err(layout(format!(
                "config os `{}` without a component section; plugins are wasip2 components",
                config.os
            )));
        }
        if config.layer_digests != [manifest.layers[0].digest.clone()] {
            return Err(layout(format!(
                "the config's layerDigests {:?} do not name the manifest's layer {}",
                config.layer_digests, manifest.layers[0].digest
            )));
        }
        Ok(Resolved { reference: reference.clone(), digest, manifest, config })
    }

    /// Download the component layer, checking size and sha256 as it streams.
    pub async fn fetch(
        &self,
        resolved: &Resolved,
        progress: &(dyn Fn(Transfer) + Sync),
    ) -> Result<Vec<u8>, RegistryError> {
        let reference = &resolved.reference;
        let layer = resolved.layer();
        if !(0..=MAX_COMPONENT_BYTES).contains(&layer.size) {
            return Err(RegistryError::Layout {
                reference: reference.whole(),
                reason: format!(
                    "the layer claims {} bytes, over the {MAX_COMPONENT_BYTES} byte limit",
                    layer.size
                ),
            });
        }
        let total = layer.size as u64;
        let mut stream = self
            .client
            .pull_blob_stream(reference, layer)
            .await
            .map_err(|e| RegistryError::from_oci(reference, e))?;
        let mut out = Vec::with_capacity(total as usize);
        let mut hasher = sha2::Sha256::new();
        progress(Transfer { phase: "layer", done: 0, total });
        while let Some(chunk) = stream.stream.next().await {
            let chunk = chunk.map_err(|e| tampered_or_failed(reference, &layer.digest, e))?;
            if out.len() + chunk.len() > total as usize {
                return Err(RegistryError::Tampered {
                    reference: reference.whole(),
                    what: "the component layer".into(),
                    expected: format!("{total} bytes"),
                    actual: "more bytes".into(),
                });
            }
            hasher.update(&chunk);
            out.extend_from_slice(&chunk);
            progress(Transfer { phase: "layer", done: out.len() as u64, total });
        }
        let actual = format!("sha256:{}", hex::encode(hasher.finalize()));
        if actual != layer.digest || out.len() as u64 != total {
            return Err(RegistryError::Tampered {
                reference: reference.whole(),
                what: "the component layer".into(),
                expected: layer.digest.clone(),
                actual,
            });
        }
        Ok(out)
    }

    /// Check that one of `keys` signed `resolved`'s manifest digest. Returns the index of the key
    /// that did.
    pub async fn verify_signature(
        &self,
        resolved: &Resolved,
        keys: &[sign::PublicKey],
        signers: &str,
    ) -> Result<usize, RegistryError> {
        let r = &resolved.reference;
        let tag = sign::signature_tag(&resolved.digest);
        let sig_ref = Reference::with_tag(r.registry().to_owned(), r.repository().to_owned(), tag.clone());
        let (bytes, _) = match self.manifest_bytes(&sig_ref).await {
            Ok(found) => found,
            Err(RegistryError::NotFound { .. }) => {
                return Err(RegistryError::Unsigned {
                    reference: r.whole(),
                    tag,
                    signers: signers.to_owned(),
                });
            }
            Err(e) => return Err(e),
        };
        let bad = |reason: String| RegistryError::BadSignature { reference: r.whole(), reason };
        let manifest: OciImageManifest =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("unreadable signature manifest: {e}")))?;
        let repository = format!("{}/{}", r.registry(), r.repository());
        let mut reasons = Vec::new();
        for layer in manifest.layers.iter().filter(|l| l.media_type == SIMPLE_SIGNING_MEDIA_TYPE) {
            let Some(signature) = layer.annotations.as_ref().and_then(|a| a.get(SIGNATURE_ANNOTATION)) else {
                reasons.push("a signature layer without its signature annotation".to_owned());
                continue;
            };
            let payload = self.small_blob(&sig_ref, layer).await?;
            let Ok(parsed) = serde_json::from_slice::<sign::Payload>(&payload) else {
                reasons.push("an unreadable signature payload".to_owned());
                continue;
            };
            if parsed.critical.image.docker_manifest_digest != resolved.digest {
                reasons.push(format!(
                    "a signature for another manifest ({})",
                    parsed.critical.image.docker_manifest_digest
                ));
                continue;
            }
            if parsed.critical.identity.docker_reference != repository {
                reasons.push(format!(
                    "a signature for another repository ({})",
                    parsed.critical.identity.docker_reference
                ));
                continue;
            }
            match keys.iter().position(|k| sign::verify(k, &payload, signature)) {
                Some(i) => return Ok(i),
                None => reasons.push(format!("a signature by none of the trusted keys ({signers})")),
            }
        }
        if reasons.is_empty() {
            reasons.push("no signature layers".into());
        }
        Err(bad(format!("signature refused: {}", reasons.join("; "))))
    }

    /// The repository's tags that are versions (semver), oldest first; signature tags excluded.
    pub async fn versions(&self, reference: &Reference) -> Result<Vec<String>, RegistryError> {
        let tags = self
            .client
            .list_tags(reference, &self.auth(reference)?, None, None)
            .await
            .map_err(|e| RegistryError::from_oci(reference, e))?;
        let mut versions: Vec<semver::Version> =
            tags.tags.iter().filter_map(|t| semver::Version::parse(t).ok()).collect();
        versions.sort();
        Ok(versions.iter().map(ToString::to_string).collect())
    }

    /// A manifest's bytes and digest, the digest computed here and checked against the one asked
    /// for (if any) and the one the registry announced.
    async fn manifest_bytes(&self, reference: &Reference) -> Result<(Vec<u8>, String), RegistryError> {
        let (bytes, announced) = self
            .client
            .pull_manifest_raw(reference, &self.auth(reference)?, &[WASM_MANIFEST_MEDIA_TYPE])
            .await
            .map_err(|e| RegistryError::from_oci(reference, e))?;
        if bytes.len() as i64 > MAX_SMALL_BLOB {
            return Err(RegistryError::Layout {
                reference: reference.whole(),
                reason: format!("a {} byte manifest", bytes.len()),
            });
        }
        let digest = sha256_digest(&bytes);
        for expected in
            [reference.digest(), Some(announced.as_str()).filter(|d| !d.is_empty())].into_iter().flatten()
        {
            if expected != digest {
                return Err(RegistryError::Tampered {
                    reference: reference.whole(),
                    what: "the manifest".into(),
                    expected: expected.to_owned(),
                    actual: digest,
                });
            }
        }
        Ok((bytes.to_vec(), digest))
    }

    /// A small blob (config, signature payload), size-limited and digest-checked.
    async fn small_blob(
        &self,
        reference: &Reference,
        desc: &OciDescriptor,
    ) -> Result<Vec<u8>, RegistryError> {
        if !(0..=MAX_SMALL_BLOB).contains(&desc.size) {
            return Err(RegistryError::Layout {
                reference: reference.whole(),
                reason: format!("blob {} claims {} bytes", desc.digest, desc.size),
            });
        }
        let mut out = Vec::new();
        self.client
            .pull_blob(reference, desc, &mut out)
            .await
            .map_err(|e| RegistryError::from_oci(reference, e))?;
        let actual = sha256_digest(&out);
        if actual != desc.digest {
            return Err(RegistryError::Tampered {
                reference: reference.whole(),
                what: format!("blob {}", desc.digest),
                expected: desc.digest.clone(),
                actual,
            });
        }
        Ok(out)
    }
}

/// A stream error while downloading: the client's own digest check reports tampering this way.
fn tampered_or_failed(reference: &Reference, digest: &str, e: std::io::Error) -> RegistryError {
    let text = e.to_string();
    if text.to_lowercase().contains("digest") {
        RegistryError::Tampered {
            reference: reference.whole(),
            what: "the component layer".into(),
            expected: digest.to_owned(),
            actual: text,
        }
    } else {
        RegistryError::Request { reference: reference.whole(), reason: text }
    }
}
