//! What the devnet benchmarks share.

use bardo_core::Runtime;
use bardo_devnet::Anvil;
use bardo_devnet::snapshot::Snapshot;
use std::path::Path;
use std::sync::OnceLock;

/// The process's one async runtime, as a host has one.
pub(crate) fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::new().expect("runtime"))
}

/// The repo's devnet snapshot (deployed once, cached under the target dir) and a fresh anvil
/// started from it.
pub(crate) fn devnet() -> (Snapshot, Anvil) {
    // host/runtime/ sits two levels below the repository root.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("root").to_owned();
    let binary = Anvil::binary(&root);
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("devnet");
    let snapshot = Snapshot::ensure(runtime(), &binary, &root.join("devnet"), &cache, |_| {})
        .expect("snapshot (run `make setup`)");
    let node = snapshot.spawn(runtime(), &binary).expect("anvil");
    (snapshot, node)
}
