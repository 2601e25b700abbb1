//! The host's view of a tool: its definition as declared in a plugin manifest.

use serde::Serialize;

/// A tool's domain (17 categories; mirrors `bardo:plugin/types.category`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Data,
    Trading,
    Liquidity,
    Lending,
    Vault,
    Fees,
    Streaming,
    Wallet,
    Safety,
    Identity,
    Reputation,
    Intelligence,
    Memory,
    Learning,
    Dashboard,
    Governance,
    Dev,
}

impl Category {
    /// Every category, in declaration order.
    pub const ALL: [Category; 17] = [
        Self::Data,
        Self::Trading,
        Self::Liquidity,
        Self::Lending,
        Self::Vault,
        Self::Fees,
        Self::Streaming,
        Self::Wallet,
        Self::Safety,
        Self::Identity,
        Self::Reputation,
        Self::Intelligence,
        Self::Memory,
        Self::Learning,
        Self::Dashboard,
        Self::Governance,
        Self::Dev,
    ];
}

/// Read, write or privileged. Ordered by power, so growth can be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapabilityTier {
    Read,
    Write,
    Privileged,
}

/// Value at risk. Ordered, so growth can be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RiskTier {
    None,
    Low,
    Medium,
    High,
}

/// The wall-clock budget of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TickBudget {
    Fast,
    Medium,
    Slow,
}

impl TickBudget {
    /// The budget in milliseconds: fast 1 s, medium 5 s, slow 15 s.
    pub fn millis(self) -> u64 {
        match self {
            Self::Fast => 1_000,
            Self::Medium => 5_000,
            Self::Slow => 15_000,
        }
    }
}

/// Animation an agent UI plays for the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpriteTrigger {
    Idle,
    Thinking,
    Executing,
    Success,
    Failure,
    Alert,
}

/// The agent's survival phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Thriving,
    Cautious,
    Defensive,
    Survival,
    Terminal,
}

/// An operator capability a tool can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// A signing key is configured.
    Wallet,
    /// A Uniswap API key is configured.
    UniswapApi,
    /// The agent memory store is enabled.
    Memory,
}

/// Guidance for one phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhaseGuideline {
    pub phase: Phase,
    pub guideline: String,
}

/// Everything declared about a tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub category: Category,
    pub capability_tier: CapabilityTier,
    pub risk_tier: RiskTier,
    pub tick_budget: TickBudget,
    pub progress_steps: Vec<String>,
    pub sprite_trigger: SpriteTrigger,
    pub prompt_snippet: String,
    pub prompt_guidelines: Vec<PhaseGuideline>,
    /// JSON Schema of the params, parsed.
    pub input_schema: serde_json::Value,
    pub supported_chains: Vec<u64>,
    pub action_kinds: Vec<String>,
    pub requires: Vec<Capability>,
}

/// A plugin's self-description.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub tools: Vec<ToolDef>,
}

/// One step of a write plan, as the host will sign and send it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PlannedCall {
    pub chain_id: u64,
    #[serde(serialize_with = "checksummed")]
    pub to: alloy::primitives::Address,
    pub data: alloy::primitives::Bytes,
    /// Wei, serialized as a decimal string.
    #[serde(serialize_with = "decimal", deserialize_with = "from_decimal")]
    pub value: alloy::primitives::U256,
    /// What the step does, for humans.
    pub description: String,
}

/// A write a plugin proposes: calls in order and the outcome it expects.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct WritePlan {
    pub calls: Vec<PlannedCall>,
    /// A JSON object (amounts, position ids, ...).
    pub expected_outcome: serde_json::Value,
}

pub(crate) fn checksummed<S: serde::Serializer>(
    a: &alloy::primitives::Address,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(&a.to_checksum(None))
}

fn decimal<S: serde::Serializer>(v: &alloy::primitives::U256, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

fn from_decimal<'de, D: serde::Deserializer<'de>>(d: D) -> Result<alloy::primitives::U256, D::Error> {
    let text = <String as serde::Deserialize>::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}
