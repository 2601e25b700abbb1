//! `wallet_get_safe`: a Safe's configuration — owners, threshold, nonce, modules, guard,
//! fallback handler, singleton and version — read from the Safe itself, with warnings for what
//! lets anything but the owners' signatures move its funds.

use alloy_primitives::{Address, B256, U256, b256};
use bardo_sdk::abi::{eth_call, wire};
use bardo_sdk::erc20::require_code;
use bardo_sdk::tokens::parse_address;
use bardo_sdk::{Category, ChainId, Error, ReadTool, ToolDef, chain, events, signer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

alloy_sol_types::sol! {
    function getOwners() external view returns (address[]);
    function getThreshold() external view returns (uint256);
    function nonce() external view returns (uint256);
    function VERSION() external view returns (string);
    function getModulesPaginated(address start, uint256 pageSize) external view returns (address[] array, address next);
}

/// Where Safe 1.3+ keeps its guard and its fallback handler (keccak256 of the names it gives them).
const GUARD_SLOT: B256 = b256!("0x4a204f620c8c5ccdca3fd54d003badd85ba500436a431f0cbda4f558c93c34c8");
const FALLBACK_SLOT: B256 = b256!("0x6c9a6c4a39284e37ed1cf53d337577d14212a4870fb976a4366c693b939918d5");
/// The modules list's sentinel, and the most modules read.
const SENTINEL: Address = Address::with_last_byte(1);
const MAX_MODULES: u64 = 50;

/// Params of `wallet_get_safe`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SafeParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The Safe's address.
    pub safe: String,
}

#[derive(Serialize)]
pub struct SafeInfo {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    safe: Address,
    version: String,
    owners: Vec<Address>,
    threshold: u64,
    /// The next Safe transaction's nonce.
    nonce: u64,
    /// Enabled modules: each can execute from the Safe without the owners' signatures.
    modules: Vec<Address>,
    /// The transaction guard, none when unset.
    guard: Option<Address>,
    fallback_handler: Option<Address>,
    /// The implementation the proxy delegates to (its storage slot 0).
    singleton: Address,
    /// Whether the host's wallet is an owner; none without a wallet.
    wallet_is_owner: Option<bool>,
    /// What lets anything but the owners' signatures move the Safe's funds, or block them.
    warnings: Vec<String>,
}

fn slot_address(chain_id: ChainId, at: Address, slot: B256) -> Result<Option<Address>, Error> {
    let word: B256 = chain::storage_at(chain_id, &wire(&at), &slot.to_string())?.parse().unwrap_or_default();
    let a = Address::from_word(word);
    Ok((a != Address::ZERO).then_some(a))
}

fn small(v: U256) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

pub struct GetSafe;

impl ReadTool for GetSafe {
    const NAME: &'static str = "wallet_get_safe";
    type Params = SafeParams;
    type Output = SafeInfo;

    fn def() -> ToolDef {
        bardo_sdk::described::<SafeParams>(
            Self::NAME,
            "Read a Safe's configuration: owners, threshold, nonce, enabled modules, guard, fallback handler, \
             singleton and version, whether the host's wallet is an owner, and warnings for modules and guards \
             (they act without the owners' signatures). Reads only.",
            Category::Wallet,
            &["read the Safe"],
        )
    }

    fn run(p: SafeParams) -> Result<SafeInfo, Error> {
        let c = p.chain_id;
        let safe = parse_address("safe", &p.safe)?;
        require_code(c, safe, "safe")?;
        events::progress(0);
        let owners = eth_call(c, safe, &getOwnersCall {})?;
        let threshold = small(eth_call(c, safe, &getThresholdCall {})?);
        let nonce = small(eth_call(c, safe, &nonceCall {})?);
        let version = eth_call(c, safe, &VERSIONCall {})?;
        let page = eth_call(
            c,
            safe,
            &getModulesPaginatedCall { start: SENTINEL, pageSize: U256::from(MAX_MODULES) },
        )?;
        let guard = slot_address(c, safe, GUARD_SLOT)?;
        let fallback_handler = slot_address(c, safe, FALLBACK_SLOT)?;
        let singleton = slot_address(c, safe, B256::ZERO)?.unwrap_or_default();
        let wallet = signer::wallet_address(c).and_then(|a| a.parse::<Address>().ok());
        let mut warnings = Vec::new();
        for m in &page.array {
            warnings.push(format!(
                "module {} can execute any call from the Safe without the owners' signatures",
                m.to_checksum(None)
            ));
        }
        if page.next != SENTINEL && page.next != Address::ZERO {
            warnings
                .push(format!("more than {MAX_MODULES} modules: only the first {MAX_MODULES} are listed"));
        }
        if let Some(g) = guard {
            warnings
                .push(format!("guard {} checks (and can block) every Safe transaction", g.to_checksum(None)));
        }
        Ok(SafeInfo {
            safe,
            version,
            wallet_is_owner: wallet.map(|w| owners.contains(&w)),
            owners,
            threshold,
            nonce,
            modules: page.array,
            guard,
            fallback_handler,
            singleton,
            warnings,
        })
    }
}
