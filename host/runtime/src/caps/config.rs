//! `bardo:host/config`: each plugin's operator settings, and only its own.

use super::CapsView;
use crate::bindings::bardo::host::config::Host;
use wasmtime::component::{HasData, Linker};

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
        let (services, call) = t.parts();
        ConfigView { settings: services.settings_of(&call.plugin) }
    })
}

impl Host for ConfigView<'_> {
    fn settings(&mut self) -> String {
        self.settings.unwrap_or("{}").to_owned()
    }
}
