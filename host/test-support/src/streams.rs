//! A streaming session on a fresh devnet: a host with the streaming (and Uniswap, Aave) plugins,
//! the Event Fabric and a subscription registry over it, and the transactions that make a pool's
//! events. Shared by the stream tests, the dashboard's and the scaffold's.

use crate::{devnet_host_with, host_runtime, root, runtime, send, snapshot};
use alloy::network::TransactionBuilder;
use alloy::primitives::Address;
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use alloy::sol_types::SolCall;
use bardo_core::fabric::{Envelope, Fabric, GolemEvent, StreamData, Subscription};
use bardo_core::tool::WritePlan;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::plugin::Host;
use bardo_runtime::subscriptions::SubscriptionRegistry;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

alloy::sol! {
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
}

/// A streaming session: its node, host, fabric and subscriptions.
pub struct Env {
    /// The devnet (none once a test stopped it).
    pub node: Option<Anvil>,
    /// Where everything is.
    pub d: Deployments,
    /// The host the subscriptions run on.
    pub host: Arc<Host>,
    /// The Event Fabric they publish on.
    pub fabric: Arc<Fabric>,
    /// The subscriptions.
    pub registry: Arc<SubscriptionRegistry>,
    /// The test's own subscription to the fabric.
    pub events: Subscription,
    /// Events received but not yet asked for.
    pub pending: Vec<Envelope>,
    /// For the test's own RPC calls.
    pub rt: tokio::runtime::Runtime,
    /// The node.
    pub provider: DynProvider,
}

/// A streaming session on `node`, signing with `key`.
pub fn env_on(node: Anvil, d: Deployments, guests: &[&str], key: &str) -> Env {
    let settings = BTreeMap::from([
        ("uniswap".to_owned(), d.uniswap_settings()),
        ("aave".to_owned(), d.aave_settings()),
        ("streaming".to_owned(), d.streaming_settings()),
    ]);
    let host = Arc::new(devnet_host_with(&node.url(), settings, Some(key), guests));
    let fabric = Arc::new(Fabric::new());
    let events = fabric.subscribe(None);
    let registry = Arc::new(
        SubscriptionRegistry::new(host.clone(), host.services().clone(), fabric.clone()).expect("registry"),
    );
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    Env { node: Some(node), d, host, fabric, registry, events, pending: Vec::new(), rt: runtime(), provider }
}

/// A streaming session on a fresh devnet, signing as the deployer.
pub fn env_with(guests: &[&str], key: &str) -> Env {
    let s = snapshot();
    let node = s.spawn(host_runtime(), &Anvil::binary(&root())).expect("anvil");
    env_on(node, s.deployments.clone(), guests, key)
}

/// The stream data an event carries, if it is a stream event.
pub fn data(e: &GolemEvent) -> Option<&StreamData> {
    match e {
        GolemEvent::PoolEventReceived(d)
        | GolemEvent::PoolStateSnapshot(d)
        | GolemEvent::PositionAlert(d)
        | GolemEvent::PriceUpdate(d)
        | GolemEvent::TokenJarUpdate(d)
        | GolemEvent::SwapExecuted(d)
        | GolemEvent::HealthFactorAlert(d) => Some(d),
        _ => None,
    }
}

/// Fabric events arriving within `within`, or until one satisfies `stop` (no gap allowed).
pub fn collect(
    rt: &tokio::runtime::Runtime,
    events: &mut Subscription,
    within: Duration,
    stop: impl Fn(&Envelope) -> bool,
) -> Vec<Envelope> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rt.block_on(async { tokio::time::timeout(left, events.recv()).await }) {
            Ok(Some(Ok(e))) => {
                let done = stop(&e);
                out.push(e);
                if done {
                    break;
                }
            }
            Ok(Some(Err(gap))) => panic!("the fabric reported a gap: {gap}"),
            Ok(None) | Err(_) => break,
        }
    }
    out
}

impl Env {
    /// The node's RPC URL.
    pub fn url(&self) -> String {
        self.node.as_ref().expect("node").url()
    }

    /// Every envelope that arrives within `within` (no gap allowed), after those set aside.
    pub fn drain(&mut self, within: Duration) -> Vec<Envelope> {
        let mut out: Vec<Envelope> = std::mem::take(&mut self.pending);
        out.extend(collect(&self.rt, &mut self.events, within, |_| false));
        out
    }

    /// Wait until `n` events of `variant` arrived (at most `within`); returns them with their
    /// sequence numbers. Other events are set aside for later waits.
    pub fn wait(&mut self, variant: &str, n: usize, within: Duration) -> Vec<(u64, StreamData)> {
        let deadline = Instant::now() + within;
        let take = |e: &Envelope| (e.seq, data(&e.event).expect("stream data").clone());
        let (mut got, rest): (Vec<Envelope>, Vec<Envelope>) =
            std::mem::take(&mut self.pending).into_iter().partition(|e| e.event.variant() == variant);
        self.pending = rest;
        while got.len() < n {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                let others: Vec<_> = self.pending.iter().map(|e| e.event.variant()).collect();
                panic!("{} of {n} {variant} events in {within:?}; other events {others:?}", got.len());
            };
            match self.rt.block_on(async { tokio::time::timeout(left, self.events.recv()).await }) {
                Ok(Some(Ok(e))) if e.event.variant() == variant => got.push(e),
                Ok(Some(Ok(e))) => self.pending.push(e),
                Ok(Some(Err(gap))) => panic!("the fabric reported a gap: {gap}"),
                Ok(None) => panic!("the fabric closed"),
                Err(_) => continue,
            }
        }
        // Beyond `n`: leave them for the caller's duplicate checks.
        let extra = got.split_off(n);
        self.pending.extend(extra);
        self.pending.sort_by_key(|e| e.seq);
        got.iter().map(take).collect()
    }

    /// Send `data` to `to` as `from`; its receipt (it must not revert).
    pub fn send_as(&self, from: Address, to: Address, data: Vec<u8>) -> TransactionReceipt {
        let tx = TransactionRequest::default().from(from).to(to).with_input(data);
        let r = self.rt.block_on(send(&self.provider, tx));
        assert!(r.status(), "transaction to {to} reverted");
        r
    }

    /// Send `plan`'s calls as `from`, in order; their receipts (none may revert).
    pub fn execute(&self, plan: &WritePlan, from: Address) -> Vec<TransactionReceipt> {
        plan.calls
            .iter()
            .map(|c| {
                let tx = TransactionRequest::default()
                    .from(from)
                    .to(c.to)
                    .with_input(c.data.clone())
                    .value(c.value);
                let r = self.rt.block_on(send(&self.provider, tx));
                assert!(r.status(), "{} reverted", c.description);
                r
            })
            .collect()
    }

    /// Write tool `tool`'s plan for `params` (it must plan).
    pub fn plan(&self, tool: &str, params: Value) -> WritePlan {
        self.host.plan(tool, &params.to_string()).result.unwrap_or_else(|e| panic!("{tool}: {e}"))
    }

    /// Swap `amount` of `token_in` for `token_out` in the 0.3 % V3 pool, as the deployer.
    pub fn swap(&self, token_in: &str, token_out: &str, amount: &str) -> TransactionReceipt {
        self.swap_in(token_in, token_out, amount, 3000)
    }

    /// [`Self::swap`] in the V3 pool of fee tier `fee`.
    pub fn swap_in(&self, token_in: &str, token_out: &str, amount: &str, fee: u32) -> TransactionReceipt {
        let params = json!({"chain_id": CHAIN_ID, "token_in": token_in, "token_out": token_out, "amount": amount,
            "version": "v3", "fee": fee, "slippage_bps": 5000});
        let plan = self.plan("uniswap_execute_swap", params);
        self.execute(&plan, self.d.deployer).pop().expect("swap receipt")
    }

    /// A WETH/USDC 0.3 % position over `[lower, upper)`, minted by the deployer; its token id.
    pub fn mint_position(&self, lower: i32, upper: i32) -> String {
        let add = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000, "amount_a": "1",
            "amount_b": "2000", "tick_lower": lower, "tick_upper": upper});
        let minted = self.execute(&self.plan("uniswap_add_liquidity", add.clone()), self.d.deployer);
        let verified = self
            .host
            .verify("uniswap_add_liquidity", &add.to_string(), CHAIN_ID, &minted)
            .result
            .expect("verify");
        verified["position_id"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| verified["position_id"].to_string())
    }

    /// The WETH/USDC 0.3 % V3 pool.
    pub fn pool(&self) -> Address {
        let (weth, usdc) = (&self.d.tokens["WETH"].address, &self.d.tokens["USDC"].address);
        self.d
            .uniswap_v3_pools
            .iter()
            .find(|p| {
                p.fee == 3000
                    && [&p.token0, &p.token1].iter().all(|t| {
                        let a: Address = t.parse().unwrap_or_default();
                        a == *weth || a == *usdc || **t == "WETH" || **t == "USDC"
                    })
            })
            .expect("the WETH/USDC 0.3 % pool")
            .address
    }

    /// `pool`'s current tick, read directly.
    pub fn tick(&self, pool: Address) -> i32 {
        let tx = TransactionRequest::default().to(pool).with_input(slot0Call {}.abi_encode());
        let out = self.rt.block_on(self.provider.call(tx).into_future()).expect("slot0");
        slot0Call::abi_decode_returns(&out).expect("slot0").tick.as_i32()
    }

    /// Subscribe to stream tool `tool` with `params`; its subscription id.
    pub fn subscribe(&self, tool: &str, params: Value) -> String {
        self.registry
            .subscribe(tool, &params.to_string())
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
            .subscription_id
    }
}
