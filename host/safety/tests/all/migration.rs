//! A V3 position moved into the V4 pool of the same tokens in one UniversalRouter transaction
//! (the router's `V3_POSITION_MANAGER_CALL`s and `V4_POSITION_MANAGER_CALL`, as Uniswap's
//! migrator does it) through the whole write path, held to the chain: the V3 NFT burned, the V4
//! one the wallet's in the same range, and every token the V3 position paid out either in the
//! V4 position or back in the wallet. And the migrations a hostile plugin would plan — the V3
//! collect or the V4 position to a stranger, the V4 position to the router's own placeholder —
//! refused.

use super::v4_liquidity::{getPositionLiquidityCall, int, lp_with, ownerOfCall};
use alloy::primitives::{Address, Bytes, U256};
use alloy::sol_types::{SolCall, SolValue};
use bardo_devnet::CHAIN_ID;
use bardo_devnet::deploy::Deployments;
use bardo_test_support::addr;
use serde_json::json;

#[test]
fn a_v3_position_moves_to_v4_in_one_transaction_and_nothing_is_left_behind() {
    let e = lp_with(Deployments::write_targets);
    let (npm, posm) = (e.d.uniswap_v3["position_manager"], e.d.uniswap_v4["position_manager"]);
    let pool = e
        .call(
            "uniswap_get_pool_info",
            json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000}),
        )
        .expect("pool");
    let tokens = [addr(&pool["token0"]["address"]), addr(&pool["token1"]["address"])];
    let base = pool["tick"].as_i64().expect("tick").div_euclid(60) * 60;
    let (lower, upper) = (base - 600, base + 600);
    let mint = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "1", "amount_b": "3000", "tick_lower": lower, "tick_upper": upper});
    let (_, minted) = e.write("add_liquidity", &mint, tokens);
    let id = minted.actual["position_id"].as_str().expect("id").to_owned();
    let v3_id: U256 = id.parse().expect("id");

    let (back, done) =
        e.write("migrate_liquidity", &json!({"chain_id": CHAIN_ID, "position_id": id}), tokens);
    assert!(done.tx_hashes.len() <= 2, "the router's approval and one migration: {:?}", done.tx_hashes);
    assert_eq!(done.actual["transactions"], json!(done.tx_hashes.len()));
    assert!(e.read(npm, ownerOfCall { id: v3_id }).is_err(), "the V3 position is burned");
    let v4_id: U256 = done.actual["v4_position_id"].as_str().expect("v4 id").parse().expect("id");
    assert_eq!(done.actual["v4_position_id"], done.expected["v4_position_id"]);
    assert_eq!(e.read(posm, ownerOfCall { id: v4_id }).expect("owner"), e.d.deployer);
    let liquidity = e.read(posm, getPositionLiquidityCall { tokenId: v4_id }).expect("liquidity");
    assert_eq!(liquidity.to_string(), done.actual["liquidity"].as_str().expect("liquidity"));
    assert_eq!(
        (done.actual["tick_lower"].as_i64(), done.actual["tick_upper"].as_i64()),
        (Some(lower), Some(upper))
    );
    let v4 = e
        .call(
            "uniswap_get_position",
            json!({"chain_id": CHAIN_ID, "position_id": v4_id.to_string(), "version": "v4"}),
        )
        .expect("v4 position");
    assert_eq!(v4["in_range"], true, "{v4}");
    assert_eq!(
        (v4["fee"].clone(), v4["v4"]["hooks"].clone()),
        (json!(3000), json!(Address::ZERO.to_string())),
        "the V4 pool of the same fee, no hook: {v4}"
    );
    // Every token the V3 position paid out is in the V4 position or back in the wallet (the
    // position's amounts round down, what the mint paid rounds up: a wei or two apart).
    let withdrawn = [int(&done.actual["withdrawn"][0]), int(&done.actual["withdrawn"][1])];
    let held = [int(&v4["amount0_base"]), int(&v4["amount1_base"])];
    for i in 0..2 {
        let paid = withdrawn[i] - back[i];
        assert!(
            back[i] >= 0 && (0..=2).contains(&(paid - held[i])),
            "token {i}: {withdrawn:?} out, {back:?} back, {held:?} held"
        );
    }
    // Most of it went in: the range is the V3 one, the price the same pool's on V4.
    assert!(held[0] > 0 && held[1] > 0, "{held:?}");
    assert!(
        (0..2).any(|i| back[i] * 100 <= withdrawn[i]),
        "at most 1 % of the scarcer token back: {withdrawn:?} out, {back:?} back"
    );
}

#[test]
fn a_migration_that_pays_anyone_but_the_wallet_is_refused() {
    use super::attacks::{STRANGER, env, refused};
    let e = env();
    let add = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "0.5", "amount_b": "1000", "full_range": true});
    let permit = e.scoped.preview("add-liquidity", &add).expect("preview add");
    let added = e.scoped.commit(&permit.permit_id).expect("commit add");
    let id: U256 = added.actual["position_id"].as_str().expect("id").parse().expect("id");
    let (npm, posm, router) = (
        e.d.uniswap_v3["position_manager"],
        e.d.uniswap_v4["position_manager"],
        e.d.uniswap_v4["universal_router"],
    );
    alloy::sol! {
        struct DecreaseLiquidityParams { uint256 tokenId; uint128 liquidity; uint256 amount0Min; uint256 amount1Min; uint256 deadline; }
        struct CollectParams { uint256 tokenId; address recipient; uint128 amount0Max; uint128 amount1Max; }
        function decreaseLiquidity(DecreaseLiquidityParams params) external payable returns (uint256, uint256);
        function collect(CollectParams params) external payable returns (uint256, uint256);
        function burn(uint256 tokenId) external payable;
        function approve(address to, uint256 tokenId) external;
        function execute(bytes commands, bytes[] inputs, uint256 deadline) external payable;
        function modifyLiquidities(bytes unlockData, uint256 deadline) external payable;
        struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }
    }
    let liquidity: u128 = added.actual["liquidity_added"].as_str().expect("liquidity").parse().expect("u128");
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let key = PoolKey {
        currency0: weth.min(usdc),
        currency1: weth.max(usdc),
        fee: alloy::primitives::aliases::U24::from(3000),
        tickSpacing: alloy::primitives::aliases::I24::try_from(60).expect("spacing"),
        hooks: Address::ZERO,
    };
    // A migration of the whole position, its V3 collect to `collect_to` and its V4 position
    // minted to `owner`.
    let migration = |collect_to: Address, owner: Address| -> Vec<u8> {
        let v3 = [
            decreaseLiquidityCall {
                params: DecreaseLiquidityParams {
                    tokenId: id,
                    liquidity,
                    amount0Min: U256::ZERO,
                    amount1Min: U256::ZERO,
                    deadline: U256::MAX,
                },
            }
            .abi_encode(),
            collectCall {
                params: CollectParams {
                    tokenId: id,
                    recipient: collect_to,
                    amount0Max: u128::MAX,
                    amount1Max: u128::MAX,
                },
            }
            .abi_encode(),
            burnCall { tokenId: id }.abi_encode(),
        ];
        let mint = (
            key.clone(),
            alloy::primitives::aliases::I24::try_from(-887_220).expect("tick"),
            alloy::primitives::aliases::I24::try_from(887_220).expect("tick"),
            U256::from(liquidity / 2),
            u128::MAX,
            u128::MAX,
            owner,
            Bytes::new(),
        )
            .abi_encode_params();
        let settle = |c: Address| (c, U256::ZERO, false).abi_encode_params();
        let sweep = |c: Address| (c, e.wallet).abi_encode_params();
        let params: Vec<Bytes> =
            [mint, settle(key.currency0), settle(key.currency1), sweep(key.currency0), sweep(key.currency1)]
                .into_iter()
                .map(Bytes::from)
                .collect();
        let unlock = (Bytes::from(vec![0x02, 0x0b, 0x0b, 0x14, 0x14]), params).abi_encode_params();
        let v4 = modifyLiquiditiesCall { unlockData: unlock.into(), deadline: U256::MAX }.abi_encode();
        let inputs: Vec<Bytes> = v3.into_iter().chain([v4]).map(Bytes::from).collect();
        executeCall { commands: vec![0x12, 0x12, 0x12, 0x14].into(), inputs, deadline: U256::MAX }
            .abi_encode()
    };
    let raw = |execute: Vec<u8>| {
        let approve = approveCall { to: router, tokenId: id }.abi_encode();
        e.raw(&[(npm, approve), (router, execute)], None)
    };
    let before = e.state(Some(id));
    let wallet = e.wallet;
    refused(
        &e.scoped,
        "attack-raw",
        &raw(migration(STRANGER, wallet)),
        "allowlist-guard",
        "collect recipient",
    );
    refused(
        &e.scoped,
        "attack-raw",
        &raw(migration(posm, STRANGER)),
        "allowlist-guard",
        "MINT_POSITION owner",
    );
    // The caller placeholder names the router when the router calls: never the wallet here.
    let msg_sender = Address::with_last_byte(1);
    refused(
        &e.scoped,
        "attack-raw",
        &raw(migration(posm, msg_sender)),
        "allowlist-guard",
        "MINT_POSITION owner",
    );
    // A V3 position approved to anyone but a listed router.
    let approve = approveCall { to: STRANGER, tokenId: id }.abi_encode();
    refused(&e.scoped, "attack-raw", &e.raw(&[(npm, approve)], None), "allowlist-guard", "universal-router");
    assert_eq!(e.state(Some(id)), before, "nothing moved");
}
