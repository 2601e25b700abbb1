//! `bardo archetypes …` and `--archetype NAME`: the delegation graph checked and printed, and a
//! command scoped to one archetype's tools (its profile) and delegations.

use anyhow::{Result, bail};
use bardo_core::archetype::{Archetype, Archetypes};
use bardo_runtime::config::Config;
use bardo_runtime::setup::ARCHETYPE;
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum ArchetypesAction {
    /// Validate the archetypes (`--file`, else bardo.toml's `archetypes`, else the built-in set):
    /// acyclic, explicit, safety-first, depth ≤ 3, terminal nodes never delegate. Exit 1 lists
    /// every violation.
    Check {
        #[arg(long)]
        file: Option<PathBuf>,
    },
    /// The graph level by level: each archetype, whether it writes, and its delegates.
    List {
        #[arg(long)]
        file: Option<PathBuf>,
        /// Print JSON: each archetype with its level, profile, role and delegates (or the
        /// violations, exit 1).
        #[arg(long)]
        json: bool,
    },
    /// Print the built-in set (the specification's hierarchy) as TOML, to copy and edit.
    Defaults,
}

/// The archetypes `file` (else the configuration) defines; their violations as the error.
fn load(config: &Config, file: Option<PathBuf>) -> Result<Result<Archetypes, Vec<String>>> {
    let Some(file) = file else {
        return Ok(config.archetypes().map_err(|e| vec![e.to_string()]));
    };
    let text =
        std::fs::read_to_string(&file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    Ok(Archetypes::parse(&text).map_err(|errors| errors.iter().map(ToString::to_string).collect()))
}

fn role(a: &Archetype) -> &'static str {
    if a.terminal {
        "terminal"
    } else if a.writes {
        "writes"
    } else {
        "reads"
    }
}

fn line(depth: usize, a: &Archetype) -> String {
    let role = role(a);
    let delegates =
        if a.delegates_to.is_empty() { String::new() } else { format!(" -> {}", a.delegates_to.join(", ")) };
    format!("{}{} ({role}; {}){delegates}", "  ".repeat(depth), a.name, a.profile.name())
}

pub(crate) fn run(config: &Config, action: ArchetypesAction) -> Result<ExitCode> {
    match action {
        ArchetypesAction::Defaults => {
            print!("{}", Archetypes::defaults_toml());
            Ok(ExitCode::SUCCESS)
        }
        ArchetypesAction::List { file, json: true } => {
            let (value, code) = match load(config, file)? {
                Ok(set) => {
                    let list: Vec<_> = set
                        .levels()
                        .into_iter()
                        .map(|(level, a)| {
                            serde_json::json!({
                                "name": a.name,
                                "description": a.description,
                                "level": level,
                                "profile": a.profile.name(),
                                "role": role(a),
                                "writes": a.writes,
                                "terminal": a.terminal,
                                "delegates_to": a.delegates_to,
                            })
                        })
                        .collect();
                    (serde_json::json!({ "archetypes": list }), ExitCode::SUCCESS)
                }
                Err(errors) => (serde_json::json!({ "violations": errors }), ExitCode::from(1)),
            };
            println!("{}", serde_json::to_string_pretty(&value)?);
            Ok(code)
        }
        ArchetypesAction::Check { file } | ArchetypesAction::List { file, .. } => match load(config, file)? {
            Ok(set) => {
                for (depth, a) in set.levels() {
                    println!("{}", line(depth, a));
                }
                println!(
                    "{} archetypes; the delegation graph is valid (acyclic, explicit, safety-first, depth <= 3, terminal nodes never delegate)",
                    set.iter().count()
                );
                Ok(ExitCode::SUCCESS)
            }
            Err(errors) => {
                for e in &errors {
                    eprintln!("error: {e}");
                }
                eprintln!("{} violation(s)", errors.len());
                Ok(ExitCode::from(1))
            }
        },
    }
}

/// `--archetype NAME` for a command with a `--profile`: the profile spec naming the archetype.
pub(crate) fn spec(profile: &mut Option<String>, archetype: &Option<String>) -> Result<()> {
    if let Some(name) = archetype {
        if profile.is_some() {
            bail!("give --profile or --archetype, not both");
        }
        *profile = Some(format!("{ARCHETYPE}{name}"));
    }
    Ok(())
}

/// What `bardo tools --archetype NAME` adds: the archetype's delegates.
pub(crate) fn delegations(config: &Config, spec: &str) -> Result<Option<String>> {
    let Some(name) = spec.strip_prefix(ARCHETYPE) else { return Ok(None) };
    let set = config.archetypes()?;
    let Some(a) = set.get(name) else { return Ok(None) };
    Ok(Some(if a.delegates_to.is_empty() {
        format!("archetype `{name}` delegates to nobody{}", if a.terminal { " (terminal)" } else { "" })
    } else {
        format!("archetype `{name}` may delegate to: {}", a.delegates_to.join(", "))
    }))
}
