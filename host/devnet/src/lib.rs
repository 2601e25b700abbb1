//! The local devnet: an anvil process from the pinned npm package, on a free loopback port,
//! and the deployer of the published contracts.

mod aave;
pub mod across;
pub mod artifacts;
pub mod cage;
pub mod deploy;
mod deployer;
pub mod deployments;
mod erc8004;
pub mod feeds;
pub mod fixtures;
mod morpho;
pub mod nats;
pub mod pendle;
pub mod registry;
pub mod relayer;
mod safe;
pub mod settings;
pub mod snapshot;
mod staker;
mod vaults;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The devnet's chain id.
pub const CHAIN_ID: u64 = 31337;

/// The devnet's second chain: Base's id, an L2 the tools' chain matrix lists for Uniswap, Aave,
/// Morpho and ERC-4626 vaults (not Pendle). Its own anvil, its own deployment at its own
/// addresses; the two together are what a bridge connects.
pub const SECOND_CHAIN_ID: u64 = 8453;

/// The devnet's chains, the first the main one.
pub const CHAIN_IDS: [u64; 2] = [CHAIN_ID, SECOND_CHAIN_ID];

/// The first of anvil's funded dev accounts and its well-known key (public test key).
pub const DEV_ACCOUNT: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
/// Private key of [`DEV_ACCOUNT`].
pub const DEV_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/// Devnet failures.
#[derive(Debug, thiserror::Error)]
pub enum DevnetError {
    /// No anvil binary at the path (npm has not installed it).
    #[error("anvil not found at {0}; run `make setup` (npm ci in devnet/) or set BARDO_ANVIL")]
    NotInstalled(PathBuf),
    /// anvil did not start or listen, or a request to the started node failed.
    #[error("cannot start anvil: {0}")]
    Start(String),
}

/// A running anvil, killed on drop.
pub struct Anvil {
    child: Child,
    port: u16,
}

impl Anvil {
    /// The anvil binary: `$BARDO_ANVIL`, else the one npm installed under `root/devnet`.
    pub fn binary(root: &Path) -> PathBuf {
        std::env::var_os("BARDO_ANVIL")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("devnet/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil"))
    }

    /// Start anvil on 127.0.0.1 with a free port, plus `args`; returns once it listens.
    pub fn spawn(binary: &Path, args: &[&str]) -> Result<Self, DevnetError> {
        Self::spawn_on(binary, 0, args)
    }

    /// Start anvil on 127.0.0.1:`port` (0 = a free one), plus `args`; returns once it listens.
    pub fn spawn_on(binary: &Path, port: u16, args: &[&str]) -> Result<Self, DevnetError> {
        if !binary.exists() {
            return Err(DevnetError::NotInstalled(binary.to_owned()));
        }
        let mut cmd = Command::new(binary);
        // anvil needs none of the host's secrets (the signing key, passwords, tokens).
        bardo_core::secret::scrub_env(&mut cmd);
        let mut child = cmd
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| DevnetError::Start(e.to_string()))?;
        let stdout = child.stdout.take().ok_or_else(|| DevnetError::Start("no stdout".into()))?;
        let (tx, rx) = mpsc::channel();
        // Keep draining stdout for the process's life: anvil logs every request.
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(port) =
                    line.strip_prefix("Listening on 127.0.0.1:").and_then(|p| p.trim().parse::<u16>().ok())
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(port);
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(15)) {
            Ok(port) => Ok(Self { child, port }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(DevnetError::Start("it did not print `Listening on 127.0.0.1:PORT` within 15 s".into()))
            }
        }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its HTTP JSON-RPC URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Its WebSocket URL.
    pub fn ws_url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }
}

impl Drop for Anvil {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What `bardo devnet up --detach` leaves behind for `bardo devnet down` and for operators: the
/// first chain's anvil, and the other chains' in `more`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Detached {
    /// The anvil process's id.
    pub pid: u32,
    /// Its HTTP JSON-RPC URL.
    pub rpc: String,
    /// Its chain id ([`CHAIN_ID`] for the first).
    pub chain_id: u64,
    /// The file its output goes to.
    pub log: PathBuf,
    /// The process that keeps its price feeds fresh (`bardo devnet keep`), if one runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keeper: Option<u32>,
    /// The process that fills the chains' Across deposits (`bardo devnet relay`), if one runs
    /// (on the first chain's record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayer: Option<u32>,
    /// The devnet's other chains ([`SECOND_CHAIN_ID`]), each as detached as the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<Detached>,
}

/// Install the devnet's npm packages if anvil is missing (idempotent).
pub fn ensure_installed(devnet_dir: &Path) -> Result<PathBuf, DevnetError> {
    let binary = Anvil::binary(devnet_dir.parent().unwrap_or(Path::new(".")));
    if binary.exists() {
        return install_packed(devnet_dir).map(|()| binary);
    }
    eprintln!("devnet: installing anvil and the contract artifacts with npm (one time, ~20 s)...");
    let mut npm = Command::new("npm");
    bardo_core::secret::scrub_env(&mut npm);
    let status = npm
        .args(["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(devnet_dir)
        .status()
        .map_err(|e| DevnetError::Start(format!("cannot run npm: {e}; install Node.js and npm")))?;
    if !status.success() || !binary.exists() {
        return Err(DevnetError::NotInstalled(binary));
    }
    install_packed(devnet_dir).map(|()| binary)
}

/// Pendle V2's and Across's artifacts, which npm cannot install as dependencies
/// (`devnet/install-packed.sh` says why); quick when they are there.
fn install_packed(devnet_dir: &Path) -> Result<(), DevnetError> {
    let mut sh = Command::new(devnet_dir.join("install-packed.sh"));
    bardo_core::secret::scrub_env(&mut sh);
    let status = sh.status().map_err(|e| DevnetError::Start(format!("cannot run install-packed.sh: {e}")))?;
    if !status.success() {
        return Err(DevnetError::Start(
            "installing Pendle V2's and Across's artifacts failed (see above); run `make setup`".into(),
        ));
    }
    Ok(())
}

/// Start anvil for chain `chain_id` on `port` in the background with `args`, logging to `log`;
/// returns once it answers.
pub fn spawn_detached(
    binary: &Path,
    port: u16,
    chain_id: u64,
    args: &[&str],
    log: &Path,
) -> Result<Detached, DevnetError> {
    if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        let flag = if chain_id == CHAIN_ID { "--port" } else { "--second-port" };
        return Err(DevnetError::Start(format!(
            "port {port} (chain {chain_id}) is already in use by another process; start the devnet on a free port with \
             `bardo devnet up {flag} PORT` (and point [chains.{chain_id}] rpc at it), or stop what holds {port}"
        )));
    }
    let out =
        std::fs::File::create(log).map_err(|e| DevnetError::Start(format!("{}: {e}", log.display())))?;
    let err = out.try_clone().map_err(|e| DevnetError::Start(e.to_string()))?;
    let mut cmd = Command::new(binary);
    bardo_core::secret::scrub_env(&mut cmd);
    let mut child = cmd
        .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--chain-id", &chain_id.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| DevnetError::Start(e.to_string()))?;
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        // An anvil that exited (the port taken meanwhile, a bad state file) is said at once,
        // with what it printed, not after the whole wait.
        if let Ok(Some(status)) = child.try_wait() {
            let printed = std::fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = printed.lines().rev().take(5).collect();
            return Err(DevnetError::Start(format!(
                "anvil exited ({status}) after {:.1} s without listening on port {port}; its log ({}) ends:\n{}",
                started.elapsed().as_secs_f64(),
                log.display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )));
        }
        if started.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(DevnetError::Start(format!(
                "anvil did not listen on port {port} within 15 s; see {}",
                log.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Detached {
        pid: child.id(),
        rpc: format!("http://127.0.0.1:{port}"),
        chain_id,
        log: log.to_owned(),
        keeper: None,
        relayer: None,
        more: Vec::new(),
    })
}
