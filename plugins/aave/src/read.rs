//! The read tools: reserves, one reserve, and a user's account and positions.

use crate::abi::*;
use crate::market::{Market, Reserve, health_factor, market};
use alloy_primitives::Address;
use bardo_sdk::abi::{eth_call, wallet};
use bardo_sdk::tokens::parse_address;
use bardo_sdk::units::format_units;
use bardo_sdk::{
    Category, ChainId, ChainParams, Error, Phase, ReadTool, TickBudget, ToolDef, events, guidelines, tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params naming one reserve.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReserveParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The reserve's underlying asset: a listed symbol (`USDC`) or its address.
    pub asset: String,
}

/// Params naming an account.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The account; default: the host's wallet.
    #[serde(default)]
    pub user: Option<String>,
}

fn user(p: &UserParams) -> Result<Address, Error> {
    match &p.user {
        Some(u) => parse_address("user", u),
        None => wallet(p.chain_id),
    }
}

fn def<P: JsonSchema>(name: &str, description: &str, snippet: &str, steps: &[&str]) -> ToolDef {
    ToolDef {
        tick_budget: TickBudget::Medium,
        progress_steps: steps.iter().map(|s| (*s).to_owned()).collect(),
        prompt_snippet: snippet.into(),
        prompt_guidelines: guidelines(&[(
            Phase::Defensive,
            "Check the health factor before and after any lending action.",
        )]),
        ..tool_def::<P>(name, description, Category::Lending)
    }
}

pub struct GetReserves;

impl ReadTool for GetReserves {
    const NAME: &'static str = "aave_get_reserves";
    type Params = ChainParams;
    type Output = Vec<Reserve>;

    fn def() -> ToolDef {
        def::<ChainParams>(
            Self::NAME,
            "Lists every reserve of the Aave V3 market on a chain: asset, decimals, LTV, liquidation \
             threshold and bonus, supply and variable borrow APY, utilization, totals, caps, oracle \
             price, and whether it is active, frozen or paused. Reads only; use aave_get_reserve_data \
             for one asset.",
            "aave_get_reserves: every Aave reserve with rates, risk parameters and status",
            &["read the market", "read each reserve"],
        )
    }

    fn run(p: ChainParams) -> Result<Vec<Reserve>, Error> {
        let m = market(p.chain_id)?;
        events::progress(0);
        let assets = m.reserve_assets()?;
        events::progress(1);
        assets.into_iter().map(|a| m.reserve(a)).collect()
    }
}

pub struct GetReserveData;

impl ReadTool for GetReserveData {
    const NAME: &'static str = "aave_get_reserve_data";
    type Params = ReserveParams;
    type Output = Reserve;

    fn def() -> ToolDef {
        def::<ReserveParams>(
            Self::NAME,
            "One Aave V3 reserve in full: rates (APY and the raw ray rates), utilization, totals, caps, \
             LTV and liquidation parameters, status, oracle price, and its aToken and variable debt \
             token. An asset that is not a reserve is a not-found error listing the reserves.",
            "aave_get_reserve_data: one Aave reserve's rates, risk parameters and status",
            &["read the market", "read the reserve"],
        )
    }

    fn run(p: ReserveParams) -> Result<Reserve, Error> {
        let m = market(p.chain_id)?;
        events::progress(1);
        m.find(&p.asset)
    }
}

/// An account across the market, in the oracle's base currency (USD).
#[derive(Debug, Serialize)]
pub struct AccountData {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub user: Address,
    pub total_collateral: String,
    pub total_debt: String,
    pub available_borrows: String,
    pub current_liquidation_threshold_bps: u32,
    pub ltv_bps: u32,
    /// `infinite` when there is no debt.
    pub health_factor: String,
    /// 18 decimals, as the pool reports it.
    pub health_factor_raw: String,
    /// The operator's floor for borrows and withdrawals.
    pub min_health_factor: String,
}

/// Read `user`'s account.
pub fn account_data(m: &Market, user: Address) -> Result<AccountData, Error> {
    let a = m.account(user)?;
    let base = |v| format_units(v, m.base_decimals);
    Ok(AccountData {
        user,
        total_collateral: base(a.totalCollateralBase),
        total_debt: base(a.totalDebtBase),
        available_borrows: base(a.availableBorrowsBase),
        current_liquidation_threshold_bps: a.currentLiquidationThreshold.saturating_to(),
        ltv_bps: a.ltv.saturating_to(),
        health_factor: health_factor(a.healthFactor),
        health_factor_raw: a.healthFactor.to_string(),
        min_health_factor: format_units(m.min_health_factor, 18),
    })
}

pub struct GetUserAccountData;

impl ReadTool for GetUserAccountData {
    const NAME: &'static str = "aave_get_user_account_data";
    type Params = UserParams;
    type Output = AccountData;

    fn def() -> ToolDef {
        def::<UserParams>(
            Self::NAME,
            "An account's Aave V3 position as a whole: collateral, debt and available borrows in the \
             oracle's base currency (USD), LTV, liquidation threshold and the health factor (below 1 \
             means liquidatable). Defaults to the host's wallet.",
            "aave_get_user_account_data: collateral, debt and health factor of an Aave account",
            &["read the account"],
        )
    }

    fn run(p: UserParams) -> Result<AccountData, Error> {
        let m = market(p.chain_id)?;
        account_data(&m, user(&p)?)
    }
}

/// One reserve the account uses.
#[derive(Debug, Serialize)]
pub struct UserReserve {
    pub asset: bardo_sdk::erc20::Token,
    /// Token units, interest included.
    pub supplied: String,
    pub variable_debt: String,
    pub stable_debt: String,
    pub usage_as_collateral_enabled: bool,
    pub supplied_base: String,
    pub variable_debt_base: String,
}

pub struct GetUserReserves;

impl ReadTool for GetUserReserves {
    const NAME: &'static str = "aave_get_user_reserves";
    type Params = UserParams;
    type Output = Vec<UserReserve>;

    fn def() -> ToolDef {
        def::<UserParams>(
            Self::NAME,
            "The reserves an account supplies or borrows on Aave V3, each with the supplied amount and \
             the debt (interest included) and whether it counts as collateral. Reserves the account \
             does not use are left out. Defaults to the host's wallet.",
            "aave_get_user_reserves: what an Aave account supplies and owes, per asset",
            &["read the reserves", "read the positions"],
        )
    }

    fn run(p: UserParams) -> Result<Vec<UserReserve>, Error> {
        let m = market(p.chain_id)?;
        let user = user(&p)?;
        events::progress(0);
        let assets = m.reserve_assets()?;
        events::progress(1);
        let mut out = Vec::new();
        for asset in assets {
            let r = eth_call(p.chain_id, m.data, &getUserReserveDataCall { asset, user })?;
            if r.currentATokenBalance.is_zero()
                && r.currentVariableDebt.is_zero()
                && r.currentStableDebt.is_zero()
            {
                continue;
            }
            let token = bardo_sdk::erc20::token(p.chain_id, asset)?;
            out.push(UserReserve {
                supplied: format_units(r.currentATokenBalance, token.decimals),
                variable_debt: format_units(r.currentVariableDebt, token.decimals),
                stable_debt: format_units(r.currentStableDebt, token.decimals),
                usage_as_collateral_enabled: r.usageAsCollateralEnabled,
                supplied_base: r.currentATokenBalance.to_string(),
                variable_debt_base: r.currentVariableDebt.to_string(),
                asset: token,
            });
        }
        Ok(out)
    }
}
