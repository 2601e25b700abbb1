//! Uniswap V4 in streams: every V4 pool lives in the PoolManager and is named by its id, so a
//! stream follows the PoolManager's logs whose first topic after the signature is that id. The
//! pool's tokens come from its key (the PoolManager's `Initialize` log).

use crate::tokens::{PoolTokens, TokenState};
use alloy_primitives::aliases::{I24, U24};
use alloy_primitives::{Address, B256, I256};
use bardo_sdk::abi::eth_call;
use bardo_sdk::errors::{chain_not_supported, invalid_params, not_found};
use bardo_sdk::uniswap::Book;
use bardo_sdk::uniswap::v4::{PoolKey, TIERS, getLiquidityCall, getSlot0Call, key_by_id, pool_id};
use bardo_sdk::{ChainId, Error};

/// A key's fee with this bit set is dynamic: the hook sets it per swap (v4-core's LPFeeLibrary).
const DYNAMIC_FEE_FLAG: u32 = 0x80_0000;

/// The PoolManager on `chain_id`.
pub fn pool_manager(chain_id: ChainId, book: &Book) -> Result<Address, Error> {
    book.v4_pool_manager.ok_or_else(|| {
        chain_not_supported(format!(
            "chain {chain_id} has no Uniswap V4 PoolManager configured; add `v4_pool_manager` to its uniswap settings"
        ))
    })
}

pub use bardo_sdk::uniswap::v4::currency;

/// Parse a pool id param.
pub fn parse_id(text: &str) -> Result<B256, Error> {
    text.trim().parse::<B256>().map_err(|_| {
        invalid_params(format!("`pool_id` {text:?} is not a V4 pool id; give 0x and 64 hex digits"))
    })
}

/// The V4 pool `id` on `chain_id`, with its tokens; `not-found` when no pool has that id.
pub fn pool(chain_id: ChainId, book: &Book, id: B256) -> Result<PoolTokens, Error> {
    let manager = pool_manager(chain_id, book)?;
    let key = key_by_id(chain_id, manager, id)?.ok_or_else(|| {
        not_found(format!(
            "no V4 pool {id} on chain {chain_id} (the PoolManager never initialized it); read pool ids with \
             uniswap_get_pool_info (version v4)"
        ))
    })?;
    Ok(PoolTokens {
        pool: manager,
        pool_id: Some(id),
        token0: TokenState::from(currency(chain_id, key.currency0)?),
        token1: TokenState::from(currency(chain_id, key.currency1)?),
        fee: Some(key.fee.to::<u32>()).filter(|f| f & DYNAMIC_FEE_FLAG == 0),
    })
}

/// The V4 pools of `a`/`b` without hooks at the standard tiers: `(liquidity, id, fee)` each.
pub fn pools(
    chain_id: ChainId,
    book: &Book,
    a: Address,
    b: Address,
) -> Result<Vec<(u128, B256, u32)>, Error> {
    let Some(state_view) = book.v4_state_view else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (fee, spacing) in TIERS {
        let key = PoolKey {
            currency0: a.min(b),
            currency1: a.max(b),
            fee: U24::from(fee),
            tickSpacing: I24::try_from(spacing).unwrap_or_default(),
            hooks: Address::ZERO,
        };
        let id = pool_id(&key);
        if eth_call(chain_id, state_view, &getSlot0Call { poolId: id })?.sqrtPriceX96.is_zero() {
            continue;
        }
        out.push((eth_call(chain_id, state_view, &getLiquidityCall { poolId: id })?, id, fee));
    }
    Ok(out)
}

/// A V4 `Swap` amount (the swapper's delta) from the pool's side, as V3 logs it: + into the pool.
pub fn pool_side(swapper_delta: i128) -> I256 {
    -I256::try_from(swapper_delta).unwrap_or_default()
}
