//! The devnet deployer against a real anvil: the published Uniswap contracts deployed from
//! their npm artifacts, pools seeded, and the contracts answering as they should.

use alloy::network::TransactionBuilder;
use alloy::primitives::{
    Address, U256,
    aliases::{U24, U160},
};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_test_support::{devnet, runtime};

sol! {
    function decimals() external view returns (uint8);
    function balanceOf(address account) external view returns (uint256);
    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast);
    function liquidity() external view returns (uint128);
    struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }
    function quoteExactInputSingle(QuoteExactInputSingleParams params) external returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate);
    function getLiquidity(bytes32 poolId) external view returns (uint128 liquidity);
    function approve(address spender, uint256 amount) external returns (bool);
    function deposit() external payable;
    function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode) external;
    function borrow(address asset, uint256 amount, uint256 interestRateMode, uint16 referralCode, address onBehalfOf) external;
    function getUserAccountData(address user) external view returns (uint256 totalCollateralBase, uint256 totalDebtBase,
        uint256 availableBorrowsBase, uint256 currentLiquidationThreshold, uint256 ltv, uint256 healthFactor);
    function getSlot0(bytes32 poolId) external view returns (uint160 sqrtPriceX96, int24 tick, uint24 protocolFee, uint24 lpFee);
}

#[test]
fn devnet_from_snapshot_has_tokens_uniswap_v2_v3_v4_and_an_aave_market() {
    // The snapshot was deployed by `deploy_all` (once per deployer source and npm lock) and
    // dumped; this anvil started from it with --load-state.
    let (node, d) = devnet();
    let rt = runtime();
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    let call = |to: Address, data: Vec<u8>| {
        rt.block_on(provider.call(TransactionRequest::default().to(to).with_input(data)).into_future())
            .expect("eth_call")
    };
    for (symbol, decimals) in [("WETH", 18u8), ("USDC", 6), ("DAI", 18), ("WBTC", 8)] {
        let got =
            decimalsCall::abi_decode_returns(&call(d.tokens[symbol].address, decimalsCall {}.abi_encode()))
                .expect("uint8");
        assert_eq!(got, decimals, "{symbol} decimals");
    }
    assert_eq!(d.uniswap_v2_pairs.len(), 3);
    for pair in &d.uniswap_v2_pairs {
        let r = getReservesCall::abi_decode_returns(&call(pair.address, getReservesCall {}.abi_encode()))
            .expect("reserves");
        assert!(r.reserve0 > 0 && r.reserve1 > 0, "{pair:?}");
    }
    assert_eq!(d.uniswap_v3_pools.len(), 4);
    for pool in &d.uniswap_v3_pools {
        let l = liquidityCall::abi_decode_returns(&call(pool.address, liquidityCall {}.abi_encode()))
            .expect("liquidity");
        assert!(l > 0, "{pool:?} has no liquidity");
    }
    // V4: Permit2 placed, the pool initialized at ~2,000 USDC/WETH with liquidity, read through StateView.
    let permit2_code =
        rt.block_on(provider.get_code_at(d.uniswap_v4["permit2"]).into_future()).expect("code");
    assert!(permit2_code.len() > 1_000, "Permit2 runtime code is in place");
    assert_eq!(
        d.uniswap_v4_pools.len(),
        4,
        "WETH/USDC 0.3 %, WETH/DAI 0.05 %, hooked WETH/USDC 0.3 %, native ETH/USDC 0.05 %"
    );
    assert_eq!(d.uniswap_v4_pools[2].hooks, d.uniswap_v4["fee_taking_hook"]);
    // The native pool's currency0 is ether itself: the zero address sorts first.
    assert_eq!(
        (d.uniswap_v4_pools[3].token0.as_str(), d.uniswap_v4_pools[3].token1.as_str()),
        ("ETH", "USDC")
    );
    let native = v4_pool_id(Address::ZERO, d.tokens["USDC"].address, 500, 10);
    assert_eq!(d.uniswap_v4_pools[3].id, native, "the id is the hash of the native key");
    let hook_code =
        rt.block_on(provider.get_code_at(d.uniswap_v4["fee_taking_hook"]).into_future()).expect("code");
    assert!(hook_code.len() > 100, "the hook's code is in place");
    for pool in &d.uniswap_v4_pools {
        let l = getLiquidityCall::abi_decode_returns(&call(
            d.uniswap_v4["state_view"],
            getLiquidityCall { poolId: pool.id }.abi_encode(),
        ))
        .expect("liquidity");
        assert!(l > 0, "V4 pool {pool:?} has no liquidity");
    }
    let pool = &d.uniswap_v4_pools[0];
    let state_view = d.uniswap_v4["state_view"];
    let l = getLiquidityCall::abi_decode_returns(&call(
        state_view,
        getLiquidityCall { poolId: pool.id }.abi_encode(),
    ))
    .expect("liquidity");
    assert!(l > 0, "V4 pool {pool:?} has no liquidity");
    let slot0 =
        getSlot0Call::abi_decode_returns(&call(state_view, getSlot0Call { poolId: pool.id }.abi_encode()))
            .expect("slot0");
    // USDC (6) is token1 or token0 depending on addresses; either way the tick encodes ~2,000 $/ETH.
    let tick = slot0.tick.as_i32();
    let expected = if d.tokens["USDC"].address < d.tokens["WETH"].address {
        12.0 * 10f64.ln() - 2000f64.ln()
    } else {
        2000f64.ln() - 12.0 * 10f64.ln()
    };
    let expected_tick = (expected / 1.0001f64.ln()) as i32;
    assert!((tick - expected_tick).abs() < 5, "tick {tick}, expected about {expected_tick}");

    // Aave: a fresh user wraps and supplies 10 WETH ($20,000) and borrows 5,000 USDC;
    // health factor = 20,000 * 0.825 / 5,000 = 3.3.
    let pool = d.aave_v3["pool"];
    let user: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8".parse().expect("anvil account 1");
    let dev = user;
    let send_value = |to: Address, data: Vec<u8>, value: U256| {
        let tx = TransactionRequest::default().from(dev).to(to).with_input(data).value(value);
        let receipt = rt.block_on(bardo_test_support::send(&provider, tx));
        assert!(receipt.status(), "transaction to {to} reverted");
    };
    let send = |to: Address, data: Vec<u8>| send_value(to, data, U256::ZERO);
    let weth = d.tokens["WETH"].address;
    let ten_weth = U256::from(10u64) * U256::from(10u64).pow(U256::from(18));
    send_value(weth, depositCall {}.abi_encode(), ten_weth);
    send(weth, approveCall { spender: pool, amount: ten_weth }.abi_encode());
    send(pool, supplyCall { asset: weth, amount: ten_weth, onBehalfOf: dev, referralCode: 0 }.abi_encode());
    let usdc = d.tokens["USDC"].address;
    let borrow = borrowCall {
        asset: usdc,
        amount: U256::from(5_000_000_000u64),
        interestRateMode: U256::from(2),
        referralCode: 0,
        onBehalfOf: dev,
    };
    send(pool, borrow.abi_encode());
    let account = getUserAccountDataCall::abi_decode_returns(&call(
        pool,
        getUserAccountDataCall { user: dev }.abi_encode(),
    ))
    .expect("account data");
    let hf = account.healthFactor.to::<u128>() as f64 / 1e18;
    assert!((hf - 3.3).abs() < 0.01, "health factor {hf}");
    assert_eq!(account.totalDebtBase.to::<u128>(), 5_000 * 100_000_000, "debt in USD with 8 decimals");

    // 1 WETH quotes at about 2,000 USDC on the 0.3% pool.
    let quote = quoteExactInputSingleCall {
        params: QuoteExactInputSingleParams {
            tokenIn: d.tokens["WETH"].address,
            tokenOut: d.tokens["USDC"].address,
            amountIn: U256::from(10u64).pow(U256::from(18)),
            fee: U24::from(3000),
            sqrtPriceLimitX96: U160::ZERO,
        },
    };
    let out =
        quoteExactInputSingleCall::abi_decode_returns(&call(d.uniswap_v3["quoter_v2"], quote.abi_encode()))
            .expect("quote");
    let usdc = out.amountOut.to::<u128>() as f64 / 1e6;
    assert!((1_980.0..2_000.0).contains(&usdc), "1 WETH -> {usdc} USDC");
}

/// The id of a V4 pool without hooks.
fn v4_pool_id(c0: Address, c1: Address, fee: u32, spacing: i32) -> alloy::primitives::B256 {
    use alloy::primitives::aliases::{I24, U24};
    use alloy::sol_types::SolValue;
    alloy::sol! { struct Key { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; } }
    let key = Key {
        currency0: c0,
        currency1: c1,
        fee: U24::from(fee),
        tickSpacing: I24::try_from(spacing).expect("spacing"),
        hooks: Address::ZERO,
    };
    alloy::primitives::keccak256(key.abi_encode())
}
