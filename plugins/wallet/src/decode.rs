//! `wallet_decode_transaction`: a transaction and its receipt with the call and every log named
//! (`bardo_sdk::decode`), and every address named from the operator's token list and allowlist.
//! Names come from the operator's configuration and from ABIs, never from the contracts' own
//! `name()` / `symbol()`, which anyone can set to anything.

use crate::read::def;
use alloy_primitives::{Address, B256};
use bardo_sdk::decode::{decode_call, decode_event, hex};
use bardo_sdk::errors::{invalid_params, not_found};
use bardo_sdk::operator::book;
use bardo_sdk::{Category, ChainId, Error, ReadTool, ToolDef, chain, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Params of `wallet_decode_transaction`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecodeParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The transaction hash, `0x` + 64 hex digits.
    pub tx_hash: String,
}

#[derive(Serialize)]
pub struct DecodedLog {
    index: usize,
    address: String,
    /// The emitter's name on the operator's token list or allowlist.
    address_name: Option<String>,
    /// `{event, fields}`; none for an event none of the known ABIs has.
    decoded: Option<Value>,
    topics: Vec<String>,
    data: String,
}

#[derive(Serialize)]
pub struct Decoded {
    hash: String,
    block_number: Option<u64>,
    from: String,
    to: Option<String>,
    /// The recipient's name on the operator's token list or allowlist.
    to_name: Option<String>,
    value_wei: String,
    nonce: u64,
    gas_limit: u64,
    /// `{function, args}`; none for a function none of the known ABIs has (or a plain transfer).
    call: Option<Value>,
    input: String,
    /// None while the transaction is pending.
    status: Option<&'static str>,
    gas_used: Option<u64>,
    effective_gas_price_wei: Option<String>,
    logs: Vec<DecodedLog>,
}

pub struct DecodeTransaction;

impl ReadTool for DecodeTransaction {
    const NAME: &'static str = "wallet_decode_transaction";
    type Params = DecodeParams;
    type Output = Decoded;

    fn def() -> ToolDef {
        def::<DecodeParams>(
            Self::NAME,
            "A transaction and its receipt, decoded: the function called with named arguments, status, \
             gas, and every log named (ERC-20/721, WETH, Uniswap V2/V3/V4, Permit2, UniversalRouter, \
             Aave V3 ABIs), with addresses named from the operator's token list and allowlist. Reads only.",
            Category::Data,
            &["read transaction", "read receipt"],
        )
    }

    fn run(p: DecodeParams) -> Result<Decoded, Error> {
        if p.tx_hash.parse::<B256>().is_err() {
            return Err(invalid_params(format!("`tx_hash` {:?} is not 0x + 64 hex digits", p.tx_hash)));
        }
        let b = book(p.chain_id).unwrap_or_default();
        events::progress(0);
        let tx = chain::transaction(p.chain_id, &p.tx_hash)?.ok_or_else(|| {
            not_found(format!(
                "chain {} knows no transaction {}; check the hash and the chain",
                p.chain_id, p.tx_hash
            ))
        })?;
        events::progress(1);
        let receipt = chain::tx_receipt(p.chain_id, &p.tx_hash)?;
        let name = |a: &str| a.parse::<Address>().ok().and_then(|a| b.name_of(a));
        let logs = receipt
            .as_ref()
            .map(|r| {
                r.logs
                    .iter()
                    .enumerate()
                    .map(|(index, l)| DecodedLog {
                        index,
                        address_name: name(&l.address),
                        address: l.address.clone(),
                        decoded: decode_event(l),
                        topics: l.topics.clone(),
                        data: format!("0x{}", hex(&l.data)),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Decoded {
            hash: tx.hash,
            block_number: tx.block_number,
            from: tx.sender,
            to_name: tx.to.as_deref().and_then(name),
            to: tx.to,
            value_wei: tx.value,
            nonce: tx.nonce,
            gas_limit: tx.gas_limit,
            call: decode_call(&tx.input),
            input: format!("0x{}", hex(&tx.input)),
            status: receipt.as_ref().map(|r| if r.success { "success" } else { "reverted" }),
            gas_used: receipt.as_ref().map(|r| r.gas_used),
            effective_gas_price_wei: receipt.map(|r| r.effective_gas_price),
            logs,
        })
    }
}
