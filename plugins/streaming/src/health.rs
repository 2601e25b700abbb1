//! `stream_health_factor_alerts`: an Aave V3 account's health factor crossing a threshold,
//! polled (prices move it without any event of the account's own), once per crossing.

use crate::config::{chain, event, interval, stream_def};
use alloy_primitives::{Address, U256};
use bardo_sdk::aave::{account, health_factor, pool};
use bardo_sdk::errors::chain_not_supported;
use bardo_sdk::tokens::parse_address;
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{ChainId, Error, Source, SpriteTrigger, StreamEvent, StreamTool, ToolDef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `stream_health_factor_alerts`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The Aave account watched.
    pub user: String,
    /// Alert when the health factor crosses this (default "1.5").
    #[serde(default = "default_threshold")]
    pub threshold: String,
    /// Milliseconds between checks: at least 1,000, default 15,000.
    #[serde(default = "default_interval")]
    pub interval_ms: u32,
}

fn default_threshold() -> String {
    "1.5".into()
}

fn default_interval() -> u32 {
    15_000
}

/// Which side of the threshold the account was on at the last check.
#[derive(Debug, Serialize, Deserialize)]
pub struct HealthState {
    pool: Address,
    user: Address,
    threshold: U256,
    below: bool,
}

#[derive(Debug, Serialize)]
struct Crossing {
    alert: &'static str,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    user: Address,
    health_factor: String,
    threshold: String,
    total_collateral_base: String,
    total_debt_base: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    sprite_trigger: Option<&'static str>,
}

pub struct HealthFactorAlerts;

impl StreamTool for HealthFactorAlerts {
    const NAME: &'static str = "stream_health_factor_alerts";
    type Params = HealthParams;
    type State = HealthState;

    fn def() -> ToolDef {
        stream_def::<HealthParams>(
            Self::NAME,
            "Checks an Aave V3 account's health factor every interval_ms and alerts once when it falls \
                 below the threshold (below) and once when it recovers above it (recovered), relative to \
                 the side it was on when the stream opened. Emits HealthFactorAlert. Act on `below` by \
                 repaying or adding collateral.",
            "stream_health_factor_alerts: alert when an Aave account's health factor crosses a threshold",
            SpriteTrigger::Alert,
        )
    }

    fn open(p: &HealthParams) -> Result<(Vec<Source>, HealthState), Error> {
        let ms = interval(p.interval_ms, 1_000)?;
        let provider = chain(p.chain_id)?.aave_pool_addresses_provider.ok_or_else(|| {
            chain_not_supported(format!("no Aave market for chain {} in `[settings] streaming`", p.chain_id))
        })?;
        let user = parse_address("user", &p.user)?;
        let threshold = parse_units("threshold", &p.threshold, 18)?;
        let pool = pool(p.chain_id, provider)?;
        let hf = account(p.chain_id, pool, user)?.healthFactor;
        Ok((vec![Source::Poll(ms)], HealthState { pool, user, threshold, below: hf < threshold }))
    }

    fn on_tick(p: &HealthParams, mut s: HealthState) -> Result<(Vec<StreamEvent>, HealthState), Error> {
        let a = account(p.chain_id, s.pool, s.user)?;
        let below = a.healthFactor < s.threshold;
        let mut out = Vec::new();
        if below != s.below {
            s.below = below;
            out.push(event(
                "health-factor-alert",
                &Crossing {
                    alert: if below { "below" } else { "recovered" },
                    user: s.user,
                    health_factor: health_factor(a.healthFactor),
                    threshold: format_units(s.threshold, 18),
                    total_collateral_base: a.totalCollateralBase.to_string(),
                    total_debt_base: a.totalDebtBase.to_string(),
                    sprite_trigger: (!below).then_some("success"),
                },
            )?);
        }
        Ok((out, s))
    }
}
