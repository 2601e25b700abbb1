//! Building a [`ToolDef`] with the defaults of a fast, riskless read tool, or of a write tool.

use crate::{CapabilityTier, Category, RiskTier, SpriteTrigger, TickBudget, ToolDef};
use schemars::JsonSchema;

/// A `ToolDef` for `P`'s JSON Schema with read-tool defaults: read tier, no risk, fast budget,
/// no progress steps, the `thinking` sprite, any chain, schema version 1. Override fields with struct update
/// syntax: `ToolDef { risk_tier: RiskTier::Medium, ..tool_def::<P>(..) }`.
pub fn tool_def<P: JsonSchema>(name: &str, description: &str, category: Category) -> ToolDef {
    let schema = schema::<P>();
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
        input_schema: schema.to_string(),
        supported_chains: Vec::new(),
        action_kinds: Vec::new(),
        requires: Vec::new(),
        schema_version: 1,
    }
}

/// `P`'s JSON Schema as every client reads it: an optional field is the field's own type (it may
/// be left out), not a `["string", "null"]` type array or an `anyOf` with a `null` branch, which
/// several clients' schema dialects (and the MCP Inspector's `--strict`) do not accept.
pub fn schema<P: JsonSchema>() -> serde_json::Value {
    let mut schema = schemars::schema_for!(P).to_value();
    without_null(&mut schema);
    schema
}

/// Remove `null` from every `type` array and `enum`, and every `null` branch of an `anyOf`
/// (a single branch left takes the `anyOf`'s place).
fn without_null(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(o) => {
            if let Some(Value::Array(types)) = o.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    o.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(values)) = o.get_mut("enum") {
                values.retain(|e| !e.is_null());
            }
            if let Some(Value::Array(branches)) = o.get_mut("anyOf") {
                branches.retain(|b| b.get("type").is_none_or(|t| t != "null"));
                if branches.len() == 1
                    && let Some(Value::Object(only)) =
                        o.remove("anyOf").and_then(|mut b| b.as_array_mut()?.pop())
                {
                    for (k, value) in only {
                        o.entry(k).or_insert(value);
                    }
                }
            }
            o.values_mut().for_each(without_null);
        }
        Value::Array(a) => a.iter_mut().for_each(without_null),
        _ => {}
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
/// a [`write_def`] in `category` with `steps` on `chains` (one of [`crate::chains`]), and
/// `plan(Action::Variant, p)` / `verify(Action::Variant, p, receipts)`.
#[macro_export]
macro_rules! action_tools {
    (
        params: $params:ty, category: $category:ident, action: $action:ident,
        plan: $plan:path, verify: $verify:path, steps: $steps:expr, chains: $chains:expr;
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
                        supported_chains: $chains.to_vec(),
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

#[cfg(test)]
mod tests {
    use serde_json::Value;

    #[derive(schemars::JsonSchema)]
    #[expect(dead_code, reason = "only its schema is read")]
    struct Params {
        chain_id: u64,
        fee: Option<u32>,
        token: Option<String>,
        nested: Option<Inner>,
    }

    #[derive(schemars::JsonSchema)]
    #[expect(dead_code, reason = "only its schema is read")]
    struct Inner {
        at: Option<u64>,
    }

    /// Every `type` a single name, never a `["…", "null"]` array or a `{"type": "null"}` branch.
    fn portable(v: &Value) -> bool {
        match v {
            Value::Object(o) => {
                !o.get("type").is_some_and(|t| t.is_array() || t == "null") && o.values().all(portable)
            }
            Value::Array(a) => a.iter().all(portable),
            _ => true,
        }
    }

    #[test]
    fn optional_fields_are_their_own_type_and_not_required() {
        let schema = super::schema::<Params>();
        assert!(portable(&schema), "{schema}");
        assert_eq!(schema["properties"]["fee"]["type"], "integer", "{schema}");
        assert_eq!(schema["required"], serde_json::json!(["chain_id"]), "{schema}");
    }
}
