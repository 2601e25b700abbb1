//! The host's view of a tool: its definition as declared in a plugin manifest.

use serde::Serialize;

/// A tool's domain: the specification's 17 categories (golem-tools-architecture, "17 tool
/// categories") in its order but `testnet` last, plus `fees`, which pi-integration's fees
/// profile selects. Mirrors `bardo:plugin/types.category`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// On-chain data reads, pool state, token info, portfolio, P&L.
    Data,
    /// Swap execution, quotes, approvals, order management.
    Trading,
    /// Supply, borrow, repay, health factor monitoring.
    Lending,
    /// Liquid staking deposits, withdrawals, reward tracking.
    Staking,
    /// Restaking, AVS delegation, LRT management.
    Restaking,
    /// Perpetuals, options, hedging strategies.
    Derivatives,
    /// Yield aggregators, PT/YT tokenization.
    Yield,
    /// Liquidity provision and position management.
    Lp,
    /// ERC-4626 vault operations.
    Vault,
    /// Simulation, risk assessment, circuit breakers.
    Safety,
    /// MEV scoring, IL calc, venue comparison, regime classification.
    Intelligence,
    /// Episodic and semantic memory, self-improvement.
    Memory,
    /// ERC-8004 agent identity, reputation.
    Identity,
    /// Wallet policy, funding, session keys.
    Wallet,
    /// Event Fabric live data subscriptions.
    Streaming,
    /// First-run setup and provisioning.
    Bootstrap,
    /// Protocol fee collection (token jars, fee switches); the fees profile's category.
    Fees,
    /// Local testnet management (only the `dev` profile); last, so every other category is
    /// `ALL` but the last.
    Testnet,
}

impl Category {
    /// Every category, in declaration order.
    pub const ALL: [Category; 18] = [
        Self::Data,
        Self::Trading,
        Self::Lending,
        Self::Staking,
        Self::Restaking,
        Self::Derivatives,
        Self::Yield,
        Self::Lp,
        Self::Vault,
        Self::Safety,
        Self::Intelligence,
        Self::Memory,
        Self::Identity,
        Self::Wallet,
        Self::Streaming,
        Self::Bootstrap,
        Self::Fees,
        Self::Testnet,
    ];

    /// Its name as configuration and output spell it (`lp`, `testnet`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Data => "data",
            Self::Trading => "trading",
            Self::Lending => "lending",
            Self::Staking => "staking",
            Self::Restaking => "restaking",
            Self::Derivatives => "derivatives",
            Self::Yield => "yield",
            Self::Lp => "lp",
            Self::Vault => "vault",
            Self::Safety => "safety",
            Self::Intelligence => "intelligence",
            Self::Memory => "memory",
            Self::Identity => "identity",
            Self::Wallet => "wallet",
            Self::Streaming => "streaming",
            Self::Testnet => "testnet",
            Self::Bootstrap => "bootstrap",
            Self::Fees => "fees",
        }
    }

    /// The category named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Read, write or privileged. Ordered by power, so growth can be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapabilityTier {
    /// Reads only: no plan, no state change anywhere.
    Read,
    /// Plans on-chain writes that the host checks, simulates, signs and sends.
    Write,
    /// Changes the host's own state or policy; refused in a plugin.
    Privileged,
}

/// Value at risk. Ordered, so growth can be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RiskTier {
    /// Cannot move or lose value.
    None,
    /// Small, bounded exposure (e.g. an exact approval).
    Low,
    /// Moves funds within policy limits (a swap).
    Medium,
    /// Creates leveraged or long-lived exposure (a borrow, a concentrated position).
    High,
}

/// The wall-clock budget of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TickBudget {
    /// 1 s.
    Fast,
    /// 5 s.
    Medium,
    /// 15 s.
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
    /// Nothing to show.
    Idle,
    /// Working something out.
    Thinking,
    /// Carrying out an action.
    Executing,
    /// Something went well.
    Success,
    /// Something failed.
    Failure,
    /// Needs attention.
    Alert,
}

/// The agent's survival phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Healthy: every action allowed.
    Thriving,
    /// Wary: every action still allowed; guidelines advise care.
    Cautious,
    /// Only swaps and reducing actions.
    Defensive,
    /// Only reducing actions (remove liquidity, collect, repay, withdraw).
    Survival,
    /// Halted: no writes at all.
    Terminal,
}

/// An operator capability a tool can require (capability gating: a tool whose requirement is
/// not configured is skipped). Not the write path's `safety::capability::Capability<T>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequiredCapability {
    /// A signing key is configured.
    Wallet,
    /// A Uniswap API key is configured.
    UniswapApi,
    /// The agent memory store is enabled.
    Memory,
}

/// Guidance for one phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PhaseGuideline {
    /// The phase it applies to.
    pub phase: Phase,
    /// What to do or avoid with this tool in that phase.
    pub guideline: String,
}

/// Everything declared about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ToolDef {
    /// Unique name, `<prefix>_<action>_<subject>`, e.g. `uniswap_get_pool_info`.
    pub name: String,
    /// When to use the tool, what it does and what it does not do.
    pub description: String,
    /// Its domain.
    pub category: Category,
    /// Read, write or privileged.
    pub capability_tier: CapabilityTier,
    /// Value at risk.
    pub risk_tier: RiskTier,
    /// Wall-clock budget of one call.
    pub tick_budget: TickBudget,
    /// Names of the progress steps the tool reports.
    pub progress_steps: Vec<String>,
    /// Animation to play while it runs.
    pub sprite_trigger: SpriteTrigger,
    /// One line for the model's system prompt.
    pub prompt_snippet: String,
    /// Per-phase guidance.
    pub prompt_guidelines: Vec<PhaseGuideline>,
    /// JSON Schema of the params, parsed.
    pub input_schema: serde_json::Value,
    /// Chains the tool works on; empty = any configured chain.
    pub supported_chains: Vec<u64>,
    /// Agent action kinds this tool implements (`swap`, `supply`, ...), for write tools.
    pub action_kinds: Vec<String>,
    /// Operator capabilities the tool needs besides its tier.
    pub requires: Vec<RequiredCapability>,
    /// The version of its params and result schemas, from 1; every result carries it.
    pub schema_version: u32,
}

/// A plugin's self-description.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Manifest {
    /// Plugin name, e.g. `uniswap`.
    pub name: String,
    /// Plugin semver, e.g. `0.1.0`.
    pub version: String,
    /// Every tool the plugin implements.
    pub tools: Vec<ToolDef>,
}

/// One step of a write plan, as the host will sign and send it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PlannedCall {
    /// The chain the call is for.
    pub chain_id: u64,
    /// The contract (or account) called.
    #[serde(serialize_with = "checksummed")]
    pub to: alloy_primitives::Address,
    /// ABI-encoded call data.
    pub data: alloy_primitives::Bytes,
    /// Wei, serialized as a decimal string.
    #[serde(serialize_with = "decimal", deserialize_with = "from_decimal")]
    pub value: alloy_primitives::U256,
    /// What the step does, for humans.
    pub description: String,
}

/// A write a plugin proposes: calls in order and the outcome it expects.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct WritePlan {
    /// Calls to execute in order, from the host's wallet.
    pub calls: Vec<PlannedCall>,
    /// A JSON object (amounts, position ids, ...).
    pub expected_outcome: serde_json::Value,
}

/// Serialize an address in its EIP-55 checksummed form.
pub fn checksummed<S: serde::Serializer>(a: &alloy_primitives::Address, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&a.to_checksum(None))
}

fn decimal<S: serde::Serializer>(v: &alloy_primitives::U256, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

fn from_decimal<'de, D: serde::Deserializer<'de>>(d: D) -> Result<alloy_primitives::U256, D::Error> {
    let text = <String as serde::Deserialize>::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}

/// Events one call keeps; later ones are counted in [`CallEvents::dropped`].
pub const MAX_EVENTS: usize = 256;

/// One event a tool emitted while it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToolEvent {
    /// The tool reached progress step `step`.
    Progress {
        /// Index into the tool's `progress_steps`.
        step: u32,
        /// Time since the call started, µs.
        elapsed_us: u64,
    },
    /// A domain event.
    Emit {
        /// The event's kind, as the plugin named it.
        kind: String,
        /// Its payload, a JSON object.
        payload: serde_json::Value,
    },
}

/// The events of one call, bounded so a chatty or hostile plugin cannot flood the host.
#[derive(Debug, Default, Clone, Serialize)]
pub struct CallEvents {
    /// Kept events, in order.
    pub events: Vec<ToolEvent>,
    /// Events and log lines dropped (over a cap, or an invalid payload).
    pub dropped: u32,
    /// Log lines seen.
    pub log_lines: u32,
}

impl CallEvents {
    /// Keep `event`, or count it as dropped past [`MAX_EVENTS`].
    pub fn push(&mut self, event: ToolEvent) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        } else {
            self.dropped += 1;
        }
    }
}
