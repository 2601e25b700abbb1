//! revm on a fork against what anvil really executes: a V3 exactInputSingle simulated (with
//! its approval, in sequence on one fork) must deliver exactly the amount anvil then delivers,
//! with gas within 1 %. Its change set is the same whether a view the calls cannot have changed
//! is asked again after them or not, and whether its EVMs are new or kept from another.

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
use bardo_evm::simulate::{Probe, Probed, SimCall, Simulator};
use bardo_test_support::{devnet, runtime, slow_proxy};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    function balanceOf(address account) external view returns (uint256);
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline;
        uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256 amountOut);
}

#[test]
fn v3_swap_simulation_matches_anvil_execution() {
    let (node, d) = devnet();
    let rt = runtime();
    let (weth, usdc, router, dev) =
        (d.tokens["WETH"].address, d.tokens["USDC"].address, d.uniswap_v3["swap_router"], d.deployer);
    let one_weth = U256::from(10u64).pow(U256::from(18));
    let approve = approveCall { spender: router, amount: one_weth }.abi_encode();
    let swap = exactInputSingleCall {
        params: ExactInputSingleParams {
            tokenIn: weth,
            tokenOut: usdc,
            fee: U24::from(3000),
            recipient: dev,
            deadline: U256::MAX,
            amountIn: one_weth,
            amountOutMinimum: U256::from(1),
            sqrtPriceLimitX96: U160::ZERO,
        },
    }
    .abi_encode();

    // Move time on past the pools' last oracle observation, so that the simulated block and the
    // real one both write a new observation (a same-second swap skips it and costs ~3.9k less).
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    rt.block_on(provider.raw_request::<_, i64>("evm_increaseTime".into(), (60u64,))).expect("increase time");
    rt.block_on(provider.raw_request::<_, String>("evm_mine".into(), ())).expect("mine");

    let config = ChainConfig { retries: 1, ..ChainConfig::new(node.url()) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), crate::host_runtime()).expect("chains");
    let calls = [
        SimCall { to: weth, data: approve.clone().into(), value: U256::ZERO },
        SimCall { to: router, data: swap.clone().into(), value: U256::ZERO },
    ];
    let sim = Simulator::default()
        .run(&chains, CHAIN_ID, dev, &calls, None, Instant::now() + Duration::from_secs(10))
        .expect("simulate");
    assert_eq!(sim.outcomes.len(), 2);
    assert!(sim.outcomes.iter().all(|o| o.success), "{:?}", sim.outcomes);
    let simulated_out = exactInputSingleCall::abi_decode_returns(&sim.outcomes[1].output).expect("amountOut");
    let deltas: BTreeMap<_, _> = sim.changes.balances().collect();
    assert_eq!(deltas[&Some(weth)].to_string(), format!("-{one_weth}"));
    assert_eq!(deltas[&Some(usdc)].to_string(), simulated_out.to_string());

    // Views the calls changed nothing of are answered after from before; the rest run again.
    // The change set and probes are the ones of asking every view on both states.
    let probes =
        [usdc, router].map(|to| Probe { to, data: balanceOfCall { account: dev }.abi_encode().into() });
    let at = Some(sim.timestamp);
    let run = |simulator: &Simulator| {
        let deadline = Instant::now() + Duration::from_secs(10);
        simulator.run_probed(&chains, CHAIN_ID, dev, &calls, &probes, at, deadline).expect("simulate")
    };
    let (reusing, asking) = (Simulator::default(), Simulator::asking_every_view(None));
    let (reused, every) = (run(&reusing), run(&asking));
    assert_eq!(reused.changes, every.changes);
    assert_eq!(reused.changes, sim.changes);
    assert_eq!(reused.probes, every.probes);
    let (asked, answered_from_before) = reusing.view_counts();
    assert_eq!(asking.view_counts(), (asked, 0));
    // The router, the pool and WETH's allowance holder hold no WETH or USDC of the wallet's:
    // their `balanceOf` cannot change. WETH's and USDC's balances and the allowance did.
    assert!(
        answered_from_before >= 2 && answered_from_before + 3 <= asked,
        "{asked} asked, {answered_from_before} reused"
    );
    // Kept EVMs carry nothing from the simulation before: a different one (another wallet,
    // the swap alone, failing without the approval) between two runs changes nothing.
    let built = reusing.evms_built();
    let other = [calls[1].clone()];
    let failed = reusing
        .run(
            &chains,
            CHAIN_ID,
            Address::repeat_byte(0x77),
            &other,
            at,
            Instant::now() + Duration::from_secs(10),
        )
        .expect("simulate");
    assert!(!failed.outcomes[0].success, "no WETH, no approval: the swap reverts");
    let again = run(&reusing);
    assert_eq!(again.changes, reused.changes);
    assert_eq!(again.probes, reused.probes);
    let outputs = |s: &bardo_evm::simulate::Simulation| -> Vec<_> {
        s.outcomes.iter().map(|o| (o.success, o.gas_used, o.output.clone(), o.logs.clone())).collect()
    };
    assert_eq!(outputs(&again), outputs(&reused));
    assert_eq!(reusing.evms_built(), built, "the two simulations ran on kept EVMs");
    let usdc_probe = &reused.probes[0].1;
    assert!(
        matches!(usdc_probe, Probed::Answered { before, after } if before != after),
        "the wallet's USDC balance moved: {usdc_probe:?}"
    );

    // Now for real, from the same state.
    let balance = |token: Address| {
        let tx =
            TransactionRequest::default().to(token).with_input(balanceOfCall { account: dev }.abi_encode());
        U256::from_be_slice(&rt.block_on(provider.call(tx).into_future()).expect("balance"))
    };
    let before = balance(usdc);
    let send = |to: Address, data: Vec<u8>| {
        let tx = TransactionRequest::default().from(dev).to(to).with_input(data);
        rt.block_on(bardo_test_support::send(&provider, tx))
    };
    assert!(send(weth, approve).status());
    let receipt = send(router, swap);
    assert!(receipt.status());
    let received = balance(usdc) - before;
    assert_eq!(received, simulated_out, "the simulated amount out is what anvil delivered");
    let (real, simulated) = (receipt.gas_used as f64, sim.outcomes[1].gas_used as f64);
    eprintln!("V3 swap gas: anvil {real}, revm {simulated}; amount out {received}");
    assert!((real - simulated).abs() / real < 0.01, "gas: anvil {real}, revm {simulated}");
}

#[test]
fn a_simulation_reading_thousands_of_uncached_slots_from_a_slow_node_stops_at_its_deadline() {
    let (node, _d) = devnet();
    let rt = runtime();
    // A contract that SLOADs slots 8192 down to 1: every read is new to the fork.
    let code = "0x6120005b80545060019003806003570000";
    let looper = Address::repeat_byte(0x42);
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    rt.block_on(provider.raw_request::<_, serde_json::Value>("anvil_setCode".into(), (looper, code)))
        .expect("set code");
    let upstream: std::net::SocketAddr =
        node.url().trim_start_matches("http://").parse().expect("anvil's address");
    let slow = slow_proxy(upstream, Duration::from_millis(20));
    let config = ChainConfig { retries: 0, ..ChainConfig::new(format!("http://{slow}")) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), crate::host_runtime()).expect("chains");
    let calls = [SimCall { to: looper, data: Default::default(), value: U256::ZERO }];
    let started = Instant::now();
    let deadline = started + Duration::from_secs(1);
    let outcome =
        Simulator::default().run(&chains, CHAIN_ID, Address::repeat_byte(0x11), &calls, None, deadline);
    let took = started.elapsed();
    // 8,192 reads at 20 ms would take close to three minutes; the deadline stops it.
    let err = outcome.expect_err("stopped at the deadline");
    assert!(matches!(err, bardo_evm::ChainError::Timeout { .. }), "{err}");
    assert!(took < Duration::from_millis(1_500), "took {took:?}");
}
