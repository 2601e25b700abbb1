//! The signing key never shows: a whole operator session through the `bardo` binary — a devnet
//! started detached, tools listed, reads, a bad call, ether wrapped through preview and commit, a replayed
//! commit refused, the audit log shown — with the key in `BARDO_PRIVATE_KEY` and logs at trace (but the
//! code generator's); then every byte the session printed or wrote (stdout, stderr, the audit log, permits,
//! the devnet's log and deployments, the event journal, settings) is searched for the key in
//! any letter case, and the devnet's anvil process is checked not to have inherited it.

use bardo_test_artifacts::{UNISWAP, WALLET};
use std::path::Path;
use std::process::{Command, Output};

/// A key anvil does not know (anvil prints its own dev keys in its log): the test funds its
/// account on the devnet, so whatever shows it can only have come from bardo.
const KEY: &str = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";

const LOG: &str = "trace,cranelift_codegen=warn,cranelift_frontend=warn,cranelift_entity=warn,\
                   wasmtime_cranelift=warn,regalloc2=warn,wasmtime=debug,wasmparser=warn";

fn bardo(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir)
        .args(args)
        .env("BARDO_PRIVATE_KEY", KEY)
        // Everything the host's crates and their RPC and HTTP clients log, down to trace; the
        // compiler's (cranelift's) trace output is the size of the code it compiles and says
        // nothing about keys.
        .env("BARDO_LOG", LOG)
        .output()
        .expect("run bardo")
}

/// Every file under `dir`, recursively, as bytes with its path.
fn files(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path.display().to_string(), bytes));
        }
    }
}

/// The last lines of a run's stderr, where its error is: logged at trace, the whole of it is
/// too long for a failure's message (and a shortened CI log would show only its start).
fn ending(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(40);
    format!(
        "(the last {} of {} lines of stderr)\n{}",
        lines.len() - from,
        lines.len(),
        lines[from..].join("\n")
    )
}

fn holds_key(bytes: &[u8]) -> bool {
    let key = &KEY.as_bytes()[2..];
    bytes.windows(key.len()).any(|w| w.eq_ignore_ascii_case(key))
}

#[test]
fn the_signing_key_appears_in_no_output_file_or_child_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir(d.join("plugins")).expect("plugins");
    std::fs::copy(UNISWAP, d.join("plugins/uniswap.wasm")).expect("copy");
    std::fs::copy(WALLET, d.join("plugins/wallet.wasm")).expect("copy");
    // Both chains on ports named here: the second's default (the first's + 1) may be held by
    // another test's connection, as it was once in CI.
    let (port, second_port) = (super::free_port(), super::free_port());
    std::fs::write(
        d.join("bardo.toml"),
        format!(
            "profile = \"active\"\nplugins = [\"plugins\"]\n\
             [chains.31337]\nrpc = \"http://127.0.0.1:{port}\"\nhead_ttl_ms = 0\ndevnet = true\n\
             [settings]\nuniswap = \".bardo/settings/uniswap.json\"\nwallet = \".bardo/settings/wallet.json\"\n\
             [safety]\nttl_secs = 60\naudit_log = \".bardo/audit.jsonl\"\npermits = \".bardo/permits.json\"\n\
             allowlist_file = \".bardo/settings/allowlist.json\"\npricing_file = \".bardo/settings/pricing.json\"\n"
        ),
    )
    .expect("config");
    let mut outputs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut run = |args: &[&str]| {
        let o = bardo(d, args);
        outputs.push((format!("stdout of {args:?}"), o.stdout.clone()));
        outputs.push((format!("stderr of {args:?}"), o.stderr.clone()));
        o
    };
    let up = run(&[
        "devnet",
        "up",
        "--detach",
        "--port",
        &port.to_string(),
        "--second-port",
        &second_port.to_string(),
    ]);
    assert!(up.status.success(), "{}", ending(&up.stderr));
    let detached: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join(".bardo/devnet.json")).expect("devnet.json"))
            .expect("json");
    let pid = detached["pid"].as_u64().expect("pid");
    // The wallet's account gets 100 ether (anvil's cheat code).
    let wallet = KEY.parse::<alloy::signers::local::PrivateKeySigner>().expect("key").address();
    let rt = bardo_test_support::runtime();
    let provider = alloy::providers::ProviderBuilder::new()
        .connect_http(format!("http://127.0.0.1:{port}").parse().expect("url"));
    let hundred = alloy::primitives::U256::from(100u64)
        * alloy::primitives::U256::from(10u64).pow(alloy::primitives::U256::from(18u64));
    let _: serde_json::Value = rt
        .block_on(alloy::providers::Provider::raw_request(
            &provider,
            "anvil_setBalance".into(),
            (wallet, hundred),
        ))
        .expect("fund the wallet");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("anvil's environment");
    assert!(!holds_key(&environ), "anvil inherited the key");
    assert!(
        !environ.split(|b| *b == 0).any(|kv| kv.starts_with(b"BARDO_PRIVATE_KEY=")),
        "anvil inherited BARDO_PRIVATE_KEY"
    );

    let session: Vec<Vec<&str>> = vec![
        vec!["tools"],
        vec!["call", "wallet_get_balances", "--params", r#"{"chain_id":31337}"#],
        vec!["call", "wallet_get_balances", "--params", r#"{"chain_id":"not a chain"}"#],
        vec![
            "call",
            "uniswap_get_quote",
            "--params",
            r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"100"}"#,
        ],
    ];
    for args in &session {
        run(args);
    }
    let preview = run(&["preview", "wrap", "--params", r#"{"chain_id":31337,"amount":"1.5"}"#]);
    assert!(preview.status.success(), "{}", ending(&preview.stderr));
    let text = String::from_utf8_lossy(&preview.stdout).into_owned();
    let permit = text
        .split('"')
        .find(|s| s.starts_with("permit-"))
        .unwrap_or_else(|| panic!("no permit id in {text}"))
        .to_owned();
    let commit = run(&["commit", &permit]);
    assert!(commit.status.success(), "{}", ending(&commit.stderr));
    assert!(!run(&["commit", &permit]).status.success(), "a permit is used once");
    assert!(run(&["audit-log", "show"]).status.success());
    let records = run(&["audit-log", "show", "--json"]);
    let kinds: Vec<String> = String::from_utf8_lossy(&records.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("a JSON record")["event"]["type"].to_string()
        })
        .collect();
    assert!(kinds.iter().any(|k| k.contains("ActionExecuted")), "{kinds:?}");
    assert!(run(&["devnet", "down"]).status.success());

    files(&d.join(".bardo"), &mut outputs);
    let logged: usize = outputs.iter().map(|(_, b)| b.len()).sum();
    assert!(logged > 10_000, "the session printed and wrote {logged} bytes: too little to mean anything");
    for (what, bytes) in &outputs {
        assert!(!holds_key(bytes), "the key appears in {what}");
    }
}
