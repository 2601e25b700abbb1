//! The `echo` test plugin, grown: it adds a write tool, so an update to it needs approval.
include!("../../echo/echo.rs");

use bardo_sdk::{CapabilityTier, PlannedCall, Receipt, RiskTier, WritePlan, WriteTool};

/// Params of `echo_plan_nothing`.
#[derive(Deserialize, JsonSchema)]
pub struct NothingParams {}

pub struct Nothing;

impl WriteTool for Nothing {
    const NAME: &'static str = "echo_plan_nothing";
    type Params = NothingParams;

    fn def() -> ToolDef {
        ToolDef {
            capability_tier: CapabilityTier::Write,
            risk_tier: RiskTier::Low,
            action_kinds: vec!["nothing".into()],
            ..tool_def::<NothingParams>(Self::NAME, "Plans no calls.", Category::Testnet)
        }
    }

    fn plan(_: NothingParams) -> Result<WritePlan, Error> {
        let calls: Vec<PlannedCall> = Vec::new();
        Ok(WritePlan { calls, expected_outcome_json: "{}".into() })
    }

    fn verify(_: NothingParams, _: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        Ok(serde_json::json!({}))
    }
}

bardo_sdk::plugin! { name: "echo", read: [Version], write: [Nothing] }
