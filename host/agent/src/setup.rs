//! The agent-facing tools `[agent]` configures over a write path: the grimoire and the
//! operator's context files (those that do not exist are skipped), and the speculation engine.

use crate::adapter::Adapter;
use crate::adapter::grimoire::{Grimoire, GrimoireError};
use crate::config::AgentConfig;
use crate::speculation::Speculator;
use bardo_core::config::ConfigError;
use bardo_core::error::ToolError;
use bardo_runtime::Config;
use bardo_safety::WritePath;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why the agent's tools could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// `[agent]` is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The agent's grimoire could not be opened.
    #[error(transparent)]
    Grimoire(#[from] GrimoireError),
    /// The speculation engine's settings or file are unusable.
    #[error("{0}")]
    Speculation(String),
    /// The write path has no host to read with.
    #[error(transparent)]
    Host(#[from] ToolError),
}

/// The agent-facing tools over `path`'s current generation.
pub fn adapter(config: &Config, path: Arc<WritePath>) -> Result<Adapter, SetupError> {
    let agent: AgentConfig = config.section()?;
    let grimoire_path = config.resolve(&agent.grimoire);
    if let Some(dir) = grimoire_path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let grimoire = Grimoire::open(&grimoire_path)?;
    let files: Vec<PathBuf> =
        agent.context.iter().map(|f| config.resolve(f)).filter(|f| f.exists()).collect();
    let files: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
    let adapter = Adapter::new(path, grimoire, &files)?;
    if !agent.speculation {
        return Ok(adapter);
    }
    if !(0.0..=1.0).contains(&agent.speculation_threshold) || agent.speculation_threshold == 0.0 {
        return Err(SetupError::Speculation(format!(
            "[agent] speculation_threshold is {}; it is a probability in (0, 1]",
            agent.speculation_threshold
        )));
    }
    let tick = std::time::Duration::from_secs(agent.tick_secs.max(1));
    let speculator = Speculator::new(Default::default(), tick, agent.speculation_threshold)
        .persisted(config.resolve(&agent.speculation_file))
        .map_err(SetupError::Speculation)?;
    Ok(adapter.with_speculation(Arc::new(speculator)))
}
