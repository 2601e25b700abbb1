//! What a plugin is to the host, by name: the `bardo:plugin` world it targets and the package
//! versions this host speaks. Shared by the capability table and the surface check.

use serde::Serialize;

/// The `bardo:plugin` package version this host implements.
pub const PLUGIN_API: &str = "0.2";
/// The `bardo:host` package version this host provides.
pub const HOST_API: &str = "0.1";

/// Which `bardo:plugin` world a component targets, detected from its exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum World {
    /// catalog + read.
    Reader,
    /// catalog + read + stream.
    Streamer,
    /// catalog + read + write.
    Writer,
}

/// `ns:pkg/iface@1.2.3` -> `ns:pkg/iface`.
pub fn unversioned(name: &str) -> &str {
    name.split_once('@').map_or(name, |(n, _)| n)
}
