//! The speculation engine on the devnet: it learns which read follows which (and with which
//! params), prefetches above the threshold within a tick, never prefetches a write, discards
//! unused prefetches at the tick's end, and keeps what it learned across runs.

use bardo_agent::speculation::{SpeculationStats, Speculator};
use bardo_core::speculation::{Model, Source, Transition};
use bardo_runtime::plugin::{CallControl, Host};
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::devnet;
use bardo_test_support::devnet_host;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

fn params(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("object")
}

fn pool(token: &str) -> Map<String, Value> {
    params(json!({"chain_id": 31337, "token_a": token, "token_b": "WETH"}))
}

fn price(token: &str) -> Map<String, Value> {
    params(json!({"chain_id": 31337, "token": token, "quote_token": "WETH"}))
}

fn call(s: &Speculator, host: &Arc<Host>, tool: &str, p: &Map<String, Value>) -> String {
    s.call(host, tool, p, &Arc::new(CallControl::new())).result.unwrap_or_else(|e| panic!("{tool}: {e}"))
}

#[test]
fn it_prefetches_learned_reads_only_above_the_threshold_and_never_a_write() {
    let (node, d) = devnet();
    let host = Arc::new(devnet_host(&node.url(), d.uniswap_settings(), false, &[UNISWAP]));
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("speculation.json");
    let s = Speculator::new(Model::default(), Duration::from_secs(600), 0.7)
        .persisted(file.clone())
        .expect("new");
    // The agent's habit: a pool, then the price of its first token — four ticks of it (fewer
    // than five calls of a tool predict nothing).
    for token in ["USDC", "WBTC", "DAI", "USDC"] {
        call(&s, &host, "uniswap_get_pool_info", &pool(token));
        call(&s, &host, "data_get_token_price", &price(token));
        s.end_tick().expect("tick");
    }
    assert_eq!(
        s.stats(),
        SpeculationStats { hits: 0, misses: 8, prefetched: 0, wasted: 0 },
        "still learning"
    );
    // Now (4 of 5 pool reads were followed by their token's price: 0.8) a pool read prefetches
    // the price of its token, and the agent's price read is a hit with the plugin's own answer.
    call(&s, &host, "uniswap_get_pool_info", &pool("DAI"));
    assert_eq!(s.stats().prefetched, 1);
    let prefetched = call(&s, &host, "data_get_token_price", &price("DAI"));
    assert_eq!(s.stats().hits, 1);
    let direct =
        host.call("data_get_token_price", &Value::Object(price("DAI")).to_string()).result.expect("direct");
    assert_eq!(prefetched, direct);
    // A prefetch the agent does not use is discarded at the tick's end: the next read runs.
    s.end_tick().expect("tick");
    call(&s, &host, "uniswap_get_pool_info", &pool("USDC"));
    s.end_tick().expect("tick");
    let before = s.stats();
    assert_eq!(before.wasted, 1);
    call(&s, &host, "data_get_token_price", &price("USDC"));
    assert_eq!(s.stats().misses, before.misses + 1, "not served from a discarded prefetch");
    // Persisted: a new engine on the file predicts the same.
    s.end_tick().expect("tick");
    let again =
        Speculator::new(Model::default(), Duration::from_secs(600), 0.7).persisted(file).expect("reload");
    assert_eq!(again.model(), s.model());

    // Below the threshold: a price after a pool only half the time is not prefetched.
    let half = Speculator::new(Model::default(), Duration::from_secs(600), 0.7);
    for (i, token) in ["USDC", "WBTC", "DAI", "USDC", "WBTC", "DAI"].into_iter().enumerate() {
        call(&half, &host, "uniswap_get_pool_info", &pool(token));
        if i % 2 == 0 {
            call(&half, &host, "data_get_token_price", &price(token));
        }
        half.end_tick().expect("tick");
    }
    call(&half, &host, "uniswap_get_pool_info", &pool("USDC"));
    assert_eq!(half.stats().prefetched, 0);

    // A model that says a swap always follows (edited, or learned elsewhere): never prefetched.
    let template = BTreeMap::from([
        ("chain_id".to_owned(), Source::Field("chain_id".into())),
        ("token_in".to_owned(), Source::Field("token_a".into())),
        ("token_out".to_owned(), Source::Field("token_b".into())),
        ("amount".to_owned(), Source::Constant("\"1\"".into())),
    ]);
    let mut model = Model::default();
    model.calls.insert("uniswap_get_pool_info".into(), 10);
    model.transitions.push(Transition {
        from: "uniswap_get_pool_info".into(),
        to: "uniswap_execute_swap".into(),
        template,
        count: 10,
    });
    let writes = Speculator::new(model, Duration::from_secs(600), 0.7);
    call(&writes, &host, "uniswap_get_pool_info", &pool("USDC"));
    assert_eq!(writes.stats().prefetched, 0, "a write tool is never prefetched");
}

/// `[agent] speculation = true` puts the agent's reads through the engine; a threshold that is
/// not a probability is a setup error naming the key.
#[test]
fn the_agent_configuration_turns_it_on() {
    let (node, d) = devnet();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins");
    std::fs::copy(UNISWAP, dir.path().join("plugins/uniswap.wasm")).expect("copy");
    std::fs::write(dir.path().join("uniswap.json"), d.uniswap_settings().to_string()).expect("settings");
    let write = |agent: &str| {
        let text = format!(
            "profile = \"data\"\nplugins = [\"plugins\"]\n[chains.31337]\nrpc = \"{}\"\n[settings]\nuniswap = \"uniswap.json\"\n[agent]\n{agent}\n",
            node.url()
        );
        std::fs::write(dir.path().join("bardo.toml"), text).expect("config");
        bardo_runtime::config::Config::load(&dir.path().join("bardo.toml"), true).expect("config")
    };
    let open = |config: &bardo_runtime::config::Config| {
        let opened = bardo_runtime::setup::open(config, None, crate::host_runtime()).expect("open");
        let host = Arc::new(opened.host);
        let path = Arc::new(bardo_safety::setup::write_path(config, host).expect("write path"));
        bardo_agent::setup::adapter(config, path)
    };
    let bad = open(&write("speculation = true\nspeculation_threshold = 1.5"));
    assert!(bad.is_err_and(|e| e.to_string().contains("speculation_threshold is 1.5")));
    let agent = open(&write("speculation = true")).expect("adapter");
    let s = agent.speculator().expect("on").clone();
    let read = json!({"kind": "uniswap_get_pool_info", "params": pool("USDC")});
    agent.call("query_state", &read).expect("query_state");
    assert_eq!(s.stats().misses, 1, "the read went through the engine");
    assert!(open(&write("")).expect("adapter").speculator().is_none(), "off by default");
}
