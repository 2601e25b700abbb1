//! Morpho Blue on the devnet as `bardo devnet up` deploys it (the published 1.0.0 sources,
//! compiled with the solc they pin): each market holds the parameters its id hashes and its
//! seeded supply, prices its collateral from the devnet's feeds, and lets a borrower borrow up to
//! the LLTV and no further — Morpho's own checks, read and exercised over RPC, and held against
//! Morpho's own TypeScript SDK (`@morpho-org/blue-sdk`, `tests/clients/morpho_check.mjs`); and
//! the host's and the plugin's Morpho math (`bardo-morpho-math`) equal to that SDK's over 1,000
//! random cases (`tests/clients/morpho_math.mjs`).

use alloy::primitives::{Address, Bytes, I256, U256, keccak256};
use alloy::sol_types::{SolCall, SolValue};
use bardo_devnet::deploy::MorphoMarket;
use bardo_test_support::chain::Chain;
use bardo_test_support::devnet;

alloy::sol! {
    struct MarketParams { address loanToken; address collateralToken; address oracle; address irm; uint256 lltv; }
    function idToMarketParams(bytes32 id) external view returns (address loanToken, address collateralToken,
        address oracle, address irm, uint256 lltv);
    function market(bytes32 id) external view returns (uint128 totalSupplyAssets, uint128 totalSupplyShares,
        uint128 totalBorrowAssets, uint128 totalBorrowShares, uint128 lastUpdate, uint128 fee);
    function position(bytes32 id, address user) external view returns (uint256 supplyShares, uint128 borrowShares,
        uint128 collateral);
    function isIrmEnabled(address irm) external view returns (bool);
    function isLltvEnabled(uint256 lltv) external view returns (bool);
    function price() external view returns (uint256);
    function supplyCollateral(MarketParams marketParams, uint256 assets, address onBehalf, bytes data) external;
    function borrow(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, address receiver)
        external returns (uint256, uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function deposit() external payable;
    function balanceOf(address account) external view returns (uint256);
    function updateAnswer(int256 answer) external;
    function createMarket(MarketParams marketParams) external;
}

fn params(m: &MorphoMarket) -> MarketParams {
    MarketParams {
        loanToken: m.loan_token,
        collateralToken: m.collateral_token,
        oracle: m.oracle,
        irm: m.irm,
        lltv: m.lltv,
    }
}

#[test]
fn morpho_markets_price_from_the_feeds_and_lend_up_to_the_lltv() {
    let (node, d) = devnet();
    let chain = Chain::connect(&node.url());
    let m = &d.morpho;
    assert!(chain.read(m.morpho, isIrmEnabledCall { irm: m.irm }));
    let lltv = U256::from(860_000_000_000_000_000u128);
    assert!(chain.read(m.morpho, isLltvEnabledCall { lltv }));
    let usdc = d.tokens["USDC"].address;
    assert_eq!(m.markets.keys().collect::<Vec<_>>(), ["WBTC/USDC", "WETH/USDC"]);
    for (name, market) in &m.markets {
        assert_eq!(market.id, keccak256(params(market).abi_encode()), "{name}: the id hashes its parameters");
        let on_chain = chain.read(m.morpho, idToMarketParamsCall { id: market.id });
        assert_eq!(
            (on_chain.loanToken, on_chain.collateralToken, on_chain.oracle, on_chain.irm, on_chain.lltv),
            (usdc, market.collateral_token, market.oracle, m.irm, lltv),
            "{name}"
        );
        let totals = chain.read(m.morpho, marketCall { id: market.id });
        assert_eq!(totals.totalSupplyAssets, 1_000_000_000_000u128, "{name}: 1,000,000 USDC supplied");
        assert_eq!(totals.totalBorrowAssets, 0, "{name}");
        let seeded = chain.read(m.morpho, positionCall { id: market.id, user: d.deployer });
        assert!(seeded.supplyShares > U256::ZERO, "{name}: the deployer's supply");
    }

    // One collateral unit in loan units, scaled by 1e36: 2,000 USDC per WETH (6 - 18 decimals).
    let weth_usdc = &m.markets["WETH/USDC"];
    let price = chain.read(weth_usdc.oracle, priceCall {});
    assert_eq!(price, U256::from(2_000u64) * U256::from(10u64).pow(U256::from(24u64)));
    let wbtc_price = chain.read(m.markets["WBTC/USDC"].oracle, priceCall {});
    assert_eq!(
        wbtc_price,
        U256::from(60_000u64) * U256::from(10u64).pow(U256::from(34u64)),
        "8 → 6 decimals"
    );

    // A borrower posts 1 WETH and borrows up to 86 % of its 2,000 USDC: 1,720 USDC, not more.
    let borrower = d.accounts[2];
    let weth = d.tokens["WETH"].address;
    let one = U256::from(10u64).pow(U256::from(18u64));
    chain.try_send(borrower, weth, depositCall {}.abi_encode(), one).expect("wrap");
    chain
        .try_send(borrower, weth, approveCall { spender: m.morpho, amount: one }.abi_encode(), U256::ZERO)
        .expect("approve");
    let post = supplyCollateralCall {
        marketParams: params(weth_usdc),
        assets: one,
        onBehalf: borrower,
        data: Bytes::new(),
    };
    chain.try_send(borrower, m.morpho, post.abi_encode(), U256::ZERO).expect("collateral");
    // Morpho's SDK on the market as the chain has it: the same id, and the most 1 WETH lets the
    // borrower owe — exactly where Morpho itself draws the line.
    let t = chain.read(m.morpho, marketCall { id: weth_usdc.id });
    let sdk = blue_sdk(&serde_json::json!({
        "params": {"loanToken": usdc, "collateralToken": weth, "oracle": weth_usdc.oracle, "irm": m.irm,
            "lltv": lltv.to_string()},
        "totals": {"totalSupplyAssets": t.totalSupplyAssets.to_string(), "totalSupplyShares": t.totalSupplyShares.to_string(),
            "totalBorrowAssets": t.totalBorrowAssets.to_string(), "totalBorrowShares": t.totalBorrowShares.to_string(),
            "lastUpdate": t.lastUpdate.to_string(), "fee": t.fee.to_string()},
        "price": price.to_string(),
        "collateral": one.to_string(),
    }));
    assert_eq!(sdk["id"], serde_json::json!(weth_usdc.id), "{sdk}");
    let max: U256 = sdk["max_borrow"].as_str().expect("a maximum").parse().expect("decimal");
    assert_eq!(max, U256::from(1_720_000_000u64), "86 % of 2,000 USDC: {sdk}");
    let borrow = |assets: U256| borrowCall {
        marketParams: params(weth_usdc),
        assets,
        shares: U256::ZERO,
        onBehalf: borrower,
        receiver: borrower,
    };
    let over = chain.try_send(borrower, m.morpho, borrow(max + U256::from(1u8)).abi_encode(), U256::ZERO);
    assert!(over.as_ref().is_err_and(|e| e.contains("insufficient collateral")), "{over:?}");
    let before = chain.read(usdc, balanceOfCall { account: borrower });
    chain.try_send(borrower, m.morpho, borrow(max).abi_encode(), U256::ZERO).expect("borrow up to the LLTV");
    assert_eq!(chain.read(usdc, balanceOfCall { account: borrower }) - before, max);

    // The feed moves, the oracle follows: WETH at 1,000 halves the price.
    let half = I256::try_from(1_000i64 * 100_000_000).expect("answer");
    chain
        .try_send(d.deployer, d.feeds["WETH"], updateAnswerCall { answer: half }.abi_encode(), U256::ZERO)
        .expect("feed");
    assert_eq!(chain.read(weth_usdc.oracle, priceCall {}), price / U256::from(2u8));
}

/// `tests/clients/morpho_check.mjs` (Morpho's blue-sdk) on `input`.
fn blue_sdk(input: &serde_json::Value) -> serde_json::Value {
    crate::client_script("morpho_check.mjs", "@morpho-org/blue-sdk", &input.to_string())
}

/// A script of `tests/clients` on Morpho's blue-sdk, `input` on its standard input and as its
/// argument when short; its answer as JSON. The SDK's absence fails the test.
/// Morpho through the write path, planned by the attack plugin: a supply credited to a stranger
/// is refused by scope; so is one for the wallet, declared honestly, into a market anyone created
/// — WETH priced by the WBTC market's oracle, thirty times too high — however real its contracts
/// are; in a market the operator trusts, for the wallet, the scope lets it through.
#[test]
fn morpho_plans_stay_with_the_wallet_in_the_markets_the_operator_trusts() {
    use bardo_core::ErrorCode;
    let (node, d) = devnet();
    let host = std::sync::Arc::new(bardo_test_support::devnet_host(
        &node.url(),
        d.uniswap_settings(),
        true,
        &[bardo_test_artifacts::ATTACK],
    ));
    let policy = bardo_safety::hooks::PolicyCage::default();
    let (path, _audit) = bardo_test_support::writes::guarded_path(&host, &d, policy, d.write_targets());
    let chain = Chain::connect(&node.url());
    let m = &d.morpho;
    let market = &m.markets["WETH/USDC"];
    let stranger = d.accounts[3];
    let plan = |oracle: Address, on_behalf: Address| {
        serde_json::json!({"chain_id": bardo_devnet::CHAIN_ID, "target": m.morpho, "stranger": on_behalf,
            "token": market.loan_token, "token_out": market.collateral_token, "hooks": oracle, "owner": m.irm,
            "amount": "1000000000",
            "outcome": serde_json::json!({"balance_changes": [{"token": market.loan_token, "delta": "-1000000000"}],
                "authorities": []}).to_string()})
    };
    let refused = |params: serde_json::Value, hint: &str| {
        let e = path.preview("attack-morpho-supply", &params).expect_err("refused");
        assert_eq!(e.code, ErrorCode::Denied, "{e}");
        assert!(e.message.starts_with("allowlist-guard") && e.message.contains(hint), "{e}");
    };
    refused(plan(market.oracle, stranger), "`onBehalf`; it must be the wallet");

    // Anyone may create a market: here one whose oracle is real and allowlisted nowhere.
    let lying = MarketParams {
        loanToken: market.loan_token,
        collateralToken: market.collateral_token,
        oracle: m.markets["WBTC/USDC"].oracle,
        irm: m.irm,
        lltv: market.lltv,
    };
    let create = createMarketCall { marketParams: lying.clone() }.abi_encode();
    chain.try_send(stranger, m.morpho, create, U256::ZERO).expect("anyone creates a market");
    let id = keccak256(lying.abi_encode());
    assert!(chain.read(m.morpho, marketCall { id }).lastUpdate > 0, "the market exists on chain");
    refused(plan(lying.oracle, d.deployer), "not one the operator trusts");

    // The trusted market, for the wallet: past the scope (what the value checks make of a
    // Morpho position is theirs to say).
    if let Err(e) = path.preview("attack-morpho-supply", &plan(market.oracle, d.deployer)) {
        assert!(!e.message.starts_with("allowlist-guard"), "the scope allows it: {e}");
    }
}

/// One random market, position and amounts.
#[derive(Debug, Clone)]
struct Case {
    totals: bardo_morpho_math::Totals,
    rate: U256,
    elapsed: u64,
    assets: U256,
    shares: U256,
    collateral: U256,
    borrow_shares: U256,
    price: U256,
    lltv: U256,
}

/// A number of any magnitude up to 10^`max_exp`: small, exact-fraction and huge ones alike.
fn magnitude(max_exp: u32) -> impl proptest::strategy::Strategy<Value = U256> {
    use proptest::prelude::*;
    (0..=max_exp).prop_flat_map(|e| (0..=10u128.pow(e)).prop_map(U256::from))
}

fn case() -> impl proptest::strategy::Strategy<Value = Case> {
    use proptest::prelude::*;
    let totals =
        (magnitude(30), magnitude(36), 0u64..=1_000_000, magnitude(36), 0u64..=250_000_000_000_000_000);
    let totals = totals.prop_map(|(supply_assets, supply_shares, used, borrow_shares, fee)| {
        bardo_morpho_math::Totals {
            supply_assets,
            supply_shares,
            // Borrowed never exceeds supplied: a millionth-exact share of it.
            borrow_assets: supply_assets * U256::from(used) / U256::from(1_000_000u64),
            borrow_shares,
            last_update: 0,
            fee: U256::from(fee),
        }
    });
    let position = (magnitude(30), magnitude(36), magnitude(30), magnitude(36));
    let market =
        (0u64..=1_000_000_000_000, 0u64..=100_000_000, magnitude(38), 0u64..=1_000_000_000_000_000_000);
    (totals, position, market).prop_map(
        |(totals, (assets, shares, collateral, borrow_shares), (rate, elapsed, price, lltv))| Case {
            totals,
            rate: U256::from(rate),
            elapsed,
            assets,
            shares,
            collateral,
            borrow_shares,
            price,
            lltv: U256::from(lltv),
        },
    )
}

/// Morpho's math as the plugin and the health floor compute it (`bardo-morpho-math`) against
/// Morpho's own TypeScript SDK over 1,000 random markets, positions and amounts: every share
/// conversion (both ways, both roundings), the interest and fee shares an accrual adds, the most
/// a collateral lets a borrower owe, the health factor and whether Morpho would call the
/// position healthy — equal to the base unit, every case.
#[test]
fn morpho_math_equals_blue_sdks_to_the_base_unit() {
    use bardo_morpho_math as math;
    use proptest::strategy::{Strategy, ValueTree};
    const CASES: usize = 1_000;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let cases: Vec<Case> =
        (0..CASES).map(|_| case().new_tree(&mut runner).expect("a case").current()).collect();
    let input: Vec<serde_json::Value> = cases
        .iter()
        .map(|c| {
            let t = &c.totals;
            serde_json::json!({
                "totalSupplyAssets": t.supply_assets.to_string(), "totalSupplyShares": t.supply_shares.to_string(),
                "totalBorrowAssets": t.borrow_assets.to_string(), "totalBorrowShares": t.borrow_shares.to_string(),
                "fee": t.fee.to_string(), "rate": c.rate.to_string(), "elapsed": c.elapsed.to_string(),
                "assets": c.assets.to_string(), "shares": c.shares.to_string(),
                "collateral": c.collateral.to_string(), "borrowShares": c.borrow_shares.to_string(),
                "price": c.price.to_string(), "lltv": c.lltv.to_string(),
            })
        })
        .collect();
    let sdk = crate::client_script(
        "morpho_math.mjs",
        "@morpho-org/blue-sdk",
        &serde_json::Value::from(input).to_string(),
    );
    let answers = sdk.as_array().expect("an answer per case");
    assert_eq!(answers.len(), CASES);
    let mut mismatches = Vec::new();
    for (c, sdk) in cases.iter().zip(answers) {
        let t = &c.totals;
        let accrued = t.accrued(c.rate, c.elapsed);
        let position = math::Position {
            supply_shares: c.shares,
            borrow_shares: c.borrow_shares,
            collateral: c.collateral,
        };
        let ours = serde_json::json!({
            "shares_down": math::to_shares_down(c.assets, t.supply_assets, t.supply_shares).to_string(),
            "shares_up": math::to_shares_up(c.assets, t.supply_assets, t.supply_shares).to_string(),
            "assets_down": math::to_assets_down(c.shares, t.supply_assets, t.supply_shares).to_string(),
            "assets_up": math::to_assets_up(c.shares, t.supply_assets, t.supply_shares).to_string(),
            "supply_assets": position.supply_assets(t).to_string(),
            "borrow_assets": position.borrow_assets(t).to_string(),
            "interest": (accrued.borrow_assets - t.borrow_assets).to_string(),
            "fee_shares": (accrued.supply_shares - t.supply_shares).to_string(),
            "max_borrow": math::max_borrow(c.collateral, c.price, c.lltv).to_string(),
            "health_factor": math::health_factor(&position, t, c.price, c.lltv).to_string(),
            "healthy": math::is_healthy(&position, t, c.price, c.lltv),
        });
        if &ours != sdk {
            mismatches.push(format!("{c:?}\n  ours {ours}\n  sdk  {sdk}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {CASES} cases differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
