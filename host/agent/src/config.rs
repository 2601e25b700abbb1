//! `[agent]` in bardo.toml: what the agent-facing tools keep and search, and the speculation
//! engine's settings.

use bardo_core::config::Section;
use serde::Deserialize;
use std::path::PathBuf;

/// `[agent]`: what the agent-facing tools keep and search.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// The grimoire: committed actions and standing directives (SQLite).
    pub grimoire: PathBuf,
    /// The operator's context files `search_context` ranks; missing ones are skipped.
    pub context: Vec<PathBuf>,
    /// Where `bardo serve --a2a` keeps its tasks (a directory, one file a task).
    pub a2a_tasks: PathBuf,
    /// Prefetch the reads that usually follow a read (the speculation engine).
    pub speculation: bool,
    /// The probability from which a next read is prefetched.
    pub speculation_threshold: f64,
    /// A tick: prefetched results are kept this long at most, then discarded.
    pub tick_secs: u64,
    /// Where the learned co-occurrence counts are kept.
    pub speculation_file: PathBuf,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            grimoire: PathBuf::from(".bardo/grimoire.sqlite"),
            context: vec![PathBuf::from("PLAYBOOK.md"), PathBuf::from("STRATEGY.md")],
            a2a_tasks: PathBuf::from(".bardo/a2a-tasks"),
            speculation: false,
            speculation_threshold: crate::speculation::DEFAULT_THRESHOLD,
            tick_secs: 30,
            speculation_file: PathBuf::from(".bardo/speculation.json"),
        }
    }
}

impl Section for AgentConfig {
    const NAME: &'static str = "agent";
}
