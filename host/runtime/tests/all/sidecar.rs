//! The sidecar as an oracle on the devnet: from the pool state the host reads, Uniswap's SDK
//! computes what a swap delivers, and the real pools deliver exactly that — V3 and V4, exact-in
//! and exact-out, across initialized ticks.

use super::uniswap::{Env, env, u256};
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, I256, U256};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionRequest;
use bardo_devnet::CHAIN_ID;
use bardo_sidecar::pool_read::{Pool, PoolReader};
use bardo_sidecar::{Config, Sidecar, SwapResult, Ticks};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

fn sidecar(state: &tempfile::TempDir) -> Arc<Sidecar> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sidecar");
    Sidecar::new(Config::new(dir, state.path()))
}

/// The SDK's swap of `amount` (positive exact-in, negative exact-out) through `pool` as the chain
/// is now, and how many bitmap words it read.
fn sdk_swap(e: &Env, sidecar: &Sidecar, pool: Pool, zero_for_one: bool, amount: I256) -> (SwapResult, usize) {
    let call = |to: Address, data: Vec<u8>| {
        let tx = TransactionRequest::default().to(to).with_input(data);
        e.rt.block_on(e.provider.call(tx).into_future()).map(|b| b.to_vec()).map_err(|e| e.to_string())
    };
    let mut reader = PoolReader::new(pool, call);
    let state = reader.state().expect("pool state");
    let mut ticks = Ticks::default();
    let result = sidecar
        .swap(&state, &mut ticks, (zero_for_one, amount), |pos, ticks| {
            reader.read_word(pos, state.tick_spacing, ticks)
        })
        .expect("the SDK's swap");
    (result, ticks.words.len())
}

/// The host's chain clients for the devnet `node` (each call its own, with its own caches).
fn chains_on(node: &bardo_devnet::Anvil) -> bardo_evm::chain::Chains {
    use bardo_evm::chain::{ChainConfig, Chains};
    let config = std::collections::BTreeMap::from([(CHAIN_ID, ChainConfig::new(node.url()))]);
    Chains::new(&config, bardo_test_support::host_runtime()).expect("chains")
}

fn units(whole: u64, decimals: u8) -> U256 {
    U256::from(whole) * U256::from(10).pow(U256::from(decimals))
}

#[test]
fn the_sdks_swap_from_the_state_the_host_reads_is_what_the_pools_deliver() {
    let e = env();
    let state = tempfile::tempdir().expect("tempdir");
    let sidecar = sidecar(&state);
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let v3 =
        e.d.uniswap_v3_pools
            .iter()
            .find(|p| p.fee == 500 && [&p.token0, &p.token1].contains(&&"USDC".to_owned()))
            .expect("the 0.05 % WETH/USDC pool")
            .address;
    let weth_is_0 = weth < usdc;
    let swap = |params: serde_json::Value| {
        let plan = e.plan("uniswap_execute_swap", &params);
        let receipts = e.execute(&plan);
        e.verify("uniswap_execute_swap", &params, &receipts)
    };

    // Exact-in, 5 WETH for USDC in the V3 pool.
    let (sdk, _) =
        sdk_swap(&e, &sidecar, Pool::V3(v3), weth_is_0, I256::try_from(units(5, 18)).expect("i256"));
    let done = swap(json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "5",
        "version": "v3", "fee": 500}));
    assert_eq!(
        I256::try_from(u256(&done["amount_out_base"])).expect("i256"),
        -sdk.amount_calculated,
        "{done}"
    );

    // Exact-out, 3,000 USDC from the same pool.
    let (sdk, _) =
        sdk_swap(&e, &sidecar, Pool::V3(v3), weth_is_0, -I256::try_from(units(3000, 6)).expect("i256"));
    let done = swap(json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "3000",
        "side": "exact_out", "version": "v3", "fee": 500}));
    assert_eq!(I256::try_from(u256(&done["amount_in_base"])).expect("i256"), sdk.amount_calculated, "{done}");

    // A narrow position just around the price, which a large swap walks out of: it crosses
    // initialized ticks.
    let tick = sdk_swap(&e, &sidecar, Pool::V3(v3), weth_is_0, I256::ONE).0.tick;
    let lower = tick.div_euclid(10) * 10 - 100;
    let mint = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 500, "amount_a": "10",
        "amount_b": "20000", "tick_lower": lower, "tick_upper": lower + 200});
    e.execute(&e.plan("uniswap_add_liquidity", &mint));
    let before = sdk_swap(&e, &sidecar, Pool::V3(v3), weth_is_0, I256::ONE).0;
    let (sdk, words) =
        sdk_swap(&e, &sidecar, Pool::V3(v3), !weth_is_0, I256::try_from(units(400_000, 6)).expect("i256"));
    assert_ne!(sdk.liquidity, before.liquidity, "the swap crossed ticks: in-range liquidity changed");
    assert!(words >= 1, "read the bitmap");
    let done =
        swap(json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "400000",
        "version": "v3", "fee": 500, "slippage_bps": 5000}));
    assert_eq!(
        I256::try_from(u256(&done["amount_out_base"])).expect("i256"),
        -sdk.amount_calculated,
        "{done}"
    );

    // V4: the WETH/DAI pool inside the PoolManager, through StateView.
    let dai = e.token("DAI");
    let v4 = e.d.uniswap_v4_pools.iter().find(|p| p.token0 != "ETH" && p.fee == 500).expect("WETH/DAI V4");
    let pool =
        Pool::V4 { state_view: e.d.uniswap_v4["state_view"], id: v4.id, tick_spacing: v4.tick_spacing };
    let (sdk, _) = sdk_swap(&e, &sidecar, pool, weth < dai, I256::try_from(units(2, 18)).expect("i256"));
    let done = swap(json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "DAI", "amount": "2",
        "version": "v4", "fee": 500}));
    assert_eq!(
        I256::try_from(u256(&done["amount_out_base"])).expect("i256"),
        -sdk.amount_calculated,
        "{done}"
    );
}

#[test]
fn a_routes_pools_are_found_in_at_most_four_batched_rounds_as_a_pool_by_pool_read_sees_them() {
    use bardo_sidecar::book::UniswapBook;
    use bardo_sidecar::discover::{Calls, Discovery};
    use bardo_sidecar::route::RoutePool;
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};

    let (snapshot, node) = bardo_test_support::snapshot_and_anvil();
    let d = &snapshot.deployments;
    let book = UniswapBook::from_settings(&d.uniswap_settings()).expect("books")[&CHAIN_ID].clone();
    let chains = chains_on(&node);
    let client = chains.get(CHAIN_ID).expect("chain");
    let deadline = Instant::now() + Duration::from_secs(60);
    let block = chains.block_on(client.block_number(deadline)).expect("block");
    let read = |calls: &Calls| {
        let answers = chains.block_on(client.call_many(calls, block, deadline));
        answers.into_iter().map(|a| a.map_err(|e| e.to_string())).collect::<Vec<_>>()
    };
    let mut discovery = Discovery::new(read);
    let symbols = ["USDC", "WETH", "DAI"];
    let tokens = symbols.map(|s| d.tokens[s].address);
    let found = discovery.pools(&book, &tokens).expect("pools");
    // Where, state, the words at the prices, the ticks they mark (none when no word marks one).
    assert!((3..=4).contains(&discovery.rounds()), "{} rounds", discovery.rounds());
    assert_eq!(found.decimals, BTreeMap::from([(tokens[0], 6), (tokens[1], 18), (tokens[2], 18)]));

    // Every seeded pool between these tokens, and nothing else.
    let ours = |a: &str, b: &str| symbols.contains(&a) && symbols.contains(&b);
    let v2 = d.uniswap_v2_pairs.iter().filter(|p| ours(&p.token0, &p.token1)).count();
    let v3 = d.uniswap_v3_pools.iter().filter(|p| ours(&p.token0, &p.token1)).count();
    let standard = |p: &bardo_devnet::deploy::V4Pool| {
        p.hooks.is_zero() && bardo_sidecar::discover::V4_TIERS.contains(&(p.fee, p.tick_spacing))
    };
    let v4 = d.uniswap_v4_pools.iter().filter(|p| ours(&p.token0, &p.token1) && standard(p)).count();
    let count = |protocol: &str| found.pools.iter().filter(|p| p.protocol() == protocol).count();
    assert_eq!((count("v2"), count("v3"), count("v4")), (v2, v3, v4), "{:?}", found.pools);
    assert!(v3 > 0 && v4 > 0, "the devnet seeds V3 and V4 pools");

    // Each concentrated pool's state and its word at the price, as one read at a time sees them.
    let state_view = book.v4_state_view.expect("state view");
    for pool in &found.pools {
        let (RoutePool::V3 { state, ticks, .. } | RoutePool::V4 { state, ticks, .. }) = pool else {
            continue;
        };
        let (reader, spacing) = pool.reader(state_view).expect("a concentrated pool");
        let one = |to: Address, data: Vec<u8>| {
            chains
                .block_on(client.call(to, data.into(), U256::ZERO, Some(block), deadline))
                .map(|b| b.to_vec())
                .map_err(|e| e.to_string())
        };
        let mut alone = PoolReader::new(reader, one);
        assert_eq!(&alone.state().expect("state"), state, "{}", pool.id());
        let mut words = Ticks::default();
        alone.read_word(Ticks::word_of(state.tick, spacing), spacing, &mut words).expect("word");
        assert_eq!(&words, ticks, "{}", pool.id());
    }
}

#[test]
fn many_calls_at_a_block_are_answered_in_order_in_batches_as_one_at_a_time_would_be() {
    use alloy::sol_types::SolCall;
    use std::time::{Duration, Instant};
    alloy::sol! {
        function decimals() external view returns (uint8);
        function transfer(address to, uint256 amount) external returns (bool);
    }

    let (snapshot, node) = bardo_test_support::snapshot_and_anvil();
    let d = &snapshot.deployments;
    let chains = chains_on(&node);
    let client = chains.get(CHAIN_ID).expect("chain");
    let deadline = Instant::now() + Duration::from_secs(60);
    let block = chains.block_on(client.block_number(deadline)).expect("block");
    // 250 calls (three batches): each token's decimals, and transfers the node reverts (no
    // balance at the zero address's sender), one of them already cached.
    let tokens: Vec<Address> = d.tokens.values().map(|t| t.address).collect();
    let calls: Vec<(Address, alloy::primitives::Bytes)> = (0..250)
        .map(|i| {
            let token = tokens[i % tokens.len()];
            let data = match i % 5 {
                4 => transferCall { to: Address::repeat_byte(7), amount: U256::MAX }.abi_encode(),
                _ => decimalsCall {}.abi_encode(),
            };
            (token, data.into())
        })
        .collect();
    // One at a time, through a client of its own (nothing cached from the batches).
    let alone = chains_on(&node);
    let one = |(to, data): &(Address, alloy::primitives::Bytes)| {
        let client = alone.get(CHAIN_ID).expect("chain");
        alone.block_on(client.call(*to, data.clone(), U256::ZERO, Some(block), deadline))
    };
    let (to, data) = &calls[3];
    let cached =
        chains.block_on(client.call(*to, data.clone(), U256::ZERO, Some(block), deadline)).expect("cached");
    let many = chains.block_on(client.call_many(&calls, block, deadline));
    assert_eq!(many.len(), calls.len());
    assert_eq!(many[3].as_ref().expect("decimals"), &cached);
    for (i, (answer, call)) in many.iter().zip(&calls).enumerate() {
        assert_eq!(answer, &one(call), "call {i}");
        match i % 5 {
            4 => assert!(matches!(answer, Err(bardo_evm::ChainError::Reverted { .. })), "{i}: {answer:?}"),
            _ => assert!(answer.is_ok(), "{i}: {answer:?}"),
        }
    }
}
