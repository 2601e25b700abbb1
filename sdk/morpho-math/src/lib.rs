//! Morpho Blue's math, ported bit for bit from `MathLib`, `SharesMathLib` and `Morpho.sol`
//! (interest accrual, health): the host's health floor and the `morpho` plugin share it, and a
//! property test holds it to Morpho's own TypeScript SDK (`@morpho-org/blue-sdk`). Plain
//! integers only. Products are taken in 512 bits, so where Solidity would overflow and revert
//! these saturate at `U256::MAX` instead of panicking.

use alloy_primitives::{U256, U512};

/// 10^18, Morpho's fixed-point unit (LLTVs, rates, fees, health factors).
pub const WAD: U256 = U256::from_limbs([1_000_000_000_000_000_000, 0, 0, 0]);
/// Virtual shares of every market side (`SharesMathLib.VIRTUAL_SHARES`): 10^6.
pub const VIRTUAL_SHARES: U256 = U256::from_limbs([1_000_000, 0, 0, 0]);
/// Virtual assets of every market side (`SharesMathLib.VIRTUAL_ASSETS`).
pub const VIRTUAL_ASSETS: U256 = U256::from_limbs([1, 0, 0, 0]);

/// 10^36, the scale of an oracle's price (`ORACLE_PRICE_SCALE`).
pub fn oracle_price_scale() -> U256 {
    U256::from(10u64).pow(U256::from(36u64))
}

fn narrow(v: U512) -> U256 {
    if v > U512::from(U256::MAX) { U256::MAX } else { U256::from_limbs_slice(&v.as_limbs()[..4]) }
}

/// `x * y / d`, rounded down (`MathLib.mulDivDown`); `d` zero gives zero.
pub fn mul_div_down(x: U256, y: U256, d: U256) -> U256 {
    if d.is_zero() {
        return U256::ZERO;
    }
    narrow(U512::from(x) * U512::from(y) / U512::from(d))
}

/// `x * y / d`, rounded up (`MathLib.mulDivUp`); `d` zero gives zero.
pub fn mul_div_up(x: U256, y: U256, d: U256) -> U256 {
    if d.is_zero() {
        return U256::ZERO;
    }
    let d = U512::from(d);
    narrow((U512::from(x) * U512::from(y) + d - U512::from(1u8)) / d)
}

/// `x * y / WAD`, rounded down.
pub fn w_mul_down(x: U256, y: U256) -> U256 {
    mul_div_down(x, y, WAD)
}

/// `x * WAD / y`, rounded down.
pub fn w_div_down(x: U256, y: U256) -> U256 {
    mul_div_down(x, WAD, y)
}

/// `x * WAD / y`, rounded up.
pub fn w_div_up(x: U256, y: U256) -> U256 {
    mul_div_up(x, WAD, y)
}

/// `e^(x·n) - 1` by its first three Taylor terms (`MathLib.wTaylorCompounded`): the growth of a
/// debt at per-second rate `x` (WAD) over `n` seconds.
pub fn w_taylor_compounded(x: U256, n: U256) -> U256 {
    let first = x.saturating_mul(n);
    let second = mul_div_down(first, first, WAD * U256::from(2u8));
    let third = mul_div_down(second, first, WAD * U256::from(3u8));
    first.saturating_add(second).saturating_add(third)
}

/// Shares worth `assets`, rounded down (what a supply of assets mints; a repay of assets burns).
pub fn to_shares_down(assets: U256, total_assets: U256, total_shares: U256) -> U256 {
    mul_div_down(
        assets,
        total_shares.saturating_add(VIRTUAL_SHARES),
        total_assets.saturating_add(VIRTUAL_ASSETS),
    )
}

/// Shares worth `assets`, rounded up (what a borrow of assets mints; a withdrawal burns).
pub fn to_shares_up(assets: U256, total_assets: U256, total_shares: U256) -> U256 {
    mul_div_up(
        assets,
        total_shares.saturating_add(VIRTUAL_SHARES),
        total_assets.saturating_add(VIRTUAL_ASSETS),
    )
}

/// Assets `shares` are worth, rounded down (a supply position's value).
pub fn to_assets_down(shares: U256, total_assets: U256, total_shares: U256) -> U256 {
    mul_div_down(
        shares,
        total_assets.saturating_add(VIRTUAL_ASSETS),
        total_shares.saturating_add(VIRTUAL_SHARES),
    )
}

/// Assets `shares` are worth, rounded up (a debt).
pub fn to_assets_up(shares: U256, total_assets: U256, total_shares: U256) -> U256 {
    mul_div_up(
        shares,
        total_assets.saturating_add(VIRTUAL_ASSETS),
        total_shares.saturating_add(VIRTUAL_SHARES),
    )
}

/// A market's totals, as `Morpho.market(id)` returns them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// All supplied assets, interest included.
    pub supply_assets: U256,
    /// All supply shares.
    pub supply_shares: U256,
    /// All borrowed assets, interest included.
    pub borrow_assets: U256,
    /// All borrow shares.
    pub borrow_shares: U256,
    /// When interest was last accrued, unix seconds.
    pub last_update: u64,
    /// The protocol's cut of interest (WAD).
    pub fee: U256,
}

impl Totals {
    /// The totals at `now` after `Morpho._accrueInterest` with the IRM's per-second `rate` (WAD):
    /// interest added to both sides, the fee minted as supply shares to the fee recipient.
    pub fn accrued(self, rate: U256, now: u64) -> Self {
        let elapsed = now.saturating_sub(self.last_update);
        if elapsed == 0 {
            return self;
        }
        let interest = w_mul_down(self.borrow_assets, w_taylor_compounded(rate, U256::from(elapsed)));
        let mut next = Self {
            borrow_assets: self.borrow_assets.saturating_add(interest),
            supply_assets: self.supply_assets.saturating_add(interest),
            last_update: now,
            ..self
        };
        if !self.fee.is_zero() {
            let fee_amount = w_mul_down(interest, self.fee);
            let fee_shares = to_shares_down(fee_amount, next.supply_assets - fee_amount, next.supply_shares);
            next.supply_shares = next.supply_shares.saturating_add(fee_shares);
        }
        next
    }

    /// Borrowed over supplied (WAD); zero with no supply.
    pub fn utilization(&self) -> U256 {
        if self.supply_assets.is_zero() {
            U256::ZERO
        } else {
            w_div_down(self.borrow_assets, self.supply_assets)
        }
    }
}

/// One account's position in a market, as `Morpho.position(id, user)` returns it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Position {
    /// Supply shares.
    pub supply_shares: U256,
    /// Borrow shares.
    pub borrow_shares: U256,
    /// Collateral, in the collateral token's base units.
    pub collateral: U256,
}

impl Position {
    /// The supplied assets (rounded down).
    pub fn supply_assets(&self, t: &Totals) -> U256 {
        to_assets_down(self.supply_shares, t.supply_assets, t.supply_shares)
    }

    /// The debt (rounded up, as Morpho's health check counts it).
    pub fn borrow_assets(&self, t: &Totals) -> U256 {
        to_assets_up(self.borrow_shares, t.borrow_assets, t.borrow_shares)
    }
}

/// The most `collateral` lets an account owe at `price` (the oracle's, scaled 10^36) and
/// `lltv` (WAD), as `Morpho._isHealthy` bounds it.
pub fn max_borrow(collateral: U256, price: U256, lltv: U256) -> U256 {
    w_mul_down(mul_div_down(collateral, price, oracle_price_scale()), lltv)
}

/// The health factor (WAD): the most the collateral lets the account owe over what it owes;
/// `U256::MAX` with no debt. Under 1 (`WAD`) the position can be liquidated.
pub fn health_factor(p: &Position, t: &Totals, price: U256, lltv: U256) -> U256 {
    let debt = p.borrow_assets(t);
    if debt.is_zero() {
        return U256::MAX;
    }
    w_div_down(max_borrow(p.collateral, price, lltv), debt)
}

/// Whether Morpho accepts the position (`_isHealthy`): its debt is within the collateral's
/// maximum.
pub fn is_healthy(p: &Position, t: &Totals, price: U256, lltv: U256) -> bool {
    max_borrow(p.collateral, price, lltv) >= p.borrow_assets(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(v: u128) -> U256 {
        U256::from(v)
    }

    #[test]
    fn shares_round_against_the_account() {
        // An empty market: 1 asset is worth 10^6 shares.
        assert_eq!(to_shares_down(u(1), u(0), u(0)), u(1_000_000));
        assert_eq!(to_assets_down(u(1_000_000), u(0), u(0)), u(1));
        // 3 assets over 2·10^6 + 10^6 virtual shares: down and up differ by one.
        assert_eq!(to_shares_down(u(1), u(2), u(2_000_000)), u(1_000_000));
        assert_eq!(to_assets_down(u(1_500_000), u(2), u(2_000_000)), u(1));
        assert_eq!(to_assets_up(u(1_500_000), u(2), u(2_000_000)), u(2));
        assert_eq!(to_shares_up(u(1), u(3), u(2_000_000)), u(750_000));
    }

    #[test]
    fn interest_accrues_on_both_sides_and_the_fee_is_minted_as_shares() {
        let t = Totals {
            supply_assets: u(1_000_000),
            supply_shares: u(1_000_000_000_000),
            borrow_assets: u(500_000),
            borrow_shares: u(500_000_000_000),
            last_update: 100,
            fee: WAD / u(10),
        };
        // 50 % utilization at 50 % APR over a year: e^0.5 - 1 by three terms = 0.6458…
        let rate = WAD / u(2) / u(31_536_000);
        let a = t.accrued(rate, 100 + 31_536_000);
        let interest = a.borrow_assets - t.borrow_assets;
        assert_eq!(interest, u(322_916), "500,000 × (x + x²/2 + x³/6) with x ≈ 0.5");
        assert_eq!(a.supply_assets - t.supply_assets, interest);
        assert!(a.supply_shares > t.supply_shares, "the fee recipient's shares");
        assert_eq!(t.accrued(rate, 100), t, "nothing elapsed");
        assert_eq!(a.utilization(), w_div_down(a.borrow_assets, a.supply_assets));
    }

    #[test]
    fn health_is_collateral_value_at_the_lltv_over_the_debt() {
        // 1 WETH (18 decimals) at $2,000 in USDC (6 decimals): price = 2000·10^6 · 10^36 / 10^18.
        let price = u(2_000_000_000) * oracle_price_scale() / WAD;
        let lltv = u(860_000_000_000_000_000);
        let t = Totals {
            supply_assets: u(10_000_000_000),
            supply_shares: u(10_000_000_000_000_000),
            borrow_assets: u(1_000_000_000),
            borrow_shares: u(1_000_000_000_000_000),
            ..Totals::default()
        };
        assert_eq!(max_borrow(WAD, price, lltv), u(1_720_000_000), "1,720 USDC");
        let p = Position { collateral: WAD, borrow_shares: u(1_000_000_000_000_000), ..Position::default() };
        assert_eq!(p.borrow_assets(&t), u(1_000_000_000));
        assert_eq!(health_factor(&p, &t, price, lltv), u(1_720_000_000_000_000_000));
        assert!(is_healthy(&p, &t, price, lltv));
        assert_eq!(health_factor(&Position::default(), &t, price, lltv), U256::MAX);
    }

    #[test]
    fn overflow_saturates_instead_of_panicking() {
        assert_eq!(mul_div_down(U256::MAX, U256::MAX, u(1)), U256::MAX);
        assert_eq!(mul_div_up(u(1), u(1), U256::ZERO), U256::ZERO);
        assert_eq!(w_taylor_compounded(U256::MAX, U256::MAX), U256::MAX);
    }
}
