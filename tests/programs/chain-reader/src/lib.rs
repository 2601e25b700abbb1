//! Reads the chain through every `bardo:host/chain` function, so tests can compare each answer
//! with a direct RPC call.

use bardo_sdk::abi::{self, Address, U256, eth_call, sol};
use bardo_sdk::{Category, Error, LogFilter, ReadTool, ToolDef, chain, tool_def};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

sol! {
    function balanceOf(address account) external view returns (uint256);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// An account on a token.
#[derive(Deserialize, JsonSchema)]
struct TokenAccount {
    chain_id: u64,
    token: String,
    account: String,
}

#[derive(Serialize)]
struct Snapshot {
    block_number: u64,
    block_timestamp: u64,
    token_balance: String,
    native_balance: String,
    code_size: usize,
    slot0: String,
    transfer_logs: usize,
    last_transfer_tx: Option<String>,
    last_receipt_gas: Option<u64>,
}

struct Read;
impl ReadTool for Read {
    const NAME: &'static str = "reader_snapshot";
    type Params = TokenAccount;
    type Output = Snapshot;
    fn def() -> ToolDef {
        tool_def::<TokenAccount>(
            Self::NAME,
            "Reads a token account through every chain function.",
            Category::Testnet,
        )
    }
    fn run(p: TokenAccount) -> Result<Snapshot, Error> {
        let token = abi::parse_address("token", &p.token)?;
        let account = abi::parse_address("account", &p.account)?;
        let balance: U256 = eth_call(p.chain_id, token, &balanceOfCall { account })?;
        let block_number = chain::block_number(p.chain_id)?;
        let transfer_topic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef".to_owned();
        let logs = chain::logs(&LogFilter {
            chain_id: p.chain_id,
            addresses: vec![p.token.clone()],
            topics: vec![vec![transfer_topic]],
            from_block: Some(0),
            to_block: Some(block_number),
        })?;
        let last_transfer_tx = logs.last().and_then(|l| l.tx_hash.clone());
        let last_receipt_gas = match &last_transfer_tx {
            Some(tx) => chain::tx_receipt(p.chain_id, tx)?.map(|r| r.gas_used),
            None => None,
        };
        Ok(Snapshot {
            block_number,
            block_timestamp: chain::block_timestamp(p.chain_id, None)?,
            token_balance: balance.to_string(),
            native_balance: chain::balance(p.chain_id, &p.account, None)?,
            code_size: chain::code(p.chain_id, &p.token)?.len(),
            slot0: chain::storage_at(p.chain_id, &p.token, &format!("0x{:064x}", 0))?,
            transfer_logs: logs.len(),
            last_transfer_tx,
            last_receipt_gas,
        })
    }
}

/// A transferFrom without allowance: reverts.
struct Revert;
impl ReadTool for Revert {
    const NAME: &'static str = "reader_revert";
    type Params = TokenAccount;
    type Output = bool;
    fn def() -> ToolDef {
        tool_def::<TokenAccount>(Self::NAME, "Calls transferFrom without allowance.", Category::Testnet)
    }
    fn run(p: TokenAccount) -> Result<bool, Error> {
        let token = abi::parse_address("token", &p.token)?;
        let from = abi::parse_address("account", &p.account)?;
        let call = transferFromCall { from, to: Address::ZERO, amount: U256::from(1) };
        eth_call(p.chain_id, token, &call)
    }
}

bardo_sdk::plugin! { name: "chain-reader", read: [Read, Revert] }
