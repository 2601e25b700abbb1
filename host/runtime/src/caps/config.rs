//! `bardo:host/config`: each plugin's operator settings, and only its own.

use super::view::CapsView;
use crate::bindings::bardo::host::config::Host;
use std::collections::BTreeMap;
use std::path::PathBuf;
use wasmtime::component::{HasData, Linker};

/// The interface this module serves.
pub(crate) const INTERFACE: &str = "bardo:host/config";

/// The context: operator settings per plugin (`[settings]` in bardo.toml).
#[derive(Debug, Default)]
pub struct Settings {
    /// Settings per plugin name, as JSON object text.
    by_plugin: BTreeMap<String, String>,
    /// Plugins whose settings file is missing, with its path: their tools answer `denied`.
    missing: BTreeMap<String, PathBuf>,
}

impl Settings {
    /// `settings` (plugin name → JSON object); `missing`: plugins whose settings file does not
    /// exist (each logged once here, as a warning).
    pub fn new(settings: BTreeMap<String, serde_json::Value>, missing: BTreeMap<String, PathBuf>) -> Self {
        for (plugin, path) in &missing {
            tracing::warn!(
                "plugin `{plugin}`: its settings file {} does not exist; its tools answer `denied` until it does",
                path.display()
            );
        }
        let by_plugin = settings.into_iter().map(|(name, v)| (name, v.to_string())).collect();
        Self { by_plugin, missing }
    }

    /// The settings of plugin `name`, as JSON object text (an old version served side by side,
    /// `name@version`, has its plugin's).
    pub fn of(&self, name: &str) -> Option<&str> {
        self.by_plugin.get(plugin_name(name)).map(String::as_str)
    }

    /// Where plugin `name`'s settings file should be, if it is missing.
    pub fn missing(&self, name: &str) -> Option<&PathBuf> {
        self.missing.get(plugin_name(name))
    }
}

fn plugin_name(name: &str) -> &str {
    name.split_once('@').map_or(name, |(plugin, _)| plugin)
}

/// The config import as one call sees it: the calling plugin's entry.
pub struct ConfigView<'a> {
    settings: Option<&'a str>,
}

struct HasConfig;
impl HasData for HasConfig {
    type Data<'a> = ConfigView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::config::add_to_linker::<T, HasConfig>(linker, |t| {
        let caps = t.caps();
        ConfigView { settings: caps.settings.of(&caps.call.plugin) }
    })
}

impl Host for ConfigView<'_> {
    fn settings(&mut self) -> String {
        self.settings.unwrap_or("{}").to_owned()
    }
}
