//! `bardo identity register`: this host as an ERC-8004 agent with role `infrastructure`, its
//! registration file (on-chain) naming its A2A card, through the write path like any write —
//! previewed, simulated, permitted, committed — and the `[identity]` section that makes the
//! card name the registration in turn. `bardo identity set-uri`: a new registration file for
//! one of the wallet's agents — the operator's command, the only way such a change is planned
//! (no plugin's plan may change what an identity says: `scope::operator_only`).

use crate::write_cli::{print_write, with_write_path};
use anyhow::Result;
use bardo_core::Runtime;
use bardo_runtime::Config;
use clap::Subcommand;
use serde_json::json;
use std::process::ExitCode;

/// What a registration file says of the agent, and where it is planned.
#[derive(clap::Args)]
pub(crate) struct Registration {
    /// The agent card's URL as agents reach it (`bardo serve --a2a` serves
    /// `http://HOST:PORT/.well-known/agent-card.json`).
    #[arg(long)]
    card_url: String,
    /// The chain of the Identity Registry (`[settings] identity` names its registries).
    #[arg(long, default_value_t = 31337)]
    chain_id: u64,
    /// The agent's name.
    #[arg(long, default_value = "Bardo Tools")]
    name: String,
    /// What it offers.
    #[arg(
        long,
        default_value = "DeFi tools for agents over A2A: chain reads, and writes previewed, \
                                   simulated and permitted before the caller confirms them."
    )]
    description: String,
    /// The profile whose identity plugin plans it (one with the `identity` category).
    #[arg(long, default_value = "erc8004")]
    profile: String,
}

#[derive(Subcommand)]
pub(crate) enum IdentityAction {
    /// Register this host (role `infrastructure`) with a registration file naming its A2A card,
    /// then print the `[identity]` section for bardo.toml.
    Register {
        #[command(flatten)]
        registration: Registration,
    },
    /// Replace the registration file of one of the wallet's agents (its agentURI), naming its
    /// A2A card and its own registration: the operator's command, previewed and committed here.
    SetUri {
        /// The agent.
        #[arg(long)]
        agent_id: u64,
        #[command(flatten)]
        registration: Registration,
    },
}

pub(crate) fn run(config: &Config, action: IdentityAction, rt: &Runtime) -> Result<ExitCode> {
    match action {
        IdentityAction::Register { registration } => register(config, &registration, rt),
        IdentityAction::SetUri { agent_id, registration: r } => {
            let params = json!({
                "chain_id": r.chain_id,
                "agent_id": agent_id,
                "registration": {"name": r.name, "description": r.description, "a2a_card": r.card_url},
            });
            with_write_path(config, Some(&r.profile), rt, |path| {
                match path.preview_by_operator("identity-set-uri", &params) {
                    Ok(permit) => print_write(path.commit(&permit.permit_id)),
                    Err(e) => print_write::<()>(Err(e)),
                }
            })
        }
    }
}

/// `bardo identity register`.
fn register(config: &Config, r: &Registration, rt: &Runtime) -> Result<ExitCode> {
    let params = json!({
        "chain_id": r.chain_id,
        "registration": {"name": r.name, "description": r.description, "a2a_card": r.card_url, "role": "infrastructure"},
        "metadata": {"role": "infrastructure"},
    });
    with_write_path(config, Some(&r.profile), rt, |path| {
        let permit = match path.preview("identity-register", &params) {
            Ok(permit) => permit,
            Err(e) => return print_write::<()>(Err(e)),
        };
        let done = path.commit(&permit.permit_id);
        if let Ok(result) = &done {
            let (registry, id) = (&result.actual["agent_registry"], &result.actual["agent_id"]);
            if let (Some(registry), Some(id)) = (registry.as_str(), id.as_str()) {
                eprintln!(
                    "registered agent {id} in {registry}; add to bardo.toml so the card names it:\n\n\
                     [identity]\nagent_registry = \"{registry}\"\nagent_id = {id}\n"
                );
            }
        }
        print_write(done)
    })
}
