//! ERC-20 reads and calls every DeFi plugin needs: metadata read on chain (never trusted from
//! params), balances, allowances, and exact approvals.

use crate::abi::{eth_call, tx_call};
use crate::errors::{error, invalid_params};
use crate::{ChainId, Error, ErrorCode, PlannedCall, chain};
use alloy_primitives::{Address, U256};
use serde::Serialize;

alloy_sol_types::sol! {
    function symbol() external view returns (string);
    function name() external view returns (string);
    function decimals() external view returns (uint8);
    function totalSupply() external view returns (uint256);
    function balanceOf(address account) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
    /// ERC-20 `approve`, as `approveCall { spender, amount }` for [`tx_call`](crate::abi::tx_call).
    /// A plan rarely needs it raw: [`approval_if_short`] approves exactly what it spends, only
    /// when the allowance is short. Either way the plan's expected outcome declares what it leaves
    /// approved with [`Authority::erc20`] — the host refuses an approval it does not declare — and
    /// the tool that only approves declares `RiskTier::Low` (docs/plugin-authors.md, "Approvals").
    function approve(address spender, uint256 amount) external returns (bool);
    event Transfer(address indexed from, address indexed to, uint256 value);
}

/// A token as the chain describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Token {
    /// Checksummed address.
    #[serde(serialize_with = "crate::abi::checksummed")]
    pub address: Address,
    /// Its `symbol()`, read on chain.
    pub symbol: String,
    /// Its `decimals()`, read on chain.
    pub decimals: u8,
}

/// Read `address`'s symbol and decimals; an account without code is `invalid-params`.
pub fn token(chain_id: ChainId, address: Address) -> Result<Token, Error> {
    require_code(chain_id, address, "token")?;
    let decimals = eth_call(chain_id, address, &decimalsCall {})?;
    let symbol = eth_call(chain_id, address, &symbolCall {})?;
    Ok(Token { address, symbol, decimals })
}

/// Refuse an address that holds no contract (a typo, a wallet, another chain's address).
pub fn require_code(chain_id: ChainId, address: Address, what: &str) -> Result<(), Error> {
    if chain::code(chain_id, &crate::abi::wire(&address))?.is_empty() {
        return Err(invalid_params(format!(
            "{what} {address} has no contract code on chain {chain_id}; check the address and the chain"
        )));
    }
    Ok(())
}

/// The token's full name.
pub fn name(chain_id: ChainId, token: Address) -> Result<String, Error> {
    eth_call(chain_id, token, &nameCall {})
}

/// Total supply in base units.
pub fn total_supply(chain_id: ChainId, token: Address) -> Result<U256, Error> {
    eth_call(chain_id, token, &totalSupplyCall {})
}

/// `owner`'s balance in base units.
pub fn balance_of(chain_id: ChainId, token: Address, owner: Address) -> Result<U256, Error> {
    eth_call(chain_id, token, &balanceOfCall { account: owner })
}

/// What `spender` may move from `owner`.
pub fn allowance(chain_id: ChainId, token: Address, owner: Address, spender: Address) -> Result<U256, Error> {
    eth_call(chain_id, token, &allowanceCall { owner, spender })
}

/// An approval of exactly `amount` to `spender`, or none when the allowance already covers it.
/// Never unlimited: a plugin asks only for what the plan spends.
pub fn approval_if_short(
    chain_id: ChainId,
    token: &Token,
    owner: Address,
    spender: Address,
    amount: U256,
    spender_name: &str,
) -> Result<Option<PlannedCall>, Error> {
    if allowance(chain_id, token.address, owner, spender)? >= amount {
        return Ok(None);
    }
    Ok(Some(PlannedCall {
        call: tx_call(chain_id, token.address, &approveCall { spender, amount }),
        description: format!(
            "approve {} {} to {spender_name}",
            crate::units::format_units(amount, token.decimals),
            token.symbol
        ),
    }))
}

/// Refuse a spend above `owner`'s balance, saying how much there is.
pub fn require_balance(chain_id: ChainId, token: &Token, owner: Address, amount: U256) -> Result<(), Error> {
    let balance = balance_of(chain_id, token.address, owner)?;
    if balance < amount {
        return Err(error(
            ErrorCode::InvalidParams,
            format!(
                "the wallet holds {} {} but this needs {}; lower the amount",
                crate::units::format_units(balance, token.decimals),
                token.symbol,
                crate::units::format_units(amount, token.decimals)
            ),
        ));
    }
    Ok(())
}

/// How much of `token` `account` received and sent in `logs`' Transfer events.
pub fn transfers(logs: &[crate::Log], token: Address, account: Address) -> (U256, U256) {
    let (mut received, mut sent) = (U256::ZERO, U256::ZERO);
    for log in logs {
        if log.address.parse::<Address>().ok() != Some(token) {
            continue;
        }
        let Some(t) = crate::abi::decode_log::<Transfer>(log) else { continue };
        if t.to == account {
            received += t.value;
        }
        if t.from == account {
            sent += t.value;
        }
    }
    (received, sent)
}

/// One token balance change a write plan declares in its expected outcome
/// (`"balance_changes": [...]`). The host simulates the plan and refuses it unless the
/// simulation moves exactly these amounts and nothing else — or, with a `tolerance`, leaves the
/// wallet better off by at most that much (never worse): room for interest that accrues
/// between planning and execution, which can never hide an outflow or invent a gain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BalanceChange {
    /// The token whose balance changes.
    #[serde(serialize_with = "crate::abi::checksummed")]
    pub token: Address,
    /// Signed base units, decimal (`"-1000000"`).
    pub delta: String,
    /// How much more than `delta` the wallet may end up with, base units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<String>,
}

impl BalanceChange {
    /// `amount` of `token` leaves the wallet.
    pub fn spent(token: &Token, amount: U256) -> Self {
        Self::net(token.address, U256::ZERO, amount)
    }

    /// `amount` of `token` arrives in the wallet.
    pub fn received(token: &Token, amount: U256) -> Self {
        Self::net(token.address, amount, U256::ZERO)
    }

    /// `received` minus `sent` of `token`.
    pub fn net(token: Address, received: U256, sent: U256) -> Self {
        let delta =
            if received >= sent { (received - sent).to_string() } else { format!("-{}", sent - received) };
        Self { token, delta, tolerance: None }
    }

    /// Allow the wallet to end up to `extra` base units better off than declared.
    pub fn up_to(mut self, extra: U256) -> Self {
        self.tolerance = Some(extra.to_string());
        self
    }

    /// Widen the declaration by `wei` either way: for balances computed from scaled amounts
    /// (Aave's aTokens and debt tokens round by one wei in either direction), where the host's
    /// before/after reads can differ from the nominal amount by that much.
    pub fn rounding(mut self, wei: U256) -> Self {
        let delta: alloy_primitives::I256 = self.delta.parse().unwrap_or_default();
        let wei_signed = alloy_primitives::I256::from_raw(wei);
        self.delta = (delta - wei_signed).to_string();
        let tolerance: U256 = self.tolerance.as_deref().and_then(|t| t.parse().ok()).unwrap_or_default();
        self.tolerance = Some((tolerance + wei + wei).to_string());
        self
    }
}

/// The most `spender` may move of the wallet's `token` after a write (`"authorities": [...]` in
/// the expected outcome). The host derives every allowance a plan leaves behind from its
/// simulation and refuses one that is not declared, is larger than declared, or goes to a
/// spender that is not allowlisted. Declare one beside every approval whose amount the plan
/// may not use up (an exact-out swap's maximum, a deposit's desired amounts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Authority {
    /// The token.
    #[serde(serialize_with = "crate::abi::checksummed")]
    pub token: Address,
    /// Who may move it.
    #[serde(serialize_with = "crate::abi::checksummed")]
    pub spender: Address,
    /// The most it may be after the write, base units, decimal.
    pub amount: String,
    /// A Permit2 allowance rather than the token's own.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub permit2: bool,
    /// A Permit2 allowance's latest expiration, Unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration: Option<u64>,
}

impl Authority {
    /// An ERC-20 allowance of at most `amount` of `token` to `spender`.
    pub fn erc20(token: &Token, spender: Address, amount: U256) -> Self {
        Self { token: token.address, spender, amount: amount.to_string(), permit2: false, expiration: None }
    }

    /// A Permit2 allowance of at most `amount` of `token` to `spender`, expiring by `expiration`.
    pub fn permit2(token: &Token, spender: Address, amount: U256, expiration: u64) -> Self {
        Self { permit2: true, expiration: Some(expiration), ..Self::erc20(token, spender, amount) }
    }
}

/// An NFT a write moves (`"nfts": [...]` in the expected outcome): the host derives NFT
/// ownership from the simulation and refuses a move that is not declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NftChange {
    /// The ERC-721 contract.
    #[serde(serialize_with = "crate::abi::checksummed")]
    pub collection: Address,
    /// The id; omitted for one the write mints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// True: it arrives in the wallet; false: it leaves.
    pub gained: bool,
}

impl NftChange {
    /// A new NFT of `collection` minted to the wallet.
    pub fn minted(collection: Address) -> Self {
        Self { collection, id: None, gained: true }
    }
}
