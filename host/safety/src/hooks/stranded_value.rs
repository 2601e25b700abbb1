//! `stranded-value`: nothing left behind. What a plan sends out must reach the wallet or a
//! counterparty that gave the wallet something for it — a pool of the trusted Uniswap
//! deployments that traded or took a deposit (its events authenticated by [`crate::evidence`]:
//! a contract that merely emits a pool's `Sync` is no pool), an Aave reserve (its
//! aToken holds the underlying supplied or repaid), a listed vault taking its asset, WETH taking
//! ether it wraps, Morpho Blue taking a token of a trusted market in which the wallet's position
//! changed, a V4 hook the operator trusts, a listed Pendle market, SY or YT holding its own
//! reserves (and Pendle's treasury taking a listed market's fee in its SY), or an account the
//! operator lists as `recipient`. Value that stays in a
//! router, a position manager, Permit2 or any other contract is refused, however little: anyone
//! can sweep it. From the simulation: every ERC-20 `Transfer` (and WETH's `Deposit` and
//! `Withdrawal`, which mint and burn without one), netted per holder, and the native balance of
//! every account the calls touched. The loss tolerance of the value guard is then left to what
//! trading pools keep as fees and price impact.

use super::{Decision, Findings, Proposal, SafetyHook};
use crate::evidence::Evidence;
use crate::scope::AllowedContracts;
use crate::valuation::{Valuer, Venue};
use alloy::primitives::{Address, B256, I256, Log, U256, b256};
use bardo_core::error::ErrorCode;
use bardo_core::scope::Role;
use bardo_evm::changes::Change;
use std::collections::BTreeMap;

/// ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)`.
const TRANSFER: B256 = b256!("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
/// WETH9's `Deposit(address indexed dst, uint256 wad)`.
const WETH_DEPOSIT: B256 = b256!("0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c");
/// WETH9's `Withdrawal(address indexed src, uint256 wad)`.
const WETH_WITHDRAWAL: B256 = b256!("0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65");

/// Roles that route value and must never keep any.
const PASS_THROUGH: [Role; 7] = [
    Role::UniversalRouter,
    Role::UniswapV3Staker,
    Role::UniswapV3SwapRouter,
    Role::UniswapV2Router,
    Role::UniswapV3PositionManager,
    Role::UniswapV4PositionManager,
    Role::Permit2,
];

/// What an account other than the wallet ended the plan with more of: (holder, asset — none is
/// the native coin) → the rise, in base units. Mints and burns (the zero address) are not
/// holdings.
pub(crate) fn rises(
    wallet: Address,
    logs: &[&Log],
    native: &[(Address, I256)],
    weth: Option<Address>,
) -> BTreeMap<(Address, Option<Address>), U256> {
    let mut net: BTreeMap<(Address, Option<Address>), I256> = BTreeMap::new();
    let mut add = |holder: Address, asset: Option<Address>, delta: I256| {
        let entry = net.entry((holder, asset)).or_default();
        *entry = entry.saturating_add(delta);
    };
    for log in logs {
        let t = log.topics();
        let Some(amount) = log.data.data.get(..32).map(|d| I256::from_raw(U256::from_be_slice(d))) else {
            continue;
        };
        match (t.first(), t.len()) {
            (Some(&TRANSFER), 3) if log.data.data.len() == 32 => {
                add(Address::from_word(t[1]), Some(log.address), -amount);
                add(Address::from_word(t[2]), Some(log.address), amount);
            }
            (Some(&WETH_DEPOSIT), 2) if Some(log.address) == weth => {
                add(Address::from_word(t[1]), Some(log.address), amount)
            }
            (Some(&WETH_WITHDRAWAL), 2) if Some(log.address) == weth => {
                add(Address::from_word(t[1]), Some(log.address), -amount)
            }
            _ => {}
        }
    }
    for (holder, delta) in native {
        add(*holder, None, *delta);
    }
    net.into_iter()
        .filter(|((holder, _), delta)| *holder != wallet && !holder.is_zero() && delta.is_positive())
        .map(|(key, delta)| (key, delta.unsigned_abs()))
        .collect()
}

/// The stranded-value hook (after the simulator).
#[derive(Debug, Clone)]
pub struct StrandedValue {
    /// Tells Aave reserves, listed vaults and WETH (its pricing config).
    pub valuer: Valuer,
    /// The allowlist with roles, per chain: routers and position managers never keep value;
    /// `recipient`s may be paid.
    pub roles: BTreeMap<u64, AllowedContracts>,
    /// The trusted Morpho markets: Morpho keeps their tokens for the wallet's positions.
    pub morpho_markets: crate::morpho::TrustedMarkets,
}

impl StrandedValue {
    /// Whether `holder` gave the wallet something for the `asset` it kept: a trusted pool that
    /// traded or took liquidity in the plan (holding that asset as one of its tokens), the
    /// reserve or vault `asset` is deposited in, WETH wrapping ether, or a listed recipient.
    fn counterparty(
        &self,
        chain: u64,
        holder: Address,
        asset: Option<Address>,
        pools: &BTreeMap<Address, Venue>,
        changes: &[Change],
    ) -> bool {
        let role = self.roles.get(&chain).and_then(|r| r.get(&holder)).copied();
        if role == Some(Role::MorphoBlue) {
            // Morpho holds a market's tokens for the wallet's position in it (valued by the
            // value guard); any other token it is sent is lost.
            let markets = self.morpho_markets.get(&chain);
            return changes.iter().any(|c| match c {
                Change::Position { venue, market, .. } if *venue == holder => markets
                    .and_then(|m| m.get(market))
                    .is_some_and(|m| asset.is_some_and(|a| a == m.loan_token || a == m.collateral_token)),
                _ => false,
            });
        }
        if role.is_some_and(|r| PASS_THROUGH.contains(&r)) {
            return false;
        }
        // Pendle's market, SY and YT hold their own reserves; its treasury takes a listed
        // market's fee in that market's SY. A read that fails leaves the value refused.
        if let (Some(role @ (Role::PendleMarket | Role::PendleSy | Role::PendleYieldToken)), Some(token)) =
            (role, asset)
        {
            return self.valuer.pendle_keeps(chain, holder, role, token).unwrap_or(false);
        }
        if role.is_none()
            && let (Some(token), Some(roles)) = (asset, self.roles.get(&chain))
        {
            let markets = roles.iter().filter(|(_, r)| **r == Role::PendleMarket).map(|(a, _)| *a);
            if self.valuer.pendle_treasury(chain, holder, token, markets).unwrap_or(false) {
                return true;
            }
        }
        // A recipient is paid on purpose; a hook the operator trusts with return deltas takes
        // its fee as a pool does (the value guard bounds what it costs).
        if matches!(role, Some(Role::Recipient | Role::V4Hook)) {
            return true;
        }
        if asset.is_none() && self.valuer.weth(chain) == Some(holder) {
            return true;
        }
        if let Some(venue) = pools.get(&holder) {
            // A V2 or V3 pool keeps only its own two tokens; V4's PoolManager holds every
            // currency.
            return match venue.tokens() {
                Some((t0, t1)) => asset.is_some_and(|token| token == t0 || token == t1),
                None => true,
            };
        }
        asset.is_some_and(|token| self.valuer.redeemable_for(chain, holder) == Some(token))
    }
}

impl SafetyHook for StrandedValue {
    fn name(&self) -> &'static str {
        "stranded-value"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        let ev = match Evidence::of(&self.valuer, p.chain_id, sim) {
            Ok(ev) => ev,
            Err(e) => {
                return Decision::Reject {
                    code: ErrorCode::Rpc,
                    reason: format!("cannot read the pools the plan touches: {e}"),
                };
            }
        };
        // The pools that traded or took liquidity: only those of the trusted deployments.
        let pools: BTreeMap<Address, Venue> =
            ev.pool_events().map(|(_, l, venue)| (l.address, venue)).collect();
        let weth = self.valuer.weth(p.chain_id);
        // What the plan deposits into a SpokePool for it to arrive on another chain is sent on,
        // not left: the bridge guard valued what arrives, and the SpokePool's own event shows it.
        let mut bridged: BTreeMap<(Address, Option<Address>), U256> = BTreeMap::new();
        for b in found.bridged.iter().filter(|b| b.evidenced(ev.logs())) {
            *bridged.entry((b.spoke, Some(b.input.0))).or_default() += b.input.1;
        }
        for ((holder, asset), amount) in rises(p.sender, ev.logs(), &sim.native, weth) {
            if bridged.get(&(holder, asset)) == Some(&amount) {
                continue;
            }
            if self.counterparty(p.chain_id, holder, asset, &pools, &sim.changes.changes) {
                continue;
            }
            let role = self.roles.get(&p.chain_id).and_then(|r| r.get(&holder));
            let what = match asset {
                Some(token) => format!("{amount} base units of {token}"),
                None => format!("{amount} wei of ether"),
            };
            return Decision::Reject {
                code: ErrorCode::Denied,
                reason: format!(
                    "the plan leaves {what} in {holder}{}, which gave the wallet nothing for it; anyone could take it from there. Send the exact amount, and every output to the wallet",
                    role.map(|r| format!(" ({r})")).unwrap_or_default()
                ),
            };
        }
        Decision::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{LogData, address, keccak256};

    const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");
    const POOL: Address = address!("0x00000000000000000000000000000000000000b1");
    const ROUTER: Address = address!("0x00000000000000000000000000000000000000d1");
    const USDC: Address = address!("0x00000000000000000000000000000000000000c1");
    const WETH: Address = address!("0x00000000000000000000000000000000000000c2");

    fn log(address: Address, topics: Vec<B256>, amount: u64) -> Log {
        let data = U256::from(amount).to_be_bytes::<32>().to_vec();
        Log { address, data: LogData::new_unchecked(topics, data.into()) }
    }

    fn transfer(token: Address, from: Address, to: Address, amount: u64) -> Log {
        log(token, vec![TRANSFER, from.into_word(), to.into_word()], amount)
    }

    #[test]
    fn event_topics_are_the_signatures() {
        assert_eq!(WETH_DEPOSIT, keccak256("Deposit(address,uint256)"));
        assert_eq!(WETH_WITHDRAWAL, keccak256("Withdrawal(address,uint256)"));
    }

    #[test]
    fn what_passes_through_nets_to_nothing_and_what_stays_is_found() {
        let i = |v: i64| I256::try_from(v).expect("i256");
        // A swap through the router: USDC wallet → router → pool, WETH pool → wallet.
        let through = [
            transfer(USDC, WALLET, ROUTER, 100),
            transfer(USDC, ROUTER, POOL, 100),
            transfer(WETH, POOL, WALLET, 5),
        ];
        let refs: Vec<&Log> = through.iter().collect();
        let found = rises(WALLET, &refs, &[], Some(WETH));
        assert_eq!(found, BTreeMap::from([((POOL, Some(USDC)), U256::from(100))]));
        // The output left in the router, and ether over-sent: both stay with the router.
        let left = [transfer(USDC, WALLET, POOL, 100), transfer(WETH, POOL, ROUTER, 5)];
        let refs: Vec<&Log> = left.iter().collect();
        let found = rises(WALLET, &refs, &[(ROUTER, i(7)), (WETH, i(3))], Some(WETH));
        assert_eq!(found[&(ROUTER, Some(WETH))], U256::from(5));
        assert_eq!(found[&(ROUTER, None)], U256::from(7));
        assert_eq!(found[&(WETH, None)], U256::from(3));
        // WETH minted to the router without a Transfer, then sent on: nothing stays.
        let wrapped = [log(WETH, vec![WETH_DEPOSIT, ROUTER.into_word()], 9), transfer(WETH, ROUTER, POOL, 9)];
        let refs: Vec<&Log> = wrapped.iter().collect();
        assert!(!rises(WALLET, &refs, &[], Some(WETH)).contains_key(&(ROUTER, Some(WETH))));
        // Mints and burns are not holdings; the wallet's own gains are not stranded.
        let minted = [transfer(USDC, Address::ZERO, WALLET, 1), transfer(USDC, WALLET, Address::ZERO, 1)];
        let refs: Vec<&Log> = minted.iter().collect();
        assert!(rises(WALLET, &refs, &[(WALLET, i(4))], None).is_empty());
    }
}
