//! Simulation on a fork: revm over the chain's state at its latest block, fetched through alloy
//! on demand and kept per block, so repeated simulations at one block run warm. Each simulation
//! writes only to its own overlay; nothing is signed or sent. Plain Rust: no binding types here.

use crate::chain::{ChainError, Chains};
use crate::changes::{ChangeSet, Views};
use alloy::eips::BlockId;
use alloy::primitives::{Address, B256, Bytes, I256, Log, U256};
use alloy::providers::{DynProvider, Provider};
use bardo_core::sync::{lock, read, write};
use revm::context::{BlockEnv, Context, ContextTr, LocalContextTr, TxEnv};
use revm::database::async_db::DatabaseAsyncRef;
use revm::database::{AlloyDB, AlloyDBError, CacheDB};
use revm::primitives::hardfork::SpecId;
use revm::primitives::{KECCAK_EMPTY, TxKind};
use revm::state::{AccountInfo, Bytecode};
use revm::{Database, DatabaseRef, ExecuteCommitEvm, MainBuilder, MainContext};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;
use views::{EvmReader, ForkEvm, ForkViews, ReadFailure};

mod views;

/// One call to simulate.
#[derive(Debug, Clone)]
pub struct SimCall {
    /// The contract (or account) called.
    pub to: Address,
    /// ABI-encoded call data.
    pub data: Bytes,
    /// Wei sent with the call.
    pub value: U256,
}

impl From<&bardo_core::tool::PlannedCall> for SimCall {
    fn from(c: &bardo_core::tool::PlannedCall) -> Self {
        Self { to: c.to, data: c.data.clone(), value: c.value }
    }
}

/// Who a simulation runs as: the account that sends its transactions, and the wallet whose
/// change set is derived — one and the same, unless the wallet is a Safe its key sends for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The transactions' sender.
    pub caller: Address,
    /// Whose assets and authorities the change set follows.
    pub wallet: Address,
}

impl From<Address> for Origin {
    fn from(account: Address) -> Self {
        Self { caller: account, wallet: account }
    }
}

/// What one call did.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// Whether it succeeded (false: it reverted or halted).
    pub success: bool,
    /// Gas it used.
    pub gas_used: u64,
    /// Its return data, or the revert data.
    pub output: Bytes,
    /// The logs it emitted.
    pub logs: Vec<Log>,
    /// How much the wallet's native balance changed in this call (simulations pay no gas, so
    /// this is what the call sent and received).
    pub native: I256,
}

/// What a simulation did.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// The block the fork was taken at.
    pub block_number: u64,
    /// The timestamp the calls ran at (the next block's).
    pub timestamp: u64,
    /// One outcome per call, stopping after the first failure.
    pub outcomes: Vec<CallOutcome>,
    /// Every change of the wallet's assets and authorities (see [`crate::changes`]).
    pub changes: ChangeSet,
    /// Every other account whose native balance the calls changed, and by how much: where ether
    /// the wallet sent ended up.
    pub native: Vec<(Address, I256)>,
    /// Each probe asked for ([`Simulator::run_probed`]) with its answers, in order.
    pub probes: Vec<(Probe, Probed)>,
}

/// A view call answered on the state before the calls and after them (the caller's question
/// about what the run did to a contract, such as an account's health at a lending pool).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The contract asked.
    pub to: Address,
    /// The ABI-encoded view call.
    pub data: Bytes,
}

/// A probe's answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probed {
    /// The run never loaded the contract: it cannot have changed what the contract holds.
    Untouched,
    /// The view's output before and after the calls (none: it reverted or could not run).
    Answered {
        /// On the state the calls ran on.
        before: Option<Bytes>,
        /// On the state they left.
        after: Option<Bytes>,
    },
}

type Remote = AlloyDB<alloy::network::Ethereum, DynProvider>;

/// Why the fork could not read the chain's state.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// The node failed.
    #[error("{0}")]
    Remote(#[from] AlloyDBError),
    /// The call's deadline passed before the read (or during it).
    #[error("the simulation's deadline passed while it read chain state")]
    Deadline,
    /// An EVM read state while kept between simulations, with no fork (a defect of this module).
    #[error("an EVM read chain state while it had no fork")]
    Detached,
}

impl revm::database::DBErrorMarker for ForkError {}

/// Chain state at one block: read from the node once, then from memory (shared by every
/// simulation at that block).
struct ForkState {
    block: u64,
    remote: Remote,
    handle: tokio::runtime::Handle,
    accounts: RwLock<HashMap<Address, Option<AccountInfo>>>,
    storage: RwLock<HashMap<(Address, U256), U256>>,
    code: RwLock<HashMap<B256, Bytecode>>,
    hashes: RwLock<HashMap<u64, B256>>,
}

fn cached<K: std::hash::Hash + Eq + Copy, V: Clone>(
    map: &RwLock<HashMap<K, V>>,
    key: K,
    fetch: impl FnOnce() -> Result<V, ForkError>,
) -> Result<V, ForkError> {
    if let Some(v) = read(map).get(&key) {
        return Ok(v.clone());
    }
    let v = fetch()?;
    write(map).insert(key, v.clone());
    Ok(v)
}

/// One simulation's view of a fork: cached state is free, and every read from the node is
/// bounded by the simulation's deadline — a call that reads thousands of uncached slots from
/// a slow node stops there instead of holding a host thread.
struct Bounded {
    /// None only while its EVM is kept between simulations (see [`keep`]).
    fork: Option<Arc<ForkState>>,
    deadline: Instant,
}

impl Bounded {
    fn fork(&self) -> Result<&ForkState, ForkError> {
        self.fork.as_deref().ok_or(ForkError::Detached)
    }

    fn fetch<T>(
        &self,
        read: impl std::future::Future<Output = Result<T, AlloyDBError>>,
    ) -> Result<T, ForkError> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ForkError::Deadline);
        }
        let handle = &self.fork()?.handle;
        // As revm's own async wrapper: never block a runtime worker without telling it.
        let answer =
            tokio::task::block_in_place(|| handle.block_on(async { tokio::time::timeout(left, read).await }));
        answer.map_err(|_| ForkError::Deadline)?.map_err(ForkError::Remote)
    }
}

impl DatabaseRef for Bounded {
    type Error = ForkError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, Self::Error> {
        let fork = self.fork()?;
        cached(&fork.accounts, address, || self.fetch(fork.remote.basic_async_ref(address)))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, Self::Error> {
        let fork = self.fork()?;
        cached(&fork.code, code_hash, || self.fetch(fork.remote.code_by_hash_async_ref(code_hash)))
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, Self::Error> {
        let fork = self.fork()?;
        cached(&fork.storage, (address, index), || self.fetch(fork.remote.storage_async_ref(address, index)))
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, Self::Error> {
        let fork = self.fork()?;
        cached(&fork.hashes, number, || self.fetch(fork.remote.block_hash_async_ref(number)))
    }
}

/// A fork failure as a chain error: the deadline is a timeout, the rest the node's failure.
fn fork_error(chain: u64, e: revm::context::result::EVMError<ForkError>) -> ChainError {
    match e {
        revm::context::result::EVMError::Database(ForkError::Deadline) => {
            ChainError::Timeout { chain, waited_ms: 0 }
        }
        e => db_error(chain, e),
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// The block a simulation runs in: the one after the latest.
#[derive(Debug, Clone, Copy)]
struct NextBlock {
    latest: u64,
    timestamp: u64,
    basefee: u64,
    gas_limit: u64,
    beneficiary: Address,
    prevrandao: B256,
}

thread_local! {
    /// EVMs kept between simulations, on the thread that ran them (an EVM is not `Send`: its call
    /// frames share its memory through `Rc`s). Building one allocates its call frames (eight, each
    /// with a 32 KiB stack), its journal and its cache, and its memory starts at 4 KiB and grows by
    /// copies as a swap's calls use tens of KiB; a kept one is handed the next simulation's fork,
    /// block and an emptied cache ([`prepare`]), as revm itself runs one transaction after another.
    /// Each is kept with the hardfork it was built for, which its instructions follow.
    static KEPT: RefCell<Vec<(SpecId, ForkEvm)>> = const { RefCell::new(Vec::new()) };
}

/// EVMs kept per thread, at most (a simulation runs two).
const EVMS_KEPT: usize = 2;
/// An EVM whose memory grew past this (a call that expanded memory far) is let go.
const MEMORY_KEPT_MAX: usize = 1 << 20;

/// An EVM for `spec` ready to run in `setting`: a kept one, or one built now (counted in `built`).
fn take(spec: SpecId, setting: &Setting, built: &AtomicU64) -> ForkEvm {
    let kept = KEPT.with_borrow_mut(|kept| {
        let index = kept.iter().position(|(s, _)| *s == spec)?;
        Some(kept.swap_remove(index).1)
    });
    let mut evm = kept.unwrap_or_else(|| {
        built.fetch_add(1, Ordering::Relaxed);
        Context::mainnet()
            .with_db(CacheDB::new(setting.bounded()))
            .modify_cfg_chained(|c| c.set_spec_and_mainnet_gas_params(spec))
            .build_mainnet()
    });
    prepare(&mut evm, setting);
    evm
}

/// Keep `evm` on this thread, its cache emptied and its fork let go (a kept EVM holds no
/// chain state).
fn keep(spec: SpecId, mut evm: ForkEvm) {
    if evm.ctx.local.shared_memory_buffer.borrow().capacity() > MEMORY_KEPT_MAX {
        return;
    }
    let db = &mut evm.ctx.journaled_state.database;
    db.db.fork = None;
    empty(&mut db.cache);
    KEPT.with_borrow_mut(|kept| {
        if kept.len() < EVMS_KEPT {
            kept.push((spec, evm));
        }
    });
}

/// `cache` as `CacheDB::new` makes it, its capacity kept.
fn empty(cache: &mut revm::database::Cache) {
    cache.accounts.clear();
    cache.logs.clear();
    cache.block_hashes.clear();
    // The empty code, under its hash and under zero.
    cache.contracts.retain(|hash, _| *hash == KECCAK_EMPTY || *hash == B256::ZERO);
}

/// Where and when one simulation runs.
struct Setting {
    fork: Arc<ForkState>,
    deadline: Instant,
    chain: u64,
    next: NextBlock,
}

impl Setting {
    fn bounded(&self) -> Bounded {
        Bounded { fork: Some(self.fork.clone()), deadline: self.deadline }
    }
}

/// `evm` ready to run in `setting`, whatever it ran before: its cache emptied onto the setting's
/// fork, its journal as after any transaction, its block and chain the setting's (its hardfork is its builder's,
/// one per simulator).
fn prepare(evm: &mut ForkEvm, setting: &Setting) {
    let ctx = &mut evm.ctx;
    let db = &mut ctx.journaled_state.database;
    db.db = setting.bounded();
    empty(&mut db.cache);
    drop(ctx.journaled_state.inner.finalize());
    ctx.local.clear();
    ctx.error = Ok(());
    let cfg = &mut ctx.cfg;
    cfg.chain_id = setting.chain;
    cfg.disable_nonce_check = true;
    cfg.disable_base_fee = true;
    cfg.disable_balance_check = true;
    // A Safe is a wallet with code: plugins simulate its calls as its own.
    cfg.disable_eip3607 = true;
    let next = &setting.next;
    ctx.block = BlockEnv {
        number: U256::from(next.latest + 1),
        timestamp: U256::from(next.timestamp),
        basefee: next.basefee,
        gas_limit: next.gas_limit,
        beneficiary: next.beneficiary,
        prevrandao: Some(next.prevrandao),
        ..BlockEnv::default()
    };
}

/// Forks per chain, reused while the chain's head does not move.
pub struct Simulator {
    forks: Mutex<BTreeMap<u64, Arc<ForkState>>>,
    heads: Mutex<BTreeMap<u64, (NextBlock, Instant)>>,
    spec: Option<SpecId>,
    /// Skip the change-set derivation (only to measure what it costs; see `without_changes`).
    skip_changes: bool,
    /// Answer a view after the calls from its answer before when they changed nothing it read
    /// (off only to measure and test that reuse; see `asking_every_view`).
    reuse_views: bool,
    /// View calls the derivations asked of both states, and those answered after from before.
    views: [AtomicU64; 2],
    /// EVMs this simulator built (see [`KEPT`]).
    built: AtomicU64,
}

impl Default for Simulator {
    fn default() -> Self {
        Self::new(None)
    }
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator").finish_non_exhaustive()
    }
}

fn db_error(chain: u64, e: impl std::fmt::Display) -> ChainError {
    ChainError::Rpc { chain, message: format!("fetching fork state: {e}"), retryable: true }
}

impl Simulator {
    /// A simulator for the given hardfork (default: Prague, the devnet's).
    pub fn new(spec: Option<SpecId>) -> Self {
        Self {
            forks: Mutex::default(),
            heads: Mutex::default(),
            spec,
            skip_changes: false,
            reuse_views: true,
            views: Default::default(),
            built: AtomicU64::new(0),
        }
    }

    /// A simulator whose simulations carry an empty change set: what the derivation costs is
    /// the difference to [`Self::new`] (the preview benchmark's baseline). Never for the write
    /// path, whose hallucination detector would then refuse every plan that changes anything.
    pub fn without_changes(spec: Option<SpecId>) -> Self {
        Self { skip_changes: true, ..Self::new(spec) }
    }

    /// A simulator that runs every view of the derivation on both states, even one the calls
    /// cannot have changed the answer of: the same change sets as [`Self::new`], slower (what
    /// reusing answers saves, and a check that it changes nothing).
    pub fn asking_every_view(spec: Option<SpecId>) -> Self {
        Self { reuse_views: false, ..Self::new(spec) }
    }

    /// Views asked of both states so far, and how many of them ran on the state before only.
    pub fn view_counts(&self) -> (u64, u64) {
        (self.views[0].load(Ordering::Relaxed), self.views[1].load(Ordering::Relaxed))
    }

    /// EVMs its simulations built so far (the rest ran on EVMs kept by earlier ones).
    pub fn evms_built(&self) -> u64 {
        self.built.load(Ordering::Relaxed)
    }

    /// Drop `chain`'s warm fork and head: its state changed under the same block number (a
    /// devnet's cheat code or revert), so what the fork read from the node is stale.
    pub fn forget(&self, chain: u64) {
        lock(&self.forks).remove(&chain);
        lock(&self.heads).remove(&chain);
    }

    fn fork(&self, chains: &Chains, chain: u64, block: u64) -> Result<Arc<ForkState>, ChainError> {
        let mut forks = lock(&self.forks);
        if let Some(f) = forks.get(&chain).filter(|f| f.block == block) {
            return Ok(f.clone());
        }
        let provider = chains.get(chain)?.provider().clone();
        let remote = AlloyDB::new(provider, BlockId::number(block));
        let fork = Arc::new(ForkState {
            block,
            remote,
            handle: chains.handle(),
            accounts: RwLock::default(),
            storage: RwLock::default(),
            code: RwLock::default(),
            hashes: RwLock::default(),
        });
        forks.insert(chain, fork.clone());
        Ok(fork)
    }

    async fn next_block(provider: &DynProvider, chain: u64) -> Result<NextBlock, ChainError> {
        let block = provider
            .get_block(BlockId::latest())
            .await
            .map_err(|e| db_error(chain, e))?
            .ok_or_else(|| db_error(chain, "the node has no latest block"))?;
        let h = &block.header;
        Ok(NextBlock {
            latest: h.number,
            // The node stamps the next block with its clock; a quiet chain's head can be old.
            timestamp: (h.timestamp + 1).max(unix_now()),
            basefee: h.base_fee_per_gas.unwrap_or_default(),
            gas_limit: h.gas_limit,
            beneficiary: h.beneficiary,
            prevrandao: h.mix_hash,
        })
    }

    /// Run `calls` in order from `origin` on a fork of `chain`'s latest block, stamped with the
    /// next block's timestamp or, given `at`, with that one (a re-check of an earlier simulation
    /// must differ only where the state changed, not because time passed).
    pub fn run(
        &self,
        chains: &Chains,
        chain: u64,
        origin: impl Into<Origin>,
        calls: &[SimCall],
        at: Option<u64>,
        deadline: Instant,
    ) -> Result<Simulation, ChainError> {
        self.run_probed(chains, chain, origin, calls, &[], at, deadline)
    }

    /// [`Self::run`], answering each of `probes` on the state before and after the calls when
    /// the calls loaded its contract.
    #[allow(clippy::too_many_arguments)]
    pub fn run_probed(
        &self,
        chains: &Chains,
        chain: u64,
        origin: impl Into<Origin>,
        calls: &[SimCall],
        probes: &[Probe],
        at: Option<u64>,
        deadline: Instant,
    ) -> Result<Simulation, ChainError> {
        let Origin { caller, wallet } = origin.into();
        let client = chains.get(chain)?;
        let cached = lock(&self.heads).get(&chain).copied();
        let next = match cached {
            Some((next, at)) if at.elapsed() < client.head_ttl() => next,
            _ => {
                let next = chains.block_on(async {
                    let left = deadline.saturating_duration_since(Instant::now());
                    tokio::time::timeout(left, Self::next_block(client.provider(), chain))
                        .await
                        .map_err(|_| ChainError::Timeout { chain, waited_ms: left.as_millis() as u64 })?
                })?;
                lock(&self.heads).insert(chain, (next, Instant::now()));
                next
            }
        };
        let next = NextBlock { timestamp: at.unwrap_or(next.timestamp), ..next };
        let fork = self.fork(chains, chain, next.latest)?;
        let spec = self.spec.unwrap_or(SpecId::PRAGUE);
        // One EVM over the fork as it is (the reads "before") and one the calls run in.
        let setting = Setting { fork: fork.clone(), deadline, chain, next };
        let mut evm = take(spec, &setting, &self.built);
        let native_balance = |db: &mut CacheDB<Bounded>| -> Result<U256, ChainError> {
            let account = db
                .basic(wallet)
                .map_err(|e| fork_error(chain, revm::context::result::EVMError::Database(e)))?;
            Ok(account.map(|a| a.balance).unwrap_or_default())
        };
        let native_before = native_balance(evm.ctx.db_mut())?;
        let mut native_was = native_before;
        let mut outcomes = Vec::with_capacity(calls.len());
        for call in calls {
            if Instant::now() >= deadline {
                return Err(ChainError::Timeout { chain, waited_ms: 0 });
            }
            let tx = TxEnv {
                caller,
                kind: TxKind::Call(call.to),
                data: call.data.clone(),
                value: call.value,
                gas_limit: next.gas_limit,
                gas_price: 0,
                chain_id: Some(chain),
                ..TxEnv::default()
            };
            let result = evm.transact_commit(tx).map_err(|e| fork_error(chain, e))?;
            let success = result.is_success();
            let gas_used = result.tx_gas_used();
            let logs = result.logs().to_vec();
            let output = result.into_output().unwrap_or_default();
            let native_now = native_balance(evm.ctx.db_mut())?;
            let native = I256::from_raw(native_now).wrapping_sub(I256::from_raw(native_was));
            native_was = native_now;
            outcomes.push(CallOutcome { success, gas_used, output, logs, native });
            if !success {
                break;
            }
        }
        let native_after = native_balance(evm.ctx.db_mut())?;
        // Ether that moved between other accounts: every account the run loaded, against the
        // fork's state (which the run never writes to).
        let native: Vec<(Address, I256)> = {
            let base = read(&fork.accounts);
            evm.ctx
                .db()
                .cache
                .accounts
                .iter()
                .filter(|(address, _)| **address != wallet)
                .filter_map(|(address, account)| {
                    let was = base.get(address).cloned().flatten().map(|a| a.balance).unwrap_or_default();
                    let delta = I256::from_raw(account.info.balance).wrapping_sub(I256::from_raw(was));
                    (!delta.is_zero()).then_some((*address, delta))
                })
                .collect()
        };
        if self.skip_changes {
            let changes = ChangeSet::default();
            return Ok(Simulation {
                block_number: next.latest,
                timestamp: next.timestamp,
                outcomes,
                changes,
                native,
                probes: Vec::new(),
            });
        }
        let loaded: std::collections::BTreeSet<Address> =
            evm.ctx.db().cache.accounts.keys().copied().collect();
        // Every contract the calls loaded may hold a balance of the wallet's.
        let touched = evm
            .ctx
            .db()
            .cache
            .accounts
            .iter()
            .filter(|(_, a)| a.info.code_hash != KECCAK_EMPTY)
            .map(|(address, _)| *address)
            .collect();
        let logs: Vec<Log> = outcomes.iter().flat_map(|o| o.logs.iter().cloned()).collect();
        let before = EvmReader::new(take(spec, &setting, &self.built), chain, deadline);
        let after = EvmReader::new(evm, chain, deadline);
        let mut views = ForkViews::new(before, after, &fork, self.reuse_views);
        let changes =
            crate::changes::derive(wallet, &logs, &touched, (native_before, native_after), &mut views);
        let probes = probes
            .iter()
            .map(|probe| {
                if !loaded.contains(&probe.to) {
                    return (probe.clone(), Probed::Untouched);
                }
                let (before, after) = views.both(probe.to, probe.data.clone());
                (probe.clone(), Probed::Answered { before, after })
            })
            .collect();
        let (asked, reused) = views.counts();
        self.views[0].fetch_add(asked, Ordering::Relaxed);
        self.views[1].fetch_add(reused, Ordering::Relaxed);
        // A read that failed or ran out of time could hide a change: the simulation fails.
        match views.finish() {
            Err(failed) => {
                return Err(match failed {
                    ReadFailure::Deadline => ChainError::Timeout { chain, waited_ms: 0 },
                    ReadFailure::State(message) => db_error(chain, message),
                });
            }
            Ok(evms) => evms.into_iter().for_each(|evm| keep(spec, evm)),
        }
        Ok(Simulation {
            block_number: next.latest,
            timestamp: next.timestamp,
            outcomes,
            changes,
            native,
            probes,
        })
    }
}
