//! EVM chain access through alloy providers: per-chain RPC configuration, request timeouts
//! bounded by the caller's deadline, retries with backoff on transient errors only, and a
//! block-scoped `eth_call` cache. Plain Rust: no binding types here.

use alloy::eips::BlockId;
use alloy::primitives::{Address, B256, Bytes, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::{Filter, Log, TransactionReceipt, TransactionRequest};
use alloy::transports::{RpcError, TransportErrorKind};
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::runtime::Runtime;
use bardo_core::sync::lock;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `[chains.<id>]` in bardo.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainConfig {
    /// HTTP JSON-RPC endpoint.
    pub rpc: String,
    /// WebSocket endpoint for subscriptions (optional).
    #[serde(default)]
    pub ws: Option<String>,
    /// Longest a single request may take, ms (also bounded by the call's budget).
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Retries after a transient failure.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// How long the simulator trusts a fetched chain head, ms. Within it repeated simulations
    /// run on the warm fork without asking for the head; 0 asks every time (an automining
    /// devnet, where every transaction is a new block).
    #[serde(default = "default_head_ttl_ms")]
    pub head_ttl_ms: u64,
    /// A local development chain (anvil): only then does the `dev` profile's
    /// `bardo:host/testnet` change its state (fund accounts, mine, move time, revert).
    #[serde(default)]
    pub devnet: bool,
}

impl ChainConfig {
    /// A node at `rpc` with the default timeout, retries and head TTL.
    pub fn new(rpc: impl Into<String>) -> Self {
        Self {
            rpc: rpc.into(),
            ws: None,
            timeout_ms: default_timeout_ms(),
            retries: default_retries(),
            head_ttl_ms: default_head_ttl_ms(),
            devnet: false,
        }
    }
}

fn default_head_ttl_ms() -> u64 {
    250
}

fn default_timeout_ms() -> u64 {
    5_000
}

fn default_retries() -> u32 {
    2
}

/// A failed chain read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The chain id has no `[chains.<id>]` entry.
    #[error("chain {0} is not configured in this host; add a [chains.{0}] rpc entry to bardo.toml")]
    NotSupported(u64),
    /// A bad request: an unparsable RPC URL, params the node rejected, a block not yet mined.
    #[error("{0}")]
    InvalidParams(String),
    /// The node failed or could not be reached.
    #[error("RPC node of chain {chain} failed: {message}")]
    Rpc {
        /// The chain id.
        chain: u64,
        /// The node's error, or the transport's.
        message: String,
        /// Whether the failure is transient (rate limit, 5xx, connection).
        retryable: bool,
    },
    /// The call reverted.
    #[error("execution reverted: {reason}")]
    Reverted {
        /// The decoded revert reason, or the custom error's hex.
        reason: String,
        /// The raw revert data (empty when the node gave none).
        data: Bytes,
    },
    /// The node did not answer before the deadline.
    #[error("RPC node of chain {chain} did not answer within {waited_ms} ms; retry later")]
    Timeout {
        /// The chain id.
        chain: u64,
        /// How long the request (with its retries) waited, ms.
        waited_ms: u64,
    },
}

impl From<ChainError> for ToolError {
    fn from(e: ChainError) -> Self {
        let message = e.to_string();
        match e {
            ChainError::NotSupported(_) => ToolError::new(ErrorCode::ChainNotSupported, message),
            ChainError::InvalidParams(_) => ToolError::new(ErrorCode::InvalidParams, message),
            ChainError::Rpc { retryable, .. } => ToolError { code: ErrorCode::Rpc, message, retryable },
            ChainError::Reverted { .. } => ToolError::new(ErrorCode::Reverted, message),
            ChainError::Timeout { .. } => ToolError::retryable(ErrorCode::Timeout, message),
        }
    }
}

/// Entries kept per chain in the eth_call cache.
const CACHE_ENTRIES: usize = 4_096;
/// Bytes (call data plus answers) the eth_call cache holds per chain: a plugin's huge calls
/// cannot grow the host's memory past this.
const CACHE_BYTES: usize = 16 << 20;
/// The most logs one `eth_getLogs` may return to the host; more is an error asking for a
/// narrower range, not a silent cut.
pub const MAX_LOGS: usize = 10_000;

type CallKey = (u64, Address, Bytes, U256);

/// The most calls sent in one JSON-RPC batch.
const MAX_BATCH: usize = 100;

/// An `eth_call` answer at a fixed block: its output, or its revert (both deterministic).
#[derive(Clone)]
enum Answer {
    Returned(Bytes),
    Reverted { reason: String, data: Bytes },
}

impl Answer {
    fn size(&self) -> usize {
        match self {
            Self::Returned(b) => b.len(),
            Self::Reverted { reason, data } => reason.len() + data.len(),
        }
    }

    fn into_result(self) -> Result<Bytes, ChainError> {
        match self {
            Self::Returned(b) => Ok(b),
            Self::Reverted { reason, data } => Err(ChainError::Reverted { reason, data }),
        }
    }
}

/// The block-scoped eth_call cache, bounded by entries and bytes.
#[derive(Default)]
struct CallCache {
    answers: HashMap<CallKey, Answer>,
    bytes: usize,
}

impl CallCache {
    fn insert(&mut self, key: CallKey, answer: Answer) {
        let size = key.2.len() + answer.size() + 96;
        if self.answers.len() >= CACHE_ENTRIES || self.bytes + size > CACHE_BYTES {
            self.answers.clear();
            self.bytes = 0;
        }
        if size <= CACHE_BYTES {
            self.bytes += size;
            self.answers.insert(key, answer);
        }
    }
}

/// The fee market now (wei).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GasPrice {
    /// `eth_gasPrice`.
    pub gas_price: u128,
    /// The latest block's base fee; none before EIP-1559.
    pub base_fee: Option<u128>,
    /// `eth_maxPriorityFeePerGas`; none before EIP-1559.
    pub priority_fee: Option<u128>,
}

/// One configured chain.
pub struct ChainClient {
    id: u64,
    /// Built on first use: an HTTP client loads the system's TLS roots (a hundred-odd files),
    /// which a command that never reads the chain (`bardo tools`) should not pay for.
    provider: OnceLock<DynProvider>,
    url: alloy::transports::http::reqwest::Url,
    config: ChainConfig,
    /// eth_call results at explicit block numbers: immutable, so safe to reuse.
    cache: Mutex<CallCache>,
    /// The latest block number and when it was fetched (trusted for `head_ttl_ms`).
    head: Mutex<Option<(u64, Instant)>>,
    /// Block timestamps by number.
    timestamps: Mutex<HashMap<u64, u64>>,
    /// Contract code by (block, account).
    codes: Mutex<HashMap<(u64, Address), Bytes>>,
}

/// Every configured chain, and the host's runtime their requests run on.
pub struct Chains {
    clients: BTreeMap<u64, ChainClient>,
    runtime: Runtime,
}

impl std::fmt::Debug for Chains {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chains").field("ids", &self.clients.keys().collect::<Vec<_>>()).finish()
    }
}

impl Chains {
    /// Clients for `configs` (keyed by chain id), their requests run on `runtime`; nothing is
    /// contacted yet.
    pub fn new(configs: &BTreeMap<u64, ChainConfig>, runtime: &Runtime) -> Result<Self, ChainError> {
        let mut clients = BTreeMap::new();
        for (id, config) in configs {
            let url = config.rpc.parse().map_err(|e| {
                ChainError::InvalidParams(format!("[chains.{id}] rpc {:?} is not a URL: {e}", config.rpc))
            })?;
            clients.insert(
                *id,
                ChainClient {
                    id: *id,
                    provider: OnceLock::new(),
                    url,
                    config: config.clone(),
                    cache: Mutex::default(),
                    head: Mutex::default(),
                    timestamps: Mutex::default(),
                    codes: Mutex::default(),
                },
            );
        }
        Ok(Self { clients, runtime: runtime.clone() })
    }

    /// No chains at all.
    pub fn none(runtime: &Runtime) -> Self {
        Self { clients: BTreeMap::new(), runtime: runtime.clone() }
    }

    /// The client of chain `id`.
    pub fn get(&self, id: u64) -> Result<&ChainClient, ChainError> {
        self.clients.get(&id).ok_or(ChainError::NotSupported(id))
    }

    /// Every configured node URL (HTTP and WebSocket, as written and as normalized): they often
    /// carry an API key, so messages an agent reads are scrubbed of them.
    pub fn endpoints(&self) -> Vec<String> {
        let mut urls = Vec::new();
        for client in self.clients.values() {
            for url in [client.config.rpc.clone(), client.ws_url()] {
                if let Ok(parsed) = url.parse::<alloy::transports::http::reqwest::Url>() {
                    urls.push(parsed.to_string());
                }
                urls.push(url);
            }
        }
        urls.sort_by_key(|u| std::cmp::Reverse(u.len()));
        urls.dedup();
        urls
    }

    /// The configured chain ids.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.clients.keys().copied()
    }

    /// The runtime's handle (for sync adapters such as the fork database).
    pub fn handle(&self) -> tokio::runtime::Handle {
        self.runtime.handle().clone()
    }

    /// The runtime requests run on.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Run a chain future to completion from synchronous code (a plugin call's thread).
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.runtime.block_on(f)
    }
}

impl ChainClient {
    /// The chain id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The node's WebSocket URL for subscriptions: `ws` from the config, else the HTTP URL's.
    pub fn ws_url(&self) -> String {
        match &self.config.ws {
            Some(ws) => ws.clone(),
            // Nodes such as anvil and geth serve WebSocket on their HTTP port.
            None => self.config.rpc.replacen("https://", "wss://", 1).replacen("http://", "ws://", 1),
        }
    }

    /// The node's HTTP URL (the write path sends signed transactions there).
    pub fn rpc_url(&self) -> &str {
        &self.config.rpc
    }

    /// How long a fetched head stays trusted (see [`ChainConfig::head_ttl_ms`]).
    pub fn head_ttl(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.config.head_ttl_ms)
    }

    /// The alloy provider (for the simulator's fork database).
    pub fn provider(&self) -> &DynProvider {
        self.provider.get_or_init(|| {
            ProviderBuilder::new().disable_recommended_fillers().connect_http(self.url.clone()).erased()
        })
    }

    /// Send one request with the timeout and retry policy, stopping at `deadline`.
    async fn request<T, F, Fut>(&self, deadline: Instant, mut send: F) -> Result<T, ChainError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, RpcError<TransportErrorKind>>>,
    {
        let started = Instant::now();
        let mut backoff = Duration::from_millis(50);
        let mut attempt = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let timeout = left.min(Duration::from_millis(self.config.timeout_ms));
            if timeout.is_zero() {
                return Err(ChainError::Timeout {
                    chain: self.id,
                    waited_ms: started.elapsed().as_millis() as u64,
                });
            }
            let error = match tokio::time::timeout(timeout, send()).await {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(e)) => classify(self.id, e),
                Err(_) => {
                    ChainError::Timeout { chain: self.id, waited_ms: started.elapsed().as_millis() as u64 }
                }
            };
            let retryable =
                matches!(error, ChainError::Rpc { retryable: true, .. } | ChainError::Timeout { .. });
            if !retryable || attempt >= self.config.retries || Instant::now() + backoff >= deadline {
                return Err(error);
            }
            tracing::debug!(chain = self.id, attempt, "retrying after a transient RPC failure: {error}");
            tokio::time::sleep(backoff).await;
            backoff *= 2;
            attempt += 1;
        }
    }

    /// The block "latest" means now: the head fetched within the last `head_ttl_ms`, so that
    /// reads at latest share the block-scoped cache; none (ask the node) when the TTL is 0.
    async fn resolve(&self, block: Option<u64>, deadline: Instant) -> Result<Option<u64>, ChainError> {
        if block.is_some() || self.config.head_ttl_ms == 0 {
            return Ok(block);
        }
        if let Some((n, at)) = *lock(&self.head)
            && at.elapsed() < self.head_ttl()
        {
            return Ok(Some(n));
        }
        let n = self.block_number(deadline).await?;
        *lock(&self.head) = Some((n, Instant::now()));
        Ok(Some(n))
    }

    /// The block "latest" means for reads now (the cached head within `head_ttl_ms`); none when
    /// the TTL is 0 and every read asks the node for its latest.
    pub async fn latest(&self, deadline: Instant) -> Result<Option<u64>, ChainError> {
        self.resolve(None, deadline).await
    }

    /// `eth_call` at `block` (latest when none). Results are cached per block: an explicit
    /// block never changes, and "latest" resolves to a block within the head TTL.
    pub async fn call(
        &self,
        to: Address,
        data: Bytes,
        value: U256,
        block: Option<u64>,
        deadline: Instant,
    ) -> Result<Bytes, ChainError> {
        let block = self.resolve(block, deadline).await?;
        let key = block.map(|b| (b, to, data.clone(), value));
        if let Some(key) = &key
            && let Some(hit) = lock(&self.cache).answers.get(key)
        {
            return hit.clone().into_result();
        }
        let tx = TransactionRequest::default().to(to).input(data.into()).value(value);
        let id = block.map_or(BlockId::latest(), BlockId::number);
        let out = self.request(deadline, || self.provider().call(tx.clone()).block(id).into_future()).await;
        if let Some(key) = key {
            self.remember(key, &out);
        }
        out
    }

    /// Many `eth_call`s at one `block` (no value), answered in order: the cached ones from the
    /// cache, the rest in one JSON-RPC batch — one round trip where one call each took one.
    /// A call the batch could not answer for a transient reason (a node's per-request rate
    /// limit) is retried on its own, with the usual policy.
    pub async fn call_many(
        &self,
        calls: &[(Address, Bytes)],
        block: u64,
        deadline: Instant,
    ) -> Vec<Result<Bytes, ChainError>> {
        let key = |(to, data): &(Address, Bytes)| (block, *to, data.clone(), U256::ZERO);
        let mut out: Vec<Option<Result<Bytes, ChainError>>> = {
            let cache = lock(&self.cache);
            calls.iter().map(|c| cache.answers.get(&key(c)).cloned().map(Answer::into_result)).collect()
        };
        let misses: Vec<usize> = (0..calls.len()).filter(|&i| out[i].is_none()).collect();
        // Providers cap a batch's size (100 is the smallest common cap): larger rounds go in
        // several batches, one after the other.
        for misses in misses.chunks(MAX_BATCH) {
            if let [i] = *misses {
                let (to, data) = &calls[i];
                out[i] = Some(self.call(*to, data.clone(), U256::ZERO, Some(block), deadline).await);
                continue;
            }
            let id = BlockId::number(block);
            let sent = self
                .request(deadline, || async {
                    let mut batch = alloy::rpc::client::BatchRequest::new(self.provider().client());
                    let mut waiters = Vec::with_capacity(misses.len());
                    for &i in misses {
                        let (to, data) = &calls[i];
                        let tx = TransactionRequest::default().to(*to).input(data.clone().into());
                        waiters.push(batch.add_call::<_, Bytes>("eth_call", &(tx, id))?);
                    }
                    batch.send().await?;
                    let mut answers = Vec::with_capacity(waiters.len());
                    for waiter in waiters {
                        answers.push(waiter.await);
                    }
                    Ok(answers)
                })
                .await;
            match sent {
                Ok(answers) => {
                    for (&i, answer) in misses.iter().zip(answers) {
                        let answer = answer.map_err(|e| classify(self.id, e));
                        out[i] = Some(match answer {
                            Err(ChainError::Rpc { retryable: true, .. } | ChainError::Timeout { .. }) => {
                                let (to, data) = &calls[i];
                                self.call(*to, data.clone(), U256::ZERO, Some(block), deadline).await
                            }
                            other => {
                                self.remember(key(&calls[i]), &other);
                                other
                            }
                        });
                    }
                }
                Err(e) => misses.iter().for_each(|&i| out[i] = Some(Err(e.clone()))),
            }
        }
        out.into_iter()
            .map(|o| o.unwrap_or_else(|| Err(ChainError::InvalidParams("unanswered".into()))))
            .collect()
    }

    /// Keep an answer at a fixed block: a revert there is as deterministic as a return value.
    fn remember(&self, key: CallKey, out: &Result<Bytes, ChainError>) {
        let answer = match out {
            Ok(b) => Answer::Returned(b.clone()),
            Err(ChainError::Reverted { reason, data }) => {
                Answer::Reverted { reason: reason.clone(), data: data.clone() }
            }
            Err(_) => return,
        };
        lock(&self.cache).insert(key, answer);
    }

    /// Native balance in wei.
    pub async fn balance(
        &self,
        account: Address,
        block: Option<u64>,
        deadline: Instant,
    ) -> Result<U256, ChainError> {
        let id = block.map_or(BlockId::latest(), BlockId::number);
        self.request(deadline, || self.provider().get_balance(account).block_id(id).into_future()).await
    }

    /// Latest block number.
    pub async fn block_number(&self, deadline: Instant) -> Result<u64, ChainError> {
        self.request(deadline, || self.provider().get_block_number().into_future()).await
    }

    /// Timestamp of `block` (latest when none).
    pub async fn block_timestamp(&self, block: Option<u64>, deadline: Instant) -> Result<u64, ChainError> {
        let block = self.resolve(block, deadline).await?;
        if let Some(t) = block.and_then(|b| lock(&self.timestamps).get(&b).copied()) {
            return Ok(t);
        }
        let id = block.map_or(BlockId::latest(), BlockId::number);
        let found = self.request(deadline, || self.provider().get_block(id).into_future()).await?;
        if let Some(b) = &found {
            let mut cache = lock(&self.timestamps);
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
            cache.insert(b.header.number, b.header.timestamp);
        }
        found.map(|b| b.header.timestamp).ok_or_else(|| {
            ChainError::InvalidParams(format!(
                "block {} does not exist yet on chain {}",
                block.unwrap_or_default(),
                self.id
            ))
        })
    }

    /// `eth_getLogs`; more than [`MAX_LOGS`] is an error asking for a narrower filter.
    pub async fn logs(&self, filter: &Filter, deadline: Instant) -> Result<Vec<Log>, ChainError> {
        let logs = self.request(deadline, || self.provider().get_logs(filter)).await?;
        if logs.len() > MAX_LOGS {
            return Err(ChainError::InvalidParams(format!(
                "the filter matches {} logs, more than the {MAX_LOGS} one call may return; narrow the block range or the addresses",
                logs.len()
            )));
        }
        Ok(logs)
    }

    /// Deployed bytecode.
    pub async fn code(&self, account: Address, deadline: Instant) -> Result<Bytes, ChainError> {
        let block = self.resolve(None, deadline).await?;
        let key = block.map(|b| (b, account));
        if let Some(key) = &key
            && let Some(hit) = lock(&self.codes).get(key)
        {
            return Ok(hit.clone());
        }
        let id = block.map_or(BlockId::latest(), BlockId::number);
        let code = self
            .request(deadline, || self.provider().get_code_at(account).block_id(id).into_future())
            .await?;
        if let Some(key) = key {
            let mut codes = lock(&self.codes);
            if codes.len() >= CACHE_ENTRIES {
                codes.clear();
            }
            codes.insert(key, code.clone());
        }
        Ok(code)
    }

    /// Raw storage word.
    pub async fn storage_at(
        &self,
        account: Address,
        slot: U256,
        deadline: Instant,
    ) -> Result<U256, ChainError> {
        self.request(deadline, || self.provider().get_storage_at(account, slot).into_future()).await
    }

    /// Whether `[chains.<id>] devnet = true`: a local chain whose state the `dev` profile may
    /// change.
    pub fn is_devnet(&self) -> bool {
        self.config.devnet
    }

    /// Forget every cached read: after a devnet's state changed under a block number (a cheat
    /// code, a revert to a snapshot), answers cached at that number are no longer true.
    pub fn forget(&self) {
        *lock(&self.cache) = CallCache::default();
        *lock(&self.head) = None;
        lock(&self.timestamps).clear();
        lock(&self.codes).clear();
    }

    /// The node's gas price, and for an EIP-1559 chain the next block's base fee and the
    /// node's suggested priority fee.
    pub async fn gas_price(&self, deadline: Instant) -> Result<GasPrice, ChainError> {
        let gas_price = self.request(deadline, || self.provider().get_gas_price().into_future()).await?;
        let block =
            self.request(deadline, || self.provider().get_block(BlockId::latest()).into_future()).await?;
        let base_fee = block.and_then(|b| b.header.base_fee_per_gas).map(u128::from);
        let priority_fee = match base_fee {
            Some(_) => Some(
                self.request(deadline, || self.provider().get_max_priority_fee_per_gas().into_future())
                    .await?,
            ),
            None => None,
        };
        Ok(GasPrice { gas_price, base_fee, priority_fee })
    }

    /// `eth_feeHistory` over the last `blocks` blocks with the reward `percentiles`.
    pub async fn fee_history(
        &self,
        blocks: u64,
        percentiles: &[f64],
        deadline: Instant,
    ) -> Result<alloy::rpc::types::FeeHistory, ChainError> {
        self.request(deadline, || {
            self.provider().get_fee_history(blocks, alloy::eips::BlockNumberOrTag::Latest, percentiles)
        })
        .await
    }

    /// A transaction by hash, none when the node does not know it.
    pub async fn transaction(
        &self,
        tx: B256,
        deadline: Instant,
    ) -> Result<Option<alloy::rpc::types::Transaction>, ChainError> {
        self.request(deadline, || self.provider().get_transaction_by_hash(tx).into_future()).await
    }

    /// A raw JSON-RPC request (the devnet's cheat codes), with the timeout and retry policy,
    /// its answer decoded as `R`.
    pub async fn raw<R: serde::de::DeserializeOwned>(
        &self,
        method: &'static str,
        params: serde_json::Value,
        deadline: Instant,
    ) -> Result<R, ChainError> {
        let answer: serde_json::Value =
            self.request(deadline, || self.provider().raw_request(method.into(), params.clone())).await?;
        serde_json::from_value(answer.clone()).map_err(|e| ChainError::Rpc {
            chain: self.id,
            message: format!("{method} answered {answer}, not what it returns: {e}"),
            retryable: false,
        })
    }

    /// A transaction's receipt, none while pending or unknown.
    pub async fn receipt(
        &self,
        tx: B256,
        deadline: Instant,
    ) -> Result<Option<TransactionReceipt>, ChainError> {
        self.request(deadline, || self.provider().get_transaction_receipt(tx).into_future()).await
    }
}

/// Map an alloy RPC error: reverts decoded, transient failures retryable, the rest final.
fn classify(chain: u64, e: RpcError<TransportErrorKind>) -> ChainError {
    match e {
        RpcError::ErrorResp(payload) => {
            if let Some(data) = payload.as_revert_data() {
                let reason = alloy::sol_types::decode_revert_reason(&data).unwrap_or_else(|| {
                    if data.is_empty() {
                        "no reason given".to_owned()
                    } else {
                        format!("custom error 0x{}", alloy::hex::encode(&data))
                    }
                });
                return ChainError::Reverted { reason, data };
            }
            if payload.message.contains("revert") {
                return ChainError::Reverted { reason: payload.message.to_string(), data: Bytes::new() };
            }
            if payload.code == -32602 {
                return ChainError::InvalidParams(format!(
                    "the node rejected the request: {}",
                    payload.message
                ));
            }
            ChainError::Rpc {
                chain,
                retryable: payload.is_retry_err(),
                message: format!("{} (code {})", payload.message, payload.code),
            }
        }
        RpcError::Transport(kind) => {
            let retryable = match &kind {
                TransportErrorKind::HttpError(http) => http.is_rate_limit_err() || http.status >= 500,
                _ => true,
            };
            ChainError::Rpc { chain, retryable, message: format!("{kind}; is the node up?") }
        }
        RpcError::DeserError { err, text } => ChainError::Rpc {
            chain,
            retryable: false,
            message: format!(
                "malformed JSON-RPC response ({err}): {}",
                text.chars().take(120).collect::<String>()
            ),
        },
        RpcError::NullResp => {
            ChainError::Rpc { chain, retryable: true, message: "the node answered with null".into() }
        }
        other => ChainError::Rpc { chain, retryable: false, message: other.to_string() },
    }
}
