//! What memory holds: episodes (observed, decided, done, and what came of it), the critiques
//! reflected on them, and insights.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// What came of an episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It worked.
    Success,
    /// It did not.
    Failure,
    /// The safety chain refused it before anything happened.
    Blocked,
    /// Not known (yet).
    #[default]
    Unknown,
}

impl Outcome {
    /// For insights: success, failure, or not comparable.
    pub fn succeeded(self) -> Option<bool> {
        match self {
            Self::Success => Some(true),
            Self::Failure | Self::Blocked => Some(false),
            Self::Unknown => None,
        }
    }
}

/// An episode as it is stored.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NewEpisode {
    /// What kind of episode (`swap`, `write.executed`, `write.blocked`, `observation`, …).
    pub kind: String,
    /// What was observed.
    #[serde(default)]
    pub observed: String,
    /// What was decided, and why.
    #[serde(default)]
    pub decided: String,
    /// What was done.
    #[serde(default)]
    pub done: String,
    /// What came of it.
    #[serde(default)]
    pub outcome: Outcome,
    /// The outcome in words.
    #[serde(default)]
    pub result: String,
    /// Tags (`mev`, `emergency` and `outcome-divergence` change how it decays and is replayed).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Facts as `key: value` (venue, pair, hook …): what insights compare.
    #[serde(default)]
    pub context: BTreeMap<String, String>,
    /// Links to the host's records (`permit_id`, the command that shows them).
    #[serde(default)]
    pub links: Value,
}

impl NewEpisode {
    /// The text searched by words and embedded.
    pub fn text(&self) -> String {
        let context: Vec<String> = self.context.iter().map(|(k, v)| format!("{k} {v}")).collect();
        [
            self.kind.as_str(),
            &self.observed,
            &self.decided,
            &self.done,
            &self.result,
            &self.tags.join(" "),
            &context.join(" "),
        ]
        .iter()
        .filter(|s| !s.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join(". ")
    }

    /// Its tags and `key=value` context, lowercased: what insights compare.
    pub fn features(&self) -> std::collections::BTreeSet<String> {
        let tags = self.tags.iter().map(|t| t.to_lowercase());
        let context = self.context.iter().map(|(k, v)| format!("{}={}", k.to_lowercase(), v.to_lowercase()));
        tags.chain(context).collect()
    }
}

/// A critique reflected on an episode (Reflexion).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Reflection {
    /// When, Unix ms.
    pub at_ms: i64,
    /// The critique: what went wrong or right, and what to do next time.
    pub critique: String,
}

/// A stored episode.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Episode {
    /// Its id in this host's store.
    pub id: i64,
    /// Its id everywhere (the fleet, exports).
    pub uid: String,
    /// The host that recorded it.
    pub origin: String,
    /// When, Unix ms.
    pub at_ms: i64,
    /// The episode.
    #[serde(flatten)]
    pub body: NewEpisode,
    /// Critiques reflected on it, oldest first.
    pub reflections: Vec<Reflection>,
    /// Retention now, 0..1 (Ebbinghaus).
    pub retention: f64,
    /// Stability, days.
    pub stability_days: f64,
    /// Times retrieved.
    pub uses: u32,
    /// Whether it has an embedding (searchable by meaning).
    pub embedded: bool,
}

/// An episode as exported and imported: what another store needs to hold the same memory.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Exported {
    /// Its id everywhere.
    pub uid: String,
    /// The host that recorded it.
    pub origin: String,
    /// When, Unix ms.
    pub at_ms: i64,
    /// The episode.
    pub episode: NewEpisode,
    /// Critiques reflected on it.
    #[serde(default)]
    pub reflections: Vec<Reflection>,
    /// Its embedding, when the exporting store had one (recomputed on import otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<Vec<f32>>,
}
