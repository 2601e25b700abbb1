//! What the hooks' unit tests share: a proposal for a plan, decided by one hook (no chain,
//! no plugin).

use super::{Decision, Findings, Proposal, SafetyHook};
use crate::declared::Declared;
pub(crate) use alloy::primitives::{Address, Bytes, U256, address};
use alloy::sol_types::SolCall;
pub(crate) use bardo_core::error::ErrorCode;
pub(crate) use bardo_core::tool::{
    CapabilityTier, Category, PlannedCall, RiskTier, SpriteTrigger, TickBudget,
};
pub(crate) use bardo_core::tool::{Phase, ToolDef, WritePlan};
pub(crate) use bardo_evm::changes::ChangeSet;
pub(crate) use bardo_evm::simulate::{CallOutcome, Simulation};
use serde_json::json;

pub(crate) const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");
pub(crate) const TOKEN: Address = address!("0x00000000000000000000000000000000000000c1");
pub(crate) const ROUTER: Address = address!("0x00000000000000000000000000000000000000d1");
pub(crate) const STRANGER: Address = address!("0x00000000000000000000000000000000000000e1");

pub(crate) fn tool() -> ToolDef {
    ToolDef {
        name: "test_write".into(),
        description: String::new(),
        category: Category::Testnet,
        capability_tier: CapabilityTier::Write,
        risk_tier: RiskTier::Low,
        tick_budget: TickBudget::Fast,
        progress_steps: Vec::new(),
        sprite_trigger: SpriteTrigger::Executing,
        prompt_snippet: String::new(),
        prompt_guidelines: Vec::new(),
        input_schema: json!({}),
        supported_chains: Vec::new(),
        action_kinds: vec!["swap".into()],
        requires: Vec::new(),
        schema_version: 1,
    }
}

pub(crate) fn call(to: Address, data: Vec<u8>) -> PlannedCall {
    PlannedCall { chain_id: 1, to, data: Bytes::from(data), value: U256::ZERO, description: String::new() }
}

pub(crate) fn approve(spender: Address, amount: U256) -> PlannedCall {
    call(TOKEN, super::approval_guard::approveCall { spender, amount }.abi_encode())
}

/// Run `hook` on a plan of `calls` declaring `expected`, in `phase`, as action `kind`.
pub(crate) fn decide(
    hook: &dyn SafetyHook,
    kind: &str,
    phase: Phase,
    calls: Vec<PlannedCall>,
    expected: serde_json::Value,
    found: &mut Findings,
) -> Decision {
    let tool = tool();
    let plan = WritePlan { calls, expected_outcome: expected };
    let declared = Declared::parse(&plan.expected_outcome);
    let p = Proposal {
        declared: &declared,
        permit_id: "permit-test",
        kind,
        tool: &tool,
        chain_id: 1,
        sender: WALLET,
        plan: &plan,
        phase,
        operator: false,
    };
    hook.check(&p, found)
}

pub(crate) fn code(d: &Decision) -> Option<ErrorCode> {
    match d {
        Decision::Allow => None,
        Decision::Reject { code, .. } => Some(*code),
    }
}

pub(crate) fn reason(d: &Decision) -> &str {
    match d {
        Decision::Allow => "",
        Decision::Reject { reason, .. } => reason,
    }
}
