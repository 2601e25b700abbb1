//! Uniswap tools for Bardo (V4, V3 and V2): pool and position reads, quotes through the contracts,
//! and swap / liquidity write plans that the host checks, simulates, signs and sends.
//!
//! Contract addresses and the token list per chain come from the operator's settings
//! (`[settings] uniswap` in bardo.toml), with Ethereum mainnet built in; see `book.rs`.

mod abi;
mod book;
mod liquidity;
mod liquidity_v4;
mod math;
mod native;
mod pools;
mod quote;
mod read;
mod router;
mod sdk_route;
mod staking;
mod swap;
mod v4;

use liquidity::{
    AddLiquidity, ClosePosition, CollectAllFees, CollectFees, CompoundFees, MigratePosition,
    RebalancePosition, RemoveLiquidity,
};
use read::{
    GetPoolInfo, GetPoolsByTokenPair, GetPosition, GetPositionPerformance, GetPositions, GetQuote,
    GetTokenInfo, GetTokenPrice,
};
use sdk_route::GetRoute;
use staking::{ClaimStakingRewards, GetIncentives, StakePosition, UnstakePosition};
use swap::ExecuteSwap;

bardo_sdk::plugin! {
    name: "uniswap",
    read: [GetPoolInfo, GetPoolsByTokenPair, GetQuote, GetPosition, GetPositions, GetPositionPerformance, GetTokenInfo, GetTokenPrice,
        GetRoute, GetIncentives],
    write: [ExecuteSwap, AddLiquidity, RemoveLiquidity, CollectFees, RebalancePosition, ClosePosition, CompoundFees,
        CollectAllFees, MigratePosition, StakePosition, UnstakePosition, ClaimStakingRewards],
}
