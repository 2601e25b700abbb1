//! The devnet deployer against a real anvil: the published Uniswap contracts deployed from
//! their npm artifacts, pools seeded, and the contracts answering as they should.

use super::chain::{anvil, root, runtime};
use alloy::network::TransactionBuilder;
use alloy::primitives::{
    Address, U256,
    aliases::{U24, U160},
};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_host::devnet::deploy::deploy_all;

sol! {
    function decimals() external view returns (uint8);
    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast);
    function liquidity() external view returns (uint128);
    struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }
    function quoteExactInputSingle(QuoteExactInputSingleParams params) external returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate);
}

#[test]
fn deploys_tokens_and_uniswap_v2_v3_with_liquidity() {
    let node = anvil();
    let rt = runtime();
    let d =
        rt.block_on(deploy_all(&node.url(), &root().join("devnet/node_modules"), |_| {})).expect("deploy");
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
