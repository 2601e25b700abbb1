//! `wallet_get_portfolio`: the wallet's balances on every chain its settings name, each valued
//! at that chain's operator-listed USD feeds, with a total. A token without a listed price, or
//! whose feed is stale, is reported unpriced and left out of the totals — never priced from a
//! pool, which anyone can move. A chain that cannot be read is reported, not dropped.

use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{account_or_wallet, ether_balance};
use bardo_sdk::errors::invalid_params;
use bardo_sdk::operator;
use bardo_sdk::units::{Amount, format_units};
use bardo_sdk::{Category, ChainId, Error, ReadTool, ToolDef, chain, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `wallet_get_portfolio`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortfolioParams {
    /// The chains to cover; default: every chain the operator's settings name.
    #[serde(default)]
    pub chain_ids: Option<Vec<ChainId>>,
    /// The account; default: the host's wallet (on each chain).
    #[serde(default)]
    pub account: Option<String>,
}

/// One holding, valued.
#[derive(Serialize)]
pub struct Holding {
    /// The listed symbol (`ETH` for the native coin).
    symbol: String,
    /// The token's contract; none for the native coin.
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    #[serde(flatten)]
    balance: Amount,
    /// Dollars per token, from the listed feed (or 1 for a dollar token); none when unpriced.
    usd_price: Option<f64>,
    /// `amount × usd_price`, dollars; none when unpriced.
    usd_value: Option<f64>,
    /// Why it has no price.
    #[serde(skip_serializing_if = "Option::is_none")]
    unpriced: Option<String>,
}

/// One chain's holdings.
#[derive(Serialize)]
pub struct ChainHoldings {
    chain_id: ChainId,
    block_number: u64,
    /// The priced holdings' sum, dollars.
    total_usd: f64,
    /// Every non-zero balance (ether and the listed tokens).
    holdings: Vec<Holding>,
}

/// A chain that could not be read.
#[derive(Serialize)]
pub struct ChainFailure {
    chain_id: ChainId,
    error: String,
}

#[derive(Serialize)]
pub struct Portfolio {
    /// The account, when one was named (else each chain's wallet).
    #[serde(skip_serializing_if = "Option::is_none")]
    account: Option<String>,
    /// Every chain's priced holdings, dollars.
    total_usd: f64,
    /// Whether every chain was read and every non-zero holding priced (else the total is short).
    complete: bool,
    chains: Vec<ChainHoldings>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    failed: Vec<ChainFailure>,
}

pub struct GetPortfolio;

impl ReadTool for GetPortfolio {
    const NAME: &'static str = "wallet_get_portfolio";
    type Params = PortfolioParams;
    type Output = Portfolio;

    fn def() -> ToolDef {
        super::read::def::<PortfolioParams>(
            Self::NAME,
            "The wallet's (or `account`'s) non-zero balances on every configured chain (or `chain_ids`), \
             each valued at that chain's operator-listed USD price feeds, with per-chain and overall USD \
             totals. Unpriced tokens and unreadable chains are listed, not guessed. Reads only.",
            Category::Data,
            &["read native balance", "read token balances", "read price feeds"],
        )
    }

    fn run(p: PortfolioParams) -> Result<Portfolio, Error> {
        let chains = match p.chain_ids {
            Some(ids) if ids.is_empty() => {
                return Err(invalid_params("`chain_ids` is empty; omit it for every chain"));
            }
            Some(ids) => ids,
            None => operator::chains()?,
        };
        if chains.is_empty() {
            return Err(invalid_params(
                "no chains in this plugin's `[settings]` (chains.<id>: tokens, prices); name `chain_ids` or configure one",
            ));
        }
        let (mut out, mut failed) = (Vec::new(), Vec::new());
        for (i, chain_id) in chains.iter().copied().enumerate() {
            events::progress((i * 100 / chains.len()) as u32);
            // One chain's failing node or missing settings is that chain's answer, not the whole.
            match holdings(chain_id, p.account.as_deref()) {
                Ok(h) => out.push(h),
                Err(e) => failed.push(ChainFailure { chain_id, error: e.message }),
            }
        }
        let total_usd = out.iter().map(|c| c.total_usd).sum();
        let priced = out.iter().all(|c| c.holdings.iter().all(|h| h.usd_value.is_some()));
        Ok(Portfolio {
            account: p.account,
            total_usd,
            complete: failed.is_empty() && priced,
            chains: out,
            failed,
        })
    }
}

fn holdings(chain_id: ChainId, account: Option<&str>) -> Result<ChainHoldings, Error> {
    let book = operator::book(chain_id)?;
    let account = account_or_wallet(chain_id, account, "account")?;
    let block_number = chain::block_number(chain_id)?;
    let now = chain::block_timestamp(chain_id, Some(block_number))?;
    let mut holdings = Vec::new();
    let ether = ether_balance(chain_id, account, Some(block_number))?;
    if !ether.is_zero() {
        // Ether is priced as wrapped ether.
        let price = book.prices.usd(chain_id, "ETH", now).or_else(|_| book.prices.usd(chain_id, "WETH", now));
        holdings.push(valued("ETH".into(), None, ether, 18, price));
    }
    for listed in &book.tokens {
        let token = bardo_sdk::erc20::token(chain_id, listed.address)?;
        let balance = super::read::balance_at(chain_id, token.address, account, block_number)?;
        if balance.is_zero() {
            continue;
        }
        let price = book.prices.usd(chain_id, &listed.symbol, now);
        holdings.push(valued(listed.symbol.clone(), Some(token.address), balance, token.decimals, price));
    }
    let total_usd = holdings.iter().filter_map(|h| h.usd_value).sum();
    Ok(ChainHoldings { chain_id, block_number, total_usd, holdings })
}

fn valued(
    symbol: String,
    address: Option<Address>,
    balance: U256,
    decimals: u8,
    price: Result<f64, String>,
) -> Holding {
    let amount: f64 = format_units(balance, decimals).parse().unwrap_or(0.0);
    let (usd_price, unpriced) = match price {
        Ok(p) => (Some(p), None),
        Err(why) => (None, Some(why)),
    };
    Holding {
        symbol,
        address: address.map(|a| a.to_checksum(None)),
        balance: Amount::of(balance, decimals),
        usd_price,
        usd_value: usd_price.map(|p| (amount * p * 100.0).round() / 100.0),
        unpriced,
    }
}
