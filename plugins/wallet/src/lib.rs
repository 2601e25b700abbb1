//! Wallet tools for Bardo: the wallet's (or any account's) balances over the operator's token
//! list, its portfolio across every configured chain at the operator's USD feeds, allowances and open approvals found from Approval logs, the fee market, transactions
//! decoded, a Safe's configuration; and write plans to approve exactly, revoke, wrap, unwrap and transfer to an
//! allowlisted recipient. Configured by `[settings] wallet` (see `bardo_sdk::operator`).

mod decode;
mod portfolio;
mod read;
mod safe;
mod write;

use decode::DecodeTransaction;
use read::{GetAllowance, GetApprovals, GetBalances, GetFeeHistory, GetGasPrice, GetTokenBalance};
use write::{Approve, Revoke, Transfer, Unwrap, Wrap};

bardo_sdk::plugin! {
    name: "wallet",
    read: [GetBalances, portfolio::GetPortfolio, GetTokenBalance, GetAllowance, GetApprovals, GetGasPrice, GetFeeHistory, DecodeTransaction, safe::GetSafe],
    write: [Approve, Revoke, Wrap, Unwrap, Transfer],
}
