//! Simulating a Uniswap V3 exactInputSingle on a warm fork (revm over cached chain state)
//! against anvil's own `eth_call` of the same swap over RPC, measured in one run.
//! Target: >= 10x faster than the RPC round trip, p50 <= 500 µs.

use alloy::network::TransactionBuilder;
use alloy::primitives::{
    Address, U256,
    aliases::{U24, U160},
};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_devnet::CHAIN_ID;
use bardo_evm::chain::{ChainConfig, Chains};
use bardo_evm::simulate::{SimCall, Simulator};
use criterion::{Criterion, criterion_group, criterion_main};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline;
        uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256 amountOut);
}

fn simulate_swap(c: &mut Criterion) {
    let (snapshot, node) = bardo_test_support::snapshot_and_anvil();
    let d = &snapshot.deployments;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let (weth, usdc, router, dev) =
        (d.tokens["WETH"].address, d.tokens["USDC"].address, d.uniswap_v3["swap_router"], d.deployer);
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    let approve = approveCall { spender: router, amount: U256::MAX }.abi_encode();
    let tx = TransactionRequest::default().from(dev).to(weth).with_input(approve);
    rt.block_on(async { provider.send_transaction(tx).await.expect("approve").get_receipt().await })
        .expect("receipt");
    let swap = exactInputSingleCall {
        params: ExactInputSingleParams {
            tokenIn: weth,
            tokenOut: usdc,
            fee: U24::from(3000),
            recipient: dev,
            deadline: U256::MAX,
            amountIn: U256::from(10u64).pow(U256::from(18)),
            amountOutMinimum: U256::from(1),
            sqrtPriceLimitX96: U160::ZERO,
        },
    }
    .abi_encode();

    let config = ChainConfig { retries: 0, ..ChainConfig::new(node.url()) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), bardo_test_support::host_runtime())
        .expect("chains");
    let simulator = Simulator::default();
    let bare = Simulator::without_changes(None);
    let asking = Simulator::asking_every_view(None);
    let calls = [SimCall { to: router, data: swap.clone().into(), value: U256::ZERO }];
    let run_on = |simulator: &Simulator| {
        simulator
            .run(&chains, CHAIN_ID, dev, &calls, None, Instant::now() + Duration::from_secs(5))
            .expect("simulate")
    };
    let run = || run_on(&simulator);
    assert!(bare.run(&chains, CHAIN_ID, dev, &calls, None, Instant::now() + Duration::from_secs(5)).is_ok());
    let warm = run();
    assert!(warm.outcomes[0].success);
    let call_tx = TransactionRequest::default().from(dev).to(router).with_input(swap);
    let rpc_out = rt.block_on(provider.call(call_tx.clone()).into_future()).expect("eth_call");
    assert_eq!(rpc_out, warm.outcomes[0].output, "revm and anvil agree on the amount out");

    let mut g = c.benchmark_group("simulate_v3_swap");
    g.bench_function("revm_warm_fork", |b| b.iter(|| black_box(run())));
    // The same without deriving the wallet's change set: the derivation's cost is the gap.
    g.bench_function("revm_warm_fork_without_change_set", |b| b.iter(|| black_box(run_on(&bare))));
    // Every view of the derivation run on both states: what answering the ones the swap
    // cannot have changed from their answer before saves.
    g.bench_function("revm_warm_fork_asking_every_view", |b| b.iter(|| black_box(run_on(&asking))));
    g.bench_function("anvil_eth_call_rpc", |b| {
        b.iter(|| black_box(rt.block_on(provider.call(call_tx.clone()).into_future()).expect("eth_call")))
    });
    // The transport alone: a call anvil answers without running the EVM. The gap between this
    // and the swap's eth_call is anvil's own execution of the swap.
    g.bench_function("anvil_rpc_floor_block_number", |b| {
        b.iter(|| black_box(rt.block_on(provider.get_block_number().into_future()).expect("block number")))
    });
    g.finish();
    let _: Address = dev;
}

criterion_group!(benches, simulate_swap);
criterion_main!(benches);
