//! `bardo:host/config`: each plugin's operator settings, and only its own.

use super::view::CapsView;
use crate::bindings::bardo::host::config::Host;
use wasmtime::component::{HasData, Linker};

/// The interface this module serves.
pub(crate) const INTERFACE: &str = "bardo:host/config";

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
