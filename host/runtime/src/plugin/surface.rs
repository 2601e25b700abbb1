//! A component's capability surface — its world, imports and exports — and the import policy:
//! `bardo:host` interfaces as the capability table grants them, the minimal WASI set, and the
//! operator's WASI grants.

use crate::caps::{Grant, capability};
pub use crate::world::{HOST_API, PLUGIN_API, World, unversioned};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use wasmtime::component::Component;

/// Imports and exports of a component, by name (`bardo:host/chain@0.1.0`, `wasi:io/poll@0.2.6`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Surface {
    /// Imported interfaces, versioned names.
    pub imports: Vec<String>,
    /// Exported interfaces, versioned names.
    pub exports: Vec<String>,
}

impl Surface {
    /// Read the surface from the component's type, without instantiating it.
    pub fn of(component: &Component, engine: &wasmtime::Engine) -> Self {
        let ty = component.component_type();
        let mut imports: Vec<String> = ty.imports(engine).map(|(name, _)| name.to_owned()).collect();
        let mut exports: Vec<String> = ty.exports(engine).map(|(name, _)| name.to_owned()).collect();
        imports.sort();
        exports.sort();
        Self { imports, exports }
    }

    /// The world, or why the component is not a Bardo plugin.
    pub fn world(&self) -> Result<World, String> {
        let exported =
            |iface: &str| self.exports.iter().any(|e| unversioned(e) == format!("bardo:plugin/{iface}"));
        for e in &self.exports {
            if let Some(version) =
                e.strip_prefix("bardo:plugin/").and_then(|rest| rest.split_once('@')).map(|(_, v)| v)
                && !version.starts_with(&format!("{PLUGIN_API}."))
            {
                return Err(format!(
                    "it exports `{e}`, but this host implements bardo:plugin@{PLUGIN_API}.x; rebuild it against bardo-sdk {PLUGIN_API}"
                ));
            }
        }
        if !exported("catalog") {
            return Err(format!(
                "it does not export `bardo:plugin/catalog@{PLUGIN_API}.x`; build it with bardo-sdk's `plugin!` macro"
            ));
        }
        if !exported("read") {
            return Err(format!("it does not export `bardo:plugin/read@{PLUGIN_API}.x`"));
        }
        match (exported("write"), exported("stream")) {
            (false, false) => Ok(World::Reader),
            (true, false) => Ok(World::Writer),
            (false, true) => Ok(World::Streamer),
            (true, true) => {
                Err("it exports both write and stream; split it into a writer and a streamer plugin".into())
            }
        }
    }
}

/// WASI interfaces every plugin may import. A `std` guest imports the io/cli set even when it
/// never uses it; stdin is empty, the environment is empty, stdout/stderr go to the host log.
/// `HashMap` needs the insecure seed; `Instant` needs the monotonic clock. Nothing here reaches
/// outside the sandbox.
pub const MINIMAL_WASI: &[&str] = &[
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
    "wasi:clocks/monotonic-clock",
];

/// WASI an operator can grant in `bardo.toml` (`[wasi] grant = [...]`): a prefix matches every
/// interface of a package (`wasi:filesystem` grants `wasi:filesystem/types` and `/preopens`).
pub const GRANTABLE_WASI: &[&str] =
    &["wasi:clocks/wall-clock", "wasi:random/random", "wasi:filesystem", "wasi:sockets"];

/// The grantable WASI entry covering `name`, if any.
pub fn grantable_package(name: &str) -> Option<&'static str> {
    GRANTABLE_WASI.iter().copied().find(|g| name == *g || name.starts_with(&format!("{g}/")))
}

/// Check every import against the world and the operator's WASI grants; the error names every
/// refused import and says why.
pub fn check_imports(surface: &Surface, world: World, grants: &BTreeSet<String>) -> Result<(), String> {
    let refusals: Vec<String> =
        surface.imports.iter().filter_map(|i| check_import(i, world, grants).err()).collect();
    if refusals.is_empty() { Ok(()) } else { Err(refusals.join("; ")) }
}

fn check_import(import: &str, world: World, grants: &BTreeSet<String>) -> Result<(), String> {
    let name = unversioned(import);
    let version = import.split_once('@').map(|(_, v)| v).unwrap_or("");
    if name == "bardo:plugin/types" {
        // Type definitions only (tool-def, write-plan, ...): no functions, no capability.
        return Ok(());
    }
    if let Some(iface) = name.strip_prefix("bardo:host/") {
        if !version.starts_with(&format!("{HOST_API}.")) {
            return Err(format!("import `{import}` refused: this host provides bardo:host@{HOST_API}.x"));
        }
        return match capability(name).map(|c| c.grant) {
            Some(Grant::Worlds(worlds)) if worlds.contains(&world) => Ok(()),
            Some(Grant::Operator { .. }) => Ok(()),
            Some(Grant::Worlds(_)) => Err(format!(
                "import `{import}` refused: a {world:?} plugin may not import `{iface}`; only writer plugins (those exporting `write`) get `simulate` and `signer`"
            )),
            None => Err(format!("import `{import}` refused: this host provides no `{iface}`")),
        };
    }
    if MINIMAL_WASI.contains(&name) {
        return Ok(());
    }
    let grantable = grantable_package(name);
    if grantable.is_some() && grants.iter().any(|g| name == g || name.starts_with(&format!("{g}/"))) {
        return Ok(());
    }
    let why = match grantable {
        _ if name.starts_with("wasi:http") => {
            "this host does not provide HTTP to plugins; read chains through `bardo:host/chain`".to_owned()
        }
        Some(pkg) => format!(
            "not in the minimal WASI set; an operator can grant it with `[wasi] grant = [\"{pkg}\"]` in bardo.toml"
        ),
        None => "neither a bardo:host interface nor WASI this host provides".to_owned(),
    };
    Err(format!("import `{import}` refused: {why}"))
}
