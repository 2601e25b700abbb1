//! `bardo init`: a commented `bardo.toml` for a profile and, for a profile that writes, an
//! encrypted keystore for its wallet — so the key never sits in the environment in plain text.

use anyhow::{Context, Result, bail};
use bardo_core::profile::Profile;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `bardo init` was asked for.
pub(crate) struct Init {
    pub profile: String,
    pub keystore: Option<PathBuf>,
    pub no_keystore: bool,
    pub import_key_env: Option<String>,
    pub password_file: Option<PathBuf>,
}

/// Where a profile that writes keeps its keystore unless told otherwise (next to the config).
const DEFAULT_KEYSTORE: &str = ".bardo/keystore.json";
/// Shorter passwords make an scrypt keystore easy to guess.
const MIN_PASSWORD: usize = 8;

pub(crate) fn init(config_path: &Path, ask: &Init) -> Result<ExitCode> {
    if config_path.exists() {
        eprintln!("{} exists already: left as it is (remove it first to start over)", config_path.display());
        return Ok(ExitCode::from(1));
    }
    let profile = Profile::parse(&ask.profile).map_err(|e| anyhow::anyhow!("--profile: {e}"))?;
    let base = config_path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let keystore = match (&ask.keystore, ask.no_keystore) {
        (_, true) => None,
        (Some(path), false) => Some(path.clone()),
        (None, false) if !profile.read_only() => Some(PathBuf::from(DEFAULT_KEYSTORE)),
        (None, false) => None,
    };
    let mut text =
        include_str!("init.toml").replace("profile = \"data\"", &format!("profile = {:?}", ask.profile));
    if let Some(relative) = &keystore {
        let key = match &ask.import_key_env {
            Some(var) => Some(zeroize::Zeroizing::new(
                std::env::var(var).with_context(|| format!("--import-key-env: ${var} is not set"))?,
            )),
            None => None,
        };
        let password = password(ask.password_file.as_deref())?;
        let file = base.join(relative);
        let address = bardo_evm::create_keystore(&file, key.as_deref().map(String::as_str), &password)?;
        eprintln!(
            "wrote keystore {} for {address} ({})",
            file.display(),
            if key.is_some() {
                "the imported key"
            } else {
                "a new key: `bardo call bootstrap_check_setup` says what it lacks before a write"
            }
        );
        text.push_str(&signer_section(relative, ask.password_file.as_deref(), &address.to_checksum(None)));
    }
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(config_path)
        .with_context(|| format!("cannot write {}", config_path.display()))?;
    std::io::Write::write_all(&mut out, text.as_bytes())?;
    // The plugins directory it names, empty: components copied (or `make plugins` built) into
    // it load from the next start; a directory that is not there is an error.
    let plugins = base.join(".bardo/plugins");
    std::fs::create_dir_all(&plugins).with_context(|| format!("cannot create {}", plugins.display()))?;
    eprintln!(
        "wrote {} (profile `{}`): `bardo tools` lists what it loads from {}; `bardo devnet up` starts a local chain",
        config_path.display(),
        ask.profile,
        plugins.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The keystore's password: `--password-file`, else $BARDO_KEYSTORE_PASSWORD, else typed twice.
fn password(file: Option<&Path>) -> Result<zeroize::Zeroizing<String>> {
    let password = if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("--password-file: cannot read {}", file.display()))?;
        text.trim_end_matches(['\r', '\n']).to_owned()
    } else if let Ok(p) = std::env::var("BARDO_KEYSTORE_PASSWORD") {
        p
    } else {
        use std::io::IsTerminal;
        if !std::io::stdin().is_terminal() {
            bail!(
                "the keystore needs a password: give --password-file, set $BARDO_KEYSTORE_PASSWORD, or run on a terminal to type one"
            );
        }
        let first = rpassword::prompt_password("password for the new keystore: ")?;
        if rpassword::prompt_password("again: ")? != first {
            bail!("the two passwords differ; nothing was written");
        }
        first
    };
    if password.chars().count() < MIN_PASSWORD {
        bail!("the keystore's password has fewer than {MIN_PASSWORD} characters; nothing was written");
    }
    Ok(zeroize::Zeroizing::new(password))
}

/// `[signer]` naming the keystore, with where its password comes from.
fn signer_section(keystore: &Path, password_file: Option<&Path>, address: &str) -> String {
    let mut section = format!(
        "\n# The wallet ({address}): an encrypted keystore (Web3 Secret Storage, scrypt). Its password\n\
         # comes from $BARDO_KEYSTORE_PASSWORD, else password_file, else a prompt on a terminal.\n\
         # $BARDO_KEYSTORE names another keystore and $BARDO_PRIVATE_KEY a plain key; both win over this.\n\
         [signer]\nkeystore = {:?}\n",
        keystore.display().to_string()
    );
    if let Some(file) = password_file {
        section.push_str(&format!("password_file = {:?}\n", file.display().to_string()));
    }
    section.push_str(
        "# To keep the assets in a Safe this key owns (threshold 1) or is a module of, each plan one\n\
         # atomic Safe transaction (`bardo devnet up` prints the devnet's):\n\
         # mode = \"safe\"\n# safe = \"0x…\"\n# safe_key = \"owner\"\n",
    );
    section
}
