//! The operator's signing key: an alloy local signer from a hex key in an environment variable
//! or from an encrypted keystore file. Plugins only ever see its address.

use alloy::primitives::Address;
use alloy::signers::local::PrivateKeySigner;
use serde::Deserialize;
use std::path::PathBuf;

/// `[signer]` in bardo.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SignerConfig {
    /// Environment variable holding a hex private key.
    pub key_env: String,
    /// Encrypted (Web3 Secret Storage) keystore file, used when the key variable is unset.
    pub keystore: Option<PathBuf>,
    /// Environment variable holding the keystore's password.
    pub password_env: String,
}

impl Default for SignerConfig {
    fn default() -> Self {
        Self {
            key_env: "BARDO_PRIVATE_KEY".into(),
            keystore: None,
            password_env: "BARDO_KEYSTORE_PASSWORD".into(),
        }
    }
}

/// Why no wallet could be opened.
#[derive(Debug, thiserror::Error)]
pub enum SignerError {
    #[error("${0} is set but is not a hex private key")]
    BadKey(String),
    #[error("keystore {path}: {message}")]
    Keystore { path: PathBuf, message: String },
}

/// The operator's wallet. Its key never leaves this type; `Debug` prints only the address.
pub struct Wallet {
    signer: PrivateKeySigner,
}

impl std::fmt::Debug for Wallet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wallet").field("address", &self.address()).finish_non_exhaustive()
    }
}

impl Wallet {
    /// Open the configured wallet; none when neither a key nor a keystore is configured.
    pub fn open(config: &SignerConfig) -> Result<Option<Self>, SignerError> {
        if let Ok(key) = std::env::var(&config.key_env)
            && !key.is_empty()
        {
            let signer: PrivateKeySigner =
                key.trim().parse().map_err(|_| SignerError::BadKey(config.key_env.clone()))?;
            return Ok(Some(Self { signer }));
        }
        let Some(path) = &config.keystore else {
            return Ok(None);
        };
        let password = std::env::var(&config.password_env).map_err(|_| SignerError::Keystore {
            path: path.clone(),
            message: format!("set ${} to its password", config.password_env),
        })?;
        let signer = PrivateKeySigner::decrypt_keystore(path, password)
            .map_err(|e| SignerError::Keystore { path: path.clone(), message: e.to_string() })?;
        Ok(Some(Self { signer }))
    }

    /// A wallet for a known key (tests, the devnet's funded accounts).
    pub fn from_signer(signer: PrivateKeySigner) -> Self {
        Self { signer }
    }

    /// The address it signs with.
    pub fn address(&self) -> Address {
        self.signer.address()
    }
}
