//! Profiles: which tool categories an operator's `bardo` runs with, composition (`trader,vault`),
//! per-tool overrides, and capability gating.
//!
//! | profile      | categories (plus `data`, implicit in every profile)                          |
//! |--------------|-------------------------------------------------------------------------------|
//! | data         | data                                                                          |
//! | observatory  | streaming, dashboard, intelligence — read-only                                |
//! | conservative | wallet, safety, lending, vault                                                |
//! | trader       | trading, wallet, safety, streaming                                            |
//! | lp           | liquidity, fees, wallet, safety, streaming                                    |
//! | vault        | vault, lending, wallet, safety                                                |
//! | fees         | fees, wallet, safety                                                          |
//! | erc8004      | identity, reputation                                                          |
//! | intelligence | intelligence, streaming                                                       |
//! | learning     | learning, memory                                                              |
//! | dashboard    | dashboard, streaming                                                          |
//! | identity     | identity, reputation, wallet                                                  |
//! | active       | trading, liquidity, lending, vault, fees, wallet, safety, streaming           |
//! | golem        | active + identity, reputation, intelligence, memory, learning, dashboard      |
//! | full         | every category but dev                                                        |
//! | dev          | every category                                                                |

use crate::tool::{CapabilityTier, Category, RequiredCapability, ToolDef};
use std::collections::BTreeSet;

use Category::*;

const ACTIVE: &[Category] = &[Trading, Liquidity, Lending, Vault, Fees, Wallet, Safety, Streaming];

/// Every profile name and its own categories (`data` is added to all; `golem` adds `active`'s,
/// `full` and `dev` are computed from [`Category::ALL`] in [`categories_of`]).
pub const PROFILES: &[(&str, &[Category])] = &[
    ("data", &[]),
    ("observatory", &[Streaming, Dashboard, Intelligence]),
    ("conservative", &[Wallet, Safety, Lending, Vault]),
    ("trader", &[Trading, Wallet, Safety, Streaming]),
    ("lp", &[Liquidity, Fees, Wallet, Safety, Streaming]),
    ("vault", &[Vault, Lending, Wallet, Safety]),
    ("fees", &[Fees, Wallet, Safety]),
    ("erc8004", &[Identity, Reputation]),
    ("intelligence", &[Intelligence, Streaming]),
    ("learning", &[Learning, Memory]),
    ("dashboard", &[Dashboard, Streaming]),
    ("identity", &[Identity, Reputation, Wallet]),
    ("active", ACTIVE),
    ("golem", &[Identity, Reputation, Intelligence, Memory, Learning, Dashboard]),
    ("full", &[]),
    ("dev", &[]),
];

/// The categories of one named profile.
fn categories_of(name: &str, own: &[Category]) -> BTreeSet<Category> {
    match name {
        "golem" => ACTIVE.iter().chain(own).copied().collect(),
        "full" => Category::ALL.into_iter().filter(|c| *c != Dev).collect(),
        "dev" => Category::ALL.into_iter().collect(),
        _ => own.iter().copied().collect(),
    }
}

/// Profiles that never run write tools, whatever the categories say.
const READ_ONLY: &[&str] = &["data", "observatory", "intelligence", "dashboard", "learning", "erc8004"];

/// Errors in a profile specification.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProfileError {
    /// A name that is not in [`PROFILES`].
    #[error("unknown profile `{0}`; known profiles: {known}", known = PROFILES.iter().map(|p| p.0).collect::<Vec<_>>().join(", "))]
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

/// A resolved profile: categories, overrides and the capabilities the operator has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    name: String,
    categories: BTreeSet<Category>,
    read_only: bool,
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
    /// Resolve `spec` (`trader` or `trader,vault`) with no overrides and no capabilities.
    pub fn parse(spec: &str) -> Result<Self, ProfileError> {
        let mut categories = BTreeSet::from([Data]);
        let mut read_only = true;
        for part in spec.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(ProfileError::Empty(spec.to_owned()));
            }
            let (_, own) = PROFILES
                .iter()
                .find(|(n, _)| *n == part)
                .ok_or_else(|| ProfileError::Unknown(part.to_owned()))?;
            categories.extend(categories_of(part, own));
            read_only &= READ_ONLY.contains(&part);
        }
        Ok(Self {
            name: spec.to_owned(),
            categories,
            read_only,
            enable: BTreeSet::new(),
            disable: BTreeSet::new(),
            capabilities: BTreeSet::new(),
        })
    }

    /// A profile of exactly `categories` (plus `data`), named `name`: what an archetype that
    /// lists its categories runs with. It may run write tools when its categories have them.
    pub fn custom(name: &str, categories: BTreeSet<Category>) -> Self {
        let mut categories = categories;
        categories.insert(Data);
        Self {
            name: name.to_owned(),
            categories,
            read_only: false,
            enable: BTreeSet::new(),
            disable: BTreeSet::new(),
            capabilities: BTreeSet::new(),
        }
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

    /// Its categories.
    pub fn categories(&self) -> &BTreeSet<Category> {
        &self.categories
    }

    /// Whether it runs no write tools at all.
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// Whether the operator disabled `tool` (`[tools] disable`).
    pub fn disables(&self, tool: &str) -> bool {
        self.disable.contains(tool)
    }

    /// Whether the profile runs `tool`.
    pub fn select(&self, tool: &ToolDef) -> Selection {
        if self.disable.contains(&tool.name) {
            return Selection::Excluded;
        }
        let wanted = self.enable.contains(&tool.name) || self.categories.contains(&tool.category);
        if !wanted {
            return Selection::Excluded;
        }
        if self.read_only && tool.capability_tier != CapabilityTier::Read && !self.enable.contains(&tool.name)
        {
            return Selection::Excluded;
        }
        let mut needs: Vec<RequiredCapability> = tool.requires.clone();
        if tool.capability_tier == CapabilityTier::Write {
            needs.push(RequiredCapability::Wallet);
        }
        match needs.into_iter().find(|c| !self.capabilities.contains(&key(*c))) {
            Some(missing) => Selection::Skipped {
                missing,
                reason: format!(
                    "needs the `{}` capability, which is not configured",
                    serde_json::to_value(missing)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                ),
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
        }
    }

    #[test]
    fn every_profile_parses_and_includes_data() {
        assert_eq!(PROFILES.len(), 16);
        for (name, _) in PROFILES {
            let p = Profile::parse(name).expect("known profile");
            assert!(p.categories().contains(&Data), "{name} lacks data");
        }
        assert_eq!(Profile::parse("dev").expect("dev").categories().len(), 17);
        assert!(!Profile::parse("full").expect("full").categories().contains(&Dev));
    }

    #[test]
    fn composition_is_the_union() {
        let p = Profile::parse("trader,vault").expect("composed");
        for c in [Data, Trading, Vault, Lending, Wallet, Safety, Streaming] {
            assert!(p.categories().contains(&c), "missing {c:?}");
        }
        assert!(!p.categories().contains(&Liquidity));
        assert!(!p.read_only());
        assert!(Profile::parse("data,observatory").expect("read-only pair").read_only());
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
        let lp = tool("uniswap_get_position", Liquidity, CapabilityTier::Read, &[]);
        let data = Profile::parse("data").expect("data");
        assert_eq!(data.select(&pool), Selection::Included);
        assert_eq!(data.select(&lp), Selection::Excluded);
        assert_eq!(data.select(&swap), Selection::Excluded, "read-only profiles run no writes");
        let data = data.with_overrides(&["uniswap_get_position".into()], &["uniswap_get_pool_info".into()]);
        assert_eq!(data.select(&lp), Selection::Included, "enabled by override");
        assert_eq!(data.select(&pool), Selection::Excluded, "disabled by override");
    }

    #[test]
    fn missing_capabilities_skip_with_a_reason() {
        let swap = tool("uniswap_execute_swap", Trading, CapabilityTier::Write, &[]);
        let routed = tool("uniswap_get_route", Data, CapabilityTier::Read, &[RequiredCapability::UniswapApi]);
        let trader = Profile::parse("trader").expect("trader");
        assert_eq!(
            trader.select(&swap),
            Selection::Skipped {
                missing: RequiredCapability::Wallet,
                reason: "needs the `wallet` capability, which is not configured".into()
            }
        );
        assert!(
            matches!(trader.select(&routed), Selection::Skipped { reason, .. } if reason.contains("uniswap_api"))
        );
        let equipped = trader.with_capabilities([RequiredCapability::Wallet, RequiredCapability::UniswapApi]);
        assert_eq!(equipped.select(&swap), Selection::Included);
        assert_eq!(equipped.select(&routed), Selection::Included);
    }
}
