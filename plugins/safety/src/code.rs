//! What a contract's code and storage say about it: whether there is code, whether it is a proxy
//! (EIP-1967 implementation / admin / beacon slots, EIP-1822, EIP-1167 clones) and what it lets
//! its owner do (the selectors its dispatcher compares against: mint, pause, blacklist, upgrade,
//! ownership, roles). Read from the chain, never from the contract's own claims.

use alloy_primitives::{Address, B256, b256};
use bardo_sdk::abi::{eth_call, wire};
use bardo_sdk::{ChainId, Error, chain};
use serde::Serialize;

const IMPLEMENTATION: B256 = b256!("0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc");
const ADMIN: B256 = b256!("0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103");
const BEACON: B256 = b256!("0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50");
/// EIP-1822's `keccak256("PROXIABLE")`.
const PROXIABLE: B256 = b256!("0xc5f16f0fcc639fa48a6947836d9850f504798523bf8c9a3a87d5876cf622bcf7");
/// An EIP-1167 clone's code around the 20-byte implementation address.
const CLONE_PREFIX: [u8; 10] = [0x36, 0x3d, 0x3d, 0x37, 0x3d, 0x3d, 0x3d, 0x36, 0x3d, 0x73];

alloy_sol_types::sol! {
    function implementation() external view returns (address);
    function owner() external view returns (address);
    function paused() external view returns (bool);
}

/// Owner powers, by the selectors that grant them.
const POWERS: &[(&str, [u8; 4])] = &[
    ("mint", [0x40, 0xc1, 0x0f, 0x19]),      // mint(address,uint256)
    ("mint", [0xa0, 0x71, 0x2d, 0x68]),      // mint(uint256)
    ("pause", [0x84, 0x56, 0xcb, 0x59]),     // pause()
    ("blacklist", [0xf9, 0xf9, 0x2b, 0xe4]), // blacklist(address)
    ("blacklist", [0x0e, 0xcb, 0x93, 0xc0]), // addBlackList(address)
    ("blacklist", [0x44, 0x33, 0x7e, 0xa1]), // addToBlacklist(address)
    ("upgrade", [0x36, 0x59, 0xcf, 0xe6]),   // upgradeTo(address)
    ("upgrade", [0x4f, 0x1e, 0xf2, 0x86]),   // upgradeToAndCall(address,bytes)
    ("ownership", [0xf2, 0xfd, 0xe3, 0x8b]), // transferOwnership(address)
    ("roles", [0x2f, 0x2f, 0xf1, 0x5d]),     // grantRole(bytes32,address)
    ("fee", [0x69, 0xfe, 0x0e, 0x2d]),       // setFee(uint256)
];

/// The proxy pattern a contract follows.
#[derive(Debug, Clone, Serialize)]
pub struct Proxy {
    /// `eip-1967`, `eip-1967-beacon`, `eip-1822` or `eip-1167`.
    pub kind: &'static str,
    /// Where the calls really go.
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub implementation: Address,
    /// Who may upgrade it (EIP-1967 admin slot), when set.
    pub admin: Option<String>,
}

/// A contract as its code and storage describe it.
#[derive(Debug, Clone, Serialize)]
pub struct Contract {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub address: Address,
    pub has_code: bool,
    pub code_size: usize,
    pub proxy: Option<Proxy>,
    /// Owner powers found in its code (the implementation's, for a proxy).
    pub powers: Vec<&'static str>,
    /// `owner()`, when it answers.
    pub owner: Option<String>,
    /// `paused()`, when it answers.
    pub paused: Option<bool>,
}

fn word(chain_id: ChainId, at: Address, slot: B256) -> Result<Option<Address>, Error> {
    let w: B256 = chain::storage_at(chain_id, &wire(&at), &slot.to_string())?.parse().unwrap_or_default();
    let a = Address::from_word(w);
    Ok((!a.is_zero()).then_some(a))
}

fn proxy(chain_id: ChainId, at: Address, code: &[u8]) -> Result<Option<Proxy>, Error> {
    if code.len() == 45 && code.starts_with(&CLONE_PREFIX) {
        let implementation = Address::from_slice(&code[10..30]);
        return Ok(Some(Proxy { kind: "eip-1167", implementation, admin: None }));
    }
    let admin = word(chain_id, at, ADMIN)?.map(|a| a.to_checksum(None));
    if let Some(implementation) = word(chain_id, at, IMPLEMENTATION)? {
        return Ok(Some(Proxy { kind: "eip-1967", implementation, admin }));
    }
    if let Some(beacon) = word(chain_id, at, BEACON)? {
        let implementation = eth_call(chain_id, beacon, &implementationCall {})?;
        return Ok(Some(Proxy { kind: "eip-1967-beacon", implementation, admin }));
    }
    if let Some(implementation) = word(chain_id, at, PROXIABLE)? {
        return Ok(Some(Proxy { kind: "eip-1822", implementation, admin }));
    }
    Ok(None)
}

/// The selectors pushed by `PUSH4` in `code` that grant a power (a dispatcher compares the
/// call's selector against each function's).
pub fn powers(code: &[u8]) -> Vec<&'static str> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let op = code[i];
        if op == 0x63 && i + 5 <= code.len() {
            let sel = &code[i + 1..i + 5];
            for (name, s) in POWERS {
                if sel == s && !found.contains(name) {
                    found.push(*name);
                }
            }
        }
        // Skip PUSH1..PUSH32 data so that constants are not read as opcodes.
        i += if (0x60..=0x7f).contains(&op) { usize::from(op - 0x5f) + 1 } else { 1 };
    }
    found
}

/// Inspect the contract at `address`.
pub fn inspect(chain_id: ChainId, address: Address) -> Result<Contract, Error> {
    let code = chain::code(chain_id, &wire(&address))?;
    if code.is_empty() {
        return Ok(Contract {
            address,
            has_code: false,
            code_size: 0,
            proxy: None,
            powers: Vec::new(),
            owner: None,
            paused: None,
        });
    }
    let proxy = proxy(chain_id, address, &code)?;
    let logic = match &proxy {
        Some(p) => chain::code(chain_id, &wire(&p.implementation))?,
        None => code.clone(),
    };
    let mut powers = powers(&logic);
    if proxy.is_some() && !powers.contains(&"upgrade") {
        powers.push("upgrade");
    }
    let owner = eth_call(chain_id, address, &ownerCall {}).ok().map(|a| a.to_checksum(None));
    let paused = eth_call(chain_id, address, &pausedCall {}).ok();
    Ok(Contract { address, has_code: true, code_size: code.len(), proxy, powers, owner, paused })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_are_found_in_push4_only() {
        // PUSH4 pause(); then a PUSH32 whose data holds mint's selector bytes (not an opcode).
        let mut code = vec![0x63, 0x84, 0x56, 0xcb, 0x59, 0x7f];
        code.extend([0x63, 0x40, 0xc1, 0x0f, 0x19]);
        code.extend([0u8; 27]);
        assert_eq!(powers(&code), vec!["pause"]);
    }
}
