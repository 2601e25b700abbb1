//! Aave V3 tools for Bardo: reserve and account reads through the Pool and its
//! AaveProtocolDataProvider, and supply / withdraw / borrow / repay write plans that the host
//! checks, simulates, signs and sends. A borrow or withdraw that would take the health factor
//! below the operator's minimum is refused, checked by simulating the plan.
//!
//! One address configures a market: the PoolAddressesProvider, from `[settings] aave` in
//! bardo.toml (Ethereum mainnet built in); the pool, oracle and data provider are read from it.

mod abi;
mod market;
mod read;
mod write;

use read::{GetReserveData, GetReserves, GetUserAccountData, GetUserReserves};
use write::{BorrowTool, RepayTool, SupplyTool, WithdrawTool};

bardo_sdk::plugin! {
    name: "aave",
    read: [GetReserves, GetReserveData, GetUserAccountData, GetUserReserves],
    write: [SupplyTool, WithdrawTool, BorrowTool, RepayTool],
}
