//! The devnet's Across relayer: what Across's relayers do, at devnet scale. It watches every
//! chain's SpokePool for `FundsDeposited`, and fills a deposit on its destination chain from its
//! own inventory (anvil's dev account [`crate::across::RELAYER_ACCOUNT`]) when it is one a
//! relayer would take: to a chain it serves, the output token the input token's counterpart
//! there (the same symbol), the output at most the input less its published fee, the fill
//! deadline not passed, and no other relayer's exclusivity running. Everything else stays
//! unfilled — as on Across, where an unprofitable or malformed deposit waits until it expires.
//! Refunds (the HubPool's bundles) are out of the devnet's scope.

use super::deployments::Deployments;
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, B256, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::{Filter, TransactionRequest};
use alloy::sol_types::{SolCall, SolEvent};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

alloy::sol! {
    struct V3RelayData {
        bytes32 depositor; bytes32 recipient; bytes32 exclusiveRelayer; bytes32 inputToken; bytes32 outputToken;
        uint256 inputAmount; uint256 outputAmount; uint256 originChainId; uint256 depositId;
        uint32 fillDeadline; uint32 exclusivityDeadline; bytes message;
    }
    event FundsDeposited(bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount,
        uint256 indexed destinationChainId, uint256 indexed depositId, uint32 quoteTimestamp, uint32 fillDeadline,
        uint32 exclusivityDeadline, bytes32 indexed depositor, bytes32 recipient, bytes32 exclusiveRelayer, bytes message);
    function fillRelay(V3RelayData relayData, uint256 repaymentChainId, bytes32 repaymentAddress) external;
    function approve(address spender, uint256 amount) external returns (bool);
    function allowance(address owner, address spender) external view returns (uint256);
}

/// How often the relayer looks for new deposits.
pub const EVERY: Duration = Duration::from_millis(200);

/// One chain the relayer serves.
struct Served {
    provider: DynProvider,
    d: Deployments,
    /// The first block not yet looked at.
    next_block: u64,
}

/// The relayer over the devnet's chains.
pub struct Relayer {
    chains: BTreeMap<u64, Served>,
    /// Deposits decided (filled or declined for good), by origin chain and deposit id.
    done: BTreeSet<(u64, U256)>,
}

/// A deposit as the relayer reads it.
struct Deposit {
    origin: u64,
    destination: u64,
    data: V3RelayData,
}

fn address_of(word: B256) -> Address {
    Address::from_word(word)
}

impl Relayer {
    /// A relayer over the chains at `rpcs`, each with its deployments.
    pub fn new(chains: &[(String, Deployments)]) -> Result<Self, String> {
        let mut served = BTreeMap::new();
        for (rpc, d) in chains {
            let url = rpc.parse().map_err(|e| format!("{rpc}: {e}"))?;
            let provider = ProviderBuilder::new().connect_http(url).erased();
            served.insert(d.chain_id, Served { provider, d: d.clone(), next_block: 0 });
        }
        Ok(Self { chains: served, done: BTreeSet::new() })
    }

    /// One pass: every new deposit on every chain read, and each filled or declined; what it
    /// did, one line per deposit it decided.
    pub async fn pass(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        let mut found = Vec::new();
        for (id, chain) in &mut self.chains {
            match new_deposits(*id, chain).await {
                Ok(deposits) => found.extend(deposits),
                Err(e) => notes.push(format!("chain {id}: cannot read deposits now: {e}")),
            }
        }
        for deposit in found {
            let key = (deposit.origin, deposit.data.depositId);
            if self.done.contains(&key) {
                continue;
            }
            match self.take(&deposit).await {
                Ok(Some(note)) => {
                    self.done.insert(key);
                    notes.push(note);
                }
                // Not yet (another relayer's exclusivity runs): looked at again next pass.
                Ok(None) => self.pending(deposit),
                Err(note) => {
                    self.done.insert(key);
                    notes.push(note);
                }
            }
        }
        notes
    }

    /// Keep `deposit` for the next pass: its origin is read again from its block.
    fn pending(&mut self, deposit: Deposit) {
        if let Some(origin) = self.chains.get_mut(&deposit.origin) {
            // Cheap on a devnet: the chain is short.
            origin.next_block = 0;
        }
    }

    /// Fill `deposit` if the relayer takes it: `Ok(Some(what happened))` when decided,
    /// `Ok(None)` when it must wait, `Err(why declined)` when it never will.
    async fn take(&self, deposit: &Deposit) -> Result<Option<String>, String> {
        let r = &deposit.data;
        let name =
            format!("deposit {} from chain {} to chain {}", r.depositId, deposit.origin, deposit.destination);
        let (Some(origin), Some(dest)) =
            (self.chains.get(&deposit.origin), self.chains.get(&deposit.destination))
        else {
            return Err(format!("{name}: declined, a chain this relayer does not serve"));
        };
        let relayer = dest.d.across.relayer;
        let input = address_of(r.inputToken);
        let symbol = origin.d.tokens.values().find(|t| t.address == input).map(|t| t.symbol.clone());
        let counterpart = symbol.as_ref().and_then(|s| dest.d.tokens.get(s)).map(|t| t.address);
        if counterpart != Some(address_of(r.outputToken)) {
            return Err(format!(
                "{name}: declined, its output token {} is not the counterpart of {input} ({})",
                address_of(r.outputToken),
                symbol.as_deref().unwrap_or("a token the relayer does not hold")
            ));
        }
        let fee = U256::from(dest.d.across.relayer_fee_bps);
        if r.outputAmount * U256::from(10_000) > r.inputAmount * (U256::from(10_000) - fee) {
            return Err(format!(
                "{name}: declined, output {} is more than the input {} less the relayer's {} bps",
                r.outputAmount, r.inputAmount, fee
            ));
        }
        let now = head_time(&dest.provider).await?;
        if u64::from(r.fillDeadline) < now {
            return Err(format!("{name}: expired unfilled (fill deadline {} < {now})", r.fillDeadline));
        }
        let exclusive = address_of(r.exclusiveRelayer);
        if !exclusive.is_zero() && exclusive != relayer && u64::from(r.exclusivityDeadline) >= now {
            return Ok(None);
        }
        let spoke = dest.d.across.spoke_pool;
        let output = address_of(r.outputToken);
        let allowed =
            call(&dest.provider, relayer, output, allowanceCall { owner: relayer, spender: spoke }).await?;
        if allowed < r.outputAmount {
            send(&dest.provider, relayer, output, approveCall { spender: spoke, amount: U256::MAX }).await?;
        }
        let fill = fillRelayCall {
            relayData: r.clone(),
            repaymentChainId: U256::from(deposit.origin),
            repaymentAddress: relayer.into_word(),
        };
        let tx = send(&dest.provider, relayer, spoke, fill)
            .await
            .map_err(|e| format!("{name}: fill failed: {e}"))?;
        Ok(Some(format!(
            "{name}: filled {} of {output} to {} in {tx}",
            r.outputAmount,
            address_of(r.recipient)
        )))
    }
}

/// The deposits made on chain `id` since the last look.
async fn new_deposits(id: u64, chain: &mut Served) -> Result<Vec<Deposit>, String> {
    let spoke = chain.d.across.spoke_pool;
    if spoke.is_zero() {
        return Ok(Vec::new());
    }
    let head = chain.provider.get_block_number().await.map_err(|e| e.to_string())?;
    if head < chain.next_block {
        return Ok(Vec::new());
    }
    let filter = Filter::new()
        .address(spoke)
        .event_signature(FundsDeposited::SIGNATURE_HASH)
        .from_block(chain.next_block)
        .to_block(head);
    let logs = chain.provider.get_logs(&filter).await.map_err(|e| e.to_string())?;
    chain.next_block = head + 1;
    let mut out = Vec::new();
    for log in logs {
        let Ok(e) = FundsDeposited::decode_log_data(log.data()) else { continue };
        out.push(Deposit {
            origin: id,
            destination: e.destinationChainId.saturating_to(),
            data: V3RelayData {
                depositor: e.depositor,
                recipient: e.recipient,
                exclusiveRelayer: e.exclusiveRelayer,
                inputToken: e.inputToken,
                outputToken: e.outputToken,
                inputAmount: e.inputAmount,
                outputAmount: e.outputAmount,
                originChainId: U256::from(id),
                depositId: e.depositId,
                fillDeadline: e.fillDeadline,
                exclusivityDeadline: e.exclusivityDeadline,
                message: e.message,
            },
        });
    }
    Ok(out)
}

async fn head_time(provider: &DynProvider) -> Result<u64, String> {
    let block = provider
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("no head block")?;
    Ok(block.header.timestamp)
}

async fn call<C: SolCall>(
    provider: &DynProvider,
    from: Address,
    to: Address,
    c: C,
) -> Result<C::Return, String> {
    let tx = TransactionRequest::default().from(from).to(to).with_input(c.abi_encode());
    let out = provider.call(tx).await.map_err(|e| e.to_string())?;
    C::abi_decode_returns(&out).map_err(|e| e.to_string())
}

/// How long the relayer waits for one of its transactions' receipt.
const RECEIPT_WAIT: Duration = Duration::from_secs(10);

/// Send `c` from `from` (an anvil dev account: the node signs) and wait for its receipt, at most
/// [`RECEIPT_WAIT`]: the receipt is asked for by hash, never through a block watcher that can
/// miss a block mined before it started, which would leave the relayer waiting forever.
async fn send<C: SolCall>(provider: &DynProvider, from: Address, to: Address, c: C) -> Result<B256, String> {
    // The nonce is the node's count, not a cached one: a fill that fails its gas estimate (a
    // deposit already filled) would otherwise take a nonce never sent, and every later
    // transaction would wait behind the gap forever.
    let nonce = provider.get_transaction_count(from).pending().await.map_err(|e| e.to_string())?;
    let tx = TransactionRequest::default().from(from).to(to).with_input(c.abi_encode()).nonce(nonce);
    let hash = *provider.send_transaction(tx).await.map_err(|e| e.to_string())?.tx_hash();
    let started = std::time::Instant::now();
    loop {
        if let Some(receipt) = provider.get_transaction_receipt(hash).await.map_err(|e| e.to_string())? {
            if !receipt.status() {
                return Err(format!("reverted in {hash}"));
            }
            return Ok(hash);
        }
        if started.elapsed() > RECEIPT_WAIT {
            return Err(format!("no receipt for {hash} within {} s", RECEIPT_WAIT.as_secs()));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Relay between `chains` (RPC URL and deployments each) until `stop`, saying what it does.
pub async fn relay(chains: &[(String, Deployments)], stop: impl Fn() -> bool, note: impl Fn(&str)) {
    let mut relayer = match Relayer::new(chains) {
        Ok(r) => r,
        Err(e) => return note(&format!("the relayer cannot start: {e}")),
    };
    while !stop() {
        for line in relayer.pass().await {
            note(&line);
        }
        tokio::time::sleep(EVERY).await;
    }
}
