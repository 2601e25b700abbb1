//! An account's open ERC-20 approvals, found from its `Approval` logs over a block range and
//! each re-read now, with what makes one risky: unlimited, to a spender not on the operator's
//! allowlist, to an address without code.

use crate::abi::{decode_log, wire};
use crate::erc20::{self, Token};
use crate::logs::{self, LOG_WINDOW};
use crate::operator::Book;
use crate::units::format_units;
use crate::{ChainId, Error, LogFilter, chain, events};
use alloy_primitives::{Address, U256};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

alloy_sol_types::sol! {
    event Approval(address indexed owner, address indexed spender, uint256 value);
}

/// The most blocks one scan covers.
pub use crate::logs::MAX_SCAN;

/// Anything at or above 2^128 base units is an unlimited approval in practice.
pub fn unlimited(amount: U256) -> bool {
    amount >= U256::from(1u8) << 128
}

/// One open approval.
#[derive(Debug, Clone, Serialize)]
pub struct OpenApproval {
    /// The token.
    pub token: Token,
    /// Who may spend.
    #[serde(serialize_with = "crate::abi::checksummed")]
    pub spender: Address,
    /// What the spender may still move now, token units.
    pub amount: String,
    /// The same, base units.
    pub base: String,
    /// 2^128 base units or more.
    pub unlimited: bool,
    /// The spender's role on the operator's allowlist; none: not allowlisted.
    pub allowlisted: Option<String>,
    /// Whether the spender holds contract code (an approval to an account without code is
    /// usually a mistake or a phishing signature).
    pub spender_has_code: bool,
    /// The block of the latest Approval log.
    pub approved_at_block: Option<u64>,
}

/// Every open approval of an account over a block range.
#[derive(Debug, Clone, Serialize)]
pub struct Approvals {
    /// Whose.
    #[serde(serialize_with = "crate::abi::checksummed")]
    pub account: Address,
    /// First block scanned.
    pub from_block: u64,
    /// Last block scanned.
    pub to_block: u64,
    /// Allowances still open (non-zero now), riskiest first: unlimited, then not allowlisted.
    pub approvals: Vec<OpenApproval>,
}

/// The params of a tool that scans an account's approvals.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalsParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The account; default: the host's wallet.
    #[serde(default)]
    pub account: Option<String>,
    /// First block scanned for Approval logs; default: 10,000 blocks before the latest. At most
    /// 200,000 blocks are scanned per call.
    #[serde(default)]
    pub from_block: Option<u64>,
    /// Tokens to scan (symbols or addresses); default: the operator's token list.
    #[serde(default)]
    pub tokens: Option<Vec<String>>,
}

/// Scan what `p` names with this plugin's operator book.
pub fn scan(p: &ApprovalsParams) -> Result<(Book, Approvals), Error> {
    let book = crate::operator::book(p.chain_id)?;
    let account = match &p.account {
        Some(a) => crate::tokens::parse_address("account", a)?,
        None => crate::abi::wallet(p.chain_id)?,
    };
    let tokens = match &p.tokens {
        Some(list) => list.iter().map(|t| book.token(p.chain_id, "tokens", t).map(|t| t.address)).collect(),
        None => Ok(book.tokens.iter().map(|t| t.address).collect::<Vec<_>>()),
    }?;
    let found = open_approvals(p.chain_id, &book, account, &tokens, p.from_block)?;
    Ok((book, found))
}

/// `account`'s open approvals of `tokens` approved from `from_block` (default: the last 10,000
/// blocks) to the latest block. Reports progress steps 0 (scan) and 1 (read allowances).
pub fn open_approvals(
    chain_id: ChainId,
    book: &Book,
    account: Address,
    tokens: &[Address],
    from_block: Option<u64>,
) -> Result<Approvals, Error> {
    events::progress(0);
    let (from_block, to_block) = logs::range(chain_id, from_block, LOG_WINDOW)?;
    let mut latest: BTreeMap<(Address, Address), Option<u64>> = BTreeMap::new();
    if !tokens.is_empty() {
        let filter = LogFilter {
            chain_id,
            addresses: tokens.iter().map(wire).collect(),
            topics: vec![
                vec![<Approval as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string()],
                vec![account.into_word().to_string()],
            ],
            from_block: None,
            to_block: None,
        };
        for log in logs::scan(filter, from_block, to_block)? {
            let Some(a) = decode_log::<Approval>(&log) else { continue };
            let Ok(token) = log.address.parse::<Address>() else { continue };
            latest.insert((token, a.spender), log.block_number);
        }
    }
    events::progress(1);
    let mut approvals = Vec::new();
    for ((token, spender), at) in latest {
        let remaining = erc20::allowance(chain_id, token, account, spender)?;
        if remaining.is_zero() {
            continue;
        }
        let token = erc20::token(chain_id, token)?;
        approvals.push(OpenApproval {
            amount: format_units(remaining, token.decimals),
            base: remaining.to_string(),
            unlimited: unlimited(remaining),
            allowlisted: book.role(spender).map(str::to_owned),
            spender_has_code: !chain::code(chain_id, &wire(&spender))?.is_empty(),
            approved_at_block: at,
            token,
            spender,
        });
    }
    approvals.sort_by_key(|a| (!a.unlimited, a.allowlisted.is_some()));
    Ok(Approvals { account, from_block, to_block, approvals })
}
