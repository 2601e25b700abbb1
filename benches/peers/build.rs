//! Builds the Extism guest: `wasm32-wasip2` is the one wasm target this project installs, and
//! its linker can stop at the core module (`--skip-wit-component`), which is what Extism runs.
//! The nested cargo uses its own target directory, so it never waits on the outer build's lock.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root =
        manifest.parent().and_then(Path::parent).expect("benches/peers sits two levels below the root");
    for dir in ["benches/peers/guest-extism", "tests/programs/bench-work", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let target_dir = root.join("target").join("peers-guest");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["build", "--release", "--locked", "--target", "wasm32-wasip2", "-p", "peers-guest-extism"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env("CARGO_ENCODED_RUSTFLAGS", "-Clink-arg=--skip-wit-component")
        .status()
        .expect("cannot run cargo to build the Extism guest");
    assert!(status.success(), "building the Extism guest failed (cargo says why above)");
    let wasm = target_dir.join("wasm32-wasip2/release/peers_guest_extism.wasm");
    assert!(wasm.exists(), "{} is missing", wasm.display());
    println!("cargo:rustc-env=EXTISM_GUEST={}", wasm.display());
}
