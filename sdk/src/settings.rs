//! Typed access to the operator's settings for this plugin (`[settings]` in bardo.toml).

use crate::errors::error;
use crate::{Error, ErrorCode, config};
use serde::de::DeserializeOwned;

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
