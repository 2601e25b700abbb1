//! What `bardo` says when the configuration, a plugin's settings, a key, a tool's name or its
//! params are not what it needs: which file, which key, what was meant.

use super::cli::{bardo, setup, stdout};
use bardo_test_artifacts::{HELLO, KIND_THIEF, UNISWAP};
use std::process::{Command, Output};

#[test]
fn a_plugin_whose_settings_file_is_missing_loads_and_says_which_file() {
    // A fresh checkout before `bardo devnet up`: the settings files do not exist yet.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(bardo_test_artifacts::WALLET, dir.path().join("plugins/wallet.wasm")).expect("copy");
    std::fs::copy(HELLO, dir.path().join("plugins/hello.wasm")).expect("copy");
    let config = "profile = \"trader\"\nplugins = [\"plugins\"]\n[chains.31337]\nrpc = \"http://127.0.0.1:9\"\n\
                  [settings]\nwallet = \".bardo/settings/wallet.json\"\n";
    std::fs::write(dir.path().join("bardo.toml"), config).expect("config");
    let o = bardo(dir.path(), &["tools"]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("wallet_get_balances"), "the plugin loads");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("wallet.json").count(), 1, "one warning: {err}");
    let o = bardo(dir.path(), &["call", "wallet_get_gas_price", "--params", r#"{"chain_id":31337}"#]);
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["error"]["code"], "denied");
    let message = json["error"]["message"].as_str().expect("message");
    assert!(message.contains("wallet.json") && message.contains("bardo devnet up"), "{message}");
    // Plugins that need no settings are unaffected.
    let o = bardo(dir.path(), &["call", "hello_greet", "--params", r#"{"name":"operator"}"#]);
    assert!(o.status.success(), "{o:?}");
}

/// Each part of the host owns its section of bardo.toml; a key none of them knows is refused, by
/// any command, naming the file and the key — in a part's section and at the top level alike.
#[test]
fn a_key_no_part_of_the_host_knows_is_refused_with_the_file_and_the_key() {
    let dir = setup();
    let file = dir.path().join("bardo.toml");
    let base = std::fs::read_to_string(&file).expect("config");
    for (extra, says) in [
        ("[safety]\nttl_sec = 5\n", &["[safety]", "ttl_sec", "did you mean `ttl_secs`?"][..]),
        ("[agent]\nspeculate = true\n", &["[agent]", "speculate"]),
        ("[mcp]\ntoken_env = \"X\"\n", &["[mcp]", "token_env"]),
        ("[tui]\nfollows = []\n", &["[tui]", "follows"]),
        ("[sidecar]\ngrants = []\n", &["[sidecar]", "grants"]),
        ("[cluster]\nnats = []\nreplica = 3\n", &["[cluster]", "replica"]),
        ("[limits]\nfuell = 1\n", &["fuell"]),
        ("[safty]\nttl_secs = 5\n", &["unknown key `safty`; did you mean `safety`?"]),
        ("profil = \"data\"\n", &["unknown key `profil`; did you mean `profile`?"]),
    ] {
        std::fs::write(&file, format!("{base}{extra}")).expect("config");
        let o = bardo(dir.path(), &["tools"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra}: {err}");
        assert!(err.contains("bardo.toml"), "{extra}: names the file: {err}");
        for word in says {
            assert!(err.contains(word), "{extra}: names {word}: {err}");
        }
    }
    // The sections each part reads, well formed, are taken.
    let good = "[safety]\nttl_secs = 5\n[agent]\nspeculation = false\n[mcp]\nallowed_hosts = []\n\
                [tui]\nfollow = []\n[sidecar]\ncross_check = true\n";
    std::fs::write(&file, format!("{base}{good}")).expect("config");
    let o = bardo(dir.path(), &["tools"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_tool_name_two_plugins_declare_is_resolved_by_the_line_the_refusal_suggests() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(UNISWAP, dir.path().join("plugins/a-uniswap.wasm")).expect("copy");
    std::fs::copy(KIND_THIEF, dir.path().join("plugins/b-thief.wasm")).expect("copy");
    let config = |disable: &str| {
        let text = format!("profile = \"data\"\nplugins = [\"plugins\"]\n[tools]\ndisable = [{disable}]\n");
        std::fs::write(dir.path().join("bardo.toml"), text).expect("config");
    };
    // The thief's `swap` claim is out of the way; its read tool shares Uniswap's name.
    config(r#""kind-thief:thief_plan_swap""#);
    let o = bardo(dir.path(), &["tools", "--json"]);
    let refused = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(refused.contains("[tools] disable = [\"kind-thief:uniswap_get_pool_info\"]"), "{refused}");
    let plugins = |o: &Output| -> Vec<String> {
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let mut names: Vec<String> = json["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| {
                format!("{}:{}", t["plugin"].as_str().unwrap_or(""), t["tool"]["name"].as_str().unwrap_or(""))
            })
            .collect();
        names.sort();
        names
    };
    assert!(plugins(&o).iter().all(|t| !t.starts_with("kind-thief:")), "the thief was not loaded");
    // The suggested line: both load; the name is Uniswap's.
    config(r#""kind-thief:thief_plan_swap", "kind-thief:uniswap_get_pool_info""#);
    let o = bardo(dir.path(), &["tools", "--json"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("refused"), "{o:?}");
    let served = plugins(&o);
    assert!(served.contains(&"uniswap:uniswap_get_pool_info".to_owned()), "{served:?}");
    assert!(!served.iter().any(|t| t.starts_with("kind-thief:")), "{served:?}");
    // The bare name disables it in both plugins, which then load side by side.
    config(r#""kind-thief:thief_plan_swap", "uniswap_get_pool_info""#);
    let o = bardo(dir.path(), &["tools", "--json"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("refused"), "{o:?}");
    assert!(!plugins(&o).iter().any(|t| t.ends_with(":uniswap_get_pool_info")), "{o:?}");
}

#[test]
fn without_a_configuration_bardo_says_so_and_init_writes_one_that_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = bardo(dir.path(), &["tools"]);
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(said.contains("no bardo.toml here") && said.contains("bardo init"), "{said}");
    let o = bardo(dir.path(), &["init"]);
    assert!(o.status.success(), "{o:?}");
    let written = std::fs::read_to_string(dir.path().join("bardo.toml")).expect("written");
    assert!(written.contains("profile = \"data\"") && written.contains("# confirm = \"never\""), "{written}");
    // It loads, and says nothing about a missing file any more.
    let o = bardo(dir.path(), &["tools", "--json"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("no bardo.toml"), "{o:?}");
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("tools as JSON");
    // A second init leaves the file as it is.
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"lp\"\n").expect("edit");
    let o = bardo(dir.path(), &["init"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("bardo.toml")).expect("kept"), "profile = \"lp\"\n");
}

#[test]
fn call_and_preview_answer_params_that_are_not_json_alike() {
    let dir = setup();
    let call = bardo(dir.path(), &["call", "hello_greet", "--params", "{bad"]);
    let preview = bardo(dir.path(), &["preview", "swap", "--params", "{bad"]);
    for o in [&call, &preview] {
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON error");
        assert_eq!(json["error"]["code"], "invalid-params", "{json}");
        assert!(json["error"]["message"].as_str().is_some_and(|m| m.contains("are not JSON")), "{json}");
    }
}

#[test]
fn tools_describe_shows_what_a_tool_takes_and_errors_name_what_was_meant() {
    let dir = setup();
    std::fs::copy(UNISWAP, dir.path().join("plugins/uniswap.wasm")).expect("copy");
    let with_key = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_bardo"))
            .current_dir(dir.path())
            .args(args)
            .env("BARDO_PRIVATE_KEY", "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
            .output()
            .expect("run bardo")
    };
    let error = |o: &Output| -> serde_json::Value {
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("json")["error"].clone()
    };
    // `bardo tools` shows the action kinds a write tool serves.
    let out = stdout(&with_key(&["tools", "--profile", "trader"]));
    let swap = out.lines().find(|l| l.starts_with("uniswap_execute_swap ")).expect("listed");
    assert!(swap.trim_end().ends_with(" swap"), "{swap}");

    // Params with types, required marks and defaults, and a command to start from.
    let o = bardo(dir.path(), &["tools", "describe", "uniswap_get_quote"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{o:?}");
    for part in ["amount*", "token_in*", "exact_in|exact_out", "(default \"exact_in\")", "v2|v3|v4 "] {
        assert!(out.contains(part), "{part} in {out}");
    }
    assert!(
        out.contains(r#"bardo call uniswap_get_quote --profile data --params '{"amount":"<string>","#),
        "{out}"
    );
    // A write tool without a wallet is described (not callable), with its kind and profiles.
    let o =
        bardo(dir.path(), &["tools", "describe", "uniswap_execute_swap", "--profile", "trader", "--json"]);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (d["action_kinds"].clone(), d["callable"].clone()),
        (serde_json::json!(["swap"]), false.into())
    );
    assert!(
        d["example"].as_str().is_some_and(|e| e.starts_with("bardo preview swap --profile trader --params")),
        "{d}"
    );
    let slippage = d["params"].as_array().and_then(|ps| ps.iter().find(|p| p["name"] == "slippage_bps"));
    assert_eq!(
        slippage.map(|p| (p["required"].clone(), p["default"].clone())),
        Some((false.into(), 50.into()))
    );
    assert!(d["profiles"].as_array().is_some_and(|ps| ps.contains(&"trader".into())), "{d}");

    // Did you mean: a tool, a param, an action kind; and the profiles that run a tool.
    let e = error(&bardo(dir.path(), &["tools", "describe", "uniswap_get_qoute"]));
    assert!(e["message"].as_str().is_some_and(|m| m.contains("did you mean `uniswap_get_quote`?")), "{e}");
    let params = r#"{"chain_id":31337,"tokenIn":"WETH","token_out":"USDC","amount":"1"}"#;
    let e = error(&bardo(dir.path(), &["call", "uniswap_get_quote", "--params", params]));
    assert_eq!(e["code"], "invalid-params");
    assert!(e["message"].as_str().is_some_and(|m| m.contains("`tokenIn`: did you mean `token_in`?")), "{e}");
    let e = error(&with_key(&["call", "uniswap_execute_swap", "--params", "{}"]));
    assert_eq!(e["code"], "not-found");
    let m = e["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("not in profile `data`") && m.contains("profiles that run it:") && m.contains("trader"),
        "{m}"
    );
    let e = error(&with_key(&["preview", "swapp", "--profile", "trader", "--params", "{}"]));
    assert!(e["message"].as_str().is_some_and(|m| m.contains("did you mean `swap`?")), "{e}");
}
