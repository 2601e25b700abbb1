//! `bardo devnet up | down`: anvil with every contract deployed (from the snapshot), the repo's
//! plugin settings, allowlist and pricing written next to the config.

use anyhow::{Context, Result};
use bardo_core::Runtime;
use bardo_devnet as devnet;
use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum DevnetAction {
    /// Install what is missing, start the devnet, print its RPC URL; runs until Ctrl-C.
    Up {
        /// Start in the background and return; stop it with `bardo devnet down`.
        #[arg(long)]
        detach: bool,
        /// Port to listen on.
        #[arg(long, default_value_t = 18545)]
        port: u16,
    },
    /// Stop a devnet started with `--detach`.
    Down,
}

/// The devnet's `devnet/` (its package.json pins anvil and the contract artifacts): next to the
/// config, else in the current directory, else in the checkout this binary was built from — so
/// a config kept elsewhere still finds it.
fn devnet_dir(base: &Path) -> Result<PathBuf> {
    let built_from = crate::built_from("devnet");
    let candidates = [base.join("devnet"), PathBuf::from("devnet"), built_from];
    candidates.iter().find(|d| d.join("package.json").is_file()).cloned().ok_or_else(|| {
        anyhow::anyhow!(
            "no devnet/ directory (its package.json pins anvil and the contract artifacts) next to the config ({}), \
             in the current directory, or in the checkout bardo was built from ({}); run from the repository or \
             copy its devnet/ next to your bardo.toml",
            base.display(),
            candidates[2].display()
        )
    })
}

pub(crate) fn run(config_path: &Path, action: DevnetAction, rt: &Runtime) -> Result<ExitCode> {
    let base = config_path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let state_dir = base.join(".bardo");
    std::fs::create_dir_all(&state_dir).context("creating .bardo")?;
    let pid_file = state_dir.join("devnet.json");
    match action {
        DevnetAction::Up { detach, port } => {
            let devnet_dir = devnet_dir(base)?;
            let binary = devnet::ensure_installed(&devnet_dir)?;
            let snapshot = devnet::snapshot::Snapshot::ensure(
                rt,
                &binary,
                &devnet_dir,
                &state_dir.join("devnet"),
                |step| eprintln!("devnet: {step}"),
            )?;
            let deployments_file = state_dir.join("deployments.json");
            std::fs::write(&deployments_file, serde_json::to_string_pretty(&snapshot.deployments)?)?;
            // The repo's plugins find the devnet's contracts through their settings.
            let settings = state_dir.join("settings");
            std::fs::create_dir_all(&settings)?;
            let uniswap = serde_json::to_string_pretty(&snapshot.deployments.uniswap_settings())?;
            std::fs::write(settings.join("uniswap.json"), uniswap)?;
            let aave = serde_json::to_string_pretty(&snapshot.deployments.aave_settings())?;
            std::fs::write(settings.join("aave.json"), aave)?;
            let d = &snapshot.deployments;
            for (name, value) in [
                ("streaming", d.streaming_settings()),
                ("wallet", d.wallet_settings()),
                ("safety", d.wallet_settings()),
                ("testnet", d.testnet_settings()),
                ("intelligence", d.uniswap_settings()),
                ("vault", d.vault_settings()),
            ] {
                std::fs::write(settings.join(format!("{name}.json")), serde_json::to_string_pretty(&value)?)?;
            }
            let targets = &snapshot.deployments.write_targets();
            let allowlist = serde_json::json!({ devnet::CHAIN_ID.to_string(): targets });
            std::fs::write(settings.join("allowlist.json"), serde_json::to_string_pretty(&allowlist)?)?;
            // The trusted prices (feeds, the Aave oracle) and what a write may acquire.
            let pricing = serde_json::to_string_pretty(&snapshot.deployments.pricing_json())?;
            std::fs::write(settings.join("pricing.json"), pricing)?;
            let approved = serde_json::to_string_pretty(&snapshot.deployments.approved_assets_json())?;
            std::fs::write(settings.join("approved_assets.json"), approved)?;
            if detach {
                let state = snapshot.state.to_string_lossy();
                let log = state_dir.join("devnet.log");
                let d = devnet::spawn_detached(&binary, port, &["--load-state", &state], &log)?;
                devnet::snapshot::mine_now(rt, &d.rpc)?;
                std::fs::write(&pid_file, serde_json::to_string_pretty(&d)?)?;
                println!(
                    "devnet up: chain {} at {} (pid {}, log {})",
                    d.chain_id,
                    d.rpc,
                    d.pid,
                    d.log.display()
                );
                println!("deployments: {}", deployments_file.display());
                return Ok(ExitCode::SUCCESS);
            }
            let anvil = snapshot.spawn_on(rt, &binary, port)?;
            println!("devnet up: chain {} at {} — Ctrl-C to stop", devnet::CHAIN_ID, anvil.url());
            println!("deployments: {}", deployments_file.display());
            rt.block_on(tokio::signal::ctrl_c())?;
            drop(anvil);
            println!("devnet stopped");
            Ok(ExitCode::SUCCESS)
        }
        DevnetAction::Down => {
            let text = std::fs::read_to_string(&pid_file)
                .with_context(|| format!("no detached devnet ({} missing)", pid_file.display()))?;
            let d: devnet::Detached = serde_json::from_str(&text)?;
            let status = std::process::Command::new("kill").arg(d.pid.to_string()).status()?;
            std::fs::remove_file(&pid_file)?;
            if !status.success() {
                eprintln!("pid {} was not running", d.pid);
            }
            println!("devnet down");
            Ok(ExitCode::SUCCESS)
        }
    }
}
