//! The read tools: balances, one token's balance, an allowance, the wallet's open approvals,
//! the fee market and its history.

use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{account_or_wallet, ether_balance};
use bardo_sdk::approvals::{Approvals, ApprovalsParams, scan, unlimited};
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::internal;
use bardo_sdk::operator::book;
use bardo_sdk::tokens::parse_address;
use bardo_sdk::units::{Amount, format_units};
use bardo_sdk::{Category, ChainId, ChainParams, Error, ReadTool, TickBudget, ToolDef, chain, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) use bardo_sdk::described as def;

/// Params naming a chain and, optionally, an account.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The account; default: the host's wallet.
    #[serde(default)]
    pub account: Option<String>,
}

#[derive(Serialize)]
pub struct TokenBalance {
    token: Token,
    #[serde(flatten)]
    balance: Amount,
}

#[derive(Serialize)]
pub struct Balances {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    account: Address,
    block_number: u64,
    /// Ether (the native coin).
    native: Amount,
    /// Every token on the operator's list, zero balances included.
    tokens: Vec<TokenBalance>,
}

pub struct GetBalances;

impl ReadTool for GetBalances {
    const NAME: &'static str = "wallet_get_balances";
    type Params = AccountParams;
    type Output = Balances;

    fn def() -> ToolDef {
        def::<AccountParams>(
            Self::NAME,
            "Native and token balances of the wallet (or `account`) over the operator's token list, \
             in token units and base units, at one block. Reads only.",
            Category::Data,
            &["read native balance", "read token balances"],
        )
    }

    fn run(p: AccountParams) -> Result<Balances, Error> {
        let b = book(p.chain_id)?;
        let account = account_or_wallet(p.chain_id, p.account.as_deref(), "account")?;
        events::progress(0);
        let block_number = chain::block_number(p.chain_id)?;
        let native = ether_balance(p.chain_id, account, Some(block_number))?;
        events::progress(1);
        let mut tokens = Vec::new();
        for listed in &b.tokens {
            let token = erc20::token(p.chain_id, listed.address)?;
            let balance = balance_at(p.chain_id, token.address, account, block_number)?;
            tokens.push(TokenBalance { balance: Amount::of(balance, token.decimals), token });
        }
        Ok(Balances { account, block_number, native: Amount::of(native, 18), tokens })
    }
}

pub(crate) fn balance_at(
    chain_id: ChainId,
    token: Address,
    owner: Address,
    block: u64,
) -> Result<U256, Error> {
    let call = erc20::balanceOfCall { account: owner };
    let out = chain::call(&bardo_sdk::abi::tx_call(chain_id, token, &call), Some(block))?;
    <erc20::balanceOfCall as alloy_sol_types::SolCall>::abi_decode_returns(&out)
        .map_err(|e| internal(format!("balanceOf of {token} returned an undecodable answer: {e}")))
}

/// Params of `wallet_get_token_balance`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenBalanceParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The token: a listed symbol (`USDC`), an address, or `ETH` for the native coin.
    pub token: String,
    /// The account; default: the host's wallet.
    #[serde(default)]
    pub account: Option<String>,
}

#[derive(Serialize)]
pub struct OneBalance {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    account: Address,
    /// The token; none for the native coin.
    token: Option<Token>,
    #[serde(flatten)]
    balance: Amount,
}

pub struct GetTokenBalance;

impl ReadTool for GetTokenBalance {
    const NAME: &'static str = "wallet_get_token_balance";
    type Params = TokenBalanceParams;
    type Output = OneBalance;

    fn def() -> ToolDef {
        def::<TokenBalanceParams>(
            Self::NAME,
            "One balance of the wallet (or `account`): a token by symbol or address, or `ETH`. Reads only.",
            Category::Data,
            &["read balance"],
        )
    }

    fn run(p: TokenBalanceParams) -> Result<OneBalance, Error> {
        let account = account_or_wallet(p.chain_id, p.account.as_deref(), "account")?;
        if p.token.trim().eq_ignore_ascii_case("eth") {
            let wei = ether_balance(p.chain_id, account, None)?;
            return Ok(OneBalance { account, token: None, balance: Amount::of(wei, 18) });
        }
        let token = book(p.chain_id)?.token(p.chain_id, "token", &p.token)?;
        let balance = erc20::balance_of(p.chain_id, token.address, account)?;
        Ok(OneBalance { account, balance: Amount::of(balance, token.decimals), token: Some(token) })
    }
}

/// Params of `erc20_get_allowance`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AllowanceParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The token: a listed symbol or an address.
    pub token: String,
    /// Who may spend.
    pub spender: String,
    /// Whose tokens; default: the host's wallet.
    #[serde(default)]
    pub owner: Option<String>,
}

#[derive(Serialize)]
pub struct Allowance {
    token: Token,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    owner: Address,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    spender: Address,
    #[serde(flatten)]
    allowance: Amount,
    /// 2^128 base units or more: unlimited in practice.
    unlimited: bool,
    /// The spender's role on the operator's allowlist, if it is on it.
    allowlisted: Option<String>,
}

pub struct GetAllowance;

impl ReadTool for GetAllowance {
    const NAME: &'static str = "erc20_get_allowance";
    type Params = AllowanceParams;
    type Output = Allowance;

    fn def() -> ToolDef {
        def::<AllowanceParams>(
            Self::NAME,
            "What `spender` may move of `owner`'s (default: the wallet's) `token` (ERC-20 `allowance`), \
             whether that is unlimited, and whether the spender is on the operator's allowlist. Reads only.",
            Category::Data,
            &["read allowance"],
        )
    }

    fn run(p: AllowanceParams) -> Result<Allowance, Error> {
        let b = book(p.chain_id)?;
        let token = b.token(p.chain_id, "token", &p.token)?;
        let owner = account_or_wallet(p.chain_id, p.owner.as_deref(), "owner")?;
        let spender = parse_address("spender", &p.spender)?;
        let v = erc20::allowance(p.chain_id, token.address, owner, spender)?;
        Ok(Allowance {
            allowance: Amount::of(v, token.decimals),
            unlimited: unlimited(v),
            allowlisted: b.role(spender).map(str::to_owned),
            token,
            owner,
            spender,
        })
    }
}

pub struct GetApprovals;

impl ReadTool for GetApprovals {
    const NAME: &'static str = "wallet_get_approvals";
    type Params = ApprovalsParams;
    type Output = Approvals;

    fn def() -> ToolDef {
        ToolDef {
            tick_budget: TickBudget::Medium,
            ..def::<ApprovalsParams>(
                Self::NAME,
                "The wallet's (or `account`'s) open ERC-20 approvals, found from its Approval logs over a \
                 block range and each re-read now: token, spender, remaining allowance, whether it is \
                 unlimited, whether the spender is allowlisted and holds code. Reads only; revoke with \
                 wallet_revoke_approval.",
                Category::Data,
                &["scan approval logs", "read allowances"],
            )
        }
    }

    fn run(p: ApprovalsParams) -> Result<Approvals, Error> {
        scan(&p).map(|(_, found)| found)
    }
}

#[derive(Serialize)]
pub struct GasPrice {
    /// `eth_gasPrice`, wei and gwei.
    gas_price_wei: String,
    gas_price_gwei: String,
    /// The latest block's base fee, wei (none before EIP-1559).
    base_fee_wei: Option<String>,
    /// The node's suggested priority fee, wei.
    priority_fee_wei: Option<String>,
}

pub struct GetGasPrice;

impl ReadTool for GetGasPrice {
    const NAME: &'static str = "wallet_get_gas_price";
    type Params = ChainParams;
    type Output = GasPrice;

    fn def() -> ToolDef {
        def::<ChainParams>(
            Self::NAME,
            "The fee market now: gas price, the latest base fee and the node's suggested priority fee \
             (wei; gas price also in gwei). Reads only.",
            Category::Data,
            &["read fees"],
        )
    }

    fn run(p: ChainParams) -> Result<GasPrice, Error> {
        let m = chain::gas_price(p.chain_id)?;
        let wei: U256 = m.gas_price.parse().map_err(|_| internal("the host's gas price does not parse"))?;
        Ok(GasPrice {
            gas_price_gwei: format_units(wei, 9),
            gas_price_wei: m.gas_price,
            base_fee_wei: m.base_fee,
            priority_fee_wei: m.priority_fee,
        })
    }
}

/// Params of `wallet_get_fee_history`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeeHistoryParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// How many recent blocks, 1 to 1024 (default 20).
    #[serde(default)]
    pub blocks: Option<u32>,
    /// Priority-fee percentiles to report, 0 to 100 ascending (default `[10, 50, 90]`).
    #[serde(default)]
    pub percentiles: Option<Vec<f64>>,
}

#[derive(Serialize)]
pub struct FeeBlock {
    block_number: u64,
    base_fee_wei: String,
    gas_used_ratio: f64,
    /// The priority fee paid at each requested percentile, wei.
    priority_fees_wei: Vec<String>,
}

#[derive(Serialize)]
pub struct FeeHistory {
    percentiles: Vec<f64>,
    blocks: Vec<FeeBlock>,
    /// The next block's base fee, wei.
    next_base_fee_wei: Option<String>,
}

pub struct GetFeeHistory;

impl ReadTool for GetFeeHistory {
    const NAME: &'static str = "wallet_get_fee_history";
    type Params = FeeHistoryParams;
    type Output = FeeHistory;

    fn def() -> ToolDef {
        def::<FeeHistoryParams>(
            Self::NAME,
            "Base fees, gas-used ratios and priority-fee percentiles of the last blocks (eth_feeHistory), \
             oldest first, with the next block's base fee. Reads only.",
            Category::Data,
            &["read fee history"],
        )
    }

    fn run(p: FeeHistoryParams) -> Result<FeeHistory, Error> {
        let percentiles = p.percentiles.unwrap_or_else(|| vec![10.0, 50.0, 90.0]);
        let h = chain::fee_history(p.chain_id, p.blocks.unwrap_or(20), &percentiles)?;
        let blocks = h
            .gas_used_ratios
            .iter()
            .enumerate()
            .map(|(i, ratio)| FeeBlock {
                block_number: h.oldest_block + i as u64,
                base_fee_wei: h.base_fees.get(i).cloned().unwrap_or_default(),
                gas_used_ratio: *ratio,
                priority_fees_wei: h.rewards.get(i).cloned().unwrap_or_default(),
            })
            .collect::<Vec<_>>();
        let next_base_fee_wei = h.base_fees.get(blocks.len()).cloned();
        Ok(FeeHistory { percentiles, blocks, next_base_fee_wei })
    }
}
