//! `bardo init` for a profile that writes: a Web3 Secret Storage keystore instead of a plain key
//! in the environment, then a swap committed with it on the devnet.

use super::mcp::{Workspace, balanceOfCall, view};
use bardo_devnet::DEV_KEY;
use std::process::{Command, Output};

/// `bardo` in `dir` with no plain key and no password in its environment.
fn bardo(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir)
        .args(args)
        .env_remove("BARDO_PRIVATE_KEY")
        .env_remove("BARDO_KEYSTORE")
        .env_remove("BARDO_KEYSTORE_PASSWORD")
        .envs(env.iter().copied())
        .output()
        .expect("run bardo")
}

#[test]
fn init_writes_an_encrypted_keystore_and_a_swap_commits_with_it() {
    let (node, d) = bardo_test_support::devnet();
    let w = Workspace::trader(&node, &d);
    let dir = w.path();
    std::fs::write(dir.join("password.txt"), "correct horse battery\n").expect("password");

    // Refused before anything is written: a short password, a profile that does not exist.
    std::fs::write(dir.join("short.txt"), "short\n").expect("password");
    let args = ["--config", "init.toml", "init", "--profile", "trader", "--password-file", "short.txt"];
    let o = bardo(dir, &args, &[]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("fewer than 8"), "{o:?}");
    let o = bardo(dir, &["--config", "init.toml", "init", "--profile", "traderr"], &[]);
    assert!(!o.status.success(), "{o:?}");
    assert!(!dir.join("init.toml").exists() && !dir.join(".bardo/keystore.json").exists());
    // No password from anywhere, and no terminal to ask on: says how to give one.
    let o = bardo(dir, &["--config", "init.toml", "init", "--profile", "trader"], &[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--password-file"), "{o:?}");

    // The devnet's funded key, imported and encrypted.
    let args = [
        "--config",
        "init.toml",
        "init",
        "--profile",
        "trader",
        "--import-key-env",
        "DEVNET_KEY",
        "--password-file",
        "password.txt",
    ];
    let o = bardo(dir, &args, &[("DEVNET_KEY", DEV_KEY)]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    assert!(said.contains(&d.deployer.to_checksum(None)), "the keystore's address is said: {said}");
    let written = std::fs::read_to_string(dir.join("init.toml")).expect("init.toml");
    assert!(written.contains("profile = \"trader\""), "{written}");
    let signer = &written[written.find("\n[signer]\n").expect("a [signer] section")..];
    assert!(
        signer.contains("keystore = \".bardo/keystore.json\"") && signer.contains("password_file"),
        "{signer}"
    );
    let keystore = std::fs::read_to_string(dir.join(".bardo/keystore.json")).expect("keystore");
    let json: serde_json::Value = serde_json::from_str(&keystore).expect("json");
    assert_eq!(json["crypto"]["kdf"], "scrypt", "{json}");
    // Web3 Secret Storage's standard cost, not alloy's 2^13: each password tried costs 256 MiB.
    assert_eq!(json["crypto"]["kdfparams"]["n"], 262_144, "{json}");
    // Spending limits on from the first config, explained where they are set.
    assert!(written.contains("\n[safety.spending]\nper_tx_usd = 1000\nper_day_usd = 5000"), "{written}");
    let plain = DEV_KEY.trim_start_matches("0x");
    assert!(!keystore.to_lowercase().contains(plain) && !written.contains(plain), "the key is encrypted");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.join(".bardo/keystore.json")).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "only its owner reads the keystore");

    // The workspace's own configuration with that [signer]: a swap previewed and committed.
    let config = std::fs::read_to_string(dir.join("bardo.toml")).expect("config");
    std::fs::write(dir.join("bardo.toml"), format!("{config}\n{signer}")).expect("config");
    let usdc = || view(&node.url(), d.tokens["USDC"].address, balanceOfCall { account: d.deployer });
    let before = usdc();
    let swap = r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"100"}"#;
    let preview = bardo(dir, &["preview", "swap", "--params", swap], &[]);
    assert!(preview.status.success(), "{preview:?}");
    let permit: serde_json::Value = serde_json::from_slice(&preview.stdout).expect("json");
    let commit = bardo(dir, &["commit", permit["permit_id"].as_str().expect("id")], &[]);
    assert!(commit.status.success(), "{commit:?}");
    assert_eq!(
        before - usdc(),
        alloy::primitives::U256::from(100_000_000u64),
        "100 USDC paid from the keystore's wallet"
    );

    // A wrong password (the variable wins over the file) opens nothing, and says which keystore.
    let o =
        bardo(dir, &["preview", "swap", "--params", swap], &[("BARDO_KEYSTORE_PASSWORD", "wrong password")]);
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && said.contains("keystore.json"), "{said}");

    // BARDO_KEYSTORE names a keystore for a configuration without [signer]; its password
    // from the variable.
    std::fs::write(dir.join("plain.toml"), &config).expect("config");
    let env =
        [("BARDO_KEYSTORE", ".bardo/keystore.json"), ("BARDO_KEYSTORE_PASSWORD", "correct horse battery")];
    let o = bardo(dir, &["--config", "plain.toml", "preview", "swap", "--params", swap], &env);
    assert!(o.status.success(), "{o:?}");
    let o = bardo(dir, &["--config", "plain.toml", "preview", "swap", "--params", swap], &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("wallet"), "without it, no wallet: {o:?}");

    // A second init leaves both files as they are.
    let o = bardo(dir, &args, &[("DEVNET_KEY", DEV_KEY)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(std::fs::read_to_string(dir.join(".bardo/keystore.json")).expect("kept"), keystore);

    // Without --import-key-env: a new key, said so.
    let fresh = tempfile::tempdir().expect("tempdir");
    std::fs::write(fresh.path().join("pw"), "another long password").expect("password");
    let o = bardo(fresh.path(), &["init", "--profile", "lp", "--password-file", "pw"], &[]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stderr).contains("a new key"), "{o:?}");
    // A read-only profile gets no keystore.
    let o = bardo(fresh.path(), &["--config", "data.toml", "init"], &[]);
    assert!(o.status.success(), "{o:?}");
    assert!(
        !std::fs::read_to_string(fresh.path().join("data.toml")).expect("data.toml").contains("\n[signer]\n")
    );
}

/// A newcomer's first run on the devnet: `bardo init` makes a new key, the bootstrap tools find
/// it without gas, fund it and then report it ready, and a swap commits from it.
#[test]
fn a_new_keystore_is_checked_funded_on_the_devnet_and_swaps() {
    let (node, d) = bardo_test_support::devnet();
    let w = Workspace::trader(&node, &d);
    let dir = w.path();
    std::fs::copy(bardo_test_artifacts::BOOTSTRAP, dir.join("plugins/bootstrap.wasm")).expect("plugin");
    std::fs::write(dir.join("bootstrap.json"), d.bootstrap_settings().to_string()).expect("settings");
    std::fs::write(dir.join("pw"), "a first-run password").expect("password");
    let o =
        bardo(dir, &["--config", "init.toml", "init", "--profile", "active", "--password-file", "pw"], &[]);
    assert!(o.status.success(), "{o:?}");
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("bootstrap_check_setup"), "init says what to run next: {said}");
    let at = said.find(" for 0x").expect("the new key's address is said") + 5;
    let who: alloy::primitives::Address = said[at..at + 42].parse().expect("address");
    // The workspace's chain marked a devnet, the bootstrap settings and the new [signer].
    let config = std::fs::read_to_string(dir.join("bardo.toml")).expect("config");
    let init = std::fs::read_to_string(dir.join("init.toml")).expect("init.toml");
    let signer = &init[init.find("\n[signer]\n").expect("a [signer] section")..];
    let config = config
        .replace("head_ttl_ms = 0\n", "head_ttl_ms = 0\ndevnet = true\n")
        .replace("[settings]\n", "[settings]\nbootstrap = \"bootstrap.json\"\n");
    std::fs::write(dir.join("bardo.toml"), format!("{config}\n{signer}")).expect("config");

    let call = |tool: &str| -> serde_json::Value {
        let params = r#"{"chain_id":31337}"#;
        let o = bardo(dir, &["call", tool, "--profile", "active", "--params", params], &[]);
        assert!(o.status.success(), "{tool}: {o:?}");
        serde_json::from_slice(&o.stdout).expect("json")
    };
    let setup = call("bootstrap_check_setup");
    assert_eq!(setup["ready"], false, "{setup}");
    assert_eq!(setup["wallet"]["address"], who.to_checksum(None), "the keystore's wallet: {setup}");
    assert_eq!(setup["missing"][0]["item"], "funds", "{setup}");
    let funded = call("bootstrap_fund_wallet");
    assert!(funded["assets"].as_array().expect("assets").iter().all(|a| a["funded"] == true), "{funded}");
    let setup = call("bootstrap_check_setup");
    assert_eq!(setup["ready"], true, "{setup}");

    let usdc = || view(&node.url(), d.tokens["USDC"].address, balanceOfCall { account: who });
    assert_eq!(usdc(), alloy::primitives::U256::from(10_000_000_000u64), "funded 10,000 USDC");
    let swap = r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"100"}"#;
    let preview = bardo(dir, &["preview", "swap", "--params", swap], &[]);
    assert!(preview.status.success(), "{preview:?}");
    let permit: serde_json::Value = serde_json::from_slice(&preview.stdout).expect("json");
    let commit = bardo(dir, &["commit", permit["permit_id"].as_str().expect("id")], &[]);
    assert!(commit.status.success(), "{commit:?}");
    assert_eq!(usdc(), alloy::primitives::U256::from(9_900_000_000u64), "100 USDC paid from the new wallet");
}
