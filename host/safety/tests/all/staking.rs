//! Liquidity mining on Uniswap's V3 Staker (`@uniswap/v3-staker` 1.0.2, the devnet's incentive on
//! WETH/USDC 0.3 %): a position staked from the wallet in one transaction, rewarded after time
//! passes (what the staker's own formula pays for its share of the pool's in-range liquidity),
//! its rewards claimed while it stays staked, then unstaked and withdrawn back — each through
//! the whole write path. And a hostile plugin's ways to lose a position through the staker — into
//! a contract that is no listed staker, its deposit moved or withdrawn to a stranger, its
//! rewards claimed to one — each refused.

use super::v4_liquidity::{Lp, int, lp_with, ownerOfCall};
use alloy::primitives::{Address, B256, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::sol_types::{SolCall, SolValue};
use bardo_core::tool::Phase;
use bardo_devnet::CHAIN_ID;
use bardo_devnet::deploy::Deployments;
use bardo_safety::WritePath;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::hooks::{AllowlistGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_test_support::{addr, runtime};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

alloy::sol! {
    struct IncentiveKey { address rewardToken; address pool; uint256 startTime; uint256 endTime; address refundee; }
    function deposits(uint256 tokenId) external view returns (address owner, uint48 numberOfStakes, int24 tickLower, int24 tickUpper);
    function stakes(uint256 tokenId, bytes32 incentiveId) external view returns (uint160 secondsPerLiquidityInsideInitialX128, uint128 liquidity);
    function liquidity() external view returns (uint128);
    function safeTransferFrom(address from, address to, uint256 tokenId, bytes data) external;
    function withdrawToken(uint256 tokenId, address to, bytes data) external;
    function claimReward(address rewardToken, address to, uint256 amountRequested) external returns (uint256);
    function transferDeposit(uint256 tokenId, address to) external;
}

/// A write path over `e`'s host whose policy knows `custodians` (the stakers a position may come
/// back from) and reads holdings, in `phase`.
fn policy_path(e: &Lp, custodians: BTreeSet<Address>, phase: Phase) -> (WritePath, tempfile::TempDir) {
    let hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage {
            valuer: Some(bardo_test_support::writes::valuer(&e.host, &e.d)),
            custodians: BTreeMap::from([(CHAIN_ID, custodians)]),
            ..PolicyCage::default()
        }),
        Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, e.d.write_targets())]))),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let log = AuditLog::open(&dir.path().join("audit.jsonl"), HostKey::ephemeral()).expect("audit log");
    let after = bardo_test_support::writes::guards_allowing(
        e.host.services(),
        &e.d,
        e.d.write_targets(),
        bardo_safety::hooks::value_guard::DEFAULT_MAX_LOSS_BPS,
        bardo_safety::hooks::on_chain_bounds::DEFAULT_MAX_SLIPPAGE_BPS,
    );
    let path =
        WritePath::new(e.host.clone(), e.host.services().clone(), hooks, log).with_after_simulation(after);
    path.set_phase(phase);
    (path, dir)
}

/// Let `secs` pass on the devnet (a block at the new time) and keep the price feeds fresh.
fn time_passes(e: &Lp, secs: u64) {
    let provider = ProviderBuilder::new().connect_http(e.node.url().parse().expect("url"));
    runtime().block_on(async {
        provider.raw_request::<_, Value>("evm_increaseTime".into(), (secs,)).await.expect("increase time");
        provider.raw_request::<_, Value>("evm_mine".into(), ()).await.expect("mine");
    });
    runtime().block_on(bardo_devnet::feeds::restamp(&e.node.url(), &e.d.feeds, 0)).expect("restamp");
}

/// The timestamp of the block a write's last transaction landed in.
fn landed_at(e: &Lp, tx: &str) -> u64 {
    let provider = ProviderBuilder::new().connect_http(e.node.url().parse().expect("url"));
    runtime().block_on(async {
        let hash: B256 = tx.parse().expect("hash");
        let receipt = provider.get_transaction_receipt(hash).await.expect("receipt").expect("mined");
        let block = receipt.block_number.expect("block");
        provider.get_block_by_number(block.into()).await.expect("block").expect("exists").header.timestamp
    })
}

/// What the staker's formula pays `liquidity` in range of a pool of `pool_liquidity` for `secs`
/// of an incentive funded with `reward` over `duration` seconds, nothing claimed before.
fn share(reward: f64, duration: u64, secs: u64, liquidity: u128, pool_liquidity: u128) -> f64 {
    reward * secs as f64 / duration as f64 * liquidity as f64 / pool_liquidity as f64
}

#[test]
fn a_staked_position_earns_its_share_and_comes_back_with_its_rewards() {
    let e = lp_with(Deployments::write_targets);
    let (npm, staker) = (e.d.uniswap_v3["position_manager"], e.d.uniswap_v3["staker"]);
    let incentive = e.d.uniswap_v3_incentives.first().expect("the devnet's incentive").clone();
    let pool = e
        .call(
            "uniswap_get_pool_info",
            json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000}),
        )
        .expect("pool");
    assert_eq!(addr(&pool["address"]), incentive.pool, "the incentive is the WETH/USDC 0.3 % pool's");
    let tokens = [addr(&pool["token0"]["address"]), addr(&pool["token1"]["address"])];
    let usdc = e.d.tokens["USDC"].address;
    let at_usdc = usize::from(tokens[1] == usdc);
    let base = pool["tick"].as_i64().expect("tick").div_euclid(60) * 60;
    let mint = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "1", "amount_b": "3000", "tick_lower": base - 600, "tick_upper": base + 600});
    let (_, minted) = e.write("add_liquidity", &mint, tokens);
    let id = minted.actual["position_id"].as_str().expect("id").to_owned();
    let token_id: U256 = id.parse().expect("id");

    // The incentive as the plugin finds it: the staker's own event, the devnet's key.
    let listed = e
        .call("uniswap_get_incentives", json!({"chain_id": CHAIN_ID, "pool": incentive.pool.to_string()}))
        .expect("incentives");
    let found = &listed["incentives"][0];
    assert_eq!(found["incentive_id"], json!(incentive.id.to_string()), "{listed}");
    assert_eq!(found["active"], true);
    assert_eq!(found["reward"]["amount_base"], json!(incentive.reward));
    assert_eq!(listed["deposits"], json!([]), "nothing staked yet");

    // Staked in one transaction: the NFT into the staker, the wallet its depositor.
    let stake = json!({"chain_id": CHAIN_ID, "position_id": id, "incentive_id": incentive.id.to_string()});
    let (moved, staked) = e.write("stake_liquidity", &stake, tokens);
    assert_eq!(moved, [0, 0], "a stake moves no token");
    assert_eq!(staked.tx_hashes.len(), 1, "one transaction: {:?}", staked.tx_hashes);
    assert_eq!(e.read(npm, ownerOfCall { id: token_id }).expect("owner"), staker);
    let deposit = e.read(staker, depositsCall { tokenId: token_id }).expect("deposit");
    assert_eq!((deposit.owner, deposit.numberOfStakes.to::<u64>()), (e.d.deployer, 1));
    let liquidity: u128 = staked.actual["liquidity"].as_str().expect("liquidity").parse().expect("u128");
    assert_eq!(
        e.read(staker, stakesCall { tokenId: token_id, incentiveId: incentive.id }).expect("stake").liquidity,
        liquidity
    );
    let pool_liquidity = e.read(incentive.pool, liquidityCall {}).expect("pool liquidity");
    let staked_at = landed_at(&e, staked.tx_hashes.last().expect("tx"));

    // A day passes: the read shows what the stake earned so far.
    time_passes(&e, 86_400);
    let listed = e.call("uniswap_get_incentives", json!({"chain_id": CHAIN_ID})).expect("incentives");
    let stakes = &listed["deposits"][0]["stakes"];
    assert_eq!(listed["deposits"][0]["position_id"], json!(id), "{listed}");
    assert_eq!(stakes[0]["incentive_id"], json!(incentive.id.to_string()));
    let so_far = int(&stakes[0]["reward_base"]);
    assert!(so_far > 0, "a day in range earns: {listed}");

    // Claimed, staying staked: the USDC is what the staker's formula pays for the share.
    let claim = json!({"chain_id": CHAIN_ID, "position_id": id});
    let (moved, claimed) = e.write("claim_staking_rewards", &claim, tokens);
    let paid = int(&claimed.actual["rewards"][0]["amount_base"]);
    assert_eq!(moved[at_usdc], paid, "the wallet got what the outcome says: {}", claimed.actual);
    assert!(paid >= so_far, "at least what the read showed a block before: {paid} < {so_far}");
    let claimed_at = landed_at(&e, claimed.tx_hashes.last().expect("tx"));
    let reward: f64 = incentive.reward.parse().expect("reward");
    let duration = incentive.end_time - incentive.start_time;
    let due = share(reward, duration, claimed_at - staked_at, liquidity, pool_liquidity);
    assert!((paid as f64 - due).abs() / due < 0.01, "paid {paid}, the share of the incentive is {due:.0}");
    assert_eq!(claimed.actual["staked_in"], json!([incentive.id.to_string()]), "{}", claimed.actual);
    assert_eq!(e.read(npm, ownerOfCall { id: token_id }).expect("owner"), staker, "still staked");

    // An hour on, unstaked and withdrawn in one transaction: the NFT and the hour's reward back —
    // in the survival phase too, where no new position may open: the position coming back is
    // the wallet's own deposit, to a policy that knows the staker (to one that does not, the NFT
    // arriving is a new position).
    time_passes(&e, 3_600);
    let (strict, _log) = policy_path(&e, BTreeSet::new(), Phase::Survival);
    let refused =
        strict.preview("unstake_liquidity", &claim).expect_err("new to a policy without the staker");
    assert!(refused.message.contains("classed new-position"), "{}", refused.message);
    let (path, _log) = policy_path(&e, BTreeSet::from([staker]), Phase::Survival);
    let permit = path.preview("unstake_liquidity", &claim).expect("an unstake is allowed in survival");
    let before = e.balance(usdc);
    let unstaked = path.commit(&permit.permit_id).expect("commit the unstake");
    assert!(unstaked.outcome_mismatch.is_empty(), "{:?}", unstaked.outcome_mismatch);
    let moved = {
        let mut m = [0i128; 2];
        m[at_usdc] = (e.balance(usdc) - before).to::<i128>();
        m
    };
    assert_eq!(unstaked.tx_hashes.len(), 1);
    assert_eq!(e.read(npm, ownerOfCall { id: token_id }).expect("owner"), e.d.deployer, "back in the wallet");
    let hour = int(&unstaked.actual["rewards"][0]["amount_base"]);
    assert_eq!(moved[at_usdc], hour);
    let secs = landed_at(&e, unstaked.tx_hashes.last().expect("tx")) - claimed_at;
    // What is left of the incentive is shared over what is left of its time.
    let left = reward - paid as f64;
    let due = left * secs as f64
        / (duration as f64 - (claimed_at - staked_at) as f64 * liquidity as f64 / pool_liquidity as f64)
        * liquidity as f64
        / pool_liquidity as f64;
    assert!((hour as f64 - due).abs() / due < 0.02, "paid {hour} for the hour, due {due:.0}");
    let listed = e.call("uniswap_get_incentives", json!({"chain_id": CHAIN_ID})).expect("incentives");
    assert_eq!(listed["deposits"], json!([]), "no deposit left: {listed}");
    assert_eq!(listed["incentives"][0]["stakes"], 0);
    // Nothing is left to claim or unstake: clear errors.
    let e2 = e.host.plan("uniswap_unstake_position", &claim.to_string()).result.expect_err("not staked");
    assert!(e2.message.contains("not in the staker"), "{e2}");
}

#[test]
fn a_position_lost_through_the_staker_is_refused() {
    use super::attacks::{STRANGER, env, refused};
    let e = env();
    let add = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "0.5", "amount_b": "1000", "full_range": true});
    let permit = e.scoped.preview("add-liquidity", &add).expect("preview add");
    let added = e.scoped.commit(&permit.permit_id).expect("commit add");
    let id: U256 = added.actual["position_id"].as_str().expect("id").parse().expect("id");
    let (npm, staker) = (e.d.uniswap_v3["position_manager"], e.d.uniswap_v3["staker"]);
    let incentive = e.d.uniswap_v3_incentives[0].clone();
    let key = IncentiveKey {
        rewardToken: e.token("USDC"),
        pool: incentive.pool,
        startTime: U256::from(incentive.start_time),
        endTime: U256::from(incentive.end_time),
        refundee: incentive.refundee,
    };
    let raw = |calls: Vec<(Address, Vec<u8>)>, outcome: Value| e.raw(&calls, Some(&outcome));
    let leaves = json!({"balance_changes": [],
        "nfts": [{"collection": npm.to_string(), "id": id.to_string(), "gained": false}]});
    let deposit = |to: Address| {
        (
            npm,
            safeTransferFromCall { from: e.wallet, to, tokenId: id, data: key.abi_encode().into() }
                .abi_encode(),
        )
    };
    // Into a contract that is no listed staker (a stranger; the router, listed for another role).
    let before = e.state(Some(id));
    refused(
        &e.scoped,
        "attack-raw",
        &raw(vec![deposit(STRANGER)], leaves.clone()),
        "allowlist-guard",
        "uniswap-v3-staker",
    );
    let router = e.d.uniswap_v3["swap_router"];
    refused(
        &e.scoped,
        "attack-raw",
        &raw(vec![deposit(router)], leaves.clone()),
        "allowlist-guard",
        "uniswap-v3-staker",
    );
    // Into the staker, then its deposit moved to a stranger, or withdrawn to one, in the same plan.
    let transfer = (staker, transferDepositCall { tokenId: id, to: STRANGER }.abi_encode());
    refused(
        &e.scoped,
        "attack-raw",
        &raw(vec![deposit(staker), transfer], leaves.clone()),
        "allowlist-guard",
        "not in the scope of a uniswap-v3-staker",
    );
    let withdraw =
        (staker, withdrawTokenCall { tokenId: id, to: STRANGER, data: Default::default() }.abi_encode());
    refused(
        &e.scoped,
        "attack-raw",
        &raw(vec![deposit(staker), withdraw], leaves.clone()),
        "allowlist-guard",
        "`to`",
    );
    // The rewards claimed to a stranger.
    let claim = (
        staker,
        claimRewardCall { rewardToken: key.rewardToken, to: STRANGER, amountRequested: U256::ZERO }
            .abi_encode(),
    );
    refused(
        &e.scoped,
        "attack-raw",
        &raw(vec![claim], json!({"balance_changes": []})),
        "allowlist-guard",
        "`to`",
    );
    assert_eq!(e.state(Some(id)), before, "nothing moved");
    // The honest deposit, the same calldata to the listed staker, passes every check.
    let permit = e
        .scoped
        .preview("attack-raw", &raw(vec![deposit(staker)], leaves))
        .expect("a deposit into the staker");
    e.scoped.commit(&permit.permit_id).expect("commit");
    let owner = e.view(staker, depositsCall { tokenId: id }).owner;
    assert_eq!(owner, e.wallet, "the wallet's deposit");
}
