//! The memory tools: each checks its params (by schema) and asks the host's store.

use bardo_sdk::{Category, Error, ReadTool, ToolDef, described, errors, memory};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

fn def<P: JsonSchema>(name: &str, description: &str) -> ToolDef {
    described::<P>(name, description, Category::Memory, &[])
}

/// The host's JSON answer as a value.
fn parsed(text: String) -> Result<Value, Error> {
    serde_json::from_str(&text)
        .map_err(|e| errors::internal(format!("the memory store answered no JSON: {e}")))
}

/// Results per page: 10 unless asked, at most 100.
fn limit(n: Option<u32>) -> u32 {
    n.unwrap_or(10)
}

/// What came of an episode.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It worked.
    Success,
    /// It did not.
    Failure,
    /// The safety chain refused it.
    Blocked,
    /// Not known yet.
    Unknown,
}

/// Params of `memory_store_episode`.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EpisodeParams {
    /// What kind of episode: `swap`, `supply`, `observation`, … (1 to 64 characters).
    pub kind: String,
    /// What was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    /// What was decided, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<String>,
    /// What was done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    /// What came of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The outcome in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Tags; `mev` and `emergency` make it decay slower.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Facts as `key: value` (venue, pair, …): what insights compare.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub context: BTreeMap<String, String>,
    /// Links to the host's records (`{"permit_id": "…"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Value>,
}

/// `memory_store_episode`.
pub struct StoreEpisode;
impl ReadTool for StoreEpisode {
    const NAME: &'static str = "memory_store_episode";
    type Params = EpisodeParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<EpisodeParams>(
            Self::NAME,
            "Remember an episode: what was observed, decided and done, and what came of it. It is searchable by \
             words and meaning at once; it fades with time unless retrieved. Writes the host executes or blocks \
             are recorded without asking.",
        )
    }
    fn run(p: EpisodeParams) -> Result<Value, Error> {
        let text = serde_json::to_string(&p).map_err(|e| errors::internal(e.to_string()))?;
        parsed(memory::store_episode(&text)?)
    }
}

/// Params of `memory_search_episodes`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// What to look for, in any words: episodes are matched by meaning as well as by words.
    pub query: String,
    /// How many (1 to 100; default 10).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `memory_search_episodes`.
pub struct SearchEpisodes;
impl ReadTool for SearchEpisodes {
    const NAME: &'static str = "memory_search_episodes";
    type Params = SearchParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<SearchParams>(
            Self::NAME,
            "Search memory: the episodes that best match a query by words and by meaning (a paraphrase finds \
             them), best first, each with its retention. `mode` says `lexical` when the host has no embedding \
             model, and why.",
        )
    }
    fn run(p: SearchParams) -> Result<Value, Error> {
        parsed(memory::search(&p.query, limit(p.limit))?)
    }
}

/// Params naming one episode.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdParams {
    /// The episode's id.
    pub id: i64,
}

/// `memory_get_episode`.
pub struct GetEpisode;
impl ReadTool for GetEpisode {
    const NAME: &'static str = "memory_get_episode";
    type Params = IdParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<IdParams>(
            Self::NAME,
            "One episode with its reflections and retention; retrieving it strengthens it.",
        )
    }
    fn run(p: IdParams) -> Result<Value, Error> {
        parsed(memory::get_episode(p.id)?)
    }
}

/// Params of `memory_reflect_outcome`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReflectParams {
    /// The episode reflected on.
    pub id: i64,
    /// The critique: what went right or wrong against what was expected, and what to do next time.
    pub critique: String,
}

/// `memory_reflect_outcome`.
pub struct ReflectOutcome;
impl ReadTool for ReflectOutcome {
    const NAME: &'static str = "memory_reflect_outcome";
    type Params = ReflectParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<ReflectParams>(
            Self::NAME,
            "Reflect on an episode's outcome (Reflexion): attach a critique — predicted against actual, and \
             what to do next time — that later searches find with it.",
        )
    }
    fn run(p: ReflectParams) -> Result<Value, Error> {
        parsed(memory::reflect(p.id, &p.critique)?)
    }
}

/// Params of `memory_get_insights`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InsightsParams {
    /// Only insights about episodes of this kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// How many (1 to 100; default 10).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `memory_get_insights`.
pub struct GetInsights;
impl ReadTool for GetInsights {
    const NAME: &'static str = "memory_get_insights";
    type Params = InsightsParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<InsightsParams>(
            Self::NAME,
            "Insights: rules distilled from the successes and failures of past episodes (what the failures \
             share and the successes lack, with the episodes behind each rule), and those agents added; \
             strongest first.",
        )
    }
    fn run(p: InsightsParams) -> Result<Value, Error> {
        parsed(memory::insights(p.kind.as_deref(), limit(p.limit))?)
    }
}

/// Params of `memory_add_insight`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddInsightParams {
    /// The kind of episode it is about.
    #[serde(default)]
    pub kind: Option<String>,
    /// The insight, as a rule to follow.
    pub text: String,
    /// The episodes it was drawn from.
    #[serde(default)]
    pub evidence: Vec<i64>,
}

/// `memory_add_insight`.
pub struct AddInsight;
impl ReadTool for AddInsight {
    const NAME: &'static str = "memory_add_insight";
    type Params = AddInsightParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<AddInsightParams>(
            Self::NAME,
            "Keep an insight of your own, citing the episodes it was drawn from.",
        )
    }
    fn run(p: AddInsightParams) -> Result<Value, Error> {
        parsed(memory::add_insight(p.kind.as_deref(), &p.text, &p.evidence)?)
    }
}

/// Params of `memory_forget_episodes`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetParams {
    /// Episodes to forget.
    #[serde(default)]
    pub ids: Vec<i64>,
    /// Also forget every episode whose retention fell under this (0 to 1; 0.05 is about three
    /// weeks unused).
    #[serde(default)]
    pub below_retention: Option<f64>,
}

/// `memory_forget_episodes`.
pub struct ForgetEpisodes;
impl ReadTool for ForgetEpisodes {
    const NAME: &'static str = "memory_forget_episodes";
    type Params = ForgetParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<ForgetParams>(
            Self::NAME,
            "Forget episodes: those named, and those whose retention decayed under a threshold (retention falls \
             with time, e^(-t/S), and each retrieval makes it last half as long again).",
        )
    }
    fn run(p: ForgetParams) -> Result<Value, Error> {
        if p.ids.is_empty() && p.below_retention.is_none() {
            return Err(errors::invalid_params("name `ids`, or a `below_retention` threshold, or both"));
        }
        let forgotten = memory::forget(&p.ids, p.below_retention)?;
        Ok(serde_json::json!({"forgotten": forgotten}))
    }
}

/// Params of `memory_export_episodes`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportParams {
    /// Start after this episode id (0: from the first).
    #[serde(default)]
    pub after: i64,
    /// How many (1 to 100; default 10).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `memory_export_episodes`.
pub struct ExportEpisodes;
impl ReadTool for ExportEpisodes {
    const NAME: &'static str = "memory_export_episodes";
    type Params = ExportParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<ExportParams>(
            Self::NAME,
            "Export episodes, oldest first, a page at a time (`after`: the last id of the previous page), in \
             the form `memory_import_episodes` takes.",
        )
    }
    fn run(p: ExportParams) -> Result<Value, Error> {
        parsed(memory::export_episodes(p.after, limit(p.limit))?)
    }
}

/// Params of `memory_import_episodes`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportParams {
    /// Episodes as `memory_export_episodes` gives them (at most 1,000).
    pub episodes: Vec<Value>,
}

/// `memory_import_episodes`.
pub struct ImportEpisodes;
impl ReadTool for ImportEpisodes {
    const NAME: &'static str = "memory_import_episodes";
    type Params = ImportParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<ImportParams>(
            Self::NAME,
            "Import exported episodes; those already held (by their uid) are skipped. Returns the ids added.",
        )
    }
    fn run(p: ImportParams) -> Result<Value, Error> {
        let text = serde_json::to_string(&p.episodes).map_err(|e| errors::internal(e.to_string()))?;
        Ok(serde_json::json!({"imported": memory::import_episodes(&text)?}))
    }
}

/// No params.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// `memory_get_status`.
pub struct GetStatus;
impl ReadTool for GetStatus {
    const NAME: &'static str = "memory_get_status";
    type Params = NoParams;
    type Output = Value;
    fn def() -> ToolDef {
        def::<NoParams>(
            Self::NAME,
            "What memory holds (episodes, how many embedded, insights), where it lives, and whether it searches \
             by meaning or, without a model, by words only (and why).",
        )
    }
    fn run(_: NoParams) -> Result<Value, Error> {
        parsed(memory::status()?)
    }
}
