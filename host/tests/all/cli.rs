//! The `bardo` binary, as an operator runs it.

use bardo_test_artifacts::{FS_IMPORT, HELLO};
use std::path::Path;
use std::process::{Command, Output};

fn bardo(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bardo")).current_dir(dir).args(args).output().expect("run bardo")
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(HELLO, dir.path().join("plugins/hello.wasm")).expect("copy");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"data\"\nplugins = [\"plugins\"]\n")
        .expect("config");
    dir
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn tools_lists_the_profile() {
    let dir = setup();
    let o = bardo(dir.path(), &["tools"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("hello_greet") && out.contains("hello@0.1.0") && out.contains("1000 ms"), "{out}");
    let o = bardo(dir.path(), &["tools", "--json", "--profile", "trader,vault"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["tools"][0]["tool"]["name"], "hello_greet");
    assert_eq!(json["tools"][0]["tool"]["category"], "data");
    let o = bardo(dir.path(), &["tools", "--profile", "wizard"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown profile `wizard`"));
}

#[test]
fn call_prints_result_and_costs() {
    let dir = setup();
    let o = bardo(dir.path(), &["call", "hello_greet", "--params", r#"{"name":"operator"}"#]);
    assert!(o.status.success(), "{o:?}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["greeting"], "hello, operator");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fuel ") && err.contains("wall ") && err.contains("peak memory"), "{err}");
    let o = bardo(dir.path(), &["call", "hello_greet", "--params", r#"{"name":""}"#]);
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["error"]["code"], "invalid-params");
}

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

#[test]
fn uniswap_tools_by_profile_plan_without_wallet_and_audit() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(bardo_test_artifacts::UNISWAP, dir.path().join("plugins/uniswap.wasm")).expect("copy");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"trader\"\nplugins = [\"plugins\"]\n")
        .expect("config");
    let names = |o: &Output| -> Vec<String> {
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        json["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["tool"]["name"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    let key = bardo_host::devnet::DEV_KEY;
    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .env("BARDO_PRIVATE_KEY", key)
        .args(["tools", "--json"])
        .output()
        .expect("run");
    let with_wallet = names(&o);
    for tool in ["uniswap_execute_swap", "uniswap_get_quote", "uniswap_get_pool_info", "data_get_token_price"]
    {
        assert!(with_wallet.iter().any(|t| t == tool), "trader lists {tool}: {with_wallet:?}");
    }
    assert!(!with_wallet.iter().any(|t| t == "uniswap_add_liquidity"), "liquidity is the lp profile's");
    let o = bardo(dir.path(), &["tools", "--json", "--profile", "lp"]);
    assert!(names(&o).iter().any(|t| t == "uniswap_get_position"));

    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .env_remove("BARDO_PRIVATE_KEY")
        .args([
            "plan",
            "uniswap_execute_swap",
            "--params",
            r#"{"chain_id":1,"token_in":"WETH","token_out":"USDC","amount":"1"}"#,
        ])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["error"]["code"], "wallet-not-configured", "{json}");

    let o = bardo(dir.path(), &["audit", "plugins/uniswap.wasm"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    for expected in
        ["bardo:host/simulate", "bardo:host/signer", "bardo:host/config", "uniswap_execute_swap", "writer"]
    {
        assert!(out.to_lowercase().contains(&expected.to_lowercase()), "audit shows {expected}: {out}");
    }
}
