//! What the operator tells a wallet-facing plugin (wallet, safety) per chain, in its settings:
//! `{"chains": {"31337": {"tokens": [{"symbol", "address"}], "weth": "0x…", "v2_router": "0x…",
//! "allowlist": {"0x…": "uniswap-v3-swap-router"}, "vaults": [{"symbol", "address"}]}}}`. The allowlist is the host's write
//! allowlist as the operator gave it to the plugin: it only labels spenders and recipients in
//! answers and fails a plan early; the host's own allowlist decides what a plan may do.

use crate::erc20::Token;
use crate::errors::{chain_not_supported, invalid_params};
use crate::tokens::{self, Listed};
use crate::{ChainId, Error, settings};
use alloy_primitives::Address;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    #[serde(default)]
    chains: BTreeMap<String, Book>,
}

/// One chain's token list, WETH and allowlist.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Book {
    /// The tokens balances are read for and symbols resolve through.
    #[serde(default)]
    pub tokens: Vec<Listed>,
    /// Wrapped ether (for wrap / unwrap).
    #[serde(default)]
    pub weth: Option<Address>,
    /// Allowlisted contracts and accounts with their roles (`recipient` for transfer targets).
    #[serde(default)]
    pub allowlist: BTreeMap<Address, String>,
    /// A Uniswap V2 Router02 (for simulated round trips through the token's WETH pair).
    #[serde(default)]
    pub v2_router: Option<Address>,
    /// ERC-4626 vaults by the symbol params may name them by (for the vault plugin).
    #[serde(default)]
    pub vaults: Vec<Listed>,
    /// Where this chain's USD prices are (for the wallet's portfolio).
    #[serde(default)]
    pub prices: Prices,
}

/// The operator's USD prices on one chain: Chainlink-style feeds by token symbol (those the
/// host's `[safety]` pricing trusts; `WETH`'s prices ether too) and the dollar tokens, each worth
/// one dollar. A token in neither is reported unpriced, never guessed from a pool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// USD feeds (`latestRoundData`, `decimals`) by token symbol.
    #[serde(default)]
    pub feeds: BTreeMap<String, Address>,
    /// Symbols of tokens worth one dollar (`USDC`).
    #[serde(default)]
    pub usd_tokens: Vec<String>,
    /// The oldest a feed's answer may be to price anything, seconds.
    #[serde(default = "default_max_feed_age")]
    pub max_feed_age_secs: u64,
}

impl Default for Prices {
    fn default() -> Self {
        Self { feeds: BTreeMap::new(), usd_tokens: Vec::new(), max_feed_age_secs: default_max_feed_age() }
    }
}

fn default_max_feed_age() -> u64 {
    3600
}

alloy_sol_types::sol! {
    function latestRoundData() external view returns (uint80 roundId, int256 answer, uint256 startedAt,
        uint256 updatedAt, uint80 answeredInRound);
    function decimals() external view returns (uint8);
}

impl Prices {
    /// Dollars per `symbol` on `chain_id` at block time `now`: 1 for a dollar token, its listed
    /// feed's answer otherwise — or why not (no feed listed, unreadable, older than
    /// `max_feed_age_secs`, not positive). Never a guess from a pool.
    pub fn usd(&self, chain_id: ChainId, symbol: &str, now: u64) -> Result<f64, String> {
        use crate::abi::eth_call;
        if self.usd_tokens.iter().any(|s| s == symbol) {
            return Ok(1.0);
        }
        let feed = *self
            .feeds
            .get(symbol)
            .ok_or_else(|| format!("no USD feed listed for {symbol} on chain {chain_id}"))?;
        let read = |e: Error| format!("its feed {feed} could not be read: {}", e.message);
        let round = eth_call(chain_id, feed, &latestRoundDataCall {}).map_err(read)?;
        let decimals = eth_call(chain_id, feed, &decimalsCall {}).map_err(read)?;
        let age = now.saturating_sub(round.updatedAt.saturating_to::<u64>());
        if age > self.max_feed_age_secs {
            return Err(format!(
                "its feed {feed} answered {age} s ago, older than {} s (prices.max_feed_age_secs)",
                self.max_feed_age_secs
            ));
        }
        if round.answer <= alloy_primitives::I256::ZERO {
            return Err(format!("its feed {feed} answers {} (not a price)", round.answer));
        }
        let answer: f64 = round.answer.to_string().parse().unwrap_or(0.0);
        Ok(answer / 10f64.powi(i32::from(decimals)))
    }
}

/// The chains this plugin's settings give a book, in chain-id order: what "every configured
/// chain" means to a plugin.
pub fn chains() -> Result<Vec<ChainId>, Error> {
    let s: Settings = settings::load()?;
    s.chains
        .keys()
        .map(|k| {
            k.parse::<ChainId>().map_err(|_| {
                crate::errors::error(
                    crate::ErrorCode::Denied,
                    format!("`chains.{k}` in this plugin's settings is not a chain id; fix `[settings]`"),
                )
            })
        })
        .collect::<Result<std::collections::BTreeSet<_>, _>>()
        .map(|ids| ids.into_iter().collect())
}

/// The book of `chain_id`: from this plugin's settings, else mainnet's token list, WETH and
/// V2 router.
pub fn book(chain_id: ChainId) -> Result<Book, Error> {
    let s: Settings = settings::load()?;
    if let Some(b) = s.chains.get(&chain_id.to_string()) {
        return Ok(b.clone());
    }
    if chain_id == 1 {
        let tokens = tokens::mainnet();
        let weth = tokens.iter().find(|t| t.symbol == "WETH").map(|t| t.address);
        let v2_router = Some(alloy_primitives::address!("0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D"));
        let (allowlist, vaults, prices) = (BTreeMap::new(), Vec::new(), Prices::default());
        return Ok(Book { tokens, weth, allowlist, v2_router, vaults, prices });
    }
    Err(chain_not_supported(format!(
        "no settings for chain {chain_id} in this plugin's `[settings]` (chains.{chain_id}: tokens, weth, allowlist)"
    )))
}

impl Book {
    /// Resolve a token param (symbol or address).
    pub fn token(&self, chain_id: ChainId, field: &str, input: &str) -> Result<Token, Error> {
        tokens::resolve(chain_id, field, input, &self.tokens)
    }

    /// The role `who` is allowlisted with, if any.
    pub fn role(&self, who: Address) -> Option<&str> {
        self.allowlist.get(&who).map(String::as_str)
    }

    /// `Denied` unless `who` is allowlisted (with `role`, when given): the host would refuse a
    /// plan naming it, so the plan fails early and says what the operator would add.
    pub fn require_listed(&self, who: Address, role: Option<&str>) -> Result<(), Error> {
        match (self.role(who), role) {
            (Some(r), Some(want)) if r == want => Ok(()),
            (Some(_), None) => Ok(()),
            _ => Err(crate::errors::error(
                crate::ErrorCode::Denied,
                format!(
                    "{who} is not allowlisted{} for this wallet, so the host would refuse the plan; \
                     the operator adds it to [safety] allowlist{}",
                    role.map(|r| format!(" as a `{r}`")).unwrap_or_default(),
                    role.map(|r| format!(" with role `{r}`")).unwrap_or_default(),
                ),
            )),
        }
    }

    /// WETH, or a typed error saying where to configure it.
    pub fn weth(&self, chain_id: ChainId) -> Result<Address, Error> {
        self.weth.ok_or_else(|| {
            invalid_params(format!("no `weth` for chain {chain_id} in this plugin's `[settings]`"))
        })
    }

    /// A name for `who` from the token list and the allowlist, for decoded answers.
    pub fn name_of(&self, who: Address) -> Option<String> {
        if let Some(t) = self.tokens.iter().find(|t| t.address == who) {
            return Some(t.symbol.clone());
        }
        self.role(who).map(str::to_owned)
    }
}
