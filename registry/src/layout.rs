//! The Wasm OCI artifact layout (CNCF TAG Runtime's; what `wkg` pushes and reads): its media
//! types and its config document, whose `component` section names the world a component
//! imports and exports — read here from the component's own top-level imports and exports
//! (wasmtime's wasmparser: no second wasm-tools release in the build for this).

use serde::{Deserialize, Serialize};

/// The manifest's media type.
pub const WASM_MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config's media type.
pub const WASM_MANIFEST_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The one layer's media type: the component's bytes.
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The config's `architecture`.
pub const WASM_ARCHITECTURE: &str = "wasm";
/// The config's `os` for a component (a core module's is `wasip1`).
pub const COMPONENT_OS: &str = "wasip2";

/// The config document (`application/vnd.wasm.config.v0+json`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// When it was published (RFC 3339; kept as the publisher wrote it).
    pub created: String,
    /// Who published it, if they said.
    pub author: Option<String>,
    /// `wasm`.
    pub architecture: String,
    /// `wasip2` for a component.
    pub os: String,
    /// The digests of the layers, in order: the one component layer.
    pub layer_digests: Vec<String>,
    /// The component's world; absent for a core module.
    pub component: Option<Component>,
}

/// A component's world as the config lists it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Component {
    /// What it exports (`bardo:plugin/read@0.2.0`).
    pub exports: Vec<String>,
    /// What it imports (`bardo:host/chain@0.1.0`, `wasi:io/streams@0.2.6`).
    pub imports: Vec<String>,
    /// The world it targets, if the publisher named one (metadata for indexing).
    pub target: Option<String>,
}

impl Component {
    /// The names `wasm` imports and exports at its top level — its world's imports and exports,
    /// as `wkg` lists them. Errors when `wasm` is not a component.
    pub fn of(wasm: &[u8]) -> Result<Self, String> {
        use wasmparser::{Parser, Payload};
        if !Parser::is_component(wasm) {
            return Err("not a WebAssembly component (plugins are wasip2 components)".into());
        }
        let (mut imports, mut exports) = (Vec::new(), Vec::new());
        // parse_all walks nested modules and components too; only depth 1 is the component's own.
        let mut depth = 0usize;
        for payload in Parser::new(0).parse_all(wasm) {
            match payload.map_err(|e| format!("unreadable component: {e}"))? {
                Payload::Version { .. } => depth += 1,
                Payload::End(_) => depth = depth.saturating_sub(1),
                Payload::ComponentImportSection(section) if depth == 1 => {
                    for import in section {
                        imports.push(
                            import.map_err(|e| format!("unreadable import: {e}"))?.name.name.to_owned(),
                        );
                    }
                }
                Payload::ComponentExportSection(section) if depth == 1 => {
                    for export in section {
                        exports.push(
                            export.map_err(|e| format!("unreadable export: {e}"))?.name.name.to_owned(),
                        );
                    }
                }
                _ => {}
            }
        }
        Ok(Self { exports, imports, target: None })
    }
}

impl WasmConfig {
    /// The config of a component layer published now; `layer_digest` is its bytes' (the caller
    /// has hashed them for the push).
    pub fn for_component(wasm: &[u8], layer_digest: &str, author: Option<String>) -> Result<Self, String> {
        Ok(Self {
            created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            author,
            architecture: WASM_ARCHITECTURE.into(),
            os: COMPONENT_OS.into(),
            layer_digests: vec![layer_digest.to_owned()],
            component: Some(Component::of(wasm)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_components_world_is_its_top_level_imports_and_exports_and_a_module_is_refused() {
        // A component importing an interface and exporting one, with a nested core module whose
        // own imports and exports are not the component's.
        let wasm = wat::parse_str(
            r#"(component
                 (import "wasi:io/error@0.2.6" (instance))
                 (core module $m (import "env" "f" (func)) (func (export "g")))
                 (instance $i)
                 (export "bardo:plugin/read@0.2.0" (instance $i)))"#,
        )
        .expect("wat");
        let component = Component::of(&wasm).expect("a component");
        assert_eq!(component.imports, ["wasi:io/error@0.2.6"]);
        assert_eq!(component.exports, ["bardo:plugin/read@0.2.0"]);
        let module = wat::parse_str("(module)").expect("wat");
        assert!(Component::of(&module).expect_err("a module").contains("not a WebAssembly component"));
        assert!(Component::of(b"\0asm garbage").is_err());
        // The config's field names are the layout's (camelCase), as wkg reads them.
        let config = WasmConfig::for_component(&wasm, &crate::sha256_digest(&wasm), None).expect("config");
        let json = serde_json::to_value(&config).expect("json");
        assert_eq!(json["layerDigests"][0], crate::sha256_digest(&wasm));
        assert_eq!((&json["architecture"], &json["os"]), (&"wasm".into(), &"wasip2".into()));
        assert_eq!(json["component"]["imports"][0], "wasi:io/error@0.2.6");
    }
}
