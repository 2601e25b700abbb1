//! Token amounts in US dollars, from on-chain pool prices (the `data_get_token_price` tool) and
//! the token's own `decimals()`; balances from `balanceOf`. Used by the hooks that limit money.

use crate::plugin::Host;
use crate::services::Services;
use alloy::primitives::{Address, U256};
use alloy::sol_types::SolCall;
use std::sync::{Arc, Weak};
use std::time::Duration;

alloy::sol! {
    function decimals() external view returns (uint8);
    function balanceOf(address owner) external view returns (uint256);
}

/// Micro-dollars (1e-6 USD): integer money, no floats.
pub type MicroUsd = u128;

/// Values tokens through a host's price tool and its chains.
#[derive(Clone)]
pub struct Valuer {
    host: Weak<Host>,
    services: Arc<Services>,
}

impl std::fmt::Debug for Valuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Valuer")
    }
}

impl Valuer {
    /// A valuer calling `host`'s `data_get_token_price` and reading tokens through `services`.
    pub fn new(host: &Arc<Host>, services: &Arc<Services>) -> Self {
        Self { host: Arc::downgrade(host), services: services.clone() }
    }

    fn host(&self) -> Result<Arc<Host>, String> {
        self.host.upgrade().ok_or_else(|| "the host is gone".to_owned())
    }

    /// One `eth_call` to `token`, decoded.
    fn read<C: SolCall>(&self, chain: u64, token: Address, call: C) -> Result<C::Return, String> {
        let chains = &self.services.chains;
        let client = chains.get(chain).map_err(|e| e.to_string())?;
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let raw = chains
            .block_on(client.call(token, call.abi_encode().into(), U256::ZERO, None, deadline))
            .map_err(|e| format!("reading {} of {token}: {e}", C::SIGNATURE))?;
        C::abi_decode_returns(&raw).map_err(|e| format!("{} of {token}: {e}", C::SIGNATURE))
    }

    /// `owner`'s balance of `token`.
    pub fn balance(&self, chain: u64, token: Address, owner: Address) -> Result<U256, String> {
        self.read(chain, token, balanceOfCall { owner })
    }

    /// `amount` base units of `token` in USD; a token without a price is an error, never zero.
    pub fn usd(&self, chain: u64, token: Address, amount: U256) -> Result<MicroUsd, String> {
        let host = self.host()?;
        let decimals = self.read(chain, token, decimalsCall {})?;
        let params = serde_json::json!({"chain_id": chain, "token": token.to_checksum(None)});
        let answer = host.call("data_get_token_price", &params.to_string()).result.map_err(|e| {
            format!(
                "cannot value {token} in USD ({}); a write that cannot be valued is not allowed",
                e.message
            )
        })?;
        let price: serde_json::Value = serde_json::from_str(&answer).map_err(|e| e.to_string())?;
        let price = price["price"].as_str().ok_or("the price tool answered without a price")?;
        let micro_price = parse_micro(price).ok_or_else(|| format!("price {price:?} is not a decimal"))?;
        let usd = amount.saturating_mul(U256::from(micro_price)) / U256::from(10u8).pow(U256::from(decimals));
        Ok(u128::try_from(usd).unwrap_or(u128::MAX))
    }
}

/// "1999.123456789" → 1_999_123_456 micro (truncated).
pub fn parse_micro(text: &str) -> Option<u128> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let frac: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
    Some(whole.parse::<u128>().ok()?.checked_mul(1_000_000)? + frac.parse::<u128>().ok()?)
}

/// `$1234.56`.
pub fn usd(m: MicroUsd) -> String {
    format!("${}.{:02}", m / 1_000_000, (m % 1_000_000) / 10_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_parse_to_micro_dollars() {
        assert_eq!(parse_micro("1999.999999744536"), Some(1_999_999_999));
        assert_eq!(parse_micro("1"), Some(1_000_000));
        assert_eq!(parse_micro("0.0005"), Some(500));
        assert_eq!(parse_micro("x"), None);
        assert_eq!(usd(1_234_560_000), "$1234.56");
    }
}
