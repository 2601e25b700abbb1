//! What a newcomer meets in the first hour, as conventions of a well-kept command line: a closed
//! pipe ends `bardo` quietly, logs are for people (no colour in a pipe, bardo's own by default),
//! nothing is said about a call that never ran, each skip reason and a missing settings
//! directory are said once, a refused plugin is a non-zero exit, `--version` names its commit,
//! and a permit commits under the profile that previewed it.

use super::mcp::{Workspace, balanceOfCall, view};
use bardo_devnet::DEV_KEY;
use bardo_test_artifacts::{FS_IMPORT, HELLO, UNISWAP, WALLET};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn bardo(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bardo"));
    cmd.current_dir(dir).args(args).env_remove("BARDO_LOG").env_remove("BARDO_PRIVATE_KEY");
    cmd.envs(env.iter().copied()).output().expect("run bardo")
}

/// A project with `plugins` copied in and `config` after its plugins line.
fn project(plugins: &[(&str, &str)], config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    for (name, file) in plugins {
        std::fs::copy(file, dir.path().join("plugins").join(name)).expect("copy");
    }
    std::fs::write(dir.path().join("bardo.toml"), format!("plugins = [\"plugins\"]\n{config}"))
        .expect("config");
    dir
}

#[test]
fn a_closed_pipe_ends_bardo_quietly_and_logs_are_for_people() {
    let dir = project(&[("hello.wasm", HELLO)], "profile = \"data\"\n");
    // `bardo tools | head -0`: the reader is gone before bardo writes.
    let mut child = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .args(["tools", "--profiles"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bardo");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("exits");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(141), "128 + SIGPIPE, as a shell tool ends: {err}");
    assert!(!err.contains("panicked") && err.is_empty(), "nothing said: {err}");

    // BARDO_LOG=debug: bardo's own debug lines, no colour codes in a pipe, no wasmtime internals.
    let o = bardo(dir.path(), &["tools"], &[("BARDO_LOG", "debug")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains('\u{1b}'), "no ANSI escapes in a pipe: {err}");
    assert!(!err.contains("wasmtime") && !err.contains("cranelift"), "only bardo's debug lines: {err}");
    assert!(
        err.contains(" INFO bardo_runtime::setup: pinned new plugins"),
        "bardo's own lines are there: {err}"
    );
    // A filter with targets is taken as written: wasmtime's lines when asked for.
    let o = bardo(dir.path(), &["tools"], &[("BARDO_LOG", "warn,wasmtime=trace")]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("wasmtime"), "{o:?}");

    // A call refused before it ran (no such tool) reports no cost.
    let o = bardo(dir.path(), &["call", "hello_gret", "--params", "{}"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("fuel"), "{o:?}");
    let o = bardo(dir.path(), &["call", "hello_greet", "--params", r#"{"name":"x"}"#], &[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("fuel "), "a call that ran says its cost: {o:?}");

    // The main commands' help ends with examples to copy.
    for command in ["tools", "call", "preview", "commit"] {
        let o = bardo(dir.path(), &[command, "--help"], &[]);
        assert!(String::from_utf8_lossy(&o.stdout).contains("Examples:\n  bardo "), "{command}: {o:?}");
    }
    // The build it is: the version and the commit.
    let o = bardo(dir.path(), &["--version"], &[]);
    let version = String::from_utf8_lossy(&o.stdout);
    assert!(version.starts_with("bardo 0.") && version.contains("(commit "), "{version}");
}

#[test]
fn tools_say_each_reason_once_and_a_refused_plugin_fails_the_listing() {
    // No wallet: the write tools are skipped for one reason, said in one line. No devnet: the
    // two settings files do not exist, said in one warning. A plugin importing the filesystem
    // is refused: the listing says so and exits 1.
    let config = "profile = \"trader\"\n[chains.31337]\nrpc = \"http://127.0.0.1:9\"\n[settings]\n\
                  uniswap = \".bardo/settings/uniswap.json\"\nwallet = \".bardo/settings/wallet.json\"\n";
    let dir = project(&[("uniswap.wasm", UNISWAP), ("wallet.wasm", WALLET), ("fs.wasm", FS_IMPORT)], config);
    let o = bardo(dir.path(), &["tools"], &[]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "a configured plugin was refused: {err}");
    assert!(
        err.contains("refused: ") && out.contains("uniswap_get_pool_info"),
        "the rest listed: {out}{err}"
    );
    let skipped: Vec<&str> = out.lines().filter(|l| l.starts_with("skipped")).collect();
    assert_eq!(skipped.len(), 1, "{out}");
    assert!(skipped[0].contains("uniswap_execute_swap") && skipped[0].contains("`wallet`"), "{out}");
    let missing: Vec<&str> = err.lines().filter(|l| l.contains("do not exist")).collect();
    assert_eq!(missing.len(), 1, "one warning: {err}");
    assert!(missing[0].contains("uniswap.json") && missing[0].contains("wallet.json"), "{err}");
    // Without the refused plugin the same listing succeeds.
    std::fs::remove_file(dir.path().join("plugins/fs.wasm")).expect("rm");
    let o = bardo(dir.path(), &["tools", "--json"], &[]);
    assert!(o.status.success(), "{o:?}");
}

#[test]
fn a_permit_commits_and_cancels_under_the_profile_that_previewed_it() {
    let (node, d) = bardo_test_support::devnet();
    let w = Workspace::trader(&node, &d);
    // The configuration's own profile reads only: the permits are the trader's.
    let config = std::fs::read_to_string(w.path().join("bardo.toml")).expect("config");
    std::fs::write(w.path().join("bardo.toml"), config.replace("profile = \"trader\"", "profile = \"data\""))
        .expect("config");
    let key = [("BARDO_PRIVATE_KEY", DEV_KEY)];
    let swap = r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"10"}"#;
    let preview = || {
        let o = bardo(w.path(), &["preview", "swap", "--profile", "trader", "--params", swap], &key);
        assert!(o.status.success(), "{o:?}");
        let permit: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        permit["permit_id"].as_str().expect("id").to_owned()
    };
    let usdc = || view(&node.url(), d.tokens["USDC"].address, balanceOfCall { account: d.deployer });
    let before = usdc();
    let id = preview();
    // Another profile is refused, with the one that previewed it named; nothing moves.
    let o = bardo(w.path(), &["commit", &id, "--profile", "data"], &key);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let refused: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(refused["error"]["code"], "denied", "{refused}");
    let message = refused["error"]["message"].as_str().expect("message");
    assert!(message.contains("previewed under profile `trader`, not `data`"), "{message}");
    assert_eq!(usdc(), before);
    // Without --profile: the permit's own.
    let o = bardo(w.path(), &["commit", &id], &key);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(before - usdc(), alloy::primitives::U256::from(10_000_000u64), "committed once");
    // In a terminal (a pty, as `script` gives one): a summary for a person, not JSON.
    let id = preview_in_a_terminal(w.path(), swap);
    let o = in_a_terminal(w.path(), &format!("commit {id}"));
    // (Each swap approves exactly what it spends first: three transactions.)
    assert!(o.contains("committed swap in 3 transactions (gas "), "{o}");
    assert!(o.contains("paid      10 USDC ") && o.contains("(previewed 10 USDC)"), "{o}");
    assert!(
        o.contains("received") && o.contains(" WETH  (previewed ") && o.contains("verified from the receipt"),
        "{o}"
    );
    assert_eq!(before - usdc(), alloy::primitives::U256::from(20_000_000u64), "committed");
    // cancel takes --profile like commit, and needs none.
    let id = preview();
    let o = bardo(w.path(), &["cancel", &id, "--profile", "data"], &key);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let o = bardo(w.path(), &["cancel", &id], &key);
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"cancelled\""), "{o:?}");
}

/// `bardo ARGS` run with a terminal for stdout (`script` gives it a pty), as a person runs it;
/// what it printed.
fn in_a_terminal(dir: &Path, args: &str) -> String {
    let o = Command::new("script")
        .current_dir(dir)
        .env("BARDO_PRIVATE_KEY", DEV_KEY)
        .args(["-qec", &format!("{} {args}", env!("CARGO_BIN_EXE_bardo")), "/dev/null"])
        .output()
        .expect("script (util-linux)");
    let text = String::from_utf8_lossy(&o.stdout).replace('\r', "");
    assert!(o.status.success(), "{text}");
    text
}

/// A swap previewed in a terminal: its summary checked; its permit id.
fn preview_in_a_terminal(dir: &Path, swap: &str) -> String {
    let text = in_a_terminal(dir, &format!("preview swap --profile trader --params '{swap}'"));
    assert!(text.starts_with("swap (uniswap_execute_swap), risk "), "{text}");
    assert!(
        text.contains("expires in 60 s") && text.contains("pays      10 USDC ") && text.contains("($10.00)"),
        "{text}"
    );
    assert!(text.contains("on chain  at least ") && text.contains(" WETH"), "{text}");
    assert!(!text.contains('{'), "no JSON for a person: {text}");
    let at = text.find("bardo commit permit-").expect("how to commit") + "bardo commit ".len();
    text[at..].split_whitespace().next().expect("id").to_owned()
}

#[test]
fn bash_completes_the_configurations_tools_kinds_and_profiles() {
    let dir = project(&[("hello.wasm", HELLO), ("uniswap.wasm", UNISWAP)], "profile = \"data\"\n");
    let script = bardo(dir.path(), &["completions", "bash"], &[]);
    std::fs::write(dir.path().join("completion.bash"), &script.stdout).expect("script");
    let bin = Path::new(env!("CARGO_BIN_EXE_bardo")).parent().expect("bin dir").display().to_string();
    // bash with the script loaded and bardo on PATH, asked to complete `words` (the last partial).
    let complete = |words: &str| {
        let line = format!(
            "source completion.bash; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             _bardo_dynamic bardo \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             echo \"${{COMPREPLY[*]}}\""
        );
        let o = Command::new("bash")
            .current_dir(dir.path())
            .env("PATH", format!("{bin}:{}", std::env::var("PATH").unwrap_or_default()))
            .args(["-c", &line])
            .output()
            .expect("bash");
        String::from_utf8_lossy(&o.stdout).trim().to_owned()
    };
    assert_eq!(complete("bardo call hello_g"), "hello_greet");
    assert_eq!(complete("bardo tools describe uniswap_get_q"), "uniswap_get_quote");
    assert_eq!(complete("bardo preview sw"), "swap");
    assert_eq!(complete("bardo tools --profile trad"), "trader");
    // Everything else is clap's: the subcommands.
    assert!(complete("bardo prev").split(' ').any(|w| w == "preview"), "{}", complete("bardo prev"));
}
