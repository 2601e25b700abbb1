//! `uniswap_close_position`: end a position in one transaction — all its liquidity removed, its
//! tokens and fees collected to the wallet, its NFT burned. The same plan as
//! `uniswap_remove_liquidity` of 100 % with `burn`, under the action kind an agent's "close"
//! means (allowed in every phase).

use super::remove::{RemoveLiquidity, RemoveParams};
use super::{default_slippage, write_def};
use crate::pools::Version;
use bardo_sdk::{Error, Phase, Receipt, RiskTier, ToolDef, WritePlan, WriteTool};
use schemars::JsonSchema;
use serde::Deserialize;

/// Params of `uniswap_close_position`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseParams {
    /// Chain id.
    pub chain_id: u64,
    /// The position NFT's id, decimal.
    pub position_id: String,
    /// `v3` (default) or `v4`: which position manager's NFT `position_id` is.
    #[serde(default)]
    pub version: Option<Version>,
    /// Tolerance on the withdrawn amounts, basis points 1 to 5000 (default 50).
    #[serde(default = "default_slippage")]
    pub slippage_bps: u32,
}

impl From<CloseParams> for RemoveParams {
    fn from(p: CloseParams) -> Self {
        RemoveParams {
            chain_id: p.chain_id,
            position_id: p.position_id,
            percent: 100,
            slippage_bps: p.slippage_bps,
            version: p.version,
            burn: true,
        }
    }
}

pub struct ClosePosition;

impl WriteTool for ClosePosition {
    const NAME: &'static str = "uniswap_close_position";
    type Params = CloseParams;

    fn def() -> ToolDef {
        write_def::<CloseParams>(
            Self::NAME,
            "Plans closing a Uniswap V3 or V4 position the wallet owns in one transaction: all its liquidity \
             removed, its tokens and uncollected fees sent to the wallet, its NFT burned (V3: the position \
             manager's multicall; V4: one modifyLiquidities). Minimum amounts come from simulating it, less the \
             slippage setting.",
            RiskTier::Medium,
            "close_liquidity",
            &["read position", "simulate withdrawal", "build calls"],
            &[
                (Phase::Defensive, "Close positions out of range first."),
                (Phase::Survival, "Close every position at risk."),
            ],
        )
    }

    fn plan(p: CloseParams) -> Result<WritePlan, Error> {
        RemoveLiquidity::plan(p.into())
    }

    fn verify(p: CloseParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        RemoveLiquidity::verify(p.into(), receipts)
    }
}
