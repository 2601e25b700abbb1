//! Token params: an address (checked to hold code) or a symbol resolved through the operator's
//! token list for that chain — never through the token's own on-chain `symbol()`, which anyone
//! can set to anything.

use crate::erc20::{Token, token};
use crate::errors::{invalid_params, not_found};
use crate::{ChainId, Error};
use alloy_primitives::{Address, address};
use serde::Deserialize;

/// One entry of a token list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct Listed {
    /// The symbol params may name it by (matched case-insensitively).
    pub symbol: String,
    /// Its contract on the list's chain.
    #[serde(serialize_with = "crate::abi::checksummed")]
    pub address: Address,
}

pub use crate::abi::parse_address;

/// Resolve `input` (an address or a symbol) to a token on `chain_id`, reading its decimals and
/// symbol on chain. `list` is the configured token list for that chain.
pub fn resolve(chain_id: ChainId, field: &str, input: &str, list: &[Listed]) -> Result<Token, Error> {
    token(chain_id, lookup(chain_id, field, input, ("token", list))?)
}

/// The address `input` names: an address as given, or a symbol of `list`, the operator's list
/// of `what` (`token`, `vault`) for `chain_id`. Reads nothing from the chain.
pub fn lookup(
    chain_id: ChainId,
    field: &str,
    input: &str,
    (what, list): (&str, &[Listed]),
) -> Result<Address, Error> {
    let input = input.trim();
    if input.starts_with("0x") || input.starts_with("0X") {
        return parse_address(field, input);
    }
    let matches: Vec<&Listed> = list.iter().filter(|t| t.symbol.eq_ignore_ascii_case(input)).collect();
    match matches.as_slice() {
        [one] => Ok(one.address),
        [] => {
            let known: Vec<&str> = list.iter().map(|t| t.symbol.as_str()).collect();
            Err(not_found(format!(
                "`{field}`: no {what} {input:?} in the {what} list for chain {chain_id} (known: {}); pass the {what}'s address instead",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            )))
        }
        many => {
            let candidates: Vec<String> =
                many.iter().map(|t| format!("{} {}", t.symbol, t.address)).collect();
            Err(invalid_params(format!(
                "`{field}`: the symbol {input:?} is ambiguous on chain {chain_id}: {}; pass the address of the one you mean",
                candidates.join(", ")
            )))
        }
    }
}

/// Ethereum mainnet's major tokens, the default token list of chain 1.
pub fn mainnet() -> Vec<Listed> {
    let t = |symbol: &str, address| Listed { symbol: symbol.into(), address };
    vec![
        t("WETH", address!("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2")),
        t("USDC", address!("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")),
        t("USDT", address!("0xdAC17F958D2ee523a2206206994597C13D831ec7")),
        t("DAI", address!("0x6B175474E89094C44Da98b954EedeAC495271d0F")),
        t("WBTC", address!("0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599")),
    ]
}
