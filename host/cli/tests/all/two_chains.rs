//! The devnet's two chains under one `bardo`: a swap previewed and committed on each through the
//! same tools and write path (each chain's own allowlist, prices and nonces), the other chain
//! untouched; the wallet's portfolio across both at each chain's listed feeds; and a chain the
//! tool does not support refused before anything runs.

use super::mcp::Workspace;
use alloy::primitives::{Address, U256};
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{CHAIN_ID, SECOND_CHAIN_ID};
use bardo_test_artifacts::{UNISWAP, WALLET};
use bardo_test_support::chain::Chain;
use serde_json::Value;

alloy::sol! {
    function balanceOf(address account) external view returns (uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function depositV3(address depositor, address recipient, address inputToken, address outputToken,
        uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, address exclusiveRelayer,
        uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityParameter, bytes message) external payable;
}

/// A trader workspace over both chains: the uniswap and wallet plugins, and the files `bardo
/// devnet up` writes for the two (settings, allowlist, pricing, approved assets, each keyed by
/// chain id).
fn workspace(nodes: [(&bardo_devnet::Anvil, &Deployments); 2]) -> Workspace {
    workspace_with(nodes, "")
}

/// [`workspace`] with more configuration after `[safety]` (its subtables).
fn workspace_with(nodes: [(&bardo_devnet::Anvil, &Deployments); 2], more: &str) -> Workspace {
    let chains: String = nodes
        .iter()
        .map(|(node, d)| format!("[chains.{}]\nrpc = \"{}\"\nhead_ttl_ms = 0\n", d.chain_id, node.url()))
        .collect();
    let extra = format!(
        "{chains}[settings]\nuniswap = \"uniswap.json\"\nwallet = \"wallet.json\"\n[safety]\n\
         pricing_file = \"pricing.json\"\nallowlist_file = \"allowlist.json\"\napproved_assets_file = \"approved_assets.json\"\n{more}"
    );
    let w = Workspace::new("trader", &[("uniswap.wasm", UNISWAP), ("wallet.wasm", WALLET)], &extra);
    let files = bardo_devnet::settings::files(&[nodes[0].1, nodes[1].1]);
    for name in ["uniswap", "wallet", "pricing", "allowlist", "approved_assets"] {
        std::fs::write(w.path().join(format!("{name}.json")), files[name].to_string()).expect("settings");
    }
    w
}

fn json(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

#[test]
fn one_bardo_swaps_on_each_chain_and_values_the_wallet_across_both() {
    let (node_a, a) = bardo_test_support::devnet();
    let (node_b, b) = bardo_test_support::second_devnet();
    assert_eq!((a.chain_id, b.chain_id), (CHAIN_ID, SECOND_CHAIN_ID));
    // Each chain its own deployment: the same tokens at other addresses (Permit2 alone shares one).
    assert_ne!(a.tokens["USDC"].address, b.tokens["USDC"].address);
    assert_ne!(a.uniswap_v4["universal_router"], b.uniswap_v4["universal_router"]);
    assert_eq!(a.uniswap_v4["permit2"], b.uniswap_v4["permit2"]);
    let w = workspace([(&node_a, &a), (&node_b, &b)]);
    let (chain_a, chain_b) = (Chain::connect(&node_a.url()), Chain::connect(&node_b.url()));
    let wallet: Address = bardo_devnet::DEV_ACCOUNT.parse().expect("address");
    let usdc =
        |c: &Chain, d: &Deployments| c.read(d.tokens["USDC"].address, balanceOfCall { account: wallet });
    let weth =
        |c: &Chain, d: &Deployments| c.read(d.tokens["WETH"].address, balanceOfCall { account: wallet });
    let before = [(usdc(&chain_a, &a), weth(&chain_a, &a)), (usdc(&chain_b, &b), weth(&chain_b, &b))];

    // A swap on the second chain: its own router, pools, prices and allowlist; chain A untouched.
    let swap =
        |chain: u64| format!(r#"{{"chain_id":{chain},"token_in":"USDC","token_out":"WETH","amount":"100"}}"#);
    let permit = json(&w.bardo(&["preview", "swap", "--params", &swap(SECOND_CHAIN_ID)]));
    let token_in = permit["expected_outcome"]["token_in"]["address"].as_str().expect("token in");
    assert_eq!(
        token_in.parse::<Address>().ok(),
        Some(b.tokens["USDC"].address),
        "chain {SECOND_CHAIN_ID}'s USDC: {permit}"
    );
    let committed = json(&w.bardo(&["commit", permit["permit_id"].as_str().expect("permit id")]));
    // Approve Permit2, let the router use it, swap: verified from the second chain's receipts.
    assert_eq!(committed["tx_hashes"].as_array().map(Vec::len), Some(3), "{committed}");
    assert_eq!(committed["ground_truth"], "receipt", "{committed}");
    let hundred = U256::from(100_000_000u64);
    assert_eq!(usdc(&chain_b, &b), before[1].0 - hundred, "100 USDC paid on chain {SECOND_CHAIN_ID}");
    assert!(weth(&chain_b, &b) > before[1].1, "WETH received on chain {SECOND_CHAIN_ID}");
    assert_eq!((usdc(&chain_a, &a), weth(&chain_a, &a)), before[0], "chain {CHAIN_ID} untouched");

    // And one on the first chain, through the same tools.
    let permit = json(&w.bardo(&["preview", "swap", "--params", &swap(CHAIN_ID)]));
    json(&w.bardo(&["commit", permit["permit_id"].as_str().expect("permit id")]));
    assert_eq!(usdc(&chain_a, &a), before[0].0 - hundred, "100 USDC paid on chain {CHAIN_ID}");
    assert_eq!(usdc(&chain_b, &b), before[1].0 - hundred, "chain {SECOND_CHAIN_ID} paid once");

    // The portfolio: both chains, each at its own feeds, the total their sum.
    let p = json(&w.bardo(&["call", "wallet_get_portfolio", "--params", "{}"]));
    let chains = p["chains"].as_array().expect("chains");
    let ids: Vec<u64> = chains.iter().map(|c| c["chain_id"].as_u64().expect("id")).collect();
    assert_eq!(ids, vec![SECOND_CHAIN_ID, CHAIN_ID], "every chain of the settings, by id: {p}");
    let held = |chain: &Value, symbol: &str| -> Value {
        chain["holdings"]
            .as_array()
            .expect("holdings")
            .iter()
            .find(|h| h["symbol"] == symbol)
            .cloned()
            .unwrap_or_default()
    };
    for (chain, c, d) in [(CHAIN_ID, &chain_a, &a), (SECOND_CHAIN_ID, &chain_b, &b)] {
        let on = chains.iter().find(|c| c["chain_id"] == chain).expect("chain");
        let usdc_held = held(on, "USDC");
        assert_eq!(usdc_held["base"], usdc(c, d).to_string(), "read on chain {chain}: {on}");
        assert_eq!(usdc_held["usd_price"], 1.0, "a dollar token: {on}");
        let weth_held = held(on, "WETH");
        let price = weth_held["usd_price"].as_f64().expect("WETH priced by its feed");
        assert!((price - 2000.0).abs() < 1e-6, "the devnet's WETH feed answers 2,000: {on}");
        let sum: f64 =
            on["holdings"].as_array().expect("holdings").iter().filter_map(|h| h["usd_value"].as_f64()).sum();
        assert!((on["total_usd"].as_f64().expect("total") - sum).abs() < 0.01, "{on}");
    }
    let total: f64 = chains.iter().map(|c| c["total_usd"].as_f64().expect("total")).sum();
    assert!((p["total_usd"].as_f64().expect("total") - total).abs() < 0.01, "{p}");
    assert!(total > 10_000_000.0, "the dev account holds millions on each chain: {p}");
    assert_eq!(p["complete"], true, "every chain read and every holding priced: {p}");

    // One chain only, and a chain its settings do not name (reported, not dropped).
    let one = json(&w.bardo(&[
        "call",
        "wallet_get_portfolio",
        "--params",
        &format!(r#"{{"chain_ids":[{SECOND_CHAIN_ID}]}}"#),
    ]));
    assert_eq!(one["chains"].as_array().map(Vec::len), Some(1), "{one}");
    let missing =
        json(&w.bardo(&["call", "wallet_get_portfolio", "--params", r#"{"chain_ids":[8453, 10]}"#]));
    assert_eq!(
        (missing["complete"].clone(), missing["failed"][0]["chain_id"].clone()),
        (false.into(), 10.into()),
        "{missing}"
    );

    // A chain the tool does not support is refused before the plugin runs.
    let o = w.bardo(&["preview", "swap", "--params", &swap(999)]);
    let said: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(!o.status.success(), "{said}");
    assert_eq!(said["error"]["code"], "chain-not-supported", "{said}");
}

/// `[safety.spending]` counts every chain's spend against one day, and a chain's own
/// `[safety.spending.chains.<id>]` limits hold on that chain only.
#[test]
fn spending_limits_hold_per_chain_and_across_chains() {
    let (node_a, a) = bardo_test_support::devnet();
    let (node_b, b) = bardo_test_support::second_devnet();
    let w = workspace_with(
        [(&node_a, &a), (&node_b, &b)],
        "[safety.spending]\nper_tx_usd = 1000\nper_day_usd = 250\n[safety.spending.chains.8453]\nper_tx_usd = 150\n",
    );
    let swap = |chain: u64, amount: &str| {
        format!(r#"{{"chain_id":{chain},"token_in":"USDC","token_out":"WETH","amount":"{amount}"}}"#)
    };
    let refused = |params: &str, says: &str| {
        let o = w.bardo(&["preview", "swap", "--params", params]);
        let said: Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(said["error"]["code"], "limit-exceeded", "{said}");
        let message = said["error"]["message"].as_str().expect("message");
        assert!(message.contains(says), "{message}");
    };
    // $200 is within the $1,000 for any transaction, not within chain 8453's own $150.
    refused(&swap(SECOND_CHAIN_ID, "200"), "chain 8453's per-transaction limit is $150");
    let commit = |params: &str| {
        let permit = json(&w.bardo(&["preview", "swap", "--params", params]));
        json(&w.bardo(&["commit", permit["permit_id"].as_str().expect("permit id")]));
    };
    commit(&swap(CHAIN_ID, "200"));
    // Chain 31337 has no limit of its own: $200 there. The day is one across both chains: $50 left.
    commit(&swap(SECOND_CHAIN_ID, "50"));
    refused(&swap(CHAIN_ID, "10"), "across every chain");
    refused(&swap(SECOND_CHAIN_ID, "10"), "across every chain");
}

/// Across on the devnet: a deposit on chain 31337's SpokePool (the published contract behind its
/// proxy) is filled on chain 8453 by the devnet's relayer from its own inventory; deposits a
/// relayer would not take (an output over the input less its fee, an output token that is not
/// the input's counterpart, another relayer's exclusivity) stay unfilled, and the relayer says why.
#[test]
fn an_across_deposit_on_one_chain_is_filled_on_the_other_by_the_relayer() {
    let (node_a, a) = bardo_test_support::devnet();
    let (node_b, b) = bardo_test_support::second_devnet();
    let relaying = bardo_test_support::relaying(&[(&node_a, &a), (&node_b, &b)]);
    let (chain_a, chain_b) = (Chain::connect(&node_a.url()), Chain::connect(&node_b.url()));
    let user = a.accounts[1];
    let (usdc_a, usdc_b) = (a.tokens["USDC"].address, b.tokens["USDC"].address);
    let usdc = |c: &Chain, token: Address, who: Address| c.read(token, balanceOfCall { account: who });
    chain_a.send(user, usdc_a, approveCall { spender: a.across.spoke_pool, amount: U256::MAX });
    let deposit = |output_token: Address, output: u64, exclusive: Address, exclusivity: u32| {
        let now = chain_a.now() as u32;
        let call = depositV3Call {
            depositor: user,
            recipient: user,
            inputToken: usdc_a,
            outputToken: output_token,
            inputAmount: U256::from(1_000_000_000u64),
            outputAmount: U256::from(output),
            destinationChainId: U256::from(SECOND_CHAIN_ID),
            exclusiveRelayer: exclusive,
            quoteTimestamp: now,
            fillDeadline: now + 3_600,
            exclusivityParameter: exclusivity,
            message: Default::default(),
        };
        chain_a.send(user, a.across.spoke_pool, call);
    };
    let (paid, received) = (usdc(&chain_a, usdc_a, user), usdc(&chain_b, usdc_b, user));

    // 1,000 USDC in, 998 out (the relayer's fee is 10 bps: at most 999): filled on chain 8453.
    let started = std::time::Instant::now();
    deposit(usdc_b, 998_000_000, Address::ZERO, 0);
    assert_eq!(
        paid - usdc(&chain_a, usdc_a, user),
        U256::from(1_000_000_000u64),
        "locked in the origin's spoke"
    );
    while usdc(&chain_b, usdc_b, user) == received {
        assert!(started.elapsed().as_secs() < 20, "filled: {:?}", relaying.notes.lock().expect("notes"));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let filled_in = started.elapsed();
    assert_eq!(usdc(&chain_b, usdc_b, user) - received, U256::from(998_000_000u64), "998 USDC on chain 8453");
    eprintln!("deposit to fill on the devnet: {} ms", filled_in.as_millis());

    // What a relayer would not take stays unfilled, each with its reason.
    let stranger = Address::repeat_byte(0x51);
    deposit(usdc_b, 1_000_000_000, Address::ZERO, 0);
    deposit(b.tokens["DAI"].address, 900_000_000, Address::ZERO, 0);
    deposit(usdc_b, 990_000_000, stranger, 600);
    let waited = std::time::Instant::now();
    while relaying.notes.lock().expect("notes").len() < 3 && waited.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(crate::two_chains::RELAYER_PASSES);
    let notes = relaying.notes.lock().expect("notes").clone();
    assert!(
        notes.iter().any(|n| n.contains("deposit 1 ") && n.contains("less the relayer's 10 bps")),
        "{notes:?}"
    );
    assert!(notes.iter().any(|n| n.contains("deposit 2 ") && n.contains("not the counterpart")), "{notes:?}");
    assert!(!notes.iter().any(|n| n.contains("deposit 3 ")), "another's exclusivity runs: {notes:?}");
    assert_eq!(usdc(&chain_b, usdc_b, user) - received, U256::from(998_000_000u64), "nothing more arrived");
}

/// Long enough for the relayer to look at every deposit a few times.
const RELAYER_PASSES: std::time::Duration = std::time::Duration::from_millis(1_000);

/// A dev workspace over both chains with the bridge, wallet and attack plugins, the devnet's
/// bridge settings and routes, and `[safety]` waiting `wait` seconds for a fill.
fn bridging(nodes: [(&bardo_devnet::Anvil, &Deployments); 2], wait: u64) -> Workspace {
    // Devnets: the attack plugin's tools (category testnet) run only there.
    let chains: String = nodes
        .iter()
        .map(|(node, d)| {
            format!("[chains.{}]\nrpc = \"{}\"\nhead_ttl_ms = 0\ndevnet = true\n", d.chain_id, node.url())
        })
        .collect();
    let extra = format!(
        "{chains}[settings]\nbridge = \"bridge.json\"\nwallet = \"wallet.json\"\n[safety]\npricing_file = \"pricing.json\"\n\
         allowlist_file = \"allowlist.json\"\napproved_assets_file = \"approved_assets.json\"\n\
         bridge_routes_file = \"bridge_routes.json\"\nbridge_fill_wait_secs = {wait}\n"
    );
    let plugins = [
        ("bridge.wasm", bardo_test_artifacts::BRIDGE),
        ("wallet.wasm", WALLET),
        ("attack.wasm", bardo_test_artifacts::ATTACK),
    ];
    let w = Workspace::new("dev", &plugins, &extra);
    let files = bardo_devnet::settings::files(&[nodes[0].1, nodes[1].1]);
    for name in ["bridge", "wallet", "pricing", "allowlist", "approved_assets", "bridge_routes"] {
        std::fs::write(w.path().join(format!("{name}.json")), files[name].to_string()).expect("settings");
    }
    w
}

/// Across through the write path: a bridge of USDC from 31337 to 8453 is valued by what arrives
/// (the output at chain 8453's prices), committed, followed to the relayer's fill and recorded;
/// the attack plugin's deposits — to a stranger, for far less than the input, for a token that is
/// not the input's counterpart, with an exclusive relayer of its choosing, to a chain the host
/// does not have — are refused with their reasons and move nothing; a fill that does not come in
/// time is reported pending, not failed.
#[test]
fn a_bridge_is_valued_by_what_arrives_and_followed_to_its_fill() {
    let (node_a, a) = bardo_test_support::devnet();
    let (node_b, b) = bardo_test_support::second_devnet();
    let relaying = bardo_test_support::relaying(&[(&node_a, &a), (&node_b, &b)]);
    let w = bridging([(&node_a, &a), (&node_b, &b)], 20);
    let (chain_a, chain_b) = (Chain::connect(&node_a.url()), Chain::connect(&node_b.url()));
    let wallet: Address = bardo_devnet::DEV_ACCOUNT.parse().expect("address");
    let (usdc_a, usdc_b) = (a.tokens["USDC"].address, b.tokens["USDC"].address);
    let usdc = |c: &Chain, token: Address| c.read(token, balanceOfCall { account: wallet });
    let before = (usdc(&chain_a, usdc_a), usdc(&chain_b, usdc_b));

    let params = r#"{"chain_id":31337,"destination_chain_id":8453,"token":"USDC","amount":"1000"}"#;
    let quote = json(&w.bardo(&["call", "bridge_quote", "--params", params]));
    assert_eq!(quote["output"]["base"], "999000000", "1,000 less the relayer's 10 bps: {quote}");
    let started = std::time::Instant::now();
    let permit = json(&w.bardo(&["preview", "bridge", "--params", params]));
    let committed = json(&w.bardo(&["commit", permit["permit_id"].as_str().expect("permit id")]));
    let end_to_end = started.elapsed();
    let fill = &committed["bridge"][0];
    assert_eq!((&fill["status"], &fill["delivered"]), (&"filled".into(), &"999000000".into()), "{committed}");
    assert_eq!(
        before.0 - usdc(&chain_a, usdc_a),
        U256::from(1_000_000_000u64),
        "1,000 USDC left chain 31337"
    );
    assert_eq!(
        usdc(&chain_b, usdc_b) - before.1,
        U256::from(999_000_000u64),
        "999 USDC arrived on chain 8453"
    );
    eprintln!(
        "bridge end to end (preview, commit, fill seen): {} ms; the commit waited {} ms for the fill",
        end_to_end.as_millis(),
        fill["waited_ms"]
    );
    let id = fill["deposit_id"].as_str().expect("deposit id").to_owned();
    let status = json(&w.bardo(&[
        "call",
        "bridge_get_status",
        "--params",
        &format!(r#"{{"chain_id":31337,"deposit_id":"{id}"}}"#),
    ]));
    assert_eq!((&status["status"], &status["fill_tx"]), (&"filled".into(), &fill["fill_tx"]), "{status}");
    let audit = std::fs::read_to_string(w.path().join(".bardo/audit.jsonl")).expect("audit log");
    assert!(audit.contains("\"BridgeFill\"") && audit.contains("\"filled\""), "the fill is on record");

    // The attack plugin's deposits, each refused before anything is sent.
    let spoke = a.across.spoke_pool.to_string();
    let stranger = Address::repeat_byte(0x51).to_string();
    let attack = |token_out: Address, minimum: &str, bridge: Value| {
        serde_json::json!({"chain_id": 31337, "target": spoke, "stranger": stranger, "owner": wallet.to_string(),
            "token": usdc_a.to_string(), "token_out": token_out.to_string(), "amount": "1000000000",
            "minimum": minimum, "bridge": bridge.to_string()}).to_string()
    };
    let refused = |params: String, code: &str, says: &str| {
        let o = w.bardo(&["preview", "attack_bridge", "--params", &params]);
        let said: Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(said["error"]["code"], code, "{said}");
        let message = said["error"]["message"].as_str().expect("message");
        assert!(message.contains(says), "{message}");
    };
    let honest = serde_json::json!({"destination": 8453});
    refused(
        attack(usdc_b, "999000000", serde_json::json!({"destination": 8453, "recipient": stranger})),
        "denied",
        "the recipient must be the wallet there",
    );
    refused(attack(usdc_b, "100000000", honest.clone()), "denied", "max_value_loss_bps");
    refused(
        attack(b.tokens["DAI"].address, "999000000000000000000", honest.clone()),
        "denied",
        "not its bridged counterpart",
    );
    refused(
        attack(
            usdc_b,
            "999000000",
            serde_json::json!({"destination": 8453, "exclusive_relayer": stranger, "exclusivity": 3_000}),
        ),
        "denied",
        "the fill to itself",
    );
    refused(
        attack(usdc_b, "999000000", serde_json::json!({"destination": 8453, "fill_deadline_secs": 60})),
        "denied",
        "relayers are left to fill it",
    );
    refused(
        attack(usdc_b, "999000000", serde_json::json!({"destination": 10})),
        "chain-not-supported",
        "chain 10",
    );
    // And the bridge tool on a chain Across does not serve, before the plugin runs.
    let o = w.bardo(&[
        "preview",
        "bridge",
        "--params",
        r#"{"chain_id":43114,"destination_chain_id":8453,"token":"USDC","amount":"1"}"#,
    ]);
    let said: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(said["error"]["code"], "chain-not-supported", "{said}");
    assert_eq!(
        before.0 - usdc(&chain_a, usdc_a),
        U256::from(1_000_000_000u64),
        "nothing more left chain 31337"
    );

    // No relayer: the commit reports the deposit pending after its wait, and it is filled later.
    drop(relaying);
    let w = bridging([(&node_a, &a), (&node_b, &b)], 2);
    let permit = json(&w.bardo(&["preview", "bridge", "--params", params]));
    let committed = json(&w.bardo(&["commit", permit["permit_id"].as_str().expect("permit id")]));
    assert_eq!(committed["bridge"][0]["status"], "pending", "{committed}");
    let id = committed["bridge"][0]["deposit_id"].as_str().expect("deposit id").to_owned();
    let status = |w: &Workspace| {
        json(&w.bardo(&[
            "call",
            "bridge_get_status",
            "--params",
            &format!(r#"{{"chain_id":31337,"deposit_id":"{id}"}}"#),
        ]))
    };
    assert_eq!(status(&w)["status"], "pending");
    let relaying = bardo_test_support::relaying(&[(&node_a, &a), (&node_b, &b)]);
    let waited = std::time::Instant::now();
    while status(&w)["status"] != "filled" {
        let notes = relaying.notes.lock().expect("notes").clone();
        assert!(waited.elapsed().as_secs() < 20, "filled once a relayer runs: {} {notes:?}", status(&w));
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
