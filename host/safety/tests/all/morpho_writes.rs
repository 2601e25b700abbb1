//! The morpho plugin behind the write path on the devnet's Morpho Blue: its reads equal Morpho's
//! own views; a full cycle — supply, collateral, borrow, repay, withdraw — is previewed and
//! committed with the wallet's change set (balances and Morpho positions) exactly as each plan
//! declared; a borrow beyond the LLTV or under the health floor is refused by the plugin, and by
//! the host when a plugin plans it anyway; a market the operator does not trust is refused by
//! scope however honestly planned; a borrow paid to a stranger and an authorization of one are
//! refused.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, I256, U256};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::SolCall;
use bardo_core::ErrorCode;
use bardo_devnet::CHAIN_ID;
use bardo_devnet::deploy::{Deployments, MorphoMarket};
use bardo_evm::changes::{Change, PositionPart};
use bardo_test_artifacts::{ATTACK, MORPHO};
use bardo_test_support::writes::{self as plugin_env, Env, u256};
use serde_json::{Value, json};
use std::collections::BTreeMap;

alloy::sol! {
    struct MarketParams { address loanToken; address collateralToken; address oracle; address irm; uint256 lltv; }
    function position(bytes32 id, address user) external view returns (uint256 supplyShares, uint128 borrowShares,
        uint128 collateral);
    function market(bytes32 id) external view returns (uint128 totalSupplyAssets, uint128 totalSupplyShares,
        uint128 totalBorrowAssets, uint128 totalBorrowShares, uint128 lastUpdate, uint128 fee);
    function createMarket(MarketParams marketParams) external;
    function isAuthorized(address authorizer, address authorized) external view returns (bool);
    function deposit() external payable;
}

const WETH_USDC: &str = "WETH/USDC";

fn settings(d: &Deployments) -> BTreeMap<String, Value> {
    BTreeMap::from([("morpho".to_owned(), d.morpho_settings())])
}

fn env() -> Env {
    plugin_env::env(&[MORPHO, ATTACK], settings, |d| d.write_targets())
}

fn usdc(n: u64) -> U256 {
    U256::from(n) * U256::from(1_000_000u64)
}

fn weth(n: u64) -> U256 {
    U256::from(n) * U256::from(10u64).pow(U256::from(18u64))
}

/// A write's params: `amount` in the devnet's WETH/USDC market.
fn lend(amount: &str) -> Value {
    json!({"chain_id": CHAIN_ID, "market": WETH_USDC, "amount": amount})
}

/// `from` (an unlocked anvil account) sends `data` and `value` to `to`, which must not revert.
fn send(e: &Env, from: Address, to: Address, data: Vec<u8>, value: U256) {
    let tx = TransactionRequest::default().from(from).to(to).with_input(data).with_value(value);
    let receipt =
        e.rt.block_on(async { e.provider.send_transaction(tx).await?.get_receipt().await }).expect("mined");
    assert!(receipt.status(), "the transaction to {to} reverted");
}

/// The wallet wraps `amount` of its ether into the devnet's WETH.
fn wrap(e: &Env, amount: U256) {
    send(e, e.user, e.d.tokens["WETH"].address, depositCall {}.abi_encode(), amount);
}

struct Morpho<'a> {
    e: &'a Env,
    market: &'a MorphoMarket,
}

impl Morpho<'_> {
    fn position(&self) -> positionReturn {
        self.e.read(self.e.d.morpho.morpho, positionCall { id: self.market.id, user: self.e.user })
    }

    fn balance(&self, token: Address) -> U256 {
        self.e.balance_of(token, self.e.user)
    }

    /// The Morpho part of a committed write's change set.
    fn moved(&self, r: &bardo_safety::WriteResult, part: PositionPart) -> I256 {
        let changes = r.changes.as_ref().expect("a change set from the receipts");
        changes
            .changes
            .iter()
            .find_map(|c| match c {
                Change::Position { venue, market, part: p, delta }
                    if *venue == self.e.d.morpho.morpho && *market == self.market.id && *p == part =>
                {
                    Some(*delta)
                }
                _ => None,
            })
            .unwrap_or_default()
    }
}

#[test]
fn a_full_morpho_cycle_moves_exactly_what_each_plan_declares() {
    let e = env();
    let market = &e.d.morpho.markets[WETH_USDC];
    let m = Morpho { e: &e, market };
    let (loan, collateral) = (market.loan_token, market.collateral_token);
    wrap(&e, weth(2));

    // The reads are Morpho's own views, interest accrued to the latest block.
    let listed = e.tool("morpho_get_markets", json!({"chain_id": CHAIN_ID}));
    let names: Vec<&str> =
        listed.as_array().expect("list").iter().map(|m| m["name"].as_str().expect("name")).collect();
    assert_eq!(names, ["WBTC/USDC", WETH_USDC]);
    let info = e.tool("morpho_get_market", json!({"chain_id": CHAIN_ID, "market": market.id}));
    assert_eq!(info["name"], WETH_USDC, "by id as by name");
    assert_eq!(info["lltv_percent"], "86");
    assert_eq!(info["oracle_price"], "2000", "USDC per WETH from the feed");
    let totals = e.read(e.d.morpho.morpho, marketCall { id: market.id });
    assert_eq!(
        u256(&info["total_supply_assets"]),
        U256::from(totals.totalSupplyAssets),
        "no borrows: no interest"
    );
    assert_eq!(info["utilization"], "0");

    // Supply 1,000 USDC: the preview's shares are what Morpho mints.
    let preview = e.tool(
        "morpho_preview",
        json!({"chain_id": CHAIN_ID, "market": WETH_USDC, "side": "supply", "assets": "1000"}),
    );
    let (usdc0, weth0) = (m.balance(loan), m.balance(collateral));
    let supplied = e.write("morpho-supply", lend("1000"));
    assert_eq!(m.balance(loan), usdc0 - usdc(1_000));
    let shares = m.position().supplyShares;
    assert_eq!(shares, u256(&preview["shares_down"]), "{preview}");
    assert_eq!(
        m.moved(&supplied, PositionPart::SupplyShares),
        I256::from_raw(shares),
        "the change set's position"
    );

    // 2 WETH of collateral, then borrow 1,000 USDC: health 2 × 2,000 × 0.86 / 1,000 = 3.44.
    let posted = e.write("morpho-supply-collateral", lend("2"));
    assert_eq!(m.balance(collateral), weth0 - weth(2));
    assert_eq!(m.moved(&posted, PositionPart::Collateral), I256::from_raw(weth(2)));
    let borrowed = e.write("morpho-borrow", lend("1000"));
    assert_eq!(m.balance(loan), usdc0);
    assert!(m.moved(&borrowed, PositionPart::BorrowShares).is_positive());
    let position = e.tool("morpho_get_position", json!({"chain_id": CHAIN_ID, "market": WETH_USDC}));
    assert!(position["health_factor"].as_str().expect("hf").starts_with("3.4"), "{position}");
    assert_eq!(position["collateral"], "2");
    assert_eq!(position["max_borrow"], "3440");
    assert_eq!(
        position["liquidation_price"].as_str().map(|p| p.starts_with("581.39")),
        Some(true),
        "{position}"
    );

    // Beyond the LLTV (3,440 in all): refused with the most it could be; under the floor of
    // 1.5 (a debt over 2,293): refused by policy.
    let refused = |kind: &str, params: Value| e.path.preview(kind, &params).expect_err("refused");
    let beyond = refused("morpho-borrow", lend("2500"));
    assert_eq!(beyond.code, ErrorCode::InvalidParams, "{beyond}");
    let most = beyond.message.contains("at most 2439.99") || beyond.message.contains("at most 2440 ");
    assert!(beyond.message.contains("LLTV") && most, "{beyond}");
    let low = refused("morpho-borrow", lend("1500"));
    assert_eq!(low.code, ErrorCode::Denied, "{low}");
    assert!(low.message.contains("below the policy minimum 1.5"), "{low}");
    let stuck = refused("morpho-withdraw-collateral", lend("max"));
    assert!(stuck.message.contains("LLTV"), "the debt holds the collateral: {stuck}");

    // Repay it all by shares (`max`): no debt is left, whatever interest accrued meanwhile.
    let borrow_shares = U256::from(m.position().borrowShares);
    let before = m.balance(loan);
    let repaid = e.write("morpho-repay", lend("max"));
    assert_eq!(m.position().borrowShares, 0, "the whole debt");
    assert!(before - m.balance(loan) >= usdc(1_000), "at least what was borrowed");
    assert_eq!(m.moved(&repaid, PositionPart::BorrowShares), -I256::from_raw(borrow_shares));
    e.write("morpho-withdraw-collateral", lend("max"));
    assert_eq!(m.position().collateral, 0);
    assert_eq!(m.balance(collateral), weth0, "the collateral is back");
    let before = m.balance(loan);
    let withdrawn = e.write("morpho-withdraw", lend("max"));
    assert_eq!(m.position().supplyShares, U256::ZERO);
    assert_eq!(m.moved(&withdrawn, PositionPart::SupplyShares), -I256::from_raw(shares));
    let back = m.balance(loan) - before;
    assert!(
        back >= usdc(1_000) - U256::from(1u8),
        "the supply back with its interest, less rounding: {back}"
    );
}

/// The attack plugin's params against the devnet's WETH/USDC market: borrow (or authorize)
/// `amount`, paid to `stranger`, declaring `outcome`.
fn attack(e: &Env, amount: U256, stranger: Address, outcome: Value) -> Value {
    let market = &e.d.morpho.markets[WETH_USDC];
    json!({"chain_id": CHAIN_ID, "target": e.d.morpho.morpho, "stranger": stranger,
        "token": market.loan_token, "token_out": market.collateral_token, "hooks": market.oracle,
        "owner": market.irm, "amount": amount.to_string(), "outcome": outcome.to_string()})
}

/// What a borrow of `amount` to the wallet does, declared honestly: the loan token in, and borrow
/// shares at the market's totals (within a thousandth, for interest).
fn borrow_declared(e: &Env, amount: U256) -> Value {
    let market = &e.d.morpho.markets[WETH_USDC];
    let t = e.read(e.d.morpho.morpho, marketCall { id: market.id });
    let shares = bardo_morpho_math::to_shares_up(
        amount,
        U256::from(t.totalBorrowAssets),
        U256::from(t.totalBorrowShares),
    );
    let margin = shares / U256::from(1_000u16);
    json!({"balance_changes": [{"token": market.loan_token, "delta": amount.to_string()}],
        "positions": [{"venue": e.d.morpho.morpho, "market": market.id, "part": "borrow_shares",
            "delta": (shares - margin).to_string(), "tolerance": (margin + margin).to_string()}]})
}

#[test]
fn the_host_refuses_morpho_plans_that_take_the_margin_or_hand_the_position_away() {
    let e = env();
    wrap(&e, weth(1));
    e.write("morpho-supply-collateral", lend("1"));
    let stranger = e.d.accounts[3];
    let refused = |kind: &str, params: Value| {
        let err = e.path.preview(kind, &params).expect_err("refused");
        assert_eq!(err.code, ErrorCode::Denied, "{err}");
        err.message
    };
    // Paid to a stranger, or a stranger authorized to act for the wallet: scope.
    let to_stranger =
        refused("attack-morpho-borrow", attack(&e, usdc(100), stranger, json!({"balance_changes": []})));
    assert!(
        to_stranger.starts_with("allowlist-guard") && to_stranger.contains("`receiver`"),
        "{to_stranger}"
    );
    let grant =
        refused("attack-morpho-authorize", attack(&e, U256::ZERO, stranger, json!({"balance_changes": []})));
    assert!(grant.starts_with("allowlist-guard") && grant.contains("not in the scope"), "{grant}");
    assert!(!e.read(e.d.morpho.morpho, isAuthorizedCall { authorizer: e.user, authorized: stranger }));

    // 1 WETH backs at most 1,720 USDC: beyond it Morpho itself refuses in the simulation.
    let beyond = usdc(1_800);
    let over =
        e.path.preview("attack-morpho-borrow", &attack(&e, beyond, e.user, borrow_declared(&e, beyond)));
    let over = over.expect_err("beyond the LLTV");
    assert!(over.message.contains("insufficient collateral"), "{over}");

    // 1,500 USDC is within the LLTV but leaves health at 1.146: the host's floor refuses it,
    // declared honestly and whichever plugin planned it.
    let deep = usdc(1_500);
    let floor = refused("attack-morpho-borrow", attack(&e, deep, e.user, borrow_declared(&e, deep)));
    assert!(floor.starts_with("health-floor") && floor.contains("at 1.146"), "{floor}");
    // 500 USDC (health 3.44) passes every check and lands as declared.
    let fine = usdc(500);
    let permit = e.path.preview("attack-morpho-borrow", &attack(&e, fine, e.user, borrow_declared(&e, fine)));
    let permit = permit.unwrap_or_else(|err| panic!("a healthy borrow: {err}"));
    let done = e.path.commit(&permit.permit_id).expect("commit");
    assert!(done.outcome_mismatch.is_empty(), "{:?}", done.outcome_mismatch);
}

/// A market anyone created — WETH collateral priced by the WBTC market's oracle, 3·10^11 times too
/// high — listed in the plugin's settings but not trusted by the operator: the plugin plans a
/// supply into it honestly, and the host's scope refuses it.
#[test]
fn a_market_the_operator_does_not_trust_is_refused_however_honestly_planned() {
    let lying = |d: &Deployments| {
        let market = &d.morpho.markets[WETH_USDC];
        MorphoMarket { oracle: d.morpho.markets["WBTC/USDC"].oracle, ..market.clone() }
    };
    let settings = |d: &Deployments| {
        let mut s = d.morpho_settings();
        let mut m = lying(d);
        let params = MarketParams {
            loanToken: m.loan_token,
            collateralToken: m.collateral_token,
            oracle: m.oracle,
            irm: m.irm,
            lltv: m.lltv,
        };
        m.id = alloy::primitives::keccak256(alloy::sol_types::SolValue::abi_encode(&params));
        s["chains"][CHAIN_ID.to_string()]["markets"]["WETH/USDC-lying"] =
            serde_json::to_value(&m).expect("json");
        BTreeMap::from([("morpho".to_owned(), s)])
    };
    let e = plugin_env::env(&[MORPHO], settings, |d| d.write_targets());
    let m = lying(&e.d);
    let create = createMarketCall {
        marketParams: MarketParams {
            loanToken: m.loan_token,
            collateralToken: m.collateral_token,
            oracle: m.oracle,
            irm: m.irm,
            lltv: m.lltv,
        },
    };
    let tx = TransactionRequest::default()
        .from(e.d.accounts[3])
        .to(e.d.morpho.morpho)
        .with_input(create.abi_encode());
    let receipt =
        e.rt.block_on(async { e.provider.send_transaction(tx).await?.get_receipt().await })
            .expect("anyone creates a market");
    assert!(receipt.status());
    let planned = e.tool("morpho_get_market", json!({"chain_id": CHAIN_ID, "market": "WETH/USDC-lying"}));
    assert_eq!(planned["oracle_price"], "600000000000000", "the lie: WETH priced on WBTC's scale");
    let params = json!({"chain_id": CHAIN_ID, "market": "WETH/USDC-lying", "amount": "100"});
    let err = e.path.preview("morpho-supply", &params).expect_err("an untrusted market");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(
        err.message.starts_with("allowlist-guard") && err.message.contains("not one the operator trusts"),
        "{err}"
    );
}

/// Bad inputs are typed errors that say what to do: an unknown market (naming the listed ones),
/// both or neither of `amount` and `shares`, shares of collateral, `max` for a supply, more than
/// the wallet holds or owes, nothing to withdraw or repay.
#[test]
fn bad_morpho_inputs_are_typed_errors_that_say_what_to_do() {
    let e = env();
    let plan =
        |kind: &str, params: Value| e.path.preview(kind, &params).expect_err(&format!("{kind} {params}"));
    let unknown = plan("morpho-supply", json!({"chain_id": CHAIN_ID, "market": "PEPE/USDC", "amount": "1"}));
    assert_eq!(unknown.code, ErrorCode::NotFound, "{unknown}");
    assert!(unknown.message.contains("WBTC/USDC, WETH/USDC"), "names the listed markets: {unknown}");
    let both = plan(
        "morpho-supply",
        json!({"chain_id": CHAIN_ID, "market": WETH_USDC, "amount": "1", "shares": "5"}),
    );
    assert!(both.code == ErrorCode::InvalidParams && both.message.contains("exactly one"), "{both}");
    let neither = plan("morpho-borrow", json!({"chain_id": CHAIN_ID, "market": WETH_USDC}));
    assert_eq!(neither.code, ErrorCode::InvalidParams, "{neither}");
    let shares = plan(
        "morpho-supply-collateral",
        json!({"chain_id": CHAIN_ID, "market": WETH_USDC, "shares": "1000"}),
    );
    assert!(shares.message.contains("collateral has no shares"), "{shares}");
    let max = plan("morpho-supply", lend("max"));
    assert!(max.code == ErrorCode::InvalidParams && max.message.contains("`max`"), "{max}");
    let rich = plan("morpho-supply", lend("1000000000"));
    assert!(rich.message.contains("the wallet holds"), "{rich}");
    for kind in ["morpho-withdraw", "morpho-repay", "morpho-withdraw-collateral"] {
        let nothing = plan(kind, lend("max"));
        assert_eq!(nothing.code, ErrorCode::InvalidParams, "{kind}: {nothing}");
    }
    let zero = plan("morpho-supply", lend("0"));
    assert_eq!(zero.code, ErrorCode::InvalidParams, "{zero}");
    // Nothing was written: the wallet has no position.
    let position = e.tool("morpho_get_position", json!({"chain_id": CHAIN_ID, "market": WETH_USDC}));
    assert_eq!(
        (position["supplied"].as_str(), position["health_factor"].as_str()),
        (Some("0"), Some("infinite"))
    );
}
