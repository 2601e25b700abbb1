//! ERC-4626 vault tools for Bardo: the operator's vaults, one vault's asset, share price and
//! caps, previews of the four flows, the wallet's positions; and write plans to deposit, mint,
//! withdraw and redeem — with exact approvals, receiver and owner always the wallet, and
//! outcomes read back from the receipts' `Deposit` / `Withdraw` events. Configured by
//! `[settings] vault` (`bardo_sdk::operator`: `vaults`, `tokens`, `allowlist` per chain).

mod read;
mod write;

use read::{GetInfo, GetPosition, ListVaults, PreviewDeposit, PreviewMint, PreviewRedeem, PreviewWithdraw};
use write::{Deposit, Mint, Redeem, Withdraw};

bardo_sdk::plugin! {
    name: "vault",
    read: [ListVaults, GetInfo, PreviewDeposit, PreviewMint, PreviewWithdraw, PreviewRedeem, GetPosition],
    write: [Deposit, Mint, Withdraw, Redeem],
}
