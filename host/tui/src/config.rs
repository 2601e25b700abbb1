//! `[tui]` in bardo.toml: the stream subscriptions `bardo tui` runs itself.

use bardo_core::config::Section;
use serde::Deserialize;

/// `[tui]`: what `bardo tui` follows live. With none it follows the events journal that
/// another process (`bardo stream`, `bardo serve`) writes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TuiSettings {
    /// Stream subscriptions (`[[tui.follow]] tool = "stream_pool_state"`, `params = {…}`).
    pub follow: Vec<TuiFollow>,
}

/// One stream subscription of `bardo tui`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiFollow {
    /// The stream tool.
    pub tool: String,
    /// Its params (an inline table).
    #[serde(default = "TuiFollow::no_params")]
    pub params: serde_json::Value,
}

impl TuiFollow {
    fn no_params() -> serde_json::Value {
        serde_json::json!({})
    }
}

impl Section for TuiSettings {
    const NAME: &'static str = "tui";
}
