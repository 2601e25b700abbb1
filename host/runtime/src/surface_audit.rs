//! The surface audit (`bardo audit`): a component's capability surface, and what grew between
//! two versions. Not the write path's audit log, which is `safety::audit_log`.

use crate::engine::{Engine, Limits};
use crate::plugin::surface::{self, MINIMAL_WASI, Surface, World, unversioned};
use crate::plugin::{Host, LoadError, WasiPolicy};
use crate::services::Services;
use bardo_core::Runtime;
use bardo_core::profile::Profile;
use bardo_core::schema_compat::{self, SchemaChanges};
use bardo_core::tool::{CapabilityTier, Category, RiskTier, TickBudget};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How the default policy treats an import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImportClass {
    /// A `bardo:host` interface.
    Host,
    /// A `bardo:host` interface the operator grants (see `caps::Grant::Operator`).
    GrantedHost,
    /// In the minimal WASI set every plugin gets.
    MinimalWasi,
    /// WASI an operator must grant.
    GrantableWasi,
    /// Never provided.
    Refused,
}

/// One import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Import {
    /// The import, e.g. `bardo:host/chain@0.1.0`.
    pub name: String,
    /// How the default policy treats it.
    pub class: ImportClass,
}

/// One declared tool, as far as the surface goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolSurface {
    /// The tool's name.
    pub name: String,
    /// Its category.
    pub category: Category,
    /// Read, write or privileged.
    pub capability_tier: CapabilityTier,
    /// Its declared value at risk.
    pub risk_tier: RiskTier,
    /// Its wall-clock budget per call.
    pub tick_budget: TickBudget,
    /// The action kinds a write tool serves (`preview KIND` reaches it); empty for reads.
    pub action_kinds: Vec<String>,
    /// The version of its params and result schemas.
    pub schema_version: u32,
    /// Its params' JSON Schema, compared between versions for compatibility.
    pub input_schema: serde_json::Value,
}

/// A component's capability surface.
#[derive(Debug, Clone, Serialize)]
pub struct SurfaceReport {
    /// The plugin's manifest name.
    pub plugin: String,
    /// Its manifest version.
    pub version: String,
    /// sha256 of the component bytes, hex.
    pub sha256: String,
    /// The world detected from its exports; none when it exports no usable plugin world (then
    /// `policy_refusal` says why, and `tools` is empty: no manifest was read).
    pub world: Option<World>,
    /// Every import, classified.
    pub imports: Vec<Import>,
    /// Every exported interface.
    pub exports: Vec<String>,
    /// Every declared tool.
    pub tools: Vec<ToolSurface>,
    /// None when the default policy would load it; else why it would be refused.
    pub policy_refusal: Option<String>,
}

/// Audit a component's bytes (the manifest is read in a sandboxed instance under the default
/// limits, whatever the component imports).
pub fn audit(
    engine: Engine,
    runtime: &Runtime,
    label: &str,
    bytes: &[u8],
) -> Result<SurfaceReport, LoadError> {
    let host = Host::new(
        engine,
        Arc::new(Services::empty(runtime)),
        Profile::parse("dev")
            .map_err(|e| LoadError::Refused { plugin: label.to_owned(), reason: e.to_string() })?,
        Limits::default(),
        WasiPolicy::default(),
    )?;
    let compiled = host.compile(label, bytes)?;
    let (sha256, surface) = (compiled.sha256.clone(), compiled.surface.clone());
    let p = match host.prepare_compiled(label, compiled, false) {
        Ok(p) => p,
        // Refused for its exports or its manifest: the auditor still sees what it imports.
        Err(LoadError::Refused { reason, .. } | LoadError::Manifest { reason, .. }) => {
            return Ok(surface_only(label, sha256, surface, reason));
        }
        Err(e) => return Err(e),
    };
    let policy_refusal = surface::check_imports(&p.surface, p.world, &BTreeSet::new()).err();
    let imports =
        p.surface.imports.iter().map(|name| Import { name: name.clone(), class: classify(name) }).collect();
    let tools = p
        .manifest
        .tools
        .iter()
        .map(|t| ToolSurface {
            name: t.name.clone(),
            category: t.category,
            capability_tier: t.capability_tier,
            risk_tier: t.risk_tier,
            tick_budget: t.tick_budget,
            action_kinds: t.action_kinds.clone(),
            schema_version: t.schema_version,
            input_schema: t.input_schema.clone(),
        })
        .collect();
    Ok(SurfaceReport {
        plugin: p.manifest.name.clone(),
        version: p.manifest.version.clone(),
        sha256: p.sha256.clone(),
        world: Some(p.world),
        imports,
        exports: p.surface.exports.clone(),
        tools,
        policy_refusal,
    })
}

/// The report of a component whose world or manifest is unusable: its imports and exports, and
/// why it is refused.
fn surface_only(label: &str, sha256: String, surface: Surface, reason: String) -> SurfaceReport {
    SurfaceReport {
        plugin: label.to_owned(),
        version: String::new(),
        sha256,
        world: surface.world().ok(),
        imports: surface
            .imports
            .iter()
            .map(|name| Import { name: name.clone(), class: classify(name) })
            .collect(),
        exports: surface.exports,
        tools: Vec::new(),
        policy_refusal: Some(reason),
    }
}

fn classify(import: &str) -> ImportClass {
    let name = unversioned(import);
    if let Some(capability) = crate::caps::capability(name) {
        match capability.grant {
            crate::caps::Grant::Operator { .. } => ImportClass::GrantedHost,
            crate::caps::Grant::Worlds(_) => ImportClass::Host,
        }
    } else if name == "bardo:plugin/types" {
        ImportClass::Host
    } else if MINIMAL_WASI.contains(&name) {
        ImportClass::MinimalWasi
    } else if surface::grantable_package(name).is_some() {
        ImportClass::GrantableWasi
    } else {
        ImportClass::Refused
    }
}

/// A change of one tool between versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolChange {
    /// The tool that changed.
    pub name: String,
    /// What changed: `category`, `capability_tier`, `risk_tier`, `tick_budget` or `action_kinds`.
    pub field: &'static str,
    /// The old value.
    pub old: String,
    /// The new value.
    pub new: String,
    /// Whether this change widens what the tool can do.
    pub grew: bool,
}

/// What changed between two versions of a component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SurfaceDiff {
    /// The world, old and new, when it changed.
    pub world: Option<(World, World)>,
    /// Imports the new version adds (unversioned).
    pub added_imports: Vec<String>,
    /// Imports it no longer has.
    pub removed_imports: Vec<String>,
    /// Tools it adds.
    pub added_tools: Vec<ToolSurface>,
    /// Tools it no longer declares.
    pub removed_tools: Vec<String>,
    /// Tools whose category, tier or budget changed.
    pub changed_tools: Vec<ToolChange>,
    /// New imports, a wider world, any new tool, a higher tier or risk, or a new action kind.
    pub grew: bool,
    /// Tools whose params schema changed, and how.
    pub schema_changes: Vec<SchemaChange>,
    /// Why the new version may not replace the old at all (a breaking params change or a
    /// removed tool without a new major version, a schema change without a new schema version):
    /// an update with any is refused; the operator keeps the old version or pins both.
    pub incompatible: Vec<String>,
}

/// How one tool's params schema changed between versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaChange {
    /// The tool.
    pub name: String,
    /// Its schema version, old and new.
    pub schema_version: (u32, u32),
    /// The changes, breaking and additive.
    pub changes: SchemaChanges,
}

/// The schema changes between `old` and `new`, and what makes the update incompatible.
fn schema_diff(old: &SurfaceReport, new: &SurfaceReport) -> (Vec<SchemaChange>, Vec<String>) {
    let major = schema_compat::major_bump(&old.version, &new.version);
    let needs = || {
        format!(
            "{} is not a new major version after {} (that would be {})",
            new.version,
            old.version,
            schema_compat::next_major(&old.version)
        )
    };
    let (mut changes, mut incompatible) = (Vec::new(), Vec::new());
    for o in &old.tools {
        let Some(n) = new.tools.iter().find(|t| t.name == o.name) else {
            if !major {
                incompatible.push(format!("removes tool `{}`, but {}", o.name, needs()));
            }
            continue;
        };
        let c = schema_compat::compare(&o.input_schema, &n.input_schema);
        if n.schema_version < o.schema_version {
            incompatible.push(format!(
                "`{}`'s schema version goes down ({} -> {})",
                o.name, o.schema_version, n.schema_version
            ));
        }
        if c.is_empty() {
            continue;
        }
        if !c.breaking.is_empty() && !major {
            incompatible.push(format!(
                "`{}`'s params change incompatibly ({}), but {}",
                o.name,
                c.breaking.join(", "),
                needs()
            ));
        }
        if n.schema_version <= o.schema_version {
            incompatible.push(format!(
                "`{}`'s params change ({}) but its schema version stays {}; increment it",
                o.name,
                c.breaking.iter().chain(&c.additive).cloned().collect::<Vec<_>>().join(", "),
                o.schema_version
            ));
        }
        changes.push(SchemaChange {
            name: o.name.clone(),
            schema_version: (o.schema_version, n.schema_version),
            changes: c,
        });
    }
    (changes, incompatible)
}

/// Compare two surfaces. Imports compare without their versions (a WASI patch bump is not growth).
pub fn diff(old: &SurfaceReport, new: &SurfaceReport) -> SurfaceDiff {
    let names = |r: &SurfaceReport| {
        r.imports.iter().map(|i| unversioned(&i.name).to_owned()).collect::<BTreeSet<_>>()
    };
    let (old_imports, new_imports) = (names(old), names(new));
    let added_imports: Vec<String> = new_imports.difference(&old_imports).cloned().collect();
    let removed_imports: Vec<String> = old_imports.difference(&new_imports).cloned().collect();
    let old_tools: BTreeMap<&str, &ToolSurface> = old.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let new_tools: BTreeMap<&str, &ToolSurface> = new.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let added_tools: Vec<ToolSurface> =
        new.tools.iter().filter(|t| !old_tools.contains_key(t.name.as_str())).cloned().collect();
    let removed_tools: Vec<String> = old
        .tools
        .iter()
        .filter(|t| !new_tools.contains_key(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect();
    let mut changed_tools = Vec::new();
    for (name, n) in &new_tools {
        let Some(o) = old_tools.get(name) else {
            continue;
        };
        let mut change = |field: &'static str, old: String, new: String, grew: bool| {
            if old != new {
                changed_tools.push(ToolChange { name: (*name).to_owned(), field, old, new, grew });
            }
        };
        change(
            "capability_tier",
            format!("{:?}", o.capability_tier),
            format!("{:?}", n.capability_tier),
            n.capability_tier > o.capability_tier,
        );
        change(
            "risk_tier",
            format!("{:?}", o.risk_tier),
            format!("{:?}", n.risk_tier),
            n.risk_tier > o.risk_tier,
        );
        change("category", format!("{:?}", o.category), format!("{:?}", n.category), false);
        change("tick_budget", format!("{:?}", o.tick_budget), format!("{:?}", n.tick_budget), false);
        // A kind the tool did not serve before routes new previews to it: growth.
        change(
            "action_kinds",
            o.action_kinds.join(","),
            n.action_kinds.join(","),
            n.action_kinds.iter().any(|k| !o.action_kinds.contains(k)),
        );
    }
    let world = match (old.world, new.world) {
        (Some(o), Some(n)) if o != n => Some((o, n)),
        _ => None,
    };
    let grew = !added_imports.is_empty()
        || world.is_some_and(|(o, n)| n > o)
        // A component with no usable world cannot be judged smaller: never waved through.
        || new.world.is_none()
        || !added_tools.is_empty()
        || changed_tools.iter().any(|c| c.grew);
    let (schema_changes, incompatible) = schema_diff(old, new);
    SurfaceDiff {
        world,
        added_imports,
        removed_imports,
        added_tools,
        removed_tools,
        changed_tools,
        grew,
        schema_changes,
        incompatible,
    }
}

/// One line naming what grew (or changed) in `d`.
pub fn summary(d: &SurfaceDiff) -> String {
    let mut parts = Vec::new();
    if let Some((o, n)) = d.world {
        parts.push(format!("world {o:?} -> {n:?}"));
    }
    if !d.added_imports.is_empty() {
        parts.push(format!("new imports {}", d.added_imports.join(", ")));
    }
    for t in &d.added_tools {
        parts.push(format!("new {:?} tool {}", t.capability_tier, t.name));
    }
    for c in d.changed_tools.iter().filter(|c| c.grew) {
        parts.push(format!("{} {} {} -> {}", c.name, c.field, c.old, c.new));
    }
    if parts.is_empty() { "no growth".into() } else { parts.join("; ") }
}
