//! The docs' commands, run: every ```sh block of the README, `docs/` and the SDK's README runs
//! as a `sh -e` script, the blocks of one file in order in one scratch directory — the repo's
//! `bardo.toml` (its devnet moved to a free port), the repo's plugins in `.bardo/plugins`, `bardo`
//! on `PATH` — as a newcomer who did the `sh norun` steps (`make plugins`) would run them. A
//! command the docs show that no longer works fails here.

use bardo_test_support::{root, snapshot, target_tmp};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The files whose ```sh blocks are run.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("sdk/README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The executed blocks of a Markdown text: fenced with exactly ```sh (```sh norun is shown only),
/// each with the line it starts on.
fn executed_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        match &mut open {
            None if line.trim_end() == "```sh" => open = Some((n + 1, String::new())),
            None => {}
            Some(_) if line.trim_start().starts_with("```") => blocks.extend(open.take()),
            Some((_, block)) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    assert!(open.is_none(), "an unclosed ```sh block");
    blocks
}

/// A scratch directory as the quick start leaves the checkout after `make plugins`: the repo's
/// `bardo.toml` with its devnet on `port`, the plugins, the sidecar; the compiled plugins and the
/// devnet's deployed state shared between runs (they depend only on their inputs).
fn scratch(port: u16) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = std::fs::read_to_string(root().join("bardo.toml")).expect("bardo.toml");
    let devnet_rpc = "rpc = \"http://127.0.0.1:18545\"";
    assert!(config.contains(devnet_rpc), "the repo's bardo.toml points its devnet at 18545");
    let config = config.replace(devnet_rpc, &format!("rpc = \"http://127.0.0.1:{port}\""));
    // The second chain on a free port of its own too: 18546 may be another devnet's.
    let second_rpc = "rpc = \"http://127.0.0.1:18546\"";
    assert!(config.contains(second_rpc), "the repo's bardo.toml points its second chain at 18546");
    let second = std::iter::repeat_with(super::free_port).find(|p| *p != port).expect("a free port");
    let config = config.replace(second_rpc, &format!("rpc = \"http://127.0.0.1:{second}\""));
    std::fs::write(dir.path().join("bardo.toml"), config).expect("bardo.toml");
    let plugins = dir.path().join(".bardo/plugins");
    std::fs::create_dir_all(&plugins).expect(".bardo/plugins");
    use bardo_test_artifacts as a;
    for (name, file) in [
        ("hello", a::HELLO),
        ("uniswap", a::UNISWAP),
        ("aave", a::AAVE),
        ("streaming", a::STREAMING),
        ("wallet", a::WALLET),
        ("testnet", a::TESTNET),
        ("intelligence", a::INTELLIGENCE),
        ("safety", a::SAFETY),
        ("vault", a::VAULT),
        ("bootstrap", a::BOOTSTRAP),
        ("identity", a::IDENTITY),
        ("morpho", a::MORPHO),
        ("pendle", a::PENDLE),
        ("memory", a::MEMORY),
        ("bridge", a::BRIDGE),
    ] {
        std::fs::copy(file, plugins.join(format!("{name}.wasm"))).expect("copy plugin");
    }
    let link =
        |from: &Path, to: &str| std::os::unix::fs::symlink(from, dir.path().join(to)).expect("symlink");
    link(&root().join("sidecar"), "sidecar");
    link(&root().join(".cache"), ".cache");
    snapshot(); // deployed once (into devnet/.snapshots, which `bardo devnet up` reads)
    let compiled = target_tmp().join("docs-compiled");
    std::fs::create_dir_all(&compiled).expect("compiled cache");
    link(&compiled, ".bardo/cache");
    dir
}

#[test]
fn every_command_the_docs_show_runs() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_bardo")).parent().expect("bin dir").to_owned();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut ran = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).expect("doc");
        let blocks = executed_blocks(&text);
        if blocks.is_empty() {
            continue;
        }
        let port = super::free_port();
        let dir = scratch(port);
        let shown = file.strip_prefix(root()).unwrap_or(&file).display().to_string();
        for (line, block) in &blocks {
            let out = Command::new("sh")
                .args(["-e", "-c", block])
                .current_dir(dir.path())
                .env("PATH", &path)
                .env(
                    "BARDO_PRIVATE_KEY",
                    "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
                )
                .output()
                .expect("sh");
            let stop = || {
                if dir.path().join(".bardo/devnet.json").exists() {
                    let _ = Command::new(env!("CARGO_BIN_EXE_bardo"))
                        .current_dir(dir.path())
                        .args(["devnet", "down"])
                        .output();
                }
            };
            if !out.status.success() {
                stop();
                panic!(
                    "{shown}:{line}: the block failed ({})\n--- block\n{block}--- stdout\n{}\n--- stderr\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            ran += 1;
        }
        if dir.path().join(".bardo/devnet.json").exists() {
            let down = Command::new(env!("CARGO_BIN_EXE_bardo"))
                .current_dir(dir.path())
                .args(["devnet", "down"])
                .output();
            assert!(down.is_ok_and(|o| o.status.success()), "{shown}: devnet down");
        }
    }
    assert!(ran >= 5, "the quick start and the docs' examples run ({ran} blocks)");
}

#[test]
fn a_block_is_run_only_when_marked_sh() {
    let text =
        "```sh\nbardo tools\n```\n```sh norun\nmake demo\n```\n```text\nbardo x\n```\n```sh\na\nb\n```\n";
    assert_eq!(executed_blocks(text), [(1, "bardo tools\n".to_owned()), (10, "a\nb\n".to_owned())]);
}
