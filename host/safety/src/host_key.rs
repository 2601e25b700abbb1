//! The host's secret key: authenticates what it writes to files other processes could also
//! write (permits, the audit log's checkpoint). Created on first use (32 random bytes, mode
//! 0600) and never shown to plugins or agents; whoever can read it can forge permits, so it
//! lives beside the signer's secrets, not in the repo.

use alloy::primitives::B256;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::path::Path;

/// A 256-bit MAC key, zeroized on drop.
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub struct HostKey([u8; 32]);

impl std::fmt::Debug for HostKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostKey(..)")
    }
}

impl HostKey {
    /// The key in `path`, created (0600) if missing. A key file of the wrong size is an error,
    /// never silently replaced: that would invalidate every open permit and the audit checkpoint.
    pub fn load_or_create(path: &Path) -> Result<Self, String> {
        let io = |e: std::io::Error| format!("host key {}: {e}", path.display());
        match std::fs::read(path) {
            Ok(bytes) => {
                let bytes = zeroize::Zeroizing::new(bytes);
                let key: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
                    format!(
                        "host key {} has {} bytes, not 32; restore it or delete it (open permits then become invalid)",
                        path.display(),
                        bytes.len()
                    )
                })?;
                Ok(Self(key))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(io)?;
                }
                let key = Self::random()?;
                let mut options = std::fs::OpenOptions::new();
                options.write(true).create_new(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
                match options.open(path) {
                    Ok(mut file) => {
                        std::io::Write::write_all(&mut file, &key.0).map_err(io)?;
                        file.sync_all().map_err(io)?;
                        Ok(key)
                    }
                    // Another process created it first: use theirs.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Self::load_or_create(path),
                    Err(e) => Err(io(e)),
                }
            }
            Err(e) => Err(io(e)),
        }
    }

    /// A key that lives only in this process (a write path without shared files).
    pub fn ephemeral() -> Self {
        Self::random().unwrap_or_else(|_| {
            // No OS randomness: the id generator's hash of time, counter and pid, twice.
            let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
            rand_bytes(&mut a);
            rand_bytes(&mut b);
            let mut key = [0u8; 32];
            key[..16].copy_from_slice(&a);
            key[16..].copy_from_slice(&b);
            Self(key)
        })
    }

    fn random() -> Result<Self, String> {
        let mut key = [0u8; 32];
        getrandom::getrandom(&mut key).map_err(|e| format!("no randomness for the host key: {e}"))?;
        Ok(Self(key))
    }

    fn hmac(&self, domain: &str, message: &[u8]) -> Hmac<Sha256> {
        // HMAC takes keys of any length: this cannot fail.
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("any key length");
        mac.update(domain.as_bytes());
        mac.update(&[0]);
        mac.update(message);
        mac
    }

    /// HMAC-SHA256 of `message` under this key, separated by `domain` (what is authenticated).
    pub fn mac(&self, domain: &str, message: &[u8]) -> B256 {
        B256::from_slice(&self.hmac(domain, message).finalize().into_bytes())
    }

    /// Whether `tag` is `mac(domain, message)`, compared in constant time.
    pub fn verify(&self, domain: &str, message: &[u8], tag: &B256) -> bool {
        self.hmac(domain, message).verify_slice(tag.as_slice()).is_ok()
    }
}

/// What the host MACs a fleet's shared documents under (kept apart from its other MACs).
const FLEET_STATE_DOMAIN: &str = "bardo-fleet-state";

/// The fleet's state documents are sealed with the host key every host of the fleet holds.
impl bardo_cluster::Sealer for HostKey {
    fn mac(&self, message: &[u8]) -> [u8; 32] {
        HostKey::mac(self, FLEET_STATE_DOMAIN, message).0
    }

    fn verify(&self, message: &[u8], tag: &[u8; 32]) -> bool {
        HostKey::verify(self, FLEET_STATE_DOMAIN, message, &B256::from(*tag))
    }
}

/// Unpredictable ids: sha256 of time, a counter and the process id (no extra RNG dependency).
pub(crate) fn rand_bytes(out: &mut [u8; 16]) {
    use sha2::{Digest, Sha256};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let digest = Sha256::new()
        .chain_update(t.to_be_bytes())
        .chain_update(n.to_be_bytes())
        .chain_update(std::process::id().to_be_bytes())
        .finalize();
    out.copy_from_slice(&digest[..16]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_created_once_private_and_macs_verify_only_under_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state/host.key");
        let key = HostKey::load_or_create(&path).expect("create");
        let again = HostKey::load_or_create(&path).expect("load");
        let tag = key.mac("permit", b"hello");
        assert!(again.verify("permit", b"hello", &tag), "the stored key is the same key");
        assert!(!again.verify("permit", b"hellO", &tag), "another message");
        assert!(!again.verify("audit", b"hello", &tag), "another domain");
        assert!(!HostKey::ephemeral().verify("permit", b"hello", &tag), "another key");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, b"short").expect("write");
        assert!(HostKey::load_or_create(&path).expect_err("wrong size").contains("not 32"));
    }
}
