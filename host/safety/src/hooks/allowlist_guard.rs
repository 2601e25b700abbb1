//! `allowlist-guard`: every call to an allowlisted contract, within its role's scope; every
//! authority the plan declares to an allowlisted spender, bounded.

use super::approval_guard::UNLIMITED;
use super::{Decision, Findings, NOTHING_DECLARED, Proposal, SafetyHook, reject};
use alloy::primitives::{Address, B256};
use bardo_core::error::ErrorCode;
use bardo_core::scope::Role;
use std::collections::{BTreeMap, BTreeSet};

/// No Morpho market trusted.
static NO_MARKETS: BTreeSet<B256> = BTreeSet::new();

/// Contracts a plan may call, per chain, each with its role: every call must go to an
/// allowlisted contract and stay within its role's scope (functions, and parameters that must be
/// the wallet or allowlisted — see [`crate::scope`]); a Morpho call's market must be trusted.
pub struct AllowlistGuard {
    /// Contracts a plan may call, approve or pay, and their roles, per chain.
    pub allowed: BTreeMap<u64, BTreeMap<Address, Role>>,
    /// The Morpho Blue markets (by id) a plan may use, per chain.
    pub morpho_markets: BTreeMap<u64, BTreeSet<B256>>,
}

impl AllowlistGuard {
    /// A guard allowing `allowed` and no Morpho market.
    pub fn new(allowed: BTreeMap<u64, BTreeMap<Address, Role>>) -> Self {
        Self { allowed, morpho_markets: BTreeMap::new() }
    }

    /// This guard, allowing the Morpho markets `markets` too.
    pub fn with_morpho_markets(self, markets: BTreeMap<u64, BTreeSet<B256>>) -> Self {
        Self { morpho_markets: markets, ..self }
    }
}

impl SafetyHook for AllowlistGuard {
    fn name(&self) -> &'static str {
        "allowlist-guard"
    }

    fn check(&self, p: &Proposal<'_>, _: &mut Findings) -> Decision {
        let Some(allowed) = self.allowed.get(&p.chain_id) else {
            return reject(
                ErrorCode::Denied,
                format!(
                    "no allowlist for chain {}; add [safety.allowlist] entries to bardo.toml",
                    p.chain_id
                ),
            );
        };
        let listed = |a: Address| allowed.contains_key(&a);
        let roles = |a: Address| allowed.get(&a).copied();
        for (i, call) in p.plan.calls.iter().enumerate() {
            // The wallet's own settings — a Safe's owners, threshold, modules, guard, fallback
            // handler — are the operator's: a call from the Safe to itself could hand a plugin
            // a way around the write path, whatever the allowlist says.
            if call.to == p.sender {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "call {} is to the wallet {} itself: a wallet's own settings (a Safe's owners, modules, guard) are changed by its owners, never through a plan",
                        i + 1,
                        call.to
                    ),
                );
            }
            let Some(role) = allowed.get(&call.to) else {
                return reject(
                    ErrorCode::Denied,
                    format!("{} is not on the allowlist of chain {}", call.to, p.chain_id),
                );
            };
            if !p.operator
                && let Some(function) = crate::scope::operator_only(*role, &call.data)
            {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "call {} is {function} on the identity registry {}: what an agent's identity says and where it is paid are the operator's to change, with `bardo identity set-uri`, never through a plan",
                        i + 1,
                        call.to
                    ),
                );
            }
            let markets = self.morpho_markets.get(&p.chain_id).unwrap_or(&NO_MARKETS);
            if let Err(reason) = crate::scope::check(*role, &call.data, call.value, p.sender, &roles, markets)
            {
                return reject(
                    ErrorCode::Denied,
                    format!("call {} to {} is out of scope: {reason}", i + 1, call.to),
                );
            }
        }
        // The authorities a plan may leave behind go to allowlisted spenders, bounded.
        let declared = match p.declared {
            Ok(declared) => declared.as_ref().unwrap_or(&NOTHING_DECLARED),
            Err(reason) => return reject(ErrorCode::Denied, reason.clone()),
        };
        for a in &declared.authorities {
            if !listed(a.spender) {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "authority spender {} is not on the allowlist of chain {}",
                        a.spender, p.chain_id
                    ),
                );
            }
            if a.amount >= UNLIMITED {
                return reject(
                    ErrorCode::Denied,
                    format!("the plan declares an unlimited authority of {} to {}", a.token, a.spender),
                );
            }
        }
        Decision::Allow
    }

    fn at_commit(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::test_support::*;
    use alloy::primitives::U256;
    use bardo_core::tool::Phase;
    use serde_json::json;

    #[test]
    fn the_allowlist_guard_scopes_calls_and_authorities() {
        let roles = BTreeMap::from([(TOKEN, Role::Erc20), (ROUTER, Role::UniswapV3SwapRouter)]);
        let guard = AllowlistGuard::new(BTreeMap::from([(1, roles)]));
        let mut found = Findings::default();
        let mut d = |calls, expected| decide(&guard, "swap", Phase::Thriving, calls, expected, &mut found);
        assert_eq!(d(vec![approve(ROUTER, U256::from(5))], json!({})), Decision::Allow);
        assert!(reason(&d(vec![approve(STRANGER, U256::from(5))], json!({}))).contains("not allowlisted"));
        assert!(reason(&d(vec![call(STRANGER, vec![])], json!({}))).contains("not on the allowlist"));
        assert!(
            reason(&d(vec![call(TOKEN, vec![0xa9, 0x05, 0x9c, 0xbb])], json!({}))).contains("out of scope")
        );
        let grant = |spender: Address, amount: &str| json!({"balance_changes": [], "authorities": [{"token": TOKEN.to_string(), "spender": spender.to_string(), "amount": amount}]});
        assert_eq!(d(vec![], grant(ROUTER, "10")), Decision::Allow);
        assert!(reason(&d(vec![], grant(STRANGER, "10"))).contains("not on the allowlist"));
        assert!(reason(&d(vec![], grant(ROUTER, &U256::MAX.to_string()))).contains("unlimited"));
        let unknown_chain = AllowlistGuard::new(BTreeMap::new());
        let none =
            decide(&unknown_chain, "swap", Phase::Thriving, vec![], json!({}), &mut Findings::default());
        assert!(reason(&none).contains("no allowlist for chain 1"));
    }
}
