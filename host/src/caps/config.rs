//! `bardo:host/config`: each plugin's operator settings, and only its own.

use super::CapsView;
use crate::bindings::bardo::host::config::Host;
use std::collections::BTreeMap;
use wasmtime::component::{HasData, Linker};

/// Settings per plugin name, as JSON object text.
#[derive(Debug, Default)]
pub struct ConfigCaps {
    settings: BTreeMap<String, String>,
}

impl ConfigCaps {
    /// Serve `settings` (plugin name → JSON object).
    pub fn new(settings: BTreeMap<String, serde_json::Value>) -> Self {
        Self { settings: settings.into_iter().map(|(name, v)| (name, v.to_string())).collect() }
    }
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
        let (caps, call) = t.parts();
        ConfigView { settings: caps.config.settings.get(&*call.plugin).map(String::as_str) }
    })
}

impl Host for ConfigView<'_> {
    fn settings(&mut self) -> String {
        self.settings.unwrap_or("{}").to_owned()
    }
}
