//! Conversions between binding types and the host's own types, at the boundary only.

use crate::bindings::bardo::plugin::types as wit;
use crate::bindings::{WitError, WitErrorCode};
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::tool::{
    CapabilityTier, Category, Manifest, Phase, PhaseGuideline, PlannedCall, RequiredCapability, RiskTier,
    SpriteTrigger, TickBudget, ToolDef, WritePlan,
};

pub(crate) fn wit_error(e: ToolError) -> WitError {
    let code = match e.code {
        ErrorCode::InvalidParams => WitErrorCode::InvalidParams,
        ErrorCode::ChainNotSupported => WitErrorCode::ChainNotSupported,
        ErrorCode::NotFound => WitErrorCode::NotFound,
        ErrorCode::Rpc => WitErrorCode::Rpc,
        ErrorCode::Reverted => WitErrorCode::Reverted,
        ErrorCode::Denied => WitErrorCode::Denied,
        ErrorCode::Timeout => WitErrorCode::Timeout,
        ErrorCode::LimitExceeded => WitErrorCode::LimitExceeded,
        ErrorCode::WalletNotConfigured => WitErrorCode::WalletNotConfigured,
        ErrorCode::Internal => WitErrorCode::Internal,
        // A host import is never cancelled on its own: the whole call is, outside the guest.
        ErrorCode::Cancelled
        | ErrorCode::Unavailable
        | ErrorCode::PartiallyExecuted
        | ErrorCode::ConfirmationRequired
        | ErrorCode::Expired => WitErrorCode::Internal,
    };
    WitError { code, message: e.message, retryable: e.retryable }
}

pub(crate) fn tool_error(e: WitError) -> ToolError {
    let code = match e.code {
        WitErrorCode::InvalidParams => ErrorCode::InvalidParams,
        WitErrorCode::ChainNotSupported => ErrorCode::ChainNotSupported,
        WitErrorCode::NotFound => ErrorCode::NotFound,
        WitErrorCode::Rpc => ErrorCode::Rpc,
        WitErrorCode::Reverted => ErrorCode::Reverted,
        WitErrorCode::Denied => ErrorCode::Denied,
        WitErrorCode::Timeout => ErrorCode::Timeout,
        WitErrorCode::LimitExceeded => ErrorCode::LimitExceeded,
        WitErrorCode::WalletNotConfigured => ErrorCode::WalletNotConfigured,
        WitErrorCode::Internal => ErrorCode::Internal,
    };
    ToolError { code, message: e.message, retryable: e.retryable }
}

/// The host's manifest, or why the plugin's is unusable.
pub(crate) fn manifest(m: wit::Manifest) -> Result<Manifest, String> {
    let tools = m.tools.into_iter().map(tool_def).collect::<Result<_, _>>()?;
    Ok(Manifest { name: m.name, version: m.version, tools })
}

fn tool_def(t: wit::ToolDef) -> Result<ToolDef, String> {
    let input_schema = serde_json::from_str(&t.input_schema)
        .map_err(|e| format!("tool `{}` declares an input schema that is not JSON: {e}", t.name))?;
    if t.schema_version == 0 {
        return Err(format!("tool `{}` declares schema version 0; schema versions start at 1", t.name));
    }
    Ok(ToolDef {
        schema_version: t.schema_version,
        category: category(t.category),
        capability_tier: match t.capability_tier {
            wit::CapabilityTier::Read => CapabilityTier::Read,
            wit::CapabilityTier::Write => CapabilityTier::Write,
            wit::CapabilityTier::Privileged => CapabilityTier::Privileged,
        },
        risk_tier: match t.risk_tier {
            wit::RiskTier::None => RiskTier::None,
            wit::RiskTier::Low => RiskTier::Low,
            wit::RiskTier::Medium => RiskTier::Medium,
            wit::RiskTier::High => RiskTier::High,
        },
        tick_budget: match t.tick_budget {
            wit::TickBudget::Fast => TickBudget::Fast,
            wit::TickBudget::Medium => TickBudget::Medium,
            wit::TickBudget::Slow => TickBudget::Slow,
        },
        sprite_trigger: match t.sprite_trigger {
            wit::SpriteTrigger::Idle => SpriteTrigger::Idle,
            wit::SpriteTrigger::Thinking => SpriteTrigger::Thinking,
            wit::SpriteTrigger::Executing => SpriteTrigger::Executing,
            wit::SpriteTrigger::Success => SpriteTrigger::Success,
            wit::SpriteTrigger::Failure => SpriteTrigger::Failure,
            wit::SpriteTrigger::Alert => SpriteTrigger::Alert,
        },
        prompt_guidelines: t
            .prompt_guidelines
            .into_iter()
            .map(|g| PhaseGuideline {
                phase: match g.phase {
                    wit::Phase::Thriving => Phase::Thriving,
                    wit::Phase::Cautious => Phase::Cautious,
                    wit::Phase::Defensive => Phase::Defensive,
                    wit::Phase::Survival => Phase::Survival,
                    wit::Phase::Terminal => Phase::Terminal,
                },
                guideline: g.guideline,
            })
            .collect(),
        requires: t
            .requires
            .into_iter()
            .map(|c| match c {
                wit::Capability::Wallet => RequiredCapability::Wallet,
                wit::Capability::UniswapApi => RequiredCapability::UniswapApi,
                wit::Capability::Memory => RequiredCapability::Memory,
            })
            .collect(),
        name: t.name,
        description: t.description,
        progress_steps: t.progress_steps,
        prompt_snippet: t.prompt_snippet,
        input_schema,
        supported_chains: t.supported_chains,
        action_kinds: t.action_kinds,
    })
}

fn category(c: wit::Category) -> Category {
    match c {
        wit::Category::Data => Category::Data,
        wit::Category::Trading => Category::Trading,
        wit::Category::Lending => Category::Lending,
        wit::Category::Staking => Category::Staking,
        wit::Category::Restaking => Category::Restaking,
        wit::Category::Derivatives => Category::Derivatives,
        wit::Category::Yield => Category::Yield,
        wit::Category::Lp => Category::Lp,
        wit::Category::Vault => Category::Vault,
        wit::Category::Safety => Category::Safety,
        wit::Category::Intelligence => Category::Intelligence,
        wit::Category::Memory => Category::Memory,
        wit::Category::Identity => Category::Identity,
        wit::Category::Wallet => Category::Wallet,
        wit::Category::Streaming => Category::Streaming,
        wit::Category::Testnet => Category::Testnet,
        wit::Category::Bootstrap => Category::Bootstrap,
        wit::Category::Fees => Category::Fees,
    }
}

/// Bytes a plugin's plan carries: every string and call data, before any of it is parsed.
pub(crate) fn plan_size(p: &wit::WritePlan) -> usize {
    let calls: usize = p
        .calls
        .iter()
        .map(|c| c.call.to.len() + c.call.value.len() + c.call.data.len() + c.description.len())
        .sum();
    calls + p.expected_outcome_json.len()
}

/// The host's plan, or why the plugin's is unusable (a plugin bug, never executed half-parsed).
pub(crate) fn write_plan(p: wit::WritePlan) -> Result<WritePlan, String> {
    let calls = p
        .calls
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let to =
                c.call.to.parse().map_err(|_| format!("call {i}: `to` {:?} is not an address", c.call.to))?;
            let value = c.call.value.parse().map_err(|_| {
                format!("call {i}: `value` {:?} is not a decimal amount of wei", c.call.value)
            })?;
            Ok(PlannedCall {
                chain_id: c.call.chain_id,
                to,
                data: c.call.data.into(),
                value,
                description: c.description,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if calls.is_empty() {
        return Err("the plan has no calls".into());
    }
    let expected_outcome: serde_json::Value = serde_json::from_str(&p.expected_outcome_json)
        .map_err(|e| format!("expected outcome is not JSON: {e}"))?;
    if !expected_outcome.is_object() {
        return Err("expected outcome must be a JSON object".into());
    }
    Ok(WritePlan { calls, expected_outcome })
}
