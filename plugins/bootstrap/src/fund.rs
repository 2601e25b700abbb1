//! `bootstrap_fund_wallet`: top the wallet up to the operator's targets on a devnet.

use crate::targets::{self, DEFAULT_FUND_ETH};
use alloy_primitives::U256;
use bardo_sdk::abi::{ether_balance, wallet, wire};
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::units::{Amount, parse_units};
use bardo_sdk::{Category, ChainId, Error, ReadTool, RiskTier, ToolDef, chain, described, events, testnet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Params of `bootstrap_fund_wallet`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FundParams {
    /// A devnet's chain id.
    pub chain_id: ChainId,
    /// The ether balance to reach, in ETH; default: the `ETH` target in settings, else 10.
    #[serde(default)]
    pub eth: Option<String>,
    /// Token balances to reach, by symbol or address, in token units (`{"USDC": "10000"}`);
    /// default: the targets in settings.
    #[serde(default)]
    pub tokens: Option<BTreeMap<String, String>>,
}

#[derive(Serialize)]
struct Topped {
    /// The token; none for ether.
    token: Option<Token>,
    before: Amount,
    /// Read back after funding.
    after: Amount,
    /// False when the wallet already held at least the target (a balance is never lowered).
    funded: bool,
}

#[derive(Serialize)]
pub struct Funded {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    wallet: alloy_primitives::Address,
    block_number: u64,
    assets: Vec<Topped>,
}

pub struct FundWallet;

impl ReadTool for FundWallet {
    const NAME: &'static str = "bootstrap_fund_wallet";
    type Params = FundParams;
    type Output = Funded;

    fn def() -> ToolDef {
        ToolDef {
            // It changes a chain's state, though only a devnet's: never "none".
            risk_tier: RiskTier::Low,
            ..described::<FundParams>(
                Self::NAME,
                "Fund the host's wallet on a devnet: raise its ether and token balances to the operator's \
                 targets (or the amounts given) with the devnet's cheat codes; a balance already above its \
                 target is left as it is. Refused on any chain not marked `devnet = true`.",
                Category::Bootstrap,
                &["wallet", "ether", "tokens"],
            )
        }
    }

    fn run(p: FundParams) -> Result<Funded, Error> {
        let id = p.chain_id;
        let who = wallet(id)?;
        let t = targets::load(id)?.unwrap_or_default();
        let eth = p.eth.as_deref().or(t.ether()).unwrap_or(DEFAULT_FUND_ETH);
        let eth = parse_units("eth", eth, 18)?;
        // Every amount is checked before anything changes.
        let tokens = match &p.tokens {
            Some(given) => given.iter().map(|(k, v)| t.token(id, k, v)).collect::<Result<Vec<_>, _>>()?,
            None => t.tokens(id)?,
        };
        events::progress(0);
        let before = ether_balance(id, who, None)?;
        if before < eth {
            testnet::set_balance(id, &wire(&who), &eth.to_string())?;
        }
        let after = ether_balance(id, who, None)?;
        let mut assets = vec![topped(None, before, after, 18)];
        events::progress(1);
        for (token, target) in tokens {
            let before = erc20::balance_of(id, token.address, who)?;
            if before < target {
                testnet::deal(id, &wire(&token.address), &wire(&who), &target.to_string())?;
            }
            let after = erc20::balance_of(id, token.address, who)?;
            let decimals = token.decimals;
            assets.push(topped(Some(token), before, after, decimals));
        }
        Ok(Funded { wallet: who, block_number: chain::block_number(id)?, assets })
    }
}

fn topped(token: Option<Token>, before: U256, after: U256, decimals: u8) -> Topped {
    Topped {
        token,
        funded: after > before,
        before: Amount::of(before, decimals),
        after: Amount::of(after, decimals),
    }
}
