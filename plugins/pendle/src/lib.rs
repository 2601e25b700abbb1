//! Pendle V2 tools for Bardo (category `yield`): the operator's markets — implied APY, PT, YT
//! and LP prices in the underlying asset (spot, and the oracle's TWAP), liquidity, maturity —
//! an account's PT, YT, LP and SY in each with the interest and rewards it may claim, and quotes
//! of every trade (token ↔ PT, token ↔ YT, single-token liquidity in and out, PT+YT mint and
//! redeem) from Pendle's own static router on chain; and write plans through Pendle's router for
//! each of those trades and for claiming interest and rewards, every one paying the wallet with
//! its minimum out set from the quote.
//!
//! A market is one the operator lists in `[settings] pendle` (`bardo devnet up` writes the
//! devnet's): anyone can create a Pendle market over an SY of their own, so the plugin never
//! searches for one, and each listing is checked against the market's own `readTokens()`.

mod abi;
mod market;
mod read;
mod write;

use read::{GetMarket, GetMarkets, GetPosition, Quote};
use write::{AddLiquidity, BuyPt, BuyYt, Claim, MintPy, RedeemPy, RemoveLiquidity, SellPt, SellYt};

bardo_sdk::plugin! {
    name: "pendle",
    read: [GetMarkets, GetMarket, GetPosition, Quote],
    write: [BuyPt, SellPt, BuyYt, SellYt, AddLiquidity, RemoveLiquidity, MintPy, RedeemPy, Claim],
}
