//! Typed access to the operator's settings for this plugin (`[settings]` in bardo.toml).

use crate::errors::error;
use crate::{ChainId, Error, ErrorCode, config};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

/// This plugin's settings, parsed as `T`. Malformed settings are the operator's to fix, so the
/// error says so (`denied`: the call cannot succeed until the configuration changes).
pub fn load<T: DeserializeOwned>() -> Result<T, Error> {
    let json = config::settings();
    serde_json::from_str(&json).map_err(|e| {
        error(
            ErrorCode::Denied,
            format!("this plugin's settings in bardo.toml are invalid: {e}; fix `[settings]`"),
        )
    })
}

/// Settings kept per chain: `{"chains": {"<chain id>": T}}`, the shape every plugin with
/// per-chain venues uses.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)] // a misspelt key is the operator's mistake, not an empty book
struct PerChain<T> {
    #[serde(default = "BTreeMap::new")]
    chains: BTreeMap<String, T>,
}

/// This plugin's settings for `chain_id` in the per-chain shape (`chains.<id>`), or none when
/// the operator gave that chain nothing.
pub fn of_chain<T: DeserializeOwned>(chain_id: ChainId) -> Result<Option<T>, Error> {
    let mut all: PerChain<T> = load()?;
    Ok(all.chains.remove(&chain_id.to_string()))
}
