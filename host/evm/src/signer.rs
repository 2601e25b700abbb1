//! The operator's signing key: an alloy local signer from a hex key in an environment variable
//! or from an encrypted keystore file. Plugins only ever see its address.

use crate::safe::{MULTI_SEND_CALL_ONLY_1_4_1, SafeKey, SafeWallet};
use alloy::primitives::Address;
use alloy::signers::local::PrivateKeySigner;
use bardo_core::secret::{TaintLabel, TaintedString};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

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
    /// A file holding the keystore's password (mode 0600), when the variable is unset.
    pub password_file: Option<PathBuf>,
    /// Whose assets the host moves: the key's own (`key`, the default) or a Safe's (`safe`),
    /// which the key owns (threshold 1) and writes through, a whole plan per Safe transaction.
    pub mode: SignerMode,
    /// The Safe, with `mode = "safe"`.
    pub safe: Option<Address>,
    /// `MultiSendCallOnly` on the Safe's chain (default: its canonical 1.4.1 address).
    pub multi_send: Option<Address>,
    /// What the key is to the Safe: `owner` (the default; threshold 1) or an enabled `module`.
    pub safe_key: Option<SafeKey>,
}

/// `[signer] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignerMode {
    /// The key's own account.
    #[default]
    Key,
    /// A Safe the key owns.
    Safe,
}

/// Environment variable naming a keystore file; it wins over `[signer] keystore`.
pub const KEYSTORE_ENV: &str = "BARDO_KEYSTORE";

impl Default for SignerConfig {
    fn default() -> Self {
        Self {
            key_env: "BARDO_PRIVATE_KEY".into(),
            keystore: None,
            password_env: "BARDO_KEYSTORE_PASSWORD".into(),
            password_file: None,
            mode: SignerMode::Key,
            safe: None,
            multi_send: None,
            safe_key: None,
        }
    }
}

impl SignerConfig {
    /// The Safe to write through, if `mode = "safe"`; a Safe without the mode (or the mode
    /// without a Safe) is a mistake said at start, never guessed.
    pub fn safe_wallet(&self) -> Result<Option<SafeWallet>, SignerError> {
        match (self.mode, self.safe) {
            (SignerMode::Key, None) if self.multi_send.is_none() && self.safe_key.is_none() => Ok(None),
            (SignerMode::Key, _) => Err(SignerError::Safe(
                "[signer] names a Safe (safe, multi_send, safe_key) but mode is \"key\"; set mode = \"safe\" to write through it, or remove them".into(),
            )),
            (SignerMode::Safe, None) => {
                Err(SignerError::Safe("[signer] mode = \"safe\" needs safe = \"0x…\", the Safe's address".into()))
            }
            (SignerMode::Safe, Some(safe)) => Ok(Some(SafeWallet {
                safe,
                multi_send: self.multi_send.unwrap_or(MULTI_SEND_CALL_ONLY_1_4_1),
                key: self.safe_key.unwrap_or_default(),
            })),
        }
    }
}

/// Why no wallet could be opened.
#[derive(Debug, thiserror::Error)]
pub enum SignerError {
    /// The key variable (named here) holds something that is not a hex private key.
    #[error("${0} is set but is not a hex private key")]
    BadKey(String),
    /// The keystore could not be decrypted (no password, wrong password, unreadable file).
    #[error("keystore {path}: {message}")]
    Keystore {
        /// The keystore file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// `[signer]` names a Safe inconsistently (or without a key to own it).
    #[error("{0}")]
    Safe(String),
}

/// The operator's wallet. Its key never leaves this type; `Debug` prints only the address.
pub struct Wallet {
    signer: PrivateKeySigner,
    /// The key as hex, held once (zeroized on drop) so that outputs can be searched for it.
    secret: TaintedString,
}

impl std::fmt::Debug for Wallet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wallet").field("address", &self.address()).finish_non_exhaustive()
    }
}

impl Wallet {
    /// Open the configured wallet; none when neither a key nor a keystore is configured.
    pub fn open(config: &SignerConfig) -> Result<Option<Self>, SignerError> {
        if let Some(key) = TaintedString::from_env(&config.key_env, &[TaintLabel::WalletSecret]) {
            let signer: PrivateKeySigner = key
                .expose_secret()
                .trim()
                .parse()
                .map_err(|_| SignerError::BadKey(config.key_env.clone()))?;
            return Ok(Some(Self::from_signer(signer)));
        }
        let Some(path) = std::env::var_os(KEYSTORE_ENV).map(PathBuf::from).or(config.keystore.clone()) else {
            return Ok(None);
        };
        let password = password(config, &path)?;
        let signer = PrivateKeySigner::decrypt_keystore(&path, password.expose_secret())
            .map_err(|e| SignerError::Keystore { path: path.clone(), message: e.to_string() })?;
        Ok(Some(Self::from_signer(signer)))
    }

    /// A wallet for a known key (tests, the devnet's funded accounts).
    pub fn from_signer(signer: PrivateKeySigner) -> Self {
        let bytes = Zeroizing::new(signer.to_bytes().0);
        let secret = TaintedString::new(Zeroizing::new(hex::encode(*bytes)), &[TaintLabel::WalletSecret]);
        Self { signer, secret }
    }

    /// A transaction signer over this key, for the write path's broadcaster (the one place a
    /// write is signed); the key itself leaves this type only as the [`Self::secret`] that
    /// output filters search for.
    pub fn transaction_signer(&self) -> alloy::network::EthereumWallet {
        alloy::network::EthereumWallet::from(self.signer.clone())
    }

    /// The private key (hex, no 0x) as a secret, only so that outputs can be searched for it
    /// ([`TaintedString::appears_in`]) and withheld.
    pub fn secret(&self) -> &TaintedString {
        &self.secret
    }

    /// The address it signs with.
    pub fn address(&self) -> Address {
        self.signer.address()
    }
}

/// The keystore's password: the variable, else the file, else asked for on a terminal.
fn password(config: &SignerConfig, path: &Path) -> Result<TaintedString, SignerError> {
    let failed = |message: String| SignerError::Keystore { path: path.to_owned(), message };
    if let Some(p) = TaintedString::from_env(&config.password_env, &[TaintLabel::OwnerSecret]) {
        return Ok(p);
    }
    if let Some(file) = &config.password_file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| failed(format!("cannot read the password file {}: {e}", file.display())))?;
        let text = Zeroizing::new(text.trim_end_matches(['\r', '\n']).to_owned());
        return Ok(TaintedString::new(text, &[TaintLabel::OwnerSecret]));
    }
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        let typed = rpassword::prompt_password(format!("password of keystore {}: ", path.display()))
            .map_err(|e| failed(format!("cannot read the password: {e}")))?;
        return Ok(TaintedString::new(Zeroizing::new(typed), &[TaintLabel::OwnerSecret]));
    }
    Err(failed(format!(
        "no password: set ${}, or [signer] password_file, or run on a terminal to be asked",
        config.password_env
    )))
}

/// Encrypt `key` (a new random key if none) into a Web3 Secret Storage keystore at `path`
/// (scrypt; the file is created, never overwritten, mode 0600); its address.
pub fn create_keystore(path: &Path, key: Option<&str>, password: &str) -> Result<Address, SignerError> {
    let failed = |message: String| SignerError::Keystore { path: path.to_owned(), message };
    if path.exists() {
        return Err(failed("exists already; remove it first or choose another path".into()));
    }
    let signer = match key {
        Some(hex) => hex
            .trim()
            .parse::<PrivateKeySigner>()
            .map_err(|_| failed("the key is not a hex private key".into()))?,
        None => PrivateKeySigner::random(),
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| failed(e.to_string()))?;
    let bytes = Zeroizing::new(signer.to_bytes().0);
    let json = encrypt_v3(&bytes, password.as_bytes(), SCRYPT_LOG_N)?;
    let mut file = std::fs::OpenOptions::new();
    file.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut file, 0o600);
    let mut file = file.open(path).map_err(|e| failed(e.to_string()))?;
    std::io::Write::write_all(&mut file, json.as_bytes()).map_err(|e| failed(e.to_string()))?;
    Ok(signer.address())
}

/// scrypt's cost for new keystores: N = 2^18, r = 8, p = 1, Web3 Secret Storage's default (and
/// geth's): ~256 MiB and a fraction of a second for each password tried, where alloy's
/// `encrypt_keystore` (N = 2^13) costs an attacker 32 times less. Any N decrypts.
pub const SCRYPT_LOG_N: u8 = 18;

/// `key` as a version 3 Web3 Secret Storage keystore (scrypt with N = 2^`log_n`, r 8, p 1;
/// AES-128-CTR; the Keccak-256 MAC), as JSON.
pub fn encrypt_v3(key: &[u8; 32], password: &[u8], log_n: u8) -> Result<String, SignerError> {
    use aes::cipher::{KeyIvInit, StreamCipher};
    use rand::RngCore;
    let failed = |e: String| SignerError::Keystore { path: PathBuf::new(), message: e };
    let (mut salt, mut iv, mut id) = ([0u8; 32], [0u8; 16], [0u8; 16]);
    let mut rng = rand::thread_rng();
    rng.fill_bytes(&mut salt);
    rng.fill_bytes(&mut iv);
    rng.fill_bytes(&mut id);
    let params = scrypt::Params::new(log_n, 8, 1).map_err(|e| failed(e.to_string()))?;
    let mut derived = Zeroizing::new([0u8; 32]);
    scrypt::scrypt(password, &salt, &params, &mut derived[..]).map_err(|e| failed(e.to_string()))?;
    let mut ciphertext = *key;
    ctr::Ctr128BE::<aes::Aes128>::new(derived[..16].into(), (&iv).into()).apply_keystream(&mut ciphertext);
    let mac = alloy::primitives::keccak256([&derived[16..], &ciphertext[..]].concat());
    // A random (version 4) UUID.
    id[6] = (id[6] & 0x0f) | 0x40;
    id[8] = (id[8] & 0x3f) | 0x80;
    let h = hex::encode(id);
    let id = format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..]);
    let json = serde_json::json!({
        "crypto": {
            "cipher": "aes-128-ctr",
            "cipherparams": { "iv": hex::encode(iv) },
            "ciphertext": hex::encode(ciphertext),
            "kdf": "scrypt",
            "kdfparams": { "dklen": 32, "n": 1u32 << log_n, "p": 1, "r": 8, "salt": hex::encode(salt) },
            "mac": hex::encode(mac),
        },
        "id": id,
        "version": 3,
    });
    Ok(json.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
    const ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

    fn config(key_env: &str, keystore: Option<PathBuf>, password_env: &str) -> SignerConfig {
        SignerConfig {
            key_env: key_env.into(),
            keystore,
            password_env: password_env.into(),
            password_file: None,
            ..SignerConfig::default()
        }
    }

    #[test]
    fn new_keystores_cost_scrypt_n_262144_and_open_with_alloys_decoder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("keystore.json");
        let address = create_keystore(&path, Some(KEY), "correct horse").expect("created");
        assert_eq!(address.to_checksum(None), ADDRESS);
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
        let kdf = &json["crypto"]["kdfparams"];
        assert_eq!(
            (&kdf["n"], &kdf["r"], &kdf["p"], &kdf["dklen"]),
            (&262_144.into(), &8.into(), &1.into(), &32.into())
        );
        assert_eq!((&json["version"], &json["crypto"]["cipher"]), (&3.into(), &"aes-128-ctr".into()));
        #[cfg(unix)]
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).expect("meta").permissions())
                & 0o777,
            0o600
        );
        let opened = PrivateKeySigner::decrypt_keystore(&path, "correct horse").expect("alloy decrypts it");
        assert_eq!(opened.address(), address);
        assert!(PrivateKeySigner::decrypt_keystore(&path, "correct horsf").is_err(), "the MAC holds");
        assert!(create_keystore(&path, None, "x").is_err(), "never overwritten");
    }

    #[test]
    #[expect(unsafe_code, reason = "set_var in a test, with a variable no other test reads")]
    fn key_from_the_environment() {
        unsafe { std::env::set_var("BARDO_TEST_SIGNER_KEY_A", KEY) };
        let wallet = Wallet::open(&config("BARDO_TEST_SIGNER_KEY_A", None, "UNSET"))
            .expect("opens")
            .expect("a wallet");
        assert_eq!(wallet.address().to_checksum(None), ADDRESS);
        assert!(!format!("{wallet:?}").contains("ac0974"), "Debug never shows the key");
        unsafe { std::env::set_var("BARDO_TEST_SIGNER_KEY_B", "not a key") };
        assert!(matches!(
            Wallet::open(&config("BARDO_TEST_SIGNER_KEY_B", None, "UNSET")),
            Err(SignerError::BadKey(_))
        ));
    }

    #[test]
    fn no_key_means_no_wallet() {
        assert!(
            Wallet::open(&config("BARDO_TEST_SIGNER_NEVER_SET", None, "UNSET")).expect("no error").is_none()
        );
    }

    #[test]
    #[expect(unsafe_code, reason = "set_var in a test, with a variable no other test reads")]
    fn encrypted_keystore_opens_with_its_password_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = alloy::hex::decode(KEY).expect("hex");
        // A keystore as older bardos (and alloy) wrote them: scrypt N = 2^13.
        PrivateKeySigner::encrypt_keystore(
            dir.path(),
            &mut rand::thread_rng(),
            key,
            "correct horse",
            Some("key.json"),
        )
        .expect("encrypt");
        let path = dir.path().join("key.json");
        unsafe { std::env::set_var("BARDO_TEST_KEYSTORE_PW_A", "correct horse") };
        let wallet = Wallet::open(&config(
            "BARDO_TEST_SIGNER_NEVER_SET",
            Some(path.clone()),
            "BARDO_TEST_KEYSTORE_PW_A",
        ))
        .expect("decrypts")
        .expect("a wallet");
        assert_eq!(wallet.address().to_checksum(None), ADDRESS);
        unsafe { std::env::set_var("BARDO_TEST_KEYSTORE_PW_B", "wrong") };
        let wrong = Wallet::open(&config(
            "BARDO_TEST_SIGNER_NEVER_SET",
            Some(path.clone()),
            "BARDO_TEST_KEYSTORE_PW_B",
        ));
        assert!(matches!(wrong, Err(SignerError::Keystore { .. })));
        let missing =
            Wallet::open(&config("BARDO_TEST_SIGNER_NEVER_SET", Some(path), "BARDO_TEST_KEYSTORE_PW_UNSET"));
        assert!(
            matches!(missing, Err(SignerError::Keystore { message, .. }) if message.contains("BARDO_TEST_KEYSTORE_PW_UNSET"))
        );
    }
}
