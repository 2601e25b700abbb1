//! The view calls of a simulation's change-set derivation and probes, on its two states: the
//! fork as it was and the state the calls left. A view asked of both runs once when the calls
//! changed nothing it read — its answer after is then its answer before.

use super::{Bounded, ForkError, ForkState};
use crate::changes::Views;
use alloy::primitives::{Address, Bytes};
use bardo_core::sync::read;
use revm::ExecuteEvm;
use revm::context::{ContextTr, TxEnv};
use revm::database::CacheDB;
use revm::handler::{MainnetContext, MainnetEvm};
use revm::primitives::TxKind;
use revm::state::EvmState;
use std::time::Instant;

/// An EVM over a fork, writing only to its own overlay.
pub(super) type ForkEvm = MainnetEvm<MainnetContext<CacheDB<Bounded>>>;

/// Why a read of the change-set derivation has no answer that can be trusted.
pub(super) enum ReadFailure {
    /// The simulation's deadline passed.
    Deadline,
    /// The fork's state could not be fetched.
    State(String),
}

/// Gas for one view call of the derivation: enough for any `balanceOf`, bounded for the rest.
const VIEW_GAS: u64 = 300_000;

/// View calls against one EVM's state, not committed; the first failure is kept, not hidden.
pub(super) struct EvmReader {
    pub(super) evm: ForkEvm,
    chain: u64,
    deadline: Instant,
    pub(super) failed: Option<ReadFailure>,
}

impl EvmReader {
    pub(super) fn new(evm: ForkEvm, chain: u64, deadline: Instant) -> Self {
        Self { evm, chain, deadline, failed: None }
    }

    /// The return data of view call `data` to `to` (none: it reverted, or the read failed), and
    /// every account and slot it read (none when it did not run).
    fn view(&mut self, to: Address, data: Bytes) -> (Option<Bytes>, Option<EvmState>) {
        if self.failed.is_some() {
            return (None, None);
        }
        if Instant::now() >= self.deadline {
            self.failed = Some(ReadFailure::Deadline);
            return (None, None);
        }
        let tx = TxEnv {
            kind: TxKind::Call(to),
            data,
            gas_limit: VIEW_GAS,
            gas_price: 0,
            chain_id: Some(self.chain),
            ..TxEnv::default()
        };
        match self.evm.transact(tx) {
            Ok(done) => {
                let out = if done.result.is_success() { done.result.into_output() } else { None };
                (out, Some(done.state))
            }
            Err(revm::context::result::EVMError::Database(ForkError::Deadline)) => {
                self.failed = Some(ReadFailure::Deadline);
                (None, None)
            }
            Err(e) => {
                self.failed = Some(ReadFailure::State(e.to_string()));
                (None, None)
            }
        }
    }
}

/// A simulation's two states, each with its EVM.
pub(super) struct ForkViews<'a> {
    /// Over the fork as it is.
    pub(super) before: EvmReader,
    /// Over the state the calls left (the fork under their committed writes).
    pub(super) after: EvmReader,
    fork: &'a ForkState,
    /// Whether an unchanged view's answer before is its answer after.
    reuse: bool,
    /// Views asked, and answered after from before.
    asked: u64,
    reused: u64,
}

impl<'a> ForkViews<'a> {
    pub(super) fn new(before: EvmReader, after: EvmReader, fork: &'a ForkState, reuse: bool) -> Self {
        Self { before, after, fork, reuse, asked: 0, reused: 0 }
    }

    /// Views asked of both states, and those answered after from their answer before.
    pub(super) fn counts(&self) -> (u64, u64) {
        (self.asked, self.reused)
    }

    /// Whether the calls left every account and slot in `read` (what a view on the state
    /// before read) as the fork has them: then that view reads the same after, and answers
    /// the same — its gas, block and caller are the same in both states.
    fn unchanged(&self, read_set: &EvmState) -> bool {
        let after = &self.after.evm.ctx.db().cache.accounts;
        let fork = read(&self.fork.accounts);
        read_set.iter().all(|(address, account)| {
            // Not loaded by the calls: the state after reads it from the fork.
            let Some(now) = after.get(address) else { return true };
            // Read before, so fetched into the fork; not there means not known: ask again.
            let Some(was) = fork.get(address) else { return false };
            let same = match (now.info(), was) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    a.balance == b.balance && a.nonce == b.nonce && a.code_hash == b.code_hash
                }
                _ => false,
            };
            let cleared = now.account_state.is_storage_cleared();
            same && account.storage.iter().all(|(slot, value)| match now.storage.get(slot) {
                Some(v) => *v == value.original_value,
                // Not written by the calls: the fork's value, unless they cleared the storage.
                None => !cleared || value.original_value.is_zero(),
            })
        })
    }

    /// The first read that failed, on either state; else the two EVMs, to keep.
    pub(super) fn finish(self) -> Result<[ForkEvm; 2], ReadFailure> {
        match self.before.failed.or(self.after.failed) {
            Some(failed) => Err(failed),
            None => Ok([self.before.evm, self.after.evm]),
        }
    }
}

impl Views for ForkViews<'_> {
    fn both(&mut self, to: Address, data: Bytes) -> (Option<Bytes>, Option<Bytes>) {
        self.asked += 1;
        let (before, read_set) = self.before.view(to, data.clone());
        if self.reuse && read_set.is_some_and(|r| self.unchanged(&r)) {
            self.reused += 1;
            return (before.clone(), before);
        }
        (before, self.after.view(to, data).0)
    }
}
