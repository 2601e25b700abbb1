//! The Uniswap deployments the operator trusts on a chain, and which contracts are their pools.
//! A V4 pool lives in the configured PoolManager; a V3 pool is the address the configured V3
//! factory's `getPool` gives for its tokens and fee; a V2 pair the address the V2 factory's
//! `getPair` gives for its tokens. Anything else that emits a pool's events, answers `token0` or
//! quotes a price is a stranger's contract, whatever it says. What a pool is never changes, so
//! a pool found is kept; what it holds and its price are read from its state.

use super::Valuer;
use alloy::primitives::{Address, B256, Log, U256};
use alloy::sol_types::SolCall;
use bardo_core::sync::lock;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

alloy::sol! {
    function token0() external view returns (address);
    function token1() external view returns (address);
    function fee() external view returns (uint24);
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address);
    function getPair(address tokenA, address tokenB) external view returns (address);
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
}

/// The Uniswap contracts of one chain whose pools the host believes (`uniswap` in a chain's
/// pricing config; `bardo devnet up` writes the devnet's). A chain without them has no pool whose
/// events count: a plan's trades there are judged by the wallet's balances alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UniswapContracts {
    /// The V2 factory: a V2 pair is its `getPair(token0, token1)`.
    #[serde(default)]
    pub v2_factory: Option<Address>,
    /// The V3 factory: a V3 pool is its `getPool(token0, token1, fee)`.
    #[serde(default)]
    pub v3_factory: Option<Address>,
    /// The V4 PoolManager, which holds every V4 pool and emits their events.
    #[serde(default)]
    pub v4_pool_manager: Option<Address>,
}

/// A contract the host knows to be a Uniswap pool of a trusted deployment (or V4's PoolManager).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Venue {
    /// A V2 pair of the configured factory.
    V2 {
        /// Its token0.
        token0: Address,
        /// Its token1.
        token1: Address,
    },
    /// A V3 pool of the configured factory.
    V3 {
        /// Its token0.
        token0: Address,
        /// Its token1.
        token1: Address,
        /// Its fee, hundredths of a bip.
        fee: u32,
    },
    /// The configured V4 PoolManager.
    V4,
}

impl Venue {
    /// The two tokens of a V2 or V3 pool (V4's PoolManager holds every currency).
    pub(crate) fn tokens(self) -> Option<(Address, Address)> {
        match self {
            Self::V2 { token0, token1 } | Self::V3 { token0, token1, .. } => Some((token0, token1)),
            Self::V4 => None,
        }
    }
}

impl Valuer {
    /// The chain's trusted Uniswap contracts (none configured: none).
    pub(crate) fn uniswap(&self, chain: u64) -> UniswapContracts {
        self.pricing.get(&chain).map(|c| c.uniswap.clone()).unwrap_or_default()
    }

    /// What `at` is, if it is a pool of the chain's trusted Uniswap deployments (or their
    /// PoolManager), read from the factories on the chain as it is now. None for anything else;
    /// an error only when the node could not answer.
    pub(crate) fn venue(&self, chain: u64, at: Address) -> Result<Option<Venue>, String> {
        let contracts = self.uniswap(chain);
        if contracts.v4_pool_manager == Some(at) {
            return Ok(Some(Venue::V4));
        }
        if let Some(known) = lock(&self.venues).get(&(chain, at)) {
            return Ok(Some(*known));
        }
        // A V3 pool answers `fee`; a V2 pair does not.
        let fee = self.try_read(chain, at, feeCall {})?;
        let factory = if fee.is_some() { contracts.v3_factory } else { contracts.v2_factory };
        let found = match (factory, self.tokens_of(chain, at)?) {
            (Some(factory), Some((token0, token1))) => match fee {
                Some(fee) => {
                    let pool =
                        self.try_read(chain, factory, getPoolCall { tokenA: token0, tokenB: token1, fee })?;
                    (pool == Some(at)).then_some(Venue::V3 { token0, token1, fee: fee.to::<u32>() })
                }
                None => {
                    let pair =
                        self.try_read(chain, factory, getPairCall { tokenA: token0, tokenB: token1 })?;
                    (pair == Some(at)).then_some(Venue::V2 { token0, token1 })
                }
            },
            _ => None,
        };
        if let Some(venue) = found {
            let mut known = lock(&self.venues);
            if known.len() >= 4_096 {
                known.clear();
            }
            known.insert((chain, at), venue);
        }
        Ok(found)
    }

    /// `at`'s `token0` and `token1`, if it answers both.
    fn tokens_of(&self, chain: u64, at: Address) -> Result<Option<(Address, Address)>, String> {
        let token0 = self.try_read(chain, at, token0Call {})?;
        let token1 = self.try_read(chain, at, token1Call {})?;
        Ok(token0.zip(token1))
    }

    /// One `eth_call` to `to`, decoded; None when it reverts or answers something else (not
    /// such a contract), an error only when the node fails.
    fn try_read<C: SolCall>(&self, chain: u64, to: Address, call: C) -> Result<Option<C::Return>, String> {
        let chains = &self.services.evm.chains;
        let client = chains.get(chain).map_err(|e| e.to_string())?;
        let deadline = Instant::now() + Duration::from_secs(2);
        match chains.block_on(client.call(to, call.abi_encode().into(), U256::ZERO, None, deadline)) {
            Ok(raw) => Ok(C::abi_decode_returns(&raw).ok()),
            Err(bardo_evm::ChainError::Reverted { .. }) => Ok(None),
            Err(e) => Err(format!("reading {} of {to}: {e}", C::SIGNATURE)),
        }
    }

    /// A Uniswap V3 pool's sqrt price now (`slot0`).
    pub(crate) fn v3_sqrt_price(&self, chain: u64, pool: Address) -> Result<U256, String> {
        Ok(U256::from(self.read(chain, pool, slot0Call {})?.sqrtPriceX96))
    }

    /// The `Initialize` log of V4 pool `id` at PoolManager `manager` (event `topic`), from the
    /// chain's logs of that PoolManager; kept, since a pool's key never changes.
    pub(crate) fn v4_initialize(
        &self,
        chain: u64,
        manager: Address,
        id: B256,
        topic: B256,
    ) -> Result<Log, String> {
        if let Some(log) = lock(&self.v4_pools).get(&(chain, manager, id)) {
            return Ok(log.clone());
        }
        let chains = &self.services.evm.chains;
        let client = chains.get(chain).map_err(|e| e.to_string())?;
        let filter = alloy::rpc::types::Filter::new()
            .address(manager)
            .event_signature(topic)
            .topic1(id)
            .from_block(0u64);
        let deadline = Instant::now() + Duration::from_secs(5);
        let logs = chains
            .block_on(client.logs(&filter, deadline))
            .map_err(|e| format!("reading V4 pool {id}'s Initialize: {e}"))?;
        let log = logs
            .into_iter()
            .map(|l| l.inner)
            .find(|l| l.address == manager)
            .ok_or_else(|| format!("V4 pool {id} was never initialised at PoolManager {manager}"))?;
        lock(&self.v4_pools).insert((chain, manager, id), log.clone());
        Ok(log)
    }

    /// The two tokens of a Uniswap V3 pool, read from the chain once (they never change).
    pub fn pool_tokens(&self, chain: u64, pool: Address) -> Result<(Address, Address), String> {
        if let Some(tokens) = lock(&self.pool_tokens).get(&(chain, pool)) {
            return Ok(*tokens);
        }
        let tokens = (self.read(chain, pool, token0Call {})?, self.read(chain, pool, token1Call {})?);
        let mut known = lock(&self.pool_tokens);
        if known.len() >= 4_096 {
            known.clear();
        }
        known.insert((chain, pool), tokens);
        Ok(tokens)
    }
}
