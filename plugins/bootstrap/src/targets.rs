//! The operator's funding targets for a chain, from `[settings] bootstrap`.

use alloy_primitives::U256;
use bardo_sdk::erc20::Token;
use bardo_sdk::tokens::{Listed, resolve};
use bardo_sdk::units::parse_units;
use bardo_sdk::{ChainId, Error, settings};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Ether a wallet needs for gas when the operator set no `gas_floor`.
pub const DEFAULT_GAS_FLOOR: &str = "0.01";
/// Ether `bootstrap_fund_wallet` tops the wallet up to when no target names it.
pub const DEFAULT_FUND_ETH: &str = "10";

/// One chain's targets.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Targets {
    /// The tokens `fund` may name by symbol.
    #[serde(default)]
    pub tokens: Vec<Listed>,
    /// The least ether (in ETH) the wallet needs for gas.
    #[serde(default)]
    pub gas_floor: Option<String>,
    /// Balances to fund up to: `ETH` for ether, else a token symbol or address, in token units.
    #[serde(default)]
    pub fund: BTreeMap<String, String>,
}

/// The targets for `chain_id`, if the operator set any.
pub fn load(chain_id: ChainId) -> Result<Option<Targets>, Error> {
    settings::of_chain(chain_id)
}

/// Is `key` the native coin?
pub fn is_ether(key: &str) -> bool {
    key.trim().eq_ignore_ascii_case("eth")
}

impl Targets {
    /// The gas floor in wei.
    pub fn gas_floor(&self) -> Result<U256, Error> {
        parse_units("gas_floor", self.gas_floor.as_deref().unwrap_or(DEFAULT_GAS_FLOOR), 18)
    }

    /// The ether target in ETH, if set.
    pub fn ether(&self) -> Option<&str> {
        self.fund.iter().find(|(k, _)| is_ether(k)).map(|(_, v)| v.as_str())
    }

    /// Each token target, resolved: the token and its amount in base units.
    pub fn tokens(&self, chain_id: ChainId) -> Result<Vec<(Token, U256)>, Error> {
        let named: Vec<(&String, &String)> = self.fund.iter().filter(|(k, _)| !is_ether(k)).collect();
        named.into_iter().map(|(k, v)| self.token(chain_id, k, v)).collect()
    }

    /// `input` (symbol or address) resolved, with `amount` in its base units.
    pub fn token(&self, chain_id: ChainId, input: &str, amount: &str) -> Result<(Token, U256), Error> {
        let token = resolve(chain_id, "token", input, &self.tokens)?;
        let base = parse_units(&format!("fund.{input}"), amount, token.decimals)?;
        Ok((token, base))
    }
}
