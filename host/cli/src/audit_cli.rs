//! `bardo audit FILE [NEW]`: a component's surface (world, imports, exports, tools, whether the
//! default policy loads it), or what changed between two builds.

use anyhow::{Context, Result};
use bardo_core::Runtime;
use bardo_runtime::engine::Engine;
use bardo_runtime::surface_audit::{self, SurfaceDiff, SurfaceReport};
use std::path::Path;
use std::process::ExitCode;

fn load_report(engine: &Engine, rt: &Runtime, file: &Path) -> Result<SurfaceReport> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    Ok(surface_audit::audit(engine.clone(), rt, &file.display().to_string(), &bytes)?)
}

pub(crate) fn run(file: &Path, new: Option<&Path>, json: bool, rt: &Runtime) -> Result<ExitCode> {
    let engine = Engine::new(None)?;
    let old = load_report(&engine, rt, file)?;
    let Some(new) = new else {
        if json {
            println!("{}", serde_json::to_string_pretty(&old)?);
        } else {
            print_report(&old);
        }
        return Ok(ExitCode::SUCCESS);
    };
    let new = load_report(&engine, rt, new)?;
    let d = surface_audit::diff(&old, &new);
    if json {
        println!("{}", serde_json::to_string_pretty(&d)?);
    } else {
        print_diff(&old, &new, &d);
    }
    if old.plugin != new.plugin {
        eprintln!("warning: comparing different plugins, `{}` and `{}`", old.plugin, new.plugin);
    }
    Ok(if d.grew || !d.incompatible.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn print_report(r: &SurfaceReport) {
    println!("plugin   {}@{}", r.plugin, r.version);
    println!("sha256   {}", r.sha256);
    match r.world {
        Some(world) => println!("world    {world:?}"),
        None => println!("world    none (no usable bardo:plugin exports)"),
    }
    println!("imports");
    for i in &r.imports {
        match i.class {
            bardo_runtime::surface_audit::ImportClass::GrantedHost => {
                let how = match bardo_runtime::caps::capability(&i.name).map(|c| c.grant) {
                    Some(bardo_runtime::caps::Grant::Operator { how, .. }) => how(&r.plugin),
                    _ => "the operator's grant".into(),
                };
                println!("  {:<48} {:?} (only if the operator grants it: {how})", i.name, i.class)
            }
            _ => println!("  {:<48} {:?}", i.name, i.class),
        }
    }
    println!("exports");
    for e in &r.exports {
        println!("  {e}");
    }
    println!("tools");
    for t in &r.tools {
        let kinds = if t.action_kinds.is_empty() {
            String::new()
        } else {
            // Read from a component not yet loaded: its kinds are not validated yet.
            let kinds: Vec<_> = t.action_kinds.iter().map(|k| bardo_core::text::one_line(k)).collect();
            format!("  serves {}", kinds.join(", "))
        };
        println!(
            "  {:<32} {:<10} {:<12} risk {:<7} {:?}{kinds}",
            bardo_core::text::one_line(&t.name),
            format!("{:?}", t.capability_tier).to_lowercase(),
            format!("{:?}", t.category).to_lowercase(),
            format!("{:?}", t.risk_tier).to_lowercase(),
            t.tick_budget
        );
    }
    match &r.policy_refusal {
        None => println!("policy   loads under the default policy"),
        Some(why) => println!("policy   REFUSED by the default policy: {why}"),
    }
}

fn print_diff(old: &SurfaceReport, new: &SurfaceReport, d: &SurfaceDiff) {
    println!("{}@{} -> {}@{}", old.plugin, old.version, new.plugin, new.version);
    print_changes(d);
}

/// The lines of `bardo audit OLD NEW` below its header.
pub(crate) fn print_changes(d: &SurfaceDiff) {
    if let Some((o, n)) = d.world {
        println!("world    {o:?} -> {n:?}");
    }
    for i in &d.added_imports {
        println!("+ import {i}");
    }
    for i in &d.removed_imports {
        println!("- import {i}");
    }
    for t in &d.added_tools {
        println!(
            "+ tool   {} ({:?}, {:?}, risk {:?})",
            bardo_core::text::one_line(&t.name),
            t.capability_tier,
            t.category,
            t.risk_tier
        );
    }
    for t in &d.removed_tools {
        println!("- tool   {t}");
    }
    for c in &d.changed_tools {
        println!(
            "~ tool   {} {}: {} -> {}{}",
            c.name,
            c.field,
            c.old,
            c.new,
            if c.grew { " (grew)" } else { "" }
        );
    }
    for c in &d.schema_changes {
        let (o, n) = c.schema_version;
        for b in &c.changes.breaking {
            println!("! params {} {b} (schema version {o} -> {n}; breaking)", c.name);
        }
        for a in &c.changes.additive {
            println!("~ params {} {a} (schema version {o} -> {n})", c.name);
        }
    }
    println!("{}", if d.grew { "surface GREW: review before approving" } else { "surface did not grow" });
    for why in &d.incompatible {
        println!("INCOMPATIBLE: {why}");
    }
}
