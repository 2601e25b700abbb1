//! `bardo audit`: real surfaces of real components, and growth between versions.

use bardo_core::tool::CapabilityTier;
use bardo_runtime::plugin::World;
use bardo_runtime::surface_audit::{self, ImportClass};
use bardo_test_artifacts::{FS_IMPORT, HELLO, NO_CATALOG, OVERREACH, bytes};
use bardo_test_support::engine;

fn report(path: &str) -> surface_audit::SurfaceReport {
    surface_audit::audit(engine(), crate::host_runtime(), path, &bytes(path)).expect("audit")
}

#[test]
fn hello_surface() {
    let r = report(HELLO);
    assert_eq!((r.plugin.as_str(), r.version.as_str(), r.world), ("hello", "0.1.0", Some(World::Reader)));
    let class = |name: &str| r.imports.iter().find(|i| i.name.starts_with(name)).map(|i| i.class);
    assert_eq!(class("bardo:host/chain@0.1.0"), Some(ImportClass::Host));
    assert_eq!(class("bardo:host/events@0.1.0"), Some(ImportClass::Host));
    assert_eq!(class("bardo:host/signer"), None, "a reader never imports signer");
    assert_eq!(class("wasi:io/streams"), Some(ImportClass::MinimalWasi));
    assert!(r.exports.iter().any(|e| e == "bardo:plugin/read@0.2.0"));
    assert_eq!(r.tools.len(), 1);
    assert_eq!(r.tools[0].name, "hello_greet");
    assert_eq!(r.policy_refusal, None);
    assert_eq!(r.sha256.len(), 64);
}

#[test]
fn the_uniswap_sdk_is_an_import_the_operator_grants() {
    let r = report(bardo_test_artifacts::UNISWAP);
    let sdk = r.imports.iter().find(|i| i.name.starts_with("bardo:host/uniswap-sdk@0.1")).expect("imported");
    assert_eq!(sdk.class, ImportClass::GrantedHost);
    assert_eq!(r.policy_refusal, None, "loading does not wait for the grant: the call does");
    let hello = report(HELLO);
    assert!(
        !hello.imports.iter().any(|i| i.name.contains("uniswap-sdk")),
        "only what a plugin uses is imported"
    );
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
    // No plugin world at all (no catalog export): no manifest to read, but the imports and
    // exports are still shown, with the reason it is refused.
    let r = report(NO_CATALOG);
    assert_eq!(r.world, None);
    assert!(r.tools.is_empty());
    assert!(
        r.imports
            .iter()
            .any(|i| i.name.starts_with("wasi:filesystem/") && i.class == ImportClass::GrantableWasi),
        "{:?}",
        r.imports
    );
    assert!(!r.exports.iter().any(|e| e.starts_with("bardo:plugin/")), "{:?}", r.exports);
    assert!(r.policy_refusal.as_deref().is_some_and(|w| w.contains("bardo:plugin/catalog")), "{r:?}");
    assert_eq!(r.sha256.len(), 64);
    // Compared with a real plugin, a component of no known world is growth, never a shrink.
    assert!(surface_audit::diff(&report(HELLO), &r).grew);
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

    // A tier raise on an existing tool is growth; so is any new tool, read tools included (a
    // new tool is new behaviour an operator approves), and a new action kind on a write tool.
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
    assert!(d.grew);
    let mut writer = old.clone();
    writer.tools[0].capability_tier = CapabilityTier::Write;
    writer.tools[0].action_kinds = vec!["swap".into()];
    let mut more_kinds = writer.clone();
    more_kinds.tools[0].action_kinds.push("add_liquidity".into());
    let d = surface_audit::diff(&writer, &more_kinds);
    assert!(d.grew && d.changed_tools.iter().any(|c| c.field == "action_kinds" && c.grew), "{d:?}");
    assert!(!surface_audit::diff(&more_kinds, &writer).grew, "serving fewer kinds is not growth");
}
