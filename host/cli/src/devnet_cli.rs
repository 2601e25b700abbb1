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
        /// Port to listen on (default: the port of `[chains.31337] rpc`, else 18545).
        #[arg(long)]
        port: Option<u16>,
        /// Port the second chain (8453) listens on (default: the port of `[chains.8453] rpc`,
        /// else the first chain's port + 1).
        #[arg(long)]
        second_port: Option<u16>,
        /// Print what started as one JSON object (chain_id, rpc, deployments; pid and log when
        /// detached); progress stays on stderr.
        #[arg(long)]
        json: bool,
    },
    /// Stop a devnet started with `--detach`.
    Down,
    /// Fill the running devnet chains' Across deposits until the first chain's anvil exits (what
    /// `up --detach` starts beside them).
    #[command(hide = true)]
    Relay {
        /// Each chain's id (its deployments name its SpokePool).
        #[arg(long, required = true)]
        chain: Vec<u64>,
        /// Each chain's RPC URL, in the order of `--chain`.
        #[arg(long, required = true)]
        rpc: Vec<String>,
        /// The first chain's anvil process id: the relayer stops when it is gone.
        #[arg(long)]
        anvil: u32,
    },
    /// Keep a running devnet's price feeds fresh until its anvil exits (what `up --detach`
    /// starts beside each chain's anvil).
    #[command(hide = true)]
    Keep {
        /// The devnet chain's RPC URL.
        #[arg(long)]
        rpc: String,
        /// Its chain id (which deployments name its feeds).
        #[arg(long, default_value_t = devnet::CHAIN_ID)]
        chain: u64,
        /// Its anvil's process id: the keeper stops when it is gone.
        #[arg(long)]
        anvil: u32,
    },
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

/// The port the devnet's first chain listens on when nothing says another.
const DEFAULT_PORT: u16 = 18545;

/// The port devnet chain `id` listens on, and why: the flag, else the port of the configured
/// chain's RPC URL on this machine (so `bardo` reaches what it starts), else `default`.
fn port_for(
    config: &bardo_runtime::config::Config,
    id: u64,
    flag: Option<u16>,
    default: u16,
) -> (u16, String) {
    let flag_name = if id == devnet::CHAIN_ID { "--port" } else { "--second-port" };
    if let Some(port) = flag {
        return (port, flag_name.into());
    }
    let Some(chain) = config.chains.get(&id.to_string()) else {
        return (default, format!("the default: {} configures no [chains.{id}]", config.file().display()));
    };
    let url = url::Url::parse(&chain.rpc).ok();
    let local = url.as_ref().and_then(|u| match u.host() {
        Some(url::Host::Domain("localhost")) => u.port_or_known_default(),
        Some(url::Host::Ipv4(ip)) if ip.is_loopback() => u.port_or_known_default(),
        Some(url::Host::Ipv6(ip)) if ip.is_loopback() => u.port_or_known_default(),
        _ => None,
    });
    match local {
        Some(port) => (port, format!("[chains.{id}] rpc = \"{}\"", chain.rpc)),
        None => (
            default,
            format!(
                "the default: [chains.{id}] rpc = \"{}\" is not on this machine, so bardo will not reach this \
                 devnet; point it at http://127.0.0.1:{default} or pass {flag_name}",
                chain.rpc
            ),
        ),
    }
}

pub(crate) fn run(config_path: &Path, action: DevnetAction, rt: &Runtime) -> Result<ExitCode> {
    let base = config_path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let state_dir = base.join(".bardo");
    std::fs::create_dir_all(&state_dir).context("creating .bardo")?;
    let pid_file = state_dir.join("devnet.json");
    match action {
        DevnetAction::Up { detach, port, second_port, json } => {
            let config = crate::load_config(config_path, false)?;
            let (port, why) = port_for(&config, devnet::CHAIN_ID, port, DEFAULT_PORT);
            // Up is idempotent: a detached devnet still running is the answer, not an error.
            if let Some(d) = running(&pid_file)? {
                let other = if d.rpc.ends_with(&format!(":{port}")) {
                    String::new()
                } else {
                    format!("; `bardo devnet down` first to start one on port {port}")
                };
                if json {
                    println!("{}", serde_json::to_value(&d)?);
                } else {
                    for c in std::iter::once(&d).chain(&d.more) {
                        println!(
                            "devnet already up: chain {} at {} (pid {}, log {}){other}",
                            c.chain_id,
                            c.rpc,
                            c.pid,
                            c.log.display()
                        );
                    }
                }
                return Ok(ExitCode::SUCCESS);
            }
            let (second_port, second_why) =
                port_for(&config, devnet::SECOND_CHAIN_ID, second_port, port.saturating_add(1));
            eprintln!("devnet: chain {} on port {port} ({why})", devnet::CHAIN_ID);
            eprintln!("devnet: chain {} on port {second_port} ({second_why})", devnet::SECOND_CHAIN_ID);
            let devnet_dir = devnet_dir(base)?;
            let binary = devnet::ensure_installed(&devnet_dir)?;
            let snapshot = devnet::snapshot::Snapshot::ensure(
                rt,
                &binary,
                &devnet_dir,
                &devnet::snapshot::cache_for(&devnet_dir, &state_dir.join("devnet")),
                |step| eprintln!("devnet: {step}"),
            )?;
            let chains = [(&snapshot, port), (snapshot.second()?, second_port)];
            for (chain, _) in chains {
                let file = deployments_file(&state_dir, chain.deployments.chain_id);
                std::fs::write(&file, serde_json::to_string_pretty(&chain.deployments)?)?;
            }
            // The repo's plugins find the devnet's contracts through their settings; the host
            // its allowlist, prices and approved assets — both chains' in each file.
            let settings = state_dir.join("settings");
            std::fs::create_dir_all(&settings)?;
            let all: Vec<_> = chains.iter().map(|(c, _)| &c.deployments).collect();
            for (name, value) in devnet::settings::files(&all) {
                std::fs::write(settings.join(format!("{name}.json")), serde_json::to_string_pretty(&value)?)?;
            }
            let deployments_file = deployments_file(&state_dir, devnet::CHAIN_ID);
            if detach {
                let mut started = Vec::new();
                for (chain, port) in chains {
                    let id = chain.deployments.chain_id;
                    let state = chain.state.to_string_lossy();
                    let log = state_dir.join(if id == devnet::CHAIN_ID {
                        "devnet.log".to_owned()
                    } else {
                        format!("devnet.{id}.log")
                    });
                    let d = devnet::spawn_detached(&binary, port, id, &["--load-state", &state], &log);
                    // A second chain that cannot start stops the first: nothing half up.
                    let mut d = match d {
                        Ok(d) => d,
                        Err(e) => {
                            started.iter().for_each(|d: &devnet::Detached| stop(d));
                            return Err(e.into());
                        }
                    };
                    chain.freshen(rt, &d.rpc)?;
                    d.keeper = Some(spawn_keeper(config_path, &d, &state_dir)?);
                    started.push(d);
                }
                let mut d = started.remove(0);
                d.more = started;
                d.relayer = Some(spawn_relayer(config_path, &d, &state_dir)?);
                std::fs::write(&pid_file, serde_json::to_string_pretty(&d)?)?;
                if json {
                    let mut value = serde_json::to_value(&d)?;
                    value["deployments"] = deployments_file.display().to_string().into();
                    println!("{value}");
                } else {
                    for c in std::iter::once(&d).chain(&d.more) {
                        println!(
                            "devnet up: chain {} at {} (pid {}, log {})",
                            c.chain_id,
                            c.rpc,
                            c.pid,
                            c.log.display()
                        );
                    }
                    println!(
                        "deployments: {} (chain {}: deployments.{}.json)",
                        deployments_file.display(),
                        devnet::SECOND_CHAIN_ID,
                        devnet::SECOND_CHAIN_ID
                    );
                    println!("{}", safe_signer(&snapshot.deployments));
                }
                return Ok(ExitCode::SUCCESS);
            }
            let mut nodes = Vec::new();
            for (chain, port) in chains {
                let anvil = chain.spawn_on(rt, &binary, port)?;
                // The feeds' heartbeat, for as long as this devnet runs.
                let (rpc, feeds) = (anvil.url(), chain.deployments.feeds.clone());
                rt.spawn(async move {
                    devnet::feeds::keep_fresh(&rpc, &feeds, || false, |note| eprintln!("devnet: {note}"))
                        .await
                });
                nodes.push((chain.deployments.chain_id, anvil));
            }
            // The Across relayer, for as long as this devnet runs.
            let served: Vec<(String, devnet::deploy::Deployments)> = nodes
                .iter()
                .zip(chains)
                .map(|((_, anvil), (c, _))| (anvil.url(), c.deployments.clone()))
                .collect();
            rt.spawn(async move {
                devnet::relayer::relay(&served, || false, |note| eprintln!("relayer: {note}")).await
            });
            if json {
                let chains: Vec<_> = nodes
                    .iter()
                    .map(|(id, anvil)| serde_json::json!({"chain_id": id, "rpc": anvil.url()}))
                    .collect();
                let value = serde_json::json!({
                    "chain_id": devnet::CHAIN_ID,
                    "rpc": nodes[0].1.url(),
                    "chains": chains,
                    "deployments": deployments_file.display().to_string(),
                });
                println!("{value}");
            } else {
                for (id, anvil) in &nodes {
                    println!("devnet up: chain {id} at {}", anvil.url());
                }
                println!("Ctrl-C to stop; deployments: {}", deployments_file.display());
                println!("{}", safe_signer(&snapshot.deployments));
            }
            rt.block_on(tokio::signal::ctrl_c())?;
            drop(nodes);
            println!("devnet stopped");
            Ok(ExitCode::SUCCESS)
        }
        DevnetAction::Relay { chain, rpc, anvil } => relay(&state_dir, &chain, &rpc, anvil, rt),
        DevnetAction::Keep { rpc, chain, anvil } => {
            keep(&deployments_file(&state_dir, chain), &rpc, anvil, rt)
        }
        DevnetAction::Down => {
            // Down is idempotent too: nothing running is what was asked for.
            if !pid_file.exists() {
                println!("devnet already down (no {})", pid_file.display());
                return Ok(ExitCode::SUCCESS);
            }
            let text = std::fs::read_to_string(&pid_file)
                .with_context(|| format!("reading {}", pid_file.display()))?;
            let d: devnet::Detached = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a devnet's record; delete it", pid_file.display()))?;
            std::fs::remove_file(&pid_file)?;
            if let Some(relayer) = d.relayer {
                let _ = std::process::Command::new("kill").arg(relayer.to_string()).status();
            }
            let mut was_up = false;
            for c in std::iter::once(&d).chain(&d.more) {
                was_up |= is_anvil(c.pid);
                stop(c);
            }
            if !was_up {
                println!("devnet already down (its anvil, pid {}, had exited)", d.pid);
                return Ok(ExitCode::SUCCESS);
            }
            println!("devnet down");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The detached devnet `pid_file` records, if its anvil still runs and answers (a record left
/// by one that died is removed).
fn running(pid_file: &Path) -> Result<Option<devnet::Detached>> {
    let Ok(text) = std::fs::read_to_string(pid_file) else { return Ok(None) };
    let Ok(d) = serde_json::from_str::<devnet::Detached>(&text) else { return Ok(None) };
    let alive = std::fs::read_to_string(format!("/proc/{}/stat", d.pid)).is_ok_and(|s| !s.contains(") Z "))
        && is_anvil(d.pid);
    let port = d.rpc.rsplit(':').next().and_then(|p| p.trim_end_matches('/').parse::<u16>().ok());
    let answers = port.is_some_and(|p| std::net::TcpStream::connect(("127.0.0.1", p)).is_ok());
    if alive && answers {
        return Ok(Some(d));
    }
    std::fs::remove_file(pid_file).with_context(|| format!("removing the stale {}", pid_file.display()))?;
    Ok(None)
}

/// Stop a detached devnet chain: its keeper, and its anvil if that still runs.
fn stop(d: &devnet::Detached) {
    if let Some(keeper) = d.keeper {
        let _ = std::process::Command::new("kill").arg(keeper.to_string()).status();
    }
    if is_anvil(d.pid) {
        let _ = std::process::Command::new("kill").arg(d.pid.to_string()).status();
    }
}

/// Where `bardo devnet up` records chain `id`'s deployments: `deployments.json` for the first
/// chain, `deployments.<id>.json` for another.
fn deployments_file(state_dir: &Path, id: u64) -> PathBuf {
    if id == devnet::CHAIN_ID {
        state_dir.join("deployments.json")
    } else {
        state_dir.join(format!("deployments.{id}.json"))
    }
}

/// Whether process `pid` is an anvil: a pid a devnet that died recorded may be another's now.
fn is_anvil(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains("anvil"))
}

/// Start `bardo --config <config_path> devnet <args>` on its own (it outlives this command),
/// its output to `log`; its process id.
fn spawn_bardo(config_path: &Path, args: &[String], log: &Path, what: &str) -> Result<u32> {
    let exe = std::env::current_exe().context("locating the bardo binary")?;
    let out = std::fs::File::create(log).with_context(|| format!("creating the {what}'s log"))?;
    let mut cmd = std::process::Command::new(exe);
    bardo_core::secret::scrub_env(&mut cmd);
    let child = cmd
        .arg("--config")
        .arg(config_path)
        .arg("devnet")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .with_context(|| format!("starting the devnet's {what}"))?;
    Ok(child.id())
}

/// Start `bardo devnet keep` for the detached devnet chain `d`, logging beside the devnet's log.
fn spawn_keeper(config_path: &Path, d: &devnet::Detached, state_dir: &Path) -> Result<u32> {
    let name = if d.chain_id == devnet::CHAIN_ID {
        "devnet-keeper.log".to_owned()
    } else {
        format!("devnet-keeper.{}.log", d.chain_id)
    };
    let args = ["keep", "--rpc", &d.rpc, "--chain", &d.chain_id.to_string(), "--anvil", &d.pid.to_string()]
        .map(str::to_owned);
    spawn_bardo(config_path, &args, &state_dir.join(name), "feed keeper")
}

/// Start `bardo devnet relay` for the detached devnet `d` (every chain of it), logging to
/// `.bardo/devnet-relayer.log`.
fn spawn_relayer(config_path: &Path, d: &devnet::Detached, state_dir: &Path) -> Result<u32> {
    let mut args = vec!["relay".to_owned(), "--anvil".to_owned(), d.pid.to_string()];
    for c in std::iter::once(d).chain(&d.more) {
        args.extend(["--chain".to_owned(), c.chain_id.to_string(), "--rpc".to_owned(), c.rpc.clone()]);
    }
    spawn_bardo(config_path, &args, &state_dir.join("devnet-relayer.log"), "relayer")
}

/// `bardo devnet relay`: fill the chains' Across deposits while the first chain's anvil runs.
fn relay(state_dir: &Path, chains: &[u64], rpcs: &[String], anvil: u32, rt: &Runtime) -> Result<ExitCode> {
    anyhow::ensure!(chains.len() == rpcs.len(), "one --rpc for each --chain");
    let mut served = Vec::new();
    for (id, rpc) in chains.iter().zip(rpcs) {
        let file = deployments_file(state_dir, *id);
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading the devnet's deployments ({})", file.display()))?;
        served.push((rpc.clone(), serde_json::from_str(&text)?));
    }
    let alive = move || Path::new(&format!("/proc/{anvil}")).exists();
    rt.block_on(devnet::relayer::relay(&served, || !alive(), |note| eprintln!("{note}")));
    Ok(ExitCode::SUCCESS)
}

/// `bardo devnet keep`: re-stamp a devnet chain's feeds (named in `deployments`) while its
/// anvil runs.
fn keep(deployments: &Path, rpc: &str, anvil: u32, rt: &Runtime) -> Result<ExitCode> {
    let text = std::fs::read_to_string(deployments)
        .with_context(|| format!("reading the devnet's deployments ({})", deployments.display()))?;
    let deployments: devnet::deploy::Deployments = serde_json::from_str(&text)?;
    let alive = move || Path::new(&format!("/proc/{anvil}")).exists();
    rt.block_on(devnet::feeds::keep_fresh(rpc, &deployments.feeds, || !alive(), |note| eprintln!("{note}")));
    Ok(ExitCode::SUCCESS)
}

/// How to write through the dev key's Safe on this devnet: the `[signer]` lines; and the caged
/// Safe, whose PolicyCage holds the host's key to the devnet's rules on chain.
fn safe_signer(d: &devnet::deploy::Deployments) -> String {
    use devnet::cage;
    // By name where the devnet knows one: USDC, aUSDC, bvUSDC, Morpho WETH/USDC supply.
    let symbol = |a: alloy::primitives::Address| {
        let token = d.tokens.values().find(|t| t.address == a).map(|t| t.symbol.clone());
        let vault = d.vaults.iter().find(|(_, v)| v.address == a).map(|(s, _)| s.clone());
        token.or(vault).unwrap_or_else(|| a.to_string())
    };
    let positions: Vec<String> = cage::approved_positions(d)
        .iter()
        .map(|(kind, source, market, _)| match kind {
            cage::AssetKind::Token if source.is_zero() => "ether".to_owned(),
            cage::AssetKind::Token | cage::AssetKind::Vault => symbol(*source),
            cage::AssetKind::AaveToken => {
                format!("a{}", symbol(alloy::primitives::Address::from_word(*market)))
            }
            cage::AssetKind::MorphoSupply => {
                let name = d.morpho.markets.iter().find(|(_, m)| m.id == *market).map(|(n, _)| n.as_str());
                format!("Morpho {} supply", name.unwrap_or("market"))
            }
        })
        .collect();
    format!(
        "dev Safe: {} (owner: the dev key, threshold 1); to write through it:\n  [signer]\n  mode = \"safe\"\n  safe = \"{}\"\n  multi_send = \"{}\"\n\
         caged Safe: {} (owners: the dev key and the operator {}, threshold 1, no fallback handler: no signature is valid as the Safe's), guarded by the PolicyCage {}:\n  \
         drawdown at most {} bps of what a transaction spends and {} bps of the holdings a day; at most {} writes per {} s;\n  \
         feeds at most {} s old; calls and counterparties: the devnet's write targets, each scoped to the positions it moves; positions: {}\n  \
         only the operator's key changes them (key {}, a public test key); `bardo policy show --safe {}` prints them;\n  \
         to write through it, the [signer] lines above with safe = \"{}\"",
        d.safe.dev_safe,
        d.safe.dev_safe,
        d.safe.multi_send_call_only,
        d.cage.safe,
        d.cage.operator,
        d.cage.cage,
        cage::MAX_DRAWDOWN_TX_BPS,
        cage::MAX_DRAWDOWN_DAY_BPS,
        cage::MAX_WRITES,
        cage::WINDOW_SECS,
        devnet::feeds::MAX_FEED_AGE_SECS,
        positions.join(", "),
        cage::OPERATOR_KEY,
        d.cage.safe,
        d.cage.safe,
    )
}

#[cfg(test)]
mod tests {
    use super::port_for;
    use bardo_runtime::config::Config;
    use std::path::Path;

    fn config(text: &str) -> Config {
        Config::parse(text, Path::new("bardo.toml")).expect("config")
    }

    #[test]
    fn the_port_comes_from_the_flag_then_the_configured_local_rpc_then_the_default() {
        let local = config("[chains.31337]\nrpc = \"http://localhost:8545\"\n");
        let port_for = |c: &Config, flag| port_for(c, 31337, flag, 18545);
        assert_eq!(port_for(&local, Some(9000)), (9000, "--port".into()));
        assert_eq!(port_for(&local, None).0, 8545);
        assert_eq!(port_for(&config("[chains.31337]\nrpc = \"http://[::1]:7545/\"\n"), None).0, 7545);
        // The second chain: its own [chains.8453], else the first's port + 1 (what `up` passes).
        assert_eq!(
            super::port_for(&local, 8453, None, 8546),
            (8546, "the default: bardo.toml configures no [chains.8453]".into())
        );
        let both = config(
            "[chains.31337]\nrpc = \"http://localhost:8545\"\n[chains.8453]\nrpc = \"http://127.0.0.1:9545\"\n",
        );
        assert_eq!(super::port_for(&both, 8453, None, 8546).0, 9545);
        assert_eq!(super::port_for(&both, 8453, Some(7000), 8546), (7000, "--second-port".into()));
        let (port, why) = port_for(&config(""), None);
        assert_eq!((port, why.contains("configures no [chains.31337]")), (18545, true), "{why}");
        let (port, why) = port_for(&config("[chains.31337]\nrpc = \"https://rpc.example.org\"\n"), None);
        assert_eq!((port, why.contains("is not on this machine")), (18545, true), "{why}");
    }
}
