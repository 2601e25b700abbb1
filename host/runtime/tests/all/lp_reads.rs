//! The LP reads held to Uniswap's SDK (the sidecar) and to the contracts' own storage on 200
//! random positions: random pools, ranges and sizes, minted straight on the position manager,
//! then the pools traded both ways so that many ranges are left behind and every range the
//! price crossed earned fees. For each position `uniswap_get_positions` lists: its ticks and
//! liquidity as `positions()` stores them; the amounts the SDK's `Position` holds at the pool's
//! price; the fees the SDK's `TickLibrary`/`PositionLibrary` compute from the pool's fee growth,
//! plus what the manager already owes — to the wei.

use super::Rng;
use super::uniswap::{Env, env, u256};
use alloy::network::TransactionBuilder;
use alloy::primitives::aliases::{I24, U24, U160};
use alloy::primitives::{Address, U256};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_devnet::CHAIN_ID;
use bardo_sidecar::{Config, FeeGrowth, Sidecar};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper;
        uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; address recipient;
        uint256 deadline; }
    function mint(MintParams params) external payable returns (uint256, uint128, uint256, uint256);
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient;
        uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256);
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
    function tickSpacing() external view returns (int24);
    function feeGrowthGlobal0X128() external view returns (uint256);
    function feeGrowthGlobal1X128() external view returns (uint256);
    function ticks(int24 tick) external view returns (uint128 liquidityGross, int128 liquidityNet,
        uint256 feeGrowthOutside0X128, uint256 feeGrowthOutside1X128, int56 tickCumulativeOutside,
        uint160 secondsPerLiquidityOutsideX128, uint32 secondsOutside, bool initialized);
    function positions(uint256 tokenId) external view returns (uint96 nonce, address operator, address token0,
        address token1, uint24 fee, int24 tickLower, int24 tickUpper, uint128 liquidity,
        uint256 feeGrowthInside0LastX128, uint256 feeGrowthInside1LastX128, uint128 tokensOwed0, uint128 tokensOwed1);
}

fn send(e: &Env, to: Address, call: impl SolCall) {
    let tx = TransactionRequest::default().from(e.dev).to(to).with_input(call.abi_encode());
    let r = e.rt.block_on(bardo_test_support::send(&e.provider, tx));
    assert!(r.status(), "a call to {to} reverted");
}

/// A V3 pool of the devnet: its address, tokens (sorted) and fee.
struct Pool {
    address: Address,
    tokens: (Address, Address),
    fee: u32,
}

#[test]
fn two_hundred_random_positions_read_as_the_sdk_and_the_contracts_compute_them() {
    let e = env();
    let state = tempfile::tempdir().expect("tempdir");
    let sidecar = Sidecar::new(Config::new(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sidecar"),
        state.path(),
    ));
    let (npm, router) = (e.d.uniswap_v3["position_manager"], e.d.uniswap_v3["swap_router"]);
    let pools: Vec<Pool> =
        e.d.uniswap_v3_pools
            .iter()
            .map(|p| {
                let (a, b) = (e.token(&p.token0), e.token(&p.token1));
                Pool { address: p.address, tokens: if a < b { (a, b) } else { (b, a) }, fee: p.fee }
            })
            .collect();
    for token in e.d.tokens.values() {
        send(&e, token.address, approveCall { spender: npm, amount: U256::MAX });
        send(&e, token.address, approveCall { spender: router, amount: U256::MAX });
    }
    let decimals: BTreeMap<Address, u8> = e.d.tokens.values().map(|t| (t.address, t.decimals)).collect();
    // Amounts of about $10 to $1,000 of anything: a small fraction of a unit of each token.
    let some = |rng: &mut Rng, token: Address| {
        let d = u32::from(decimals[&token]);
        U256::from(rng.range(1, 100)) * U256::from(10u64).pow(U256::from(d.saturating_sub(3)))
    };

    // 200 positions: ranges around the price, below it and above it, one to sixty spacings wide.
    let mut rng = Rng(0x5eed_1dea_f00d_cafe);
    for _ in 0..200 {
        let pool = &pools[rng.range(0, pools.len() as i64) as usize];
        let tick = e.read(pool.address, slot0Call {}).tick.as_i32();
        let spacing = e.read(pool.address, tickSpacingCall {}).as_i32();
        let lower = (tick.div_euclid(spacing) + rng.range(-40, 20) as i32) * spacing;
        let upper = lower + spacing * rng.range(1, 60) as i32;
        let mint = mintCall {
            params: MintParams {
                token0: pool.tokens.0,
                token1: pool.tokens.1,
                fee: U24::from(pool.fee),
                tickLower: I24::try_from(lower).expect("tick"),
                tickUpper: I24::try_from(upper).expect("tick"),
                amount0Desired: some(&mut rng, pool.tokens.0),
                amount1Desired: some(&mut rng, pool.tokens.1),
                amount0Min: U256::ZERO,
                amount1Min: U256::ZERO,
                recipient: e.dev,
                deadline: U256::MAX,
            },
        };
        send(&e, npm, mint);
    }
    // Trade each pool both ways, enough to cross many of the ranges.
    for pool in &pools {
        for round in 0..8 {
            let (tin, tout) = if round % 2 == 0 { pool.tokens } else { (pool.tokens.1, pool.tokens.0) };
            let amount = some(&mut rng, tin) * U256::from(rng.range(20, 200));
            let swap = exactInputSingleCall {
                params: ExactInputSingleParams {
                    tokenIn: tin,
                    tokenOut: tout,
                    fee: U24::from(pool.fee),
                    recipient: e.dev,
                    deadline: U256::MAX,
                    amountIn: amount,
                    amountOutMinimum: U256::ZERO,
                    sqrtPriceLimitX96: U160::ZERO,
                },
            };
            send(&e, router, swap);
        }
    }

    // Every position, page by page.
    let mut listed: Vec<Value> = Vec::new();
    let mut offset = 0;
    let started = std::time::Instant::now();
    loop {
        let (page, fuel) = e.call_fuel(
            "uniswap_get_positions",
            json!({"chain_id": CHAIN_ID, "version": "v3", "limit": 25, "offset": offset, "include_empty": true}),
        );
        eprintln!("uniswap_get_positions page at {offset}: {} fuel", fuel);
        listed.extend(page["positions"].as_array().expect("positions").iter().cloned());
        match page["next_offset"].as_u64() {
            Some(next) => offset = next as usize,
            None => break,
        }
    }
    eprintln!("uniswap_get_positions: {} positions in {:?}", listed.len(), started.elapsed());
    assert!(listed.len() >= 200, "{} positions listed", listed.len());

    let (mut out_of_range, mut with_fees) = (0, 0);
    for p in &listed {
        let id = u256(&p["position_id"]);
        let stored = e.read(npm, positionsCall { tokenId: id });
        let pool = addr(&p["pool"]);
        let (lower, upper) = (stored.tickLower.as_i32(), stored.tickUpper.as_i32());
        assert_eq!(
            (p["tick_lower"].as_i64(), p["tick_upper"].as_i64()),
            (Some(lower.into()), Some(upper.into()))
        );
        assert_eq!(p["liquidity"], json!(stored.liquidity.to_string()), "position {id}");
        let slot0 = e.read(pool, slot0Call {});
        let tick = slot0.tick.as_i32();
        assert_eq!(p["current_tick"], json!(tick));
        assert_eq!(p["in_range"], json!(lower <= tick && tick < upper));
        out_of_range += usize::from(!(lower <= tick && tick < upper));

        // The amounts: the SDK's Position at the pool's price.
        let sdk = sidecar
            .position_amounts(U256::from(slot0.sqrtPriceX96), (lower, upper), stored.liquidity)
            .expect("sdk");
        assert_eq!(
            (u256(&p["amount0_base"]), u256(&p["amount1_base"])),
            (sdk.amount0, sdk.amount1),
            "position {id}"
        );

        // The fees: the SDK's fee growth math since the manager last touched the position, plus
        // what it already owes.
        let (l, u) = (
            e.read(pool, ticksCall { tick: stored.tickLower }),
            e.read(pool, ticksCall { tick: stored.tickUpper }),
        );
        let growth = FeeGrowth {
            ticks: (lower, upper),
            tick_current: tick,
            global: (e.read(pool, feeGrowthGlobal0X128Call {}), e.read(pool, feeGrowthGlobal1X128Call {})),
            outside_lower: (l.feeGrowthOutside0X128, l.feeGrowthOutside1X128),
            outside_upper: (u.feeGrowthOutside0X128, u.feeGrowthOutside1X128),
            inside_last: (stored.feeGrowthInside0LastX128, stored.feeGrowthInside1LastX128),
            liquidity: stored.liquidity,
        };
        let (f0, f1) = sidecar.position_fees(&growth).expect("sdk fees");
        let owed = (f0 + U256::from(stored.tokensOwed0), f1 + U256::from(stored.tokensOwed1));
        assert_eq!((u256(&p["fees0_base"]), u256(&p["fees1_base"])), owed, "position {id}");
        with_fees += usize::from(!owed.0.is_zero() || !owed.1.is_zero());
    }
    eprintln!("{out_of_range} of {} out of range, {with_fees} with fees", listed.len());
    assert!(
        out_of_range >= 50 && with_fees >= 50,
        "a spread: {out_of_range} out of range, {with_fees} with fees"
    );
}

fn addr(v: &Value) -> Address {
    v.as_str().expect("address").parse().expect("address")
}
