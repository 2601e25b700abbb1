//! `[safety] confirm`: which commits wait for a human, and through which channels a human's
//! answer counts. A permit the policy holds is committed only once a person confirmed it through
//! a channel the operator accepts (`via`) — by default `bardo confirm`, `bardo tui`, the approval
//! page and the operator's token over A2A; never, unless the operator opts in, an MCP client's
//! elicitation, since an agent *is* the MCP client — and the write path itself refuses it before
//! then (`confirmation-required`), whichever door asks. Whether a permit waits is decided at
//! preview and sealed into it: a door with a laxer policy cannot commit it unconfirmed.
//!
//! ```toml
//! [safety]
//! confirm = "above_usd = 100"      # every profile
//! # or per profile (a composed profile takes the strictest of its parts), and the channels:
//! [safety.confirm]
//! default = "never"
//! trader = "always"
//! via = ["cli", "tui", "page", "a2a-operator"]   # the default; add "mcp-elicitation" only
//!                                                  # where a person, not an agent, is the client
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// When a commit waits for a human.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConfirmPolicy {
    /// Never (the default): a permit commits when its caller asks.
    #[default]
    Never,
    /// Every commit.
    Always,
    /// Commits whose plan spends more than this many whole USD, valued at the host's trusted
    /// prices; a plan whose spend cannot be valued waits too.
    AboveUsd(u64),
}

impl ConfirmPolicy {
    /// Whether a plan that spends `spend_usd` (None: could not be valued) waits for a human.
    pub fn requires(self, spend_usd: Option<f64>) -> bool {
        match self {
            Self::Never => false,
            Self::Always => true,
            Self::AboveUsd(limit) => spend_usd.is_none_or(|usd| usd > limit as f64),
        }
    }

    /// The stricter of two policies.
    fn stricter(self, other: Self) -> Self {
        match (self, other) {
            (Self::Always, _) | (_, Self::Always) => Self::Always,
            (Self::AboveUsd(a), Self::AboveUsd(b)) => Self::AboveUsd(a.min(b)),
            (p @ Self::AboveUsd(_), Self::Never) | (Self::Never, p) => p,
        }
    }
}

impl fmt::Display for ConfirmPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Never => write!(f, "confirm = \"never\""),
            Self::Always => write!(f, "confirm = \"always\""),
            Self::AboveUsd(usd) => write!(f, "confirm = \"above_usd = {usd}\""),
        }
    }
}

impl FromStr for ConfirmPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        match s {
            "never" => return Ok(Self::Never),
            "always" => return Ok(Self::Always),
            _ => {}
        }
        let usd = s
            .strip_prefix("above_usd")
            .and_then(|rest| rest.trim_start().strip_prefix('='))
            .map(str::trim)
            .and_then(|n| n.replace('_', "").parse::<u64>().ok());
        usd.map(Self::AboveUsd).ok_or_else(|| {
            format!("`{s}` is not a confirmation policy: say \"never\", \"always\" or \"above_usd = N\" (whole USD)")
        })
    }
}

impl<'de> Deserialize<'de> for ConfirmPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// Where a person's confirmation comes from. Each is a principal other than the agent only as
/// far as the operator keeps the agent away from it (docs/operators.md: run the agent as another
/// user); MCP elicitation is answered by whatever the MCP client is, so it is off by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// `bardo confirm PERMIT_ID`, run by someone who can read the host key.
    Cli,
    /// `y` in `bardo tui`, run by someone who can read the host key.
    Tui,
    /// The approval page of `bardo serve` (`/operator`), with the operator's token or session.
    Page,
    /// `{"confirm": true}` over A2A with the operator's token.
    A2aOperator,
    /// An MCP client's answer to the host's elicitation: opt in only for a door a person faces.
    McpElicitation,
}

impl Channel {
    /// The channels accepted when `via` is not configured: every one but MCP elicitation.
    pub const DEFAULT: [Self; 4] = [Self::Cli, Self::Tui, Self::Page, Self::A2aOperator];

    /// Its name in `via` and in the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cli => "cli",
            Self::Tui => "tui",
            Self::Page => "page",
            Self::A2aOperator => "a2a-operator",
            Self::McpElicitation => "mcp-elicitation",
        }
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[safety] confirm`: one policy for every profile, or a table of profile → policy (`default`
/// for the profiles it does not name) and the channels a confirmation may come through (`via`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ConfirmSetting {
    /// The same for every profile.
    All(ConfirmPolicy),
    /// Per profile.
    PerProfile {
        /// The channels a confirmation counts through (default [`Channel::DEFAULT`]).
        #[serde(default)]
        via: Option<Vec<Channel>>,
        /// Profile name → policy.
        #[serde(flatten)]
        profiles: BTreeMap<String, ConfirmPolicy>,
    },
}

impl Default for ConfirmSetting {
    fn default() -> Self {
        Self::All(ConfirmPolicy::Never)
    }
}

impl ConfirmSetting {
    /// The policy of profile spec `spec` (`trader` or `trader,lp`): the strictest of its parts.
    pub fn for_profile(&self, spec: &str) -> ConfirmPolicy {
        match self {
            Self::All(policy) => *policy,
            Self::PerProfile { profiles, .. } => {
                let default = profiles.get("default").copied().unwrap_or_default();
                spec.split(',')
                    .map(|p| profiles.get(p.trim()).copied().unwrap_or(default))
                    .fold(ConfirmPolicy::Never, ConfirmPolicy::stricter)
            }
        }
    }

    /// The channels a confirmation counts through.
    pub fn via(&self) -> Vec<Channel> {
        match self {
            Self::PerProfile { via: Some(via), .. } => via.clone(),
            _ => Channel::DEFAULT.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_from_the_words_the_configuration_uses() {
        assert_eq!("never".parse(), Ok(ConfirmPolicy::Never));
        assert_eq!(" always ".parse(), Ok(ConfirmPolicy::Always));
        assert_eq!("above_usd = 100".parse(), Ok(ConfirmPolicy::AboveUsd(100)));
        assert_eq!("above_usd=1_000".parse(), Ok(ConfirmPolicy::AboveUsd(1000)));
        let bad = "sometimes".parse::<ConfirmPolicy>().expect_err("not a policy");
        assert!(bad.contains("\"never\", \"always\" or \"above_usd = N\""), "{bad}");
        assert!("above_usd = -5".parse::<ConfirmPolicy>().is_err());
        assert_eq!(ConfirmPolicy::AboveUsd(100).to_string(), "confirm = \"above_usd = 100\"");
    }

    #[test]
    fn a_threshold_holds_what_it_cannot_value() {
        let p = ConfirmPolicy::AboveUsd(100);
        assert!(!p.requires(Some(100.0)));
        assert!(p.requires(Some(100.01)));
        assert!(p.requires(None));
        assert!(ConfirmPolicy::Always.requires(Some(0.0)));
        assert!(!ConfirmPolicy::Never.requires(None));
    }

    #[test]
    fn a_composed_profile_takes_the_strictest_of_its_parts() {
        let table: ConfirmSetting = serde_json::from_str(
            r#"{"default": "above_usd = 500", "lp": "above_usd = 50", "data": "never", "trader": "always"}"#,
        )
        .expect("a table");
        assert_eq!(table.for_profile("data"), ConfirmPolicy::Never);
        assert_eq!(table.for_profile("lending"), ConfirmPolicy::AboveUsd(500));
        assert_eq!(table.for_profile("lending,lp"), ConfirmPolicy::AboveUsd(50));
        assert_eq!(table.for_profile("lp, trader"), ConfirmPolicy::Always);
        let all: ConfirmSetting = serde_json::from_str(r#""always""#).expect("one policy");
        assert_eq!(all.for_profile("data"), ConfirmPolicy::Always);
        assert_eq!(all.via(), Channel::DEFAULT, "MCP elicitation only when the operator opts in");
        assert_eq!(table.via(), Channel::DEFAULT);
    }

    #[test]
    fn the_channels_a_confirmation_counts_through_are_the_operators_to_name() {
        let table: ConfirmSetting = toml::from_str(
            r#"trader = "always"
via = ["cli", "mcp-elicitation"]"#,
        )
        .expect("a table with via");
        assert_eq!(table.for_profile("trader"), ConfirmPolicy::Always);
        assert_eq!(table.via(), [Channel::Cli, Channel::McpElicitation]);
        assert!(toml::from_str::<ConfirmSetting>(r#"via = ["telepathy"]"#).is_err(), "an unknown channel");
    }
}
