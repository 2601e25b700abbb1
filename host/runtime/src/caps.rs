//! The host side of the `bardo:host` imports: one module per WIT interface (a view of its
//! context in `services`, `impl Host for View`, `add_to_linker`), each declared once in
//! [`CAPABILITIES`] — its interface, who is granted it, what it is for, how it links. That one
//! table links the imports, checks a component's imports at load (`plugin::surface`), decides
//! the operator's grants for each plugin and classifies imports for `bardo audit`. Nothing
//! outside this module and `plugin` sees binding types.

pub mod chain;
pub mod config;
pub(crate) mod convert;
pub mod events;
pub mod memory;
pub mod signer;
pub mod simulate;
pub(crate) mod state;
pub mod testnet;
pub mod uniswap_sdk;
pub mod view;

use crate::services::Services;
use crate::world::World;
use bardo_core::profile::Profile;
use bardo_core::tool::{Category, Manifest};
use state::CallState;
use wasmtime::component::{HasSelf, Linker};

pub use state::{Preopen, WasiPolicy};
pub use view::{CallCtx, CapsCtxView, CapsView, InlineAttempt};

/// How a plugin comes to use a host interface.
#[derive(Clone, Copy)]
pub enum Grant {
    /// By its world: a plugin exporting one of these may import it, and uses it.
    Worlds(&'static [World]),
    /// By the operator: any plugin may import it (loading does not depend on the grant, so a
    /// plugin's other tools work where it is not granted), and only the plugins `granted`
    /// accepts — decided once, when the plugin is loaded — may use it; the others are answered
    /// `denied`, saying how to grant it.
    Operator {
        /// Whether the operator granted it to the plugin of `manifest`, given the host's
        /// services (built from bardo.toml) and its profile.
        granted: fn(services: &Services, profile: &Profile, manifest: &Manifest) -> bool,
        /// How the operator grants it to plugin `name`, for `bardo audit`.
        how: fn(name: &str) -> String,
    },
}

/// One `bardo:host` interface.
pub struct Capability {
    /// `bardo:host/chain`, without a version (this host provides `bardo:host@0.1.x`).
    pub interface: &'static str,
    /// Who gets it.
    pub grant: Grant,
    /// What it gives a plugin, for `bardo audit`.
    pub summary: &'static str,
    link: fn(&mut Linker<CallState>) -> wasmtime::Result<()>,
}

const EVERY_WORLD: &[World] = &[World::Reader, World::Streamer, World::Writer];
const WRITERS: &[World] = &[World::Writer];

/// Every host interface, in the order they are linked.
pub const CAPABILITIES: &[Capability] = &[
    Capability {
        interface: "bardo:host/types",
        grant: Grant::Worlds(EVERY_WORLD),
        summary: "shared types only (no functions)",
        link: link_types,
    },
    Capability {
        interface: chain::INTERFACE,
        grant: Grant::Worlds(EVERY_WORLD),
        summary: "read-only RPC on the configured chains",
        link: chain::add_to_linker::<CallState>,
    },
    Capability {
        interface: events::INTERFACE,
        grant: Grant::Worlds(EVERY_WORLD),
        summary: "progress steps, domain events and log lines, bounded per call",
        link: events::add_to_linker::<CallState>,
    },
    Capability {
        interface: config::INTERFACE,
        grant: Grant::Worlds(EVERY_WORLD),
        summary: "the plugin's own operator settings",
        link: config::add_to_linker::<CallState>,
    },
    Capability {
        interface: simulate::INTERFACE,
        grant: Grant::Worlds(WRITERS),
        summary: "dry runs of calls on a fork",
        link: simulate::add_to_linker::<CallState>,
    },
    Capability {
        interface: signer::INTERFACE,
        grant: Grant::Worlds(WRITERS),
        summary: "the wallet's address (never a signature)",
        link: signer::add_to_linker::<CallState>,
    },
    Capability {
        interface: uniswap_sdk::INTERFACE,
        grant: Grant::Operator { granted: sidecar_grant, how: uniswap_sdk::how_to_grant },
        summary: "routes by Uniswap's own SDKs over pools the host reads",
        link: uniswap_sdk::add_to_linker::<CallState>,
    },
    Capability {
        interface: testnet::INTERFACE,
        grant: Grant::Operator { granted: devnet_grant, how: testnet::how_to_grant },
        summary: "a devnet's cheat codes, on chains marked `devnet = true`",
        link: testnet::add_to_linker::<CallState>,
    },
    Capability {
        interface: memory::INTERFACE,
        grant: Grant::Operator { granted: memory_grant, how: memory::how_to_grant },
        summary: "the agent's memory: episodes, reflections and insights (never read by the safety chain)",
        link: memory::add_to_linker::<CallState>,
    },
];

/// The capability named `interface` (versioned or not), if this host provides it.
pub fn capability(interface: &str) -> Option<&'static Capability> {
    let name = crate::world::unversioned(interface);
    CAPABILITIES.iter().find(|c| c.interface == name)
}

/// The operator-granted interfaces the plugin of `manifest` may use, decided by each one's grant.
pub(crate) fn operator_grants(
    services: &Services,
    profile: &Profile,
    manifest: &Manifest,
) -> std::collections::BTreeSet<&'static str> {
    CAPABILITIES
        .iter()
        .filter(
            |c| matches!(c.grant, Grant::Operator { granted, .. } if granted(services, profile, manifest)),
        )
        .map(|c| c.interface)
        .collect()
}

/// Routes go to the plugins listed in `[sidecar] grant` of a host running a sidecar.
fn sidecar_grant(services: &Services, _: &Profile, manifest: &Manifest) -> bool {
    services.uniswap_sdk.as_ref().is_some_and(|sdk| sdk.grants_to(&manifest.name))
}

/// Cheat codes go to every plugin of a host whose profile selects the `testnet` category (the
/// `dev` profile), and to a plugin made only of `bootstrap` tools where the profile selects
/// that category — funding the wallet on a devnet is first-run setup. Either way they change
/// only chains marked `devnet = true`, so a plugin that calls itself a bootstrap plugin gains
/// nothing outside a devnet.
fn devnet_grant(_: &Services, profile: &Profile, manifest: &Manifest) -> bool {
    let categories = profile.categories();
    categories.contains(&Category::Testnet)
        || (categories.contains(&Category::Bootstrap)
            && !manifest.tools.is_empty()
            && manifest.tools.iter().all(|t| t.category == Category::Bootstrap))
}

/// Memory goes to a plugin made only of `memory` tools, when the host keeps memory and the
/// profile counts the `memory` capability (the `learning` profile with memory on).
fn memory_grant(services: &Services, profile: &Profile, manifest: &Manifest) -> bool {
    services.memory.is_some()
        && profile.has(bardo_core::tool::RequiredCapability::Memory)
        && !manifest.tools.is_empty()
        && manifest.tools.iter().all(|t| t.category == Category::Memory)
}

fn link_types(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::types::add_to_linker::<CallState, HasSelf<CallState>>(linker, |t| t)
}

/// Define every `bardo:host` import in `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    CAPABILITIES.iter().try_for_each(|c| (c.link)(linker))
}
