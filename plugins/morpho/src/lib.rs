//! Morpho Blue tools for Bardo: the operator's markets (parameters, totals, rates, utilization,
//! the oracle's price), an account's position in one (supply, debt, collateral, health and the
//! distance to liquidation), previews of assets ↔ shares, and plans for supply, withdraw,
//! supply collateral, withdraw collateral, borrow and repay — each for the wallet and paying the
//! wallet. Interest is accrued to the latest block with Morpho's own math
//! (`bardo-morpho-math`), so what a plan declares is what Morpho will do.
//!
//! A market is one the operator lists in `[settings] morpho` (`bardo devnet up` writes the
//! devnet's): anyone can create a Morpho market, with any oracle, so the plugin never searches
//! for one — and the host's scope refuses any market not in `[safety] morpho_markets`.

mod abi;
mod market;
mod read;
mod write;

use read::{GetMarket, GetMarkets, GetPosition, Preview};
use write::{BorrowTool, RepayTool, SupplyCollateralTool, SupplyTool, WithdrawCollateralTool, WithdrawTool};

bardo_sdk::plugin! {
    name: "morpho",
    read: [GetMarkets, GetMarket, GetPosition, Preview],
    write: [SupplyTool, WithdrawTool, SupplyCollateralTool, WithdrawCollateralTool, BorrowTool, RepayTool],
}
