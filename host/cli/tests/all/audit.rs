//! `bardo audit`: real surfaces of real components, and growth between versions.

use super::engine;
use bardo_core::tool::CapabilityTier;
use bardo_host::plugin::World;
use bardo_host::surface_audit::{self, ImportClass};
use bardo_test_artifacts::{FS_IMPORT, HELLO, OVERREACH, bytes};

fn report(path: &str) -> surface_audit::SurfaceReport {
    surface_audit::audit(engine(), crate::host_runtime(), path, &bytes(path)).expect("audit")
}

#[test]
fn hello_surface() {
    let r = report(HELLO);
    assert_eq!((r.plugin.as_str(), r.version.as_str(), r.world), ("hello", "0.1.0", World::Reader));
    let class = |name: &str| r.imports.iter().find(|i| i.name.starts_with(name)).map(|i| i.class);
    assert_eq!(class("bardo:host/chain@0.1.0"), Some(ImportClass::Host));
    assert_eq!(class("bardo:host/events@0.1.0"), Some(ImportClass::Host));
    assert_eq!(class("bardo:host/signer"), None, "a reader never imports signer");
    assert_eq!(class("wasi:io/streams"), Some(ImportClass::MinimalWasi));
    assert!(r.exports.iter().any(|e| e == "bardo:plugin/read@0.1.0"));
    assert_eq!(r.tools.len(), 1);
    assert_eq!(r.tools[0].name, "hello_greet");
    assert_eq!(r.policy_refusal, None);
    assert_eq!(r.sha256.len(), 64);
}

#[test]
fn refused_components_are_still_auditable() {
    let r = report(FS_IMPORT);
    assert!(
        r.imports
            .iter()
            .any(|i| i.name.starts_with("wasi:filesystem/") && i.class == ImportClass::GrantableWasi)
    );
    assert!(r.policy_refusal.as_deref().is_some_and(|w| w.contains("wasi:filesystem")));
    let r = report(OVERREACH);
    assert!(r.imports.iter().any(|i| i.name.starts_with("bardo:host/signer")));
    assert!(r.policy_refusal.as_deref().is_some_and(|w| w.contains("signer")));
}

#[test]
fn diff_reports_growth() {
    let old = report(HELLO);
    assert!(!surface_audit::diff(&old, &old).grew, "identical surfaces do not grow");
    let grown = report(FS_IMPORT);
    let d = surface_audit::diff(&old, &grown);
    assert!(d.grew);
    assert!(d.added_imports.iter().any(|i| i.starts_with("wasi:filesystem/")), "{:?}", d.added_imports);
    assert_eq!(d.removed_tools, ["hello_greet"]);
    // Shrinking is not growth.
    assert!(
        !surface_audit::diff(&grown, &old).added_imports.iter().any(|i| i.starts_with("wasi:filesystem"))
    );

    // A tier raise on an existing tool is growth; a new read tool alone is not.
    let mut raised = old.clone();
    raised.tools[0].capability_tier = CapabilityTier::Write;
    let d = surface_audit::diff(&old, &raised);
    assert!(d.grew && d.changed_tools.iter().any(|c| c.field == "capability_tier" && c.grew));
    let mut more_reads = old.clone();
    let mut extra = old.tools[0].clone();
    extra.name = "hello_wave".into();
    more_reads.tools.push(extra);
    let d = surface_audit::diff(&old, &more_reads);
    assert_eq!(d.added_tools.len(), 1);
    assert!(!d.grew);
}
