//! What the devnet benchmarks share.

use bardo_host::devnet::Anvil;
use bardo_host::devnet::snapshot::Snapshot;
use std::path::Path;

/// The repo's devnet snapshot (deployed once, cached under the target dir) and a fresh anvil
/// started from it.
pub fn devnet() -> (Snapshot, Anvil) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("root").to_owned();
    let binary = Anvil::binary(&root);
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("devnet");
    let snapshot =
        Snapshot::ensure(&binary, &root.join("devnet"), &cache, |_| {}).expect("snapshot (run `make setup`)");
    let node = snapshot.spawn(&binary).expect("anvil");
    (snapshot, node)
}
