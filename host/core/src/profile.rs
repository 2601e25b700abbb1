//! Profiles: which tool categories an operator's `bardo` runs with, composition (`trader,vault`),
//! per-tool overrides, and capability gating — the specification's table as its README resolves
//! the chapters: golem-tools-architecture's 13 profiles over its 17 categories, pi-integration's
//! extra profiles (`fees`, `erc8004`, `dashboard`) with their category sets, and `streaming` in
//! the profiles streaming-tools names (data, trader, lp, golem, full, dev).
//!
//! | profile      | categories                                                   | writes          |
//! |--------------|--------------------------------------------------------------|-----------------|
//! | active       | every category but testnet                                   | all             |
//! | observatory  | data, intelligence                                           | none            |
//! | conservative | data, trading, lp, safety                                    | not high-risk   |
//! | data         | data, streaming                                              | none            |
//! | trader       | data, trading, safety, streaming                             | all             |
//! | lp           | data, lp, safety, streaming                                  | all             |
//! | vault        | data, vault, safety                                          | all             |
//! | intelligence | data, intelligence                                           | none            |
//! | learning     | data, intelligence, memory                                   | all             |
//! | identity     | data, identity                                               | all             |
//! | golem        | every category but testnet                                   | all             |
//! | full         | every category but testnet                                   | all             |
//! | dev          | every category                                               | all             |
//! | fees         | data, fees                                                   | all             |
//! | erc8004      | data, identity                                               | all             |
//! | dashboard    | data, intelligence                                           | none            |
//!
//! Readings where the text is not explicit (the architecture chapter's table lost its column
//! alignment, so each row's "Yes" marks are read in the header's order): conservative's fourth
//! mark, after trading* and lp*, is read as `safety` (a risk-averse owner's configuration), and its
//! footnote ("no leverage, no flashloans, no complex multi-hop strategies") as "no write tool of
//! risk tier high"; learning's third mark is read as `intelligence` (pi-integration's
//! `self_improvement` is part of `memory` in the architecture chapter's capability table).
//! Where pi-integration gives an architecture profile other categories (data = data, identity;
//! lp adds trading) the architecture chapter holds. "Write Tools: None" makes a profile read-only.
//!
//! Capability gating (architecture chapter): every write tool needs `wallet`; tools that declare
//! `uniswap_api` need the API key; `memory`-category tools need `memory`, which counts only when
//! it is enabled *and* the `learning` profile is part of the spec.

use crate::tool::{CapabilityTier, Category, RequiredCapability, RiskTier, ToolDef};
use std::collections::BTreeSet;

use Category::*;

/// Which write tools a profile runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writes {
    /// None: the write path does not exist for it.
    None,
    /// Every write tool of its categories.
    All,
    /// Write tools below risk tier high (the conservative profile).
    NotHighRisk,
}

/// One row of the profile table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileDef {
    /// Its name in `--profile` and `[tools] profile`.
    pub name: &'static str,
    /// Its categories (`data` included).
    pub categories: &'static [Category],
    /// Which of their write tools it runs.
    pub writes: Writes,
    /// Where the specification defines it.
    pub source: &'static str,
}

/// Every category but testnet (`Category::ALL` ends with it).
const ALL_BUT_TESTNET: &[Category] = match Category::ALL.split_last() {
    Some((_, rest)) => rest,
    None => &[],
};

const ARCHITECTURE: &str = "golem-tools-architecture";
const PI: &str = "pi-integration, two-layer-adapter";

const fn row(
    name: &'static str,
    categories: &'static [Category],
    writes: Writes,
    source: &'static str,
) -> ProfileDef {
    ProfileDef { name, categories, writes, source }
}

/// The profile table, in the specification's order.
pub const PROFILES: &[ProfileDef] = &[
    row("active", ALL_BUT_TESTNET, Writes::All, ARCHITECTURE),
    row("observatory", &[Data, Intelligence], Writes::None, ARCHITECTURE),
    row("conservative", &[Data, Trading, Lp, Safety], Writes::NotHighRisk, ARCHITECTURE),
    row("data", &[Data, Streaming], Writes::None, ARCHITECTURE),
    row("trader", &[Data, Trading, Safety, Streaming], Writes::All, ARCHITECTURE),
    row("lp", &[Data, Lp, Safety, Streaming], Writes::All, ARCHITECTURE),
    row("vault", &[Data, Vault, Safety], Writes::All, ARCHITECTURE),
    row("intelligence", &[Data, Intelligence], Writes::None, ARCHITECTURE),
    row("learning", &[Data, Intelligence, Memory], Writes::All, ARCHITECTURE),
    row("identity", &[Data, Identity], Writes::All, ARCHITECTURE),
    row("golem", ALL_BUT_TESTNET, Writes::All, ARCHITECTURE),
    row("full", ALL_BUT_TESTNET, Writes::All, ARCHITECTURE),
    row("dev", &Category::ALL, Writes::All, ARCHITECTURE),
    row("fees", &[Data, Fees], Writes::All, PI),
    row("erc8004", &[Data, Identity], Writes::All, PI),
    row("dashboard", &[Data, Intelligence], Writes::None, PI),
];

/// The profile table for `bardo tools --profiles`: one line per profile, or JSON.
pub fn table(json: bool) -> String {
    let names = |p: &ProfileDef| p.categories.iter().map(|c| c.name()).collect::<Vec<_>>();
    if json {
        let rows: Vec<_> = PROFILES
            .iter()
            .map(|p| {
                serde_json::json!({"profile": p.name, "categories": names(p), "writes": p.writes, "source": p.source})
            })
            .collect();
        return serde_json::to_string_pretty(&rows).unwrap_or_default();
    }
    let mut out = format!("{:<13} {:<14} {:<34} categories\n", "profile", "writes", "source");
    for p in PROFILES {
        let writes = match p.writes {
            Writes::None => "none",
            Writes::All => "all",
            Writes::NotHighRisk => "not high-risk",
        };
        out += &format!("{:<13} {:<14} {:<34} {}\n", p.name, writes, p.source, names(p).join(", "));
    }
    out + "data is in every profile; compose with commas (trader,vault); [tools] enable/disable override"
}

/// The profiles of the table that run `tool` by its category and risk, in the table's order.
pub fn profiles_running(tool: &ToolDef) -> Vec<&'static str> {
    PROFILES
        .iter()
        .filter(|p| Profile::parse(p.name).is_ok_and(|profile| profile.runs_by_category(tool)))
        .map(|p| p.name)
        .collect()
}

/// The table's row for `name`.
pub fn profile_def(name: &str) -> Option<&'static ProfileDef> {
    PROFILES.iter().find(|p| p.name == name)
}

/// Errors in a profile specification.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProfileError {
    /// A name that is not in [`PROFILES`].
    #[error("unknown profile `{0}`; known profiles: {known}", known = PROFILES.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))]
    Unknown(String),
    /// An empty name in the spec (`trader,`); holds the whole spec.
    #[error("empty profile name in `{0}`; compose profiles as `trader,vault`")]
    Empty(String),
}

/// Whether a profile runs a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// In the catalog.
    Included,
    /// Not the profile's business (category not selected, or disabled).
    Excluded,
    /// Selected but missing a capability: skipped with a warning.
    Skipped {
        /// The first capability it needs that is not configured.
        missing: RequiredCapability,
        /// The warning to show.
        reason: String,
    },
}

/// One part of a resolved profile: categories and their write policy.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    categories: BTreeSet<Category>,
    writes: Writes,
}

/// A resolved profile: its parts (composition is the union of what each part runs), overrides
/// and the capabilities the operator has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    name: String,
    parts: Vec<Part>,
    categories: BTreeSet<Category>,
    learning: bool,
    enable: BTreeSet<String>,
    disable: BTreeSet<String>,
    capabilities: BTreeSet<CapabilityKey>,
}

/// `RequiredCapability` as an ordered key.
type CapabilityKey = u8;

fn key(c: RequiredCapability) -> CapabilityKey {
    c as u8
}

impl Profile {
    fn of(name: &str, parts: Vec<Part>, learning: bool) -> Self {
        let categories = parts.iter().flat_map(|p| p.categories.iter().copied()).collect();
        Self {
            name: name.to_owned(),
            parts,
            categories,
            learning,
            enable: BTreeSet::new(),
            disable: BTreeSet::new(),
            capabilities: BTreeSet::new(),
        }
    }

    /// Resolve `spec` (`trader` or `trader,vault`) with no overrides and no capabilities.
    pub fn parse(spec: &str) -> Result<Self, ProfileError> {
        let mut parts = Vec::new();
        for part in spec.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(ProfileError::Empty(spec.to_owned()));
            }
            let def = profile_def(part).ok_or_else(|| ProfileError::Unknown(part.to_owned()))?;
            // `data` is implicit in every profile (architecture chapter).
            let categories = def.categories.iter().copied().chain([Data]).collect();
            parts.push(Part { categories, writes: def.writes });
        }
        let learning = spec.split(',').any(|p| p.trim() == "learning");
        Ok(Self::of(spec, parts, learning))
    }

    /// A profile of exactly `categories` (plus `data`), named `name`: what an archetype that
    /// lists its categories runs with. It runs the write tools its categories have, and the
    /// memory tools when it lists `memory` (an archetype has no `learning` profile to name).
    pub fn custom(name: &str, categories: BTreeSet<Category>) -> Self {
        let mut categories = categories;
        categories.insert(Data);
        let learning = categories.contains(&Memory);
        Self::of(name, vec![Part { categories, writes: Writes::All }], learning)
    }

    /// Per-tool overrides: `enable` adds tools outside the categories, `disable` removes tools.
    pub fn with_overrides(mut self, enable: &[String], disable: &[String]) -> Self {
        self.enable = enable.iter().cloned().collect();
        self.disable = disable.iter().cloned().collect();
        self
    }

    /// The capabilities the operator has configured.
    pub fn with_capabilities(mut self, caps: impl IntoIterator<Item = RequiredCapability>) -> Self {
        self.capabilities = caps.into_iter().map(key).collect();
        self
    }

    /// The spec it was parsed from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its categories (the union of its parts').
    pub fn categories(&self) -> &BTreeSet<Category> {
        &self.categories
    }

    /// Whether it runs no write tools at all.
    pub fn read_only(&self) -> bool {
        self.parts.iter().all(|p| p.writes == Writes::None)
    }

    /// Whether the operator disabled `tool` of plugin `plugin` (`[tools] disable`: the tool's
    /// name, for every plugin that declares it, or `plugin:tool` for one plugin's).
    pub fn disables(&self, plugin: &str, tool: &str) -> bool {
        self.disable.contains(tool) || self.disable.contains(&format!("{plugin}:{tool}"))
    }

    /// Whether a capability counts: `memory` only with the `learning` profile.
    pub fn has(&self, c: RequiredCapability) -> bool {
        self.capabilities.contains(&key(c)) && (c != RequiredCapability::Memory || self.learning)
    }

    /// Whether one of the profile's parts runs `tool` by its category and risk (overrides and
    /// capabilities aside).
    fn runs_by_category(&self, tool: &ToolDef) -> bool {
        let write = tool.capability_tier != CapabilityTier::Read;
        self.parts.iter().any(|p| {
            p.categories.contains(&tool.category)
                && match p.writes {
                    Writes::All => true,
                    Writes::None => !write,
                    Writes::NotHighRisk => !write || tool.risk_tier < RiskTier::High,
                }
        })
    }

    /// Whether the profile runs `tool` of plugin `plugin`.
    pub fn select(&self, plugin: &str, tool: &ToolDef) -> Selection {
        if self.disables(plugin, &tool.name) {
            return Selection::Excluded;
        }
        if !self.enable.contains(&tool.name) && !self.runs_by_category(tool) {
            return Selection::Excluded;
        }
        let mut needs: Vec<RequiredCapability> = tool.requires.clone();
        if tool.capability_tier == CapabilityTier::Write {
            needs.push(RequiredCapability::Wallet);
        }
        if tool.category == Memory {
            needs.push(RequiredCapability::Memory);
        }
        match needs.into_iter().find(|c| !self.has(*c)) {
            Some(missing) => Selection::Skipped {
                missing,
                reason: match missing {
                    RequiredCapability::Memory if self.capabilities.contains(&key(missing)) => {
                        "needs the `memory` capability, which counts only with the `learning` profile".into()
                    }
                    _ => format!(
                        "needs the `{}` capability, which is not configured",
                        serde_json::to_value(missing)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default()
                    ),
                },
            },
            None => Selection::Included,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{RiskTier, SpriteTrigger, TickBudget};

    fn tool(
        name: &str,
        category: Category,
        tier: CapabilityTier,
        requires: &[RequiredCapability],
    ) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: String::new(),
            category,
            capability_tier: tier,
            risk_tier: RiskTier::None,
            tick_budget: TickBudget::Fast,
            progress_steps: vec![],
            sprite_trigger: SpriteTrigger::Thinking,
            prompt_snippet: String::new(),
            prompt_guidelines: vec![],
            input_schema: serde_json::json!({}),
            supported_chains: vec![],
            action_kinds: vec![],
            requires: requires.to_vec(),
            schema_version: 1,
        }
    }

    /// The table as the specification's chapters give it, spelled out independently of
    /// [`PROFILES`]: (profile, its categories, read-only).
    const SPEC: &[(&str, &str, bool)] = &[
        (
            "active",
            "data trading lending staking restaking derivatives yield lp vault safety intelligence memory identity wallet streaming bootstrap fees",
            false,
        ),
        ("observatory", "data intelligence", true),
        ("conservative", "data trading lp safety", false),
        ("data", "data streaming", true),
        ("trader", "data trading safety streaming", false),
        ("lp", "data lp safety streaming", false),
        ("vault", "data vault safety", false),
        ("intelligence", "data intelligence", true),
        ("learning", "data intelligence memory", false),
        ("identity", "data identity", false),
        (
            "golem",
            "data trading lending staking restaking derivatives yield lp vault safety intelligence memory identity wallet streaming bootstrap fees",
            false,
        ),
        (
            "full",
            "data trading lending staking restaking derivatives yield lp vault safety intelligence memory identity wallet streaming bootstrap fees",
            false,
        ),
        (
            "dev",
            "data trading lending staking restaking derivatives yield lp vault safety intelligence memory identity wallet streaming testnet bootstrap fees",
            false,
        ),
        ("fees", "data fees", false),
        ("erc8004", "data identity", false),
        ("dashboard", "data intelligence", true),
    ];

    #[test]
    fn the_table_cell_by_cell() {
        assert_eq!(PROFILES.len(), SPEC.len(), "16 profiles: 13 + fees, erc8004, dashboard");
        assert_eq!(Category::ALL.len(), 18, "the specification's 17 and fees");
        for (name, cats, read_only) in SPEC {
            let p = Profile::parse(name).expect("known profile");
            let want: BTreeSet<&str> = cats.split(' ').collect();
            for c in Category::ALL {
                assert_eq!(
                    p.categories().contains(&c),
                    want.contains(c.name()),
                    "profile {name}, category {}",
                    c.name()
                );
            }
            assert_eq!(p.read_only(), *read_only, "profile {name}");
        }
        for (i, c) in Category::ALL.into_iter().enumerate() {
            assert_eq!(Category::parse(c.name()), Some(c));
            assert_eq!(serde_json::to_value(c).expect("name"), c.name(), "serde agrees with name()");
            assert!(Category::ALL[..i].iter().all(|d| d.name() != c.name()));
        }
    }

    #[test]
    fn streaming_is_where_the_streaming_chapter_puts_it() {
        let with: Vec<&str> =
            PROFILES.iter().filter(|p| p.categories.contains(&Streaming)).map(|p| p.name).collect();
        // "data, trader, lp, golem, full, dev"; active equals golem in the architecture chapter.
        assert_eq!(with, ["active", "data", "trader", "lp", "golem", "full", "dev"]);
    }

    #[test]
    fn conservative_runs_no_high_risk_writes() {
        let p = Profile::parse("conservative")
            .expect("conservative")
            .with_capabilities([RequiredCapability::Wallet]);
        let swap = ToolDef {
            risk_tier: RiskTier::Medium,
            ..tool("uniswap_execute_swap", Trading, CapabilityTier::Write, &[])
        };
        let mint = ToolDef {
            risk_tier: RiskTier::High,
            ..tool("uniswap_add_liquidity", Lp, CapabilityTier::Write, &[])
        };
        let quote = ToolDef {
            risk_tier: RiskTier::High,
            ..tool("uniswap_get_position", Lp, CapabilityTier::Read, &[])
        };
        assert_eq!(p.select("p", &swap), Selection::Included);
        assert_eq!(p.select("p", &mint), Selection::Excluded);
        assert_eq!(p.select("p", &quote), Selection::Included, "the restriction is on writes");
        let both = Profile::parse("conservative,lp")
            .expect("composed")
            .with_capabilities([RequiredCapability::Wallet]);
        assert_eq!(
            both.select("p", &mint),
            Selection::Included,
            "composition is the union of what parts run"
        );
    }

    #[test]
    fn memory_counts_only_with_the_learning_profile() {
        let store = tool("memory_store_episode", Memory, CapabilityTier::Read, &[]);
        let golem = Profile::parse("golem").expect("golem").with_capabilities([RequiredCapability::Memory]);
        assert!(
            matches!(golem.select("p", &store), Selection::Skipped { reason, .. } if reason.contains("learning"))
        );
        let learning = Profile::parse("golem,learning")
            .expect("composed")
            .with_capabilities([RequiredCapability::Memory]);
        assert_eq!(learning.select("p", &store), Selection::Included);
        let off = Profile::parse("learning").expect("learning");
        assert!(matches!(
            off.select("p", &store),
            Selection::Skipped { missing: RequiredCapability::Memory, .. }
        ));
    }

    #[test]
    fn composition_is_the_union() {
        let p = Profile::parse("trader,vault").expect("composed");
        for c in [Data, Trading, Vault, Safety, Streaming] {
            assert!(p.categories().contains(&c), "missing {c:?}");
        }
        assert!(!p.categories().contains(&Lp));
        assert!(!p.read_only());
        assert!(Profile::parse("data,observatory").expect("read-only pair").read_only());
        let swap = tool("uniswap_execute_swap", Trading, CapabilityTier::Write, &[]);
        let mixed = Profile::parse("observatory,trader")
            .expect("mixed")
            .with_capabilities([RequiredCapability::Wallet]);
        assert_eq!(mixed.select("p", &swap), Selection::Included, "trader's part runs the swap");
    }

    #[test]
    fn bad_specs_are_typed_errors() {
        assert_eq!(Profile::parse("wizard"), Err(ProfileError::Unknown("wizard".into())));
        assert_eq!(Profile::parse("trader,"), Err(ProfileError::Empty("trader,".into())));
        assert!(ProfileError::Unknown("x".into()).to_string().contains("trader"));
    }

    #[test]
    fn categories_overrides_and_read_only() {
        let swap = tool("uniswap_execute_swap", Trading, CapabilityTier::Write, &[]);
        let pool = tool("uniswap_get_pool_info", Data, CapabilityTier::Read, &[]);
        let lp = tool("uniswap_get_position", Lp, CapabilityTier::Read, &[]);
        let data = Profile::parse("data").expect("data");
        assert_eq!(data.select("p", &pool), Selection::Included);
        assert_eq!(data.select("p", &lp), Selection::Excluded);
        assert_eq!(data.select("p", &swap), Selection::Excluded, "read-only profiles run no writes");
        let data = data.with_overrides(&["uniswap_get_position".into()], &["uniswap_get_pool_info".into()]);
        assert_eq!(data.select("p", &lp), Selection::Included, "enabled by override");
        assert_eq!(data.select("p", &pool), Selection::Excluded, "disabled by override");
        // `plugin:tool` disables one plugin's tool of that name, not another's.
        let one = Profile::parse("data")
            .expect("data")
            .with_overrides(&[], &["wallet:uniswap_get_pool_info".into()]);
        assert_eq!(one.select("wallet", &pool), Selection::Excluded);
        assert_eq!(one.select("uniswap", &pool), Selection::Included);
        assert!(
            one.disables("wallet", "uniswap_get_pool_info")
                && !one.disables("uniswap", "uniswap_get_pool_info")
        );
    }

    #[test]
    fn missing_capabilities_skip_with_a_reason() {
        let swap = tool("uniswap_execute_swap", Trading, CapabilityTier::Write, &[]);
        let routed = tool("uniswap_get_route", Data, CapabilityTier::Read, &[RequiredCapability::UniswapApi]);
        let trader = Profile::parse("trader").expect("trader");
        assert_eq!(
            trader.select("p", &swap),
            Selection::Skipped {
                missing: RequiredCapability::Wallet,
                reason: "needs the `wallet` capability, which is not configured".into()
            }
        );
        assert!(
            matches!(trader.select("p", &routed), Selection::Skipped { reason, .. } if reason.contains("uniswap_api"))
        );
        let equipped = trader.with_capabilities([RequiredCapability::Wallet, RequiredCapability::UniswapApi]);
        assert_eq!(equipped.select("p", &swap), Selection::Included);
        assert_eq!(equipped.select("p", &routed), Selection::Included);
    }
}
