//! A swap mined on the devnet → its `PoolEventReceived` delivered on the Event Fabric (newHeads
//! over WebSocket, `eth_getLogs`, the streaming plugin's decode in a fresh instance, the emit).
//! Target p50 <= 50 ms. Measured beside the baseline in the same run: the same swap sent and
//! seen mined by polling its receipt every 0.5 ms, with no stream.

use alloy::network::TransactionBuilder;
use alloy::primitives::aliases::{U24, U160};
use alloy::primitives::{Address, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::fabric::Fabric;
use bardo_core::profile::Profile;
use bardo_devnet::CHAIN_ID;
use bardo_evm::Evm;
use bardo_evm::chain::{ChainConfig, Chains};
use bardo_runtime::Services;
use bardo_runtime::engine::{Engine, Limits};
use bardo_runtime::plugin::{Host, WasiPolicy};
use bardo_runtime::subscriptions::SubscriptionRegistry;
use criterion::{Criterion, criterion_group, criterion_main};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline;
        uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256 amountOut);
}

struct Swaps {
    provider: DynProvider,
    from: Address,
    router: Address,
    weth: Address,
    usdc: Address,
    n: u64,
}

impl Swaps {
    /// The next swap, alternating direction so the price stays put.
    fn next(&mut self) -> TransactionRequest {
        self.n += 1;
        let (tin, tout, amount) = if self.n.is_multiple_of(2) {
            (self.weth, self.usdc, U256::from(10u64).pow(U256::from(16u64)))
        } else {
            (self.usdc, self.weth, U256::from(20_000_000u64))
        };
        let params = ExactInputSingleParams {
            tokenIn: tin,
            tokenOut: tout,
            fee: U24::from(3000),
            recipient: self.from,
            deadline: U256::from(u64::MAX),
            amountIn: amount,
            amountOutMinimum: U256::ZERO,
            sqrtPriceLimitX96: U160::ZERO,
        };
        TransactionRequest::default()
            .from(self.from)
            .to(self.router)
            .with_input(exactInputSingleCall { params }.abi_encode())
            .with_gas_limit(400_000)
    }

    async fn send(&mut self) -> String {
        let tx = self.next();
        self.provider.send_transaction(tx).await.expect("send").tx_hash().to_string()
    }
}

fn stream(c: &mut Criterion) {
    let (snapshot, node) = bardo_test_support::snapshot_and_anvil();
    let d = &snapshot.deployments;
    let chains = Chains::new(
        &BTreeMap::from([(CHAIN_ID, ChainConfig::new(node.url()))]),
        bardo_test_support::host_runtime(),
    )
    .expect("chains");
    let services =
        Arc::new(Services::new(Evm::new(chains, None)).with_settings(
            BTreeMap::from([("streaming".to_owned(), d.streaming_settings())]),
            BTreeMap::new(),
        ));
    let engine =
        Engine::new(Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache"))).expect("engine");
    let profile = Profile::parse("observatory").expect("profile");
    let mut host =
        Host::new(engine, services.clone(), profile, Limits::default(), WasiPolicy::default()).expect("host");
    host.load_file(Path::new(bardo_test_artifacts::STREAMING)).expect("streaming");
    let fabric = Arc::new(Fabric::new());
    let registry = SubscriptionRegistry::new(Arc::new(host), services, fabric.clone()).expect("registry");
    let pool = d
        .uniswap_v3_pools
        .iter()
        .find(|p| {
            p.fee == 3000
                && [&p.token0, &p.token1].iter().any(|t| {
                    t.as_str() == "WETH" || t.parse::<Address>().ok() == Some(d.tokens["WETH"].address)
                })
                && [&p.token0, &p.token1].iter().any(|t| {
                    t.as_str() == "USDC" || t.parse::<Address>().ok() == Some(d.tokens["USDC"].address)
                })
        })
        .expect("WETH/USDC pool")
        .address;

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    // anvil fills nonce and fees for its unlocked accounts: no client-side nonce cache to drift.
    let provider = ProviderBuilder::new()
        .disable_recommended_fillers()
        .connect_http(node.url().parse().expect("url"))
        .erased();
    let router = d.uniswap_v3["swap_router"];
    let (weth, usdc) = (d.tokens["WETH"].address, d.tokens["USDC"].address);
    for token in [weth, usdc] {
        let tx = TransactionRequest::default()
            .from(d.deployer)
            .to(token)
            .with_input(approveCall { spender: router, amount: U256::MAX }.abi_encode());
        rt.block_on(async {
            provider.send_transaction(tx).await.expect("approve").get_receipt().await.expect("receipt")
        });
    }
    let mut swaps = Swaps { provider, from: d.deployer, router, weth, usdc, n: 0 };

    let mut g = c.benchmark_group("stream_swap_to_event");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    g.bench_function("swap_sent_and_mined_no_stream", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                rt.block_on(async {
                    // anvil answers before it mines: poll for the receipt.
                    let hash: alloy::primitives::B256 = swaps.send().await.parse().expect("hash");
                    loop {
                        match swaps.provider.get_transaction_receipt(hash).await.expect("receipt") {
                            Some(r) => break assert!(r.status(), "swap {hash} reverted"),
                            None => tokio::time::sleep(Duration::from_micros(500)).await,
                        }
                    }
                });
            }
            start.elapsed()
        })
    });
    let params =
        serde_json::json!({"chain_id": CHAIN_ID, "pool": pool.to_checksum(None), "events": ["swap"]});
    registry.subscribe("stream_pool_events", &params.to_string()).expect("subscribe");
    let mut events = fabric.subscribe(None);
    g.bench_function("swap_sent_mined_and_event_delivered", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                rt.block_on(async {
                    let hash = swaps.send().await;
                    loop {
                        let Ok(next) = tokio::time::timeout(Duration::from_secs(5), events.recv()).await
                        else {
                            let h: alloy::primitives::B256 = hash.parse().expect("hash");
                            let r = swaps
                                .provider
                                .get_transaction_receipt(h)
                                .await
                                .map(|r| r.map(|r| (r.status(), r.block_number)));
                            panic!(
                                "no event for swap {hash} within 5 s; receipt {r:?}; subscriptions {:?}",
                                registry.list()
                            );
                        };
                        let e = next.expect("open").expect("no gap");
                        if let bardo_core::fabric::GolemEvent::PoolEventReceived(d) = &*e.event
                            && d.data["tx_hash"] == hash.as_str()
                        {
                            break;
                        }
                    }
                });
            }
            start.elapsed()
        })
    });
    g.finish();
    drop(registry);
}

criterion_group!(benches, stream);
criterion_main!(benches);
