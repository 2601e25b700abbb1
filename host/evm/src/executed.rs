//! The wallet's change set of transactions that were mined: their receipts' logs, and reads of
//! the chain at the block before the first and at the block of the last — the same derivation
//! ([`crate::changes::derive`]) as a simulation's, so the two can be compared. Gas paid is added
//! back to the native balance: simulations run at a gas price of zero.

use crate::chain::{ChainClient, ChainError, Chains};
use crate::changes::{ChangeSet, Reader};
use alloy::primitives::{Address, Bytes, Log, U256};
use alloy::rpc::types::TransactionReceipt;
use std::collections::BTreeSet;
use std::time::Instant;

/// Reads at one block over RPC; the first failure that is not a revert is kept, never hidden.
struct AtBlock<'a> {
    chains: &'a Chains,
    client: &'a ChainClient,
    block: u64,
    deadline: Instant,
    failed: Option<ChainError>,
}

impl Reader for AtBlock<'_> {
    fn view(&mut self, to: Address, data: Bytes) -> Option<Bytes> {
        if self.failed.is_some() {
            return None;
        }
        match self.chains.block_on(self.client.call(to, data, U256::ZERO, Some(self.block), self.deadline)) {
            Ok(out) => Some(out),
            Err(ChainError::Reverted { .. }) => None,
            Err(e) => {
                self.failed = Some(e);
                None
            }
        }
    }
}

/// The change set of `wallet` from mined `receipts` (in order, all on `chain`), asking every
/// log's contract and each of `also` (the calls' targets, the simulated assets) for balances.
pub fn executed_changes(
    chains: &Chains,
    chain: u64,
    wallet: Address,
    receipts: &[TransactionReceipt],
    also: &BTreeSet<Address>,
    deadline: Instant,
) -> Result<ChangeSet, ChainError> {
    let (Some(first), Some(last)) = (receipts.first(), receipts.last()) else {
        return Ok(ChangeSet::default());
    };
    let mined = |r: &TransactionReceipt| {
        r.block_number
            .ok_or_else(|| ChainError::InvalidParams(format!("receipt {} has no block", r.transaction_hash)))
    };
    let (before_block, after_block) = (mined(first)?.saturating_sub(1), mined(last)?);
    let client = chains.get(chain)?;
    let native = |block| chains.block_on(client.balance(wallet, Some(block), deadline));
    // Only what the wallet paid: a Safe's transactions are paid by its owner key.
    let gas: U256 = receipts
        .iter()
        .filter(|r| r.from == wallet)
        .map(|r| U256::from(r.gas_used) * U256::from(r.effective_gas_price))
        .fold(U256::ZERO, |a, b| a.saturating_add(b));
    let native = (native(before_block)?, native(after_block)?.saturating_add(gas));
    let logs: Vec<Log> =
        receipts.iter().flat_map(|r| r.inner.logs().iter().map(|l| l.inner.clone())).collect();
    let reader = |block| AtBlock { chains, client, block, deadline, failed: None };
    let mut views = (reader(before_block), reader(after_block));
    let changes = crate::changes::derive(wallet, &logs, also, native, &mut views);
    match views.0.failed.or(views.1.failed) {
        Some(e) => Err(e),
        None => Ok(changes),
    }
}
