//! Pendle's own market math (`@pendle/core-v2-offchain-math`, `tests/clients/pendle_math.mjs`)
//! against the devnet's contracts over 1,000 random market states: the plugin's quotes (the
//! static router's) and the price the host values PT at (the PT/YT/LP oracle's), each read on
//! the real market with its reserves, implied rate and clock replaced for the one `eth_call`
//! (state and block overrides), must equal what Pendle's TypeScript computes from the same state.

use alloy::network::TransactionBuilder;
use alloy::primitives::map::{AddressHashMap, B256HashMap};
use alloy::primitives::{Address, B256, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::state::AccountOverride;
use alloy::rpc::types::{BlockOverrides, TransactionRequest};
use alloy::sol_types::SolCall;
use bardo_test_support::{devnet, runtime};
use serde_json::{Value, json};

alloy::sol! {
    struct MarketState { int256 totalPt; int256 totalSy; int256 totalLp; address treasury; int256 scalarRoot;
        uint256 expiry; uint256 lnFeeRateRoot; uint256 reserveFeePercent; uint256 lastLnImpliedRate; }
    function readState(address router) external view returns (MarketState market);
    function pyIndexCurrentViewMarket(address market) external view returns (uint256);
    function swapExactPtForSyStatic(address market, uint256 exactPtIn) external view
        returns (uint256 netSyOut, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function swapSyForExactPtStatic(address market, uint256 exactPtOut) external view
        returns (uint256 netSyIn, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function swapExactSyForPtStatic(address market, uint256 exactSyIn) external view
        returns (uint256 netPtOut, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function removeLiquidityDualSyAndPtStatic(address market, uint256 netLpToRemove) external view
        returns (uint256 netSyOut, uint256 netPtOut);
    function getPtToAssetRate(address market, uint32 duration) external view returns (uint256);
}

const CASES: usize = 1_000;
const WAD: u128 = 1_000_000_000_000_000_000;

/// One random state of the market and the sizes quoted in it.
#[derive(Debug, Clone)]
struct Case {
    total_pt: U256,
    total_sy: U256,
    ln_rate: U256,
    block_time: u64,
    pt_in: U256,
    pt_out: U256,
    sy_in: U256,
    lp_in: U256,
}

/// A value spread over orders of magnitude: `m` × 10^`e`.
fn spread(lo: u32, hi: u32) -> impl proptest::strategy::Strategy<Value = U256> {
    use proptest::prelude::*;
    (1u64..10, lo..=hi).prop_map(|(m, e)| U256::from(m) * U256::from(10u64).pow(U256::from(e)))
}

/// States a market can be in before maturity: SY reserves from 10^9 to 10^16 base units (a
/// thousand to ten billion USDC), 5–85 % of the asset in PT, an implied rate of 0.5–40 %, from
/// a day to the devnet's maturity; sizes from 10^-7 to 30 % of the reserve they come from.
fn case(
    py_index: U256,
    lp_supply: U256,
    now: u64,
    expiry: u64,
) -> impl proptest::strategy::Strategy<Value = Case> {
    use proptest::prelude::*;
    let state = (
        spread(9, 15),
        50u64..=850,
        5_000_000_000_000_000u64..=400_000_000_000_000_000,
        86_400..=expiry - now,
    );
    let sizes = (1u64..=3_000_000, 1u64..=3_000_000, 1u64..=3_000_000, 1u64..=3_000_000);
    (state, sizes).prop_map(move |((total_sy, pt_per_mille, ln_rate, ttl), (a, b, c, d))| {
        let asset = total_sy * py_index / U256::from(WAD);
        let total_pt = asset * U256::from(pt_per_mille) / U256::from(1_000 - pt_per_mille);
        // Fractions of 10^-7 .. 0.3 of the reserve, spread by squaring.
        let part = |total: U256, x: u64| {
            (total * U256::from(x) * U256::from(x) / U256::from(30_000_000_000_000u64)).max(U256::from(1u8))
        };
        Case {
            total_pt,
            total_sy,
            ln_rate: U256::from(ln_rate),
            block_time: expiry - ttl,
            pt_in: part(total_pt, a),
            pt_out: part(total_pt, b),
            sy_in: part(total_sy, c),
            lp_in: part(lp_supply, d),
        }
    })
}

/// The market's storage slot holding `totalPt` (low 128 bits) and `totalSy` (high): the one
/// whose word is the two reserves `readState` reports. The slot after it holds the implied rate.
fn reserves_slot(rt: &tokio::runtime::Runtime, p: &DynProvider, market: Address, pt: U256, sy: U256) -> U256 {
    let word = (sy << 128) | pt;
    (0u64..400)
        .map(U256::from)
        .find(|slot| rt.block_on(p.get_storage_at(market, *slot).into_future()).expect("storage") == word)
        .expect("the market's reserves slot")
}

fn call<C: SolCall>(
    rt: &tokio::runtime::Runtime,
    p: &DynProvider,
    to: Address,
    c: C,
    overrides: &AddressHashMap<AccountOverride>,
    time: u64,
) -> Result<C::Return, String> {
    let tx = TransactionRequest::default().to(to).with_input(c.abi_encode());
    let block = BlockOverrides { time: Some(time), ..Default::default() };
    let out = rt
        .block_on(p.call(tx).overrides(overrides.clone()).with_block_overrides(block).into_future())
        .map_err(|e| e.to_string())?;
    C::abi_decode_returns(&out).map_err(|e| e.to_string())
}

/// What Pendle's math answered for one quote: `(out, fee)`, or that it refused.
fn answer(v: &Value) -> Option<(U256, U256)> {
    let n = |k: &str| v[k].as_str().and_then(|s| s.parse().ok());
    Some((n("out")?, n("fee")?))
}

#[test]
fn quotes_and_pt_prices_equal_pendles_own_math_over_random_states() {
    use proptest::strategy::{Strategy, ValueTree};
    let (node, d) = devnet();
    let rt = runtime();
    let p = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let m = &d.pendle.markets["PT-bvUSDC"];
    let (quoter, oracle) = (d.pendle.contracts["router_static"], d.pendle.contracts["py_lp_oracle"]);
    let none = AddressHashMap::default();
    let now = rt
        .block_on(p.get_block_by_number(Default::default()).into_future())
        .expect("head")
        .expect("block")
        .header
        .timestamp;
    let state = call(&rt, &p, m.market, readStateCall { router: quoter }, &none, now).expect("readState");
    let py_index =
        call(&rt, &p, quoter, pyIndexCurrentViewMarketCall { market: m.market }, &none, now).expect("index");
    let lp_supply = state.totalLp.into_raw();
    let slot = reserves_slot(&rt, &p, m.market, state.totalPt.into_raw(), state.totalSy.into_raw());
    let rate_word =
        rt.block_on(p.get_storage_at(m.market, slot + U256::from(1u8)).into_future()).expect("slot");
    let rate_mask: U256 = (U256::from(1u8) << 96usize) - U256::from(1u8);

    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = case(py_index, lp_supply, now, m.expiry);
    let cases: Vec<Case> =
        (0..CASES).map(|_| strategy.new_tree(&mut runner).expect("case").current()).collect();

    // The contracts, each case's state written over the market's for the call.
    let mut chain = Vec::new();
    for c in &cases {
        let diff: B256HashMap<B256> = [
            (B256::from(slot), B256::from((c.total_sy << 128) | c.total_pt)),
            (B256::from(slot + U256::from(1u8)), B256::from((rate_word & !rate_mask) | c.ln_rate)),
        ]
        .into_iter()
        .collect();
        let mut o = AddressHashMap::default();
        o.insert(m.market, AccountOverride { state_diff: Some(diff), ..Default::default() });
        let t = c.block_time;
        let market = m.market;
        chain.push((
            call(&rt, &p, quoter, swapExactPtForSyStaticCall { market, exactPtIn: c.pt_in }, &o, t)
                .map(|r| (r.netSyOut, r.netSyFee)),
            call(&rt, &p, quoter, swapSyForExactPtStaticCall { market, exactPtOut: c.pt_out }, &o, t)
                .map(|r| (r.netSyIn, r.netSyFee)),
            call(&rt, &p, quoter, swapExactSyForPtStaticCall { market, exactSyIn: c.sy_in }, &o, t)
                .map(|r| (r.netPtOut, r.netSyFee)),
            call(
                &rt,
                &p,
                quoter,
                removeLiquidityDualSyAndPtStaticCall { market, netLpToRemove: c.lp_in },
                &o,
                t,
            )
            .map(|r| (r.netSyOut, r.netPtOut)),
            call(&rt, &p, oracle, getPtToAssetRateCall { market, duration: 0 }, &o, t)
                .expect("the oracle's spot"),
        ));
    }

    // Pendle's math, from the same states.
    let input: Vec<Value> = cases
        .iter()
        .map(|c| {
            json!({
                "totalPt": c.total_pt.to_string(), "totalSy": c.total_sy.to_string(), "totalLp": lp_supply.to_string(),
                "treasury": state.treasury.to_string(), "scalarRoot": state.scalarRoot.to_string(),
                "expiry": m.expiry.to_string(), "lnFeeRateRoot": state.lnFeeRateRoot.to_string(),
                "reserveFeePercent": state.reserveFeePercent.to_string(), "lastLnImpliedRate": c.ln_rate.to_string(),
                "pyIndex": py_index.to_string(), "blockTime": c.block_time.to_string(),
                "ptIn": c.pt_in.to_string(), "ptOut": c.pt_out.to_string(), "syIn": c.sy_in.to_string(),
                "lpIn": c.lp_in.to_string(),
            })
        })
        .collect();
    let math = crate::client_script(
        "pendle_math.mjs",
        "@pendle/core-v2-offchain-math",
        &Value::from(input).to_string(),
    );
    let math = math.as_array().expect("an answer per case");
    assert_eq!(math.len(), CASES);

    let mut mismatches = Vec::new();
    let (mut quoted, mut refused, mut searched, mut worst) = (0usize, 0usize, 0usize, 0f64);
    let wad = U256::from(WAD);
    for (i, ((c, js), (pt_for_sy, sy_for_exact_pt, sy_for_pt, remove, pt_price))) in
        cases.iter().zip(math).zip(&chain).enumerate()
    {
        // Exact: the same integer arithmetic on both sides, to the base unit.
        for (name, on_chain, theirs) in [
            ("pt_for_sy", pt_for_sy, &js["pt_for_sy"]),
            ("sy_for_exact_pt", sy_for_exact_pt, &js["sy_for_exact_pt"]),
            ("remove", remove, &js["remove"]),
        ] {
            match (on_chain, answer(theirs)) {
                (Ok(a), Some(b)) if *a == b => quoted += 1,
                (Err(_), None) => refused += 1,
                (a, b) => {
                    mismatches.push(format!("case {i} {name}: chain {a:?}, Pendle's math {b:?} ({c:?})"))
                }
            }
        }
        // Searched: each search stops within Pendle's default 1e-4 of the SY paid, at its own
        // guess: the PT out within 2e-4 (and a base unit) of each other.
        match (sy_for_pt, answer(&js["sy_for_pt"])) {
            (Ok((a, _)), Some((b, _))) => {
                let diff = if a > &b { *a - b } else { b - *a };
                if diff > U256::from(1u8) + *a.max(&b) * U256::from(2u8) / U256::from(10_000u64) {
                    mismatches.push(format!("case {i} sy_for_pt: chain {a}, Pendle's math {b} ({c:?})"));
                } else {
                    searched += 1;
                    worst = worst.max(f64::from(diff) / f64::from(*a.max(&b)));
                }
            }
            (Err(_), None) => refused += 1,
            (a, b) => {
                mismatches.push(format!("case {i} sy_for_pt: chain {a:?}, Pendle's math {b:?} ({c:?})"))
            }
        }
        // The price the host values PT at: one asset over the market's exchange rate.
        let asset_to_pt: U256 = js["asset_to_pt"].as_str().and_then(|s| s.parse().ok()).expect("rate");
        if wad * wad / asset_to_pt != *pt_price {
            mismatches.push(format!(
                "case {i} PT price: oracle {pt_price}, Pendle's math {} ({c:?})",
                wad * wad / asset_to_pt
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {CASES} cases differ:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(10)].join("\n")
    );
    // Most of the random trades fit their market: the comparison is of quotes, not of refusals.
    assert!(
        quoted + searched >= 3 * CASES,
        "{quoted} + {searched} quotes compared, {refused} refused by both"
    );
    eprintln!(
        "pendle math: {CASES} states; {quoted} exact quotes equal to the unit, {searched} searched within {:.1} ppm of \
         each other, {refused} refused by both; {CASES} PT prices equal",
        worst * 1e6
    );
}
