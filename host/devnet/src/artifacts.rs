//! Published contract artifacts (hardhat, waffle and forge formats): ABI-free bytecode loading
//! and library linking by `linkReferences` byte offsets.

use alloy::primitives::Address;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Artifact errors.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The artifact file could not be read (npm packages not installed).
    #[error("cannot read artifact {path}: {message}; run `make setup`")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        message: String,
    },
    /// The artifact is malformed, or its bytecode cannot be linked.
    #[error("artifact {path}: {message}")]
    Invalid {
        /// The artifact, relative to `node_modules`.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// Creation bytecode plus where libraries must be linked.
pub struct Artifact {
    path: String,
    hex: String,
    /// library name -> byte offsets of its placeholders
    links: BTreeMap<String, Vec<usize>>,
}

impl Artifact {
    /// Load `rel` under `node_modules`.
    pub fn load(node_modules: &Path, rel: &str) -> Result<Self, ArtifactError> {
        let path = node_modules.join(rel);
        let invalid = |message: String| ArtifactError::Invalid { path: rel.to_owned(), message };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ArtifactError::Read { path: path.display().to_string(), message: e.to_string() })?;
        let json: Value = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        // hardhat: "bytecode": "0x..", "linkReferences"; forge: "bytecode": {"object", "linkReferences"};
        // waffle: "bytecode": "..." (no 0x) or "evm": {"bytecode": {"object"}}.
        let (code, refs) = match &json["bytecode"] {
            Value::String(s) => (s.clone(), json["linkReferences"].clone()),
            Value::Object(o) => (
                o.get("object").and_then(Value::as_str).unwrap_or_default().to_owned(),
                o.get("linkReferences").cloned().unwrap_or(Value::Null),
            ),
            _ => (
                json["evm"]["bytecode"]["object"].as_str().unwrap_or_default().to_owned(),
                json["evm"]["bytecode"]["linkReferences"].clone(),
            ),
        };
        let hex = code.trim_start_matches("0x").to_owned();
        if hex.is_empty() {
            return Err(invalid("no creation bytecode".into()));
        }
        let mut links: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        if let Value::Object(files) = refs {
            for libs in files.values() {
                for (name, places) in libs.as_object().into_iter().flatten() {
                    for place in places.as_array().into_iter().flatten() {
                        let start = place["start"]
                            .as_u64()
                            .ok_or_else(|| invalid(format!("bad link reference for {name}")))?;
                        links.entry(name.clone()).or_default().push(start as usize);
                    }
                }
            }
        }
        Ok(Self { path: rel.to_owned(), hex, links })
    }

    /// Library names this bytecode needs.
    pub fn libraries(&self) -> impl Iterator<Item = &str> {
        self.links.keys().map(String::as_str)
    }

    /// The bytecode with every library placeholder replaced by its address.
    pub fn link(&self, libraries: &BTreeMap<String, Address>) -> Result<Vec<u8>, ArtifactError> {
        let mut hex = self.hex.clone().into_bytes();
        for (name, starts) in &self.links {
            let address = libraries.get(name).ok_or_else(|| ArtifactError::Invalid {
                path: self.path.clone(),
                message: format!("library {name} is not deployed yet"),
            })?;
            let replacement = alloy::hex::encode(address.as_slice()).into_bytes();
            for start in starts {
                let at = start * 2;
                hex.get_mut(at..at + 40)
                    .ok_or_else(|| ArtifactError::Invalid {
                        path: self.path.clone(),
                        message: format!("link offset {start} out of range"),
                    })?
                    .copy_from_slice(&replacement);
            }
        }
        alloy::hex::decode(&hex).map_err(|e| ArtifactError::Invalid {
            path: self.path.clone(),
            message: format!("bytecode is not hex after linking: {e}"),
        })
    }
}
