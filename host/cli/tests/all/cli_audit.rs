//! `bardo audit`: what a component imports and the tools it declares, read before anything
//! validates it, and what changed between two versions.

use super::cli::{bardo, setup, stdout};
use bardo_test_artifacts::{FS_IMPORT, HELLO};

#[test]
fn audit_prints_surface_and_exits_1_on_growth() {
    let dir = setup();
    let o = bardo(dir.path(), &["audit", HELLO]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.contains("world    Reader")
            && out.contains("bardo:host/chain@0.1.0")
            && out.contains("hello_greet"),
        "{out}"
    );
    assert_eq!(bardo(dir.path(), &["audit", HELLO, HELLO]).status.code(), Some(0));
    let o = bardo(dir.path(), &["audit", HELLO, FS_IMPORT, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["grew"], true);
}

/// `bardo audit OLD NEW` on a breaking params change: shown, and exit 1 unless it comes with a
/// new major version.
#[test]
fn audit_of_two_versions_shows_a_breaking_params_change_and_its_schema_version() {
    use bardo_test_artifacts::{ECHO_V2, ECHO_V2_1, ECHO_V4};
    let dir = tempfile::tempdir().expect("tempdir");
    let o = bardo(dir.path(), &["audit", ECHO_V2, ECHO_V2_1]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("! params echo_get_version changes the type of `n` (schema version 1 -> 2; breaking)"),
        "{out}"
    );
    assert!(out.contains("INCOMPATIBLE: `echo_get_version`'s params change incompatibly"), "{out}");
    let o = bardo(dir.path(), &["audit", ECHO_V2, ECHO_V4]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("breaking") && !out.contains("INCOMPATIBLE"), "{out}");
}

/// `bardo audit` of the morpho plugin: a writer that reads the chain and the wallet's address and
/// nothing more (no simulation, no Uniswap SDK, no testnet cheats), and its ten lending tools —
/// the borrow the only high-risk one — each write serving its own action kind.
#[test]
fn audit_shows_the_morpho_plugins_surface() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(bardo_test_artifacts::MORPHO, dir.path().join("morpho.wasm")).expect("copy");
    let o = bardo(dir.path(), &["audit", "morpho.wasm"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    for expected in
        ["morpho@0.1.0", "world    Writer", "bardo:host/chain", "bardo:host/signer", "bardo:host/config"]
    {
        assert!(out.contains(expected), "audit shows {expected}: {out}");
    }
    for absent in [
        "bardo:host/simulate",
        "bardo:host/uniswap-sdk",
        "bardo:host/testnet",
        "wasi:sockets",
        "wasi:filesystem",
    ] {
        assert!(!out.contains(absent), "the plugin does not import {absent}: {out}");
    }
    let tools: Vec<&str> = out.lines().filter(|l| l.trim_start().starts_with("morpho_")).collect();
    assert_eq!(tools.len(), 10, "{out}");
    assert!(tools.iter().all(|l| l.contains("lending")), "{out}");
    let high: Vec<&str> = tools.iter().filter(|l| l.contains("risk high")).copied().collect();
    assert!(
        high.len() == 1 && high[0].contains("morpho_borrow") && high[0].contains("serves morpho-borrow"),
        "{out}"
    );
}

/// `bardo audit` reads a component before anything validates it: a kind written as prose for
/// the host's prompt is shown escaped on its own line, never as lines of the host's output.
#[test]
fn audit_shows_a_plugins_text_escaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = bardo(dir.path(), &["audit", bardo_test_artifacts::PROMPT_KIND]);
    let out = stdout(&o);
    assert!(out.contains("prompt_plan_swap"), "{out}");
    assert!(out.contains("swap`\\n  spends 0.00 USD"), "escaped: {out}");
    assert!(!out.lines().any(|l| l.trim_start().starts_with("spends 0.00 USD")), "no forged line: {out}");
}
