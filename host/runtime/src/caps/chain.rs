//! `bardo:host/chain`: read-only RPC access for plugins, over [`bardo_evm::chain`]. Converts WIT
//! strings to typed values (a malformed address is `invalid-params`, not a trap), bounds every
//! request by the call's deadline, and maps chain failures to typed errors.

use super::view::{CallCtx, CapsView};
use crate::bindings::bardo::host::chain::{FeeMarket, FeeRecord, Host, TxInfo};
use crate::bindings::bardo::host::types::{Error, Log, LogFilter, Receipt, TxCall};
use crate::caps::convert::wit_error;
use alloy::primitives::{Address, B256, Bytes, U256};
use bardo_core::error::{ErrorCode, ToolError};
use bardo_evm::chain::{ChainClient, ChainError, Chains};
use wasmtime::component::{HasData, Linker};

/// The interface this module serves.
pub(crate) const INTERFACE: &str = "bardo:host/chain";

/// Widest block range one `logs` call may cover.
pub const MAX_LOG_RANGE: u64 = 10_000;
/// Most blocks one `fee-history` call may cover (the usual node limit).
const MAX_FEE_HISTORY: u32 = 1_024;

/// The chain import as one call sees it.
pub struct ChainView<'a> {
    chains: &'a Chains,
    call: &'a mut CallCtx,
}

struct HasChain;
impl HasData for HasChain {
    type Data<'a> = ChainView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::chain::add_to_linker::<T, HasChain>(linker, |t| {
        let caps = t.caps();
        ChainView { chains: &caps.evm.chains, call: caps.call }
    })
}

pub(crate) fn chain_error(e: ChainError) -> Error {
    wit_error(e.into())
}

fn invalid(message: String) -> Error {
    wit_error(ToolError::new(ErrorCode::InvalidParams, message))
}

pub(crate) fn parse_address(field: &str, text: &str) -> Result<Address, Error> {
    text.parse()
        .map_err(|_| invalid(format!("`{field}` is not an address: {text:?}; expected 0x and 40 hex digits")))
}

fn parse_b256(field: &str, text: &str) -> Result<B256, Error> {
    text.parse().map_err(|_| invalid(format!("`{field}` is not a 32-byte hex word: {text:?}")))
}

pub(crate) fn parse_u256(field: &str, text: &str) -> Result<U256, Error> {
    U256::from_str_radix(text, 10)
        .map_err(|_| invalid(format!("`{field}` is not a decimal uint256: {text:?}")))
}

/// A plugin's log filter as alloy's, without its block range.
pub(crate) fn alloy_filter(filter: &LogFilter) -> Result<alloy::rpc::types::Filter, Error> {
    let addresses =
        filter.addresses.iter().map(|a| parse_address("addresses", a)).collect::<Result<Vec<_>, _>>()?;
    if filter.topics.len() > 4 {
        return Err(invalid(format!(
            "`topics` has {} positions; an event has at most 4",
            filter.topics.len()
        )));
    }
    let mut f = alloy::rpc::types::Filter::new().address(addresses);
    for (i, position) in filter.topics.iter().enumerate() {
        let words = position.iter().map(|t| parse_b256("topics", t)).collect::<Result<Vec<_>, _>>()?;
        if !words.is_empty() {
            f.topics[i] = words.into();
        }
    }
    Ok(f)
}

pub(crate) fn wit_log(chain_id: u64, l: &alloy::rpc::types::Log) -> Log {
    Log {
        chain_id,
        address: l.address().to_checksum(None),
        topics: l.topics().iter().map(|t| t.to_string()).collect(),
        data: l.data().data.to_vec(),
        block_number: l.block_number,
        tx_hash: l.transaction_hash.map(|h| h.to_string()),
        log_index: l.log_index,
    }
}

impl<'a> ChainView<'a> {
    fn client(&self, chain: u64) -> Result<&'a ChainClient, Error> {
        let chains: &'a Chains = self.chains;
        chains.get(chain).map_err(chain_error)
    }

    fn run<T>(&mut self, f: impl Future<Output = Result<T, ChainError>>) -> Result<T, Error> {
        if !self.call.may_block() {
            return Err(super::view::would_block());
        }
        let call = &self.call;
        self.chains.block_on(f).map_err(|e| wit_error(call.chain_error(e)))
    }
}

impl Host for ChainView<'_> {
    fn call(&mut self, call: TxCall, block: Option<u64>) -> Result<Vec<u8>, Error> {
        let client = self.client(call.chain_id)?;
        let to = parse_address("to", &call.to)?;
        let value = parse_u256("value", &call.value)?;
        let deadline = self.call.deadline;
        self.run(client.call(to, Bytes::from(call.data), value, block, deadline)).map(|b| b.to_vec())
    }

    fn balance(&mut self, chain: u64, account: String, block: Option<u64>) -> Result<String, Error> {
        let client = self.client(chain)?;
        let account = parse_address("account", &account)?;
        self.run(client.balance(account, block, self.call.deadline)).map(|b| b.to_string())
    }

    fn block_number(&mut self, chain: u64) -> Result<u64, Error> {
        let client = self.client(chain)?;
        self.run(client.block_number(self.call.deadline))
    }

    fn block_timestamp(&mut self, chain: u64, block: Option<u64>) -> Result<u64, Error> {
        let client = self.client(chain)?;
        self.run(client.block_timestamp(block, self.call.deadline))
    }

    fn logs(&mut self, filter: LogFilter) -> Result<Vec<Log>, Error> {
        let client = self.client(filter.chain_id)?;
        let mut f = alloy_filter(&filter)?;
        let latest = if filter.from_block.is_none() || filter.to_block.is_none() {
            Some(self.run(client.block_number(self.call.deadline))?)
        } else {
            None
        };
        let from = filter.from_block.or(latest).unwrap_or_default();
        let to = filter.to_block.or(latest).unwrap_or_default();
        if to < from || to - from >= MAX_LOG_RANGE {
            return Err(invalid(format!(
                "block range {from}..={to} is empty or wider than {MAX_LOG_RANGE} blocks; split it into smaller ranges"
            )));
        }
        f = f.from_block(from).to_block(to);
        let chain_id = filter.chain_id;
        self.run(client.logs(&f, self.call.deadline))
            .map(|logs| logs.iter().map(|l| wit_log(chain_id, l)).collect())
    }

    fn code(&mut self, chain: u64, account: String) -> Result<Vec<u8>, Error> {
        let client = self.client(chain)?;
        let account = parse_address("account", &account)?;
        self.run(client.code(account, self.call.deadline)).map(|b| b.to_vec())
    }

    fn storage_at(&mut self, chain: u64, account: String, slot: String) -> Result<String, Error> {
        let client = self.client(chain)?;
        let account = parse_address("account", &account)?;
        let slot = parse_b256("slot", &slot)?;
        self.run(client.storage_at(account, slot.into(), self.call.deadline))
            .map(|w| B256::from(w).to_string())
    }

    fn gas_price(&mut self, chain: u64) -> Result<FeeMarket, Error> {
        let client = self.client(chain)?;
        let p = self.run(client.gas_price(self.call.deadline))?;
        Ok(FeeMarket {
            gas_price: p.gas_price.to_string(),
            base_fee: p.base_fee.map(|f| f.to_string()),
            priority_fee: p.priority_fee.map(|f| f.to_string()),
        })
    }

    fn fee_history(&mut self, chain: u64, blocks: u32, percentiles: Vec<f64>) -> Result<FeeRecord, Error> {
        if !(1..=MAX_FEE_HISTORY).contains(&blocks) {
            return Err(invalid(format!("`blocks` is {blocks}; ask for 1 to {MAX_FEE_HISTORY} blocks")));
        }
        let ascending = percentiles.windows(2).all(|w| w[0] <= w[1]);
        if percentiles.len() > 10 || !ascending || percentiles.iter().any(|p| !(0.0..=100.0).contains(p)) {
            return Err(invalid(
                "`percentiles` must be at most 10 values from 0 to 100, ascending".to_owned(),
            ));
        }
        let client = self.client(chain)?;
        let h = self.run(client.fee_history(u64::from(blocks), &percentiles, self.call.deadline))?;
        Ok(FeeRecord {
            oldest_block: h.oldest_block,
            base_fees: h.base_fee_per_gas.iter().map(u128::to_string).collect(),
            gas_used_ratios: h.gas_used_ratio.clone(),
            rewards: h
                .reward
                .unwrap_or_default()
                .iter()
                .map(|r| r.iter().map(u128::to_string).collect())
                .collect(),
        })
    }

    fn transaction(&mut self, chain: u64, tx_hash: String) -> Result<Option<TxInfo>, Error> {
        use alloy::consensus::Transaction as _;
        let client = self.client(chain)?;
        let hash = parse_b256("tx-hash", &tx_hash)?;
        let Some(tx) = self.run(client.transaction(hash, self.call.deadline))? else { return Ok(None) };
        Ok(Some(TxInfo {
            hash: tx.inner.tx_hash().to_string(),
            block_number: tx.block_number,
            sender: tx.inner.signer().to_checksum(None),
            to: tx.to().map(|a| a.to_checksum(None)),
            value: tx.value().to_string(),
            input: tx.input().to_vec(),
            nonce: tx.nonce(),
            gas_limit: tx.gas_limit(),
        }))
    }

    fn tx_receipt(&mut self, chain: u64, tx_hash: String) -> Result<Option<Receipt>, Error> {
        let client = self.client(chain)?;
        let hash = parse_b256("tx-hash", &tx_hash)?;
        let receipt = self.run(client.receipt(hash, self.call.deadline))?;
        Ok(receipt.map(|r| wit_receipt(chain, &r)))
    }
}

/// A mined transaction's receipt as plugins see it.
pub(crate) fn wit_receipt(chain: u64, r: &alloy::rpc::types::TransactionReceipt) -> Receipt {
    Receipt {
        chain_id: chain,
        tx_hash: r.transaction_hash.to_string(),
        block_number: r.block_number.unwrap_or_default(),
        success: r.status(),
        gas_used: r.gas_used,
        effective_gas_price: r.effective_gas_price.to_string(),
        sender: r.from.to_checksum(None),
        to: r.to.map(|a| a.to_checksum(None)),
        logs: r.inner.logs().iter().map(|l| wit_log(chain, l)).collect(),
    }
}
