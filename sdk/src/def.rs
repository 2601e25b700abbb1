//! Building a [`ToolDef`] with the defaults of a fast, riskless read tool, or of a write tool.

use crate::{CapabilityTier, Category, RiskTier, SpriteTrigger, TickBudget, ToolDef};
use schemars::JsonSchema;

/// A `ToolDef` for `P`'s JSON Schema with read-tool defaults: read tier, no risk, fast budget,
/// no progress steps, the `thinking` sprite, any chain, schema version 1. Override fields with struct update
/// syntax: `ToolDef { risk_tier: RiskTier::Medium, ..tool_def::<P>(..) }`.
pub fn tool_def<P: JsonSchema>(name: &str, description: &str, category: Category) -> ToolDef {
    let schema = schemars::schema_for!(P);
    ToolDef {
        name: name.to_owned(),
        description: description.to_owned(),
        category,
        capability_tier: CapabilityTier::Read,
        risk_tier: RiskTier::None,
        tick_budget: TickBudget::Fast,
        progress_steps: Vec::new(),
        sprite_trigger: SpriteTrigger::Thinking,
        prompt_snippet: String::new(),
        prompt_guidelines: Vec::new(),
        // A schema always serializes; the fallback keeps this function infallible.
        input_schema: serde_json::to_string(&schema).unwrap_or_else(|_| "{}".to_owned()),
        supported_chains: Vec::new(),
        action_kinds: Vec::new(),
        requires: Vec::new(),
        schema_version: 1,
    }
}

/// [`tool_def`] with what most tools set besides: a prompt snippet naming the tool with the
/// first sentence of its description ([`snippet`]), and `steps` as its progress steps.
pub fn described<P: JsonSchema>(
    name: &str,
    description: &str,
    category: Category,
    steps: &[&str],
) -> ToolDef {
    ToolDef {
        prompt_snippet: snippet(name, description),
        progress_steps: steps.iter().map(|s| (*s).to_owned()).collect(),
        ..tool_def::<P>(name, description, category)
    }
}

/// [`tool_def`] for a write tool serving the action kind `kind`: write tier, `risk`, a medium
/// budget, the `executing` sprite, `steps` as its progress steps and a snippet from the
/// description (override it with struct update syntax, as any field).
pub fn write_def<P: JsonSchema>(
    name: &str,
    description: &str,
    category: Category,
    (kind, risk): (&str, RiskTier),
    steps: &[&str],
) -> ToolDef {
    ToolDef {
        capability_tier: CapabilityTier::Write,
        risk_tier: risk,
        tick_budget: TickBudget::Medium,
        sprite_trigger: SpriteTrigger::Executing,
        action_kinds: vec![kind.to_owned()],
        ..described::<P>(name, description, category, steps)
    }
}

/// `name: ` and the first sentence of `description`: a tool's one-line prompt snippet.
pub fn snippet(name: &str, description: &str) -> String {
    format!("{name}: {}", description.split(". ").next().unwrap_or(description))
}

/// Per-phase guidance from `(phase, text)` pairs, for [`ToolDef::prompt_guidelines`].
pub fn guidelines(items: &[(crate::Phase, &str)]) -> Vec<crate::PhaseGuideline> {
    items
        .iter()
        .map(|(phase, text)| crate::PhaseGuideline { phase: *phase, guideline: (*text).to_owned() })
        .collect()
}

/// Write tools that share one `plan` and one `verify` function, told apart by a variant of an
/// action enum: for each `(Type, "name", Variant, "kind", Risk, "description", "snippet",
/// [Phase: "guideline", ...])`, a unit struct implementing [`crate::WriteTool`] with `params`,
/// a [`write_def`] in `category` with `steps`, and `plan(Action::Variant, p)` /
/// `verify(Action::Variant, p, receipts)`.
#[macro_export]
macro_rules! action_tools {
    (
        params: $params:ty, category: $category:ident, action: $action:ident,
        plan: $plan:path, verify: $verify:path, steps: $steps:expr;
        $(($ty:ident, $name:literal, $variant:ident, $kind:literal, $risk:ident, $desc:literal, $snippet:literal,
            [$($phase:ident: $g:literal),* $(,)?])),+ $(,)?
    ) => {
        $(
            pub struct $ty;

            impl $crate::WriteTool for $ty {
                const NAME: &'static str = $name;
                type Params = $params;

                fn def() -> $crate::ToolDef {
                    $crate::ToolDef {
                        prompt_snippet: ::std::string::String::from($snippet),
                        prompt_guidelines: $crate::guidelines(&[$(($crate::Phase::$phase, $g)),*]),
                        ..$crate::write_def::<$params>(
                            $name,
                            $desc,
                            $crate::Category::$category,
                            ($kind, $crate::RiskTier::$risk),
                            $steps,
                        )
                    }
                }

                fn plan(p: $params) -> ::std::result::Result<$crate::WritePlan, $crate::Error> {
                    $plan($action::$variant, p)
                }

                fn verify(
                    p: $params,
                    receipts: ::std::vec::Vec<$crate::Receipt>,
                ) -> ::std::result::Result<$crate::serde_json::Value, $crate::Error> {
                    $verify($action::$variant, p, receipts)
                }
            }
        )+
    };
}
