//! The deployed devnet as a file. Deploying every contract takes seconds; anvil starts from a
//! dumped state in ~100 ms. So the stack is deployed once, dumped (`anvil_dumpState`), and every
//! later devnet — each test's, `bardo devnet up` — starts from that file with `--load-state`.

use super::deploy::{DeployError, Deployments, deploy_all};
use super::{Anvil, DevnetError};
use alloy::primitives::Bytes;
use alloy::providers::{Provider, ProviderBuilder};
use bardo_core::Runtime;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// A dumped devnet chain: anvil's state file and the addresses deployed in it; the first chain's
/// also holds the second's.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// anvil's dumped state (`state.json`, for `--load-state`).
    pub state: PathBuf,
    /// The addresses deployed in it (and its chain id).
    pub deployments: Deployments,
    /// The devnet's second chain ([`crate::SECOND_CHAIN_ID`]), deployed beside the first; none
    /// on the second itself.
    pub second: Option<Box<Snapshot>>,
}

/// Snapshot failures.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The scratch anvil could not be started.
    #[error(transparent)]
    Devnet(#[from] DevnetError),
    /// Deploying the contracts failed.
    #[error(transparent)]
    Deploy(#[from] DeployError),
    /// Reading, dumping or storing the snapshot failed.
    #[error("devnet snapshot {path}: {message}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// What the snapshot depends on: the deployer's own source and the pinned npm packages. Any
/// change to either names a new snapshot directory, so a stale state is never loaded.
fn fingerprint(devnet_dir: &Path) -> Result<String, SnapshotError> {
    let lock = devnet_dir.join("package-lock.json");
    let pinned = std::fs::read(&lock).map_err(|e| io(&lock, e))?;
    let mut h = Sha256::new();
    for part in [
        include_str!("deploy.rs"),
        include_str!("aave.rs"),
        include_str!("vaults.rs"),
        include_str!("feeds.rs"),
        include_str!("fixtures.rs"),
        include_str!("artifacts.rs"),
        include_str!("erc8004.rs"),
        include_str!("safe.rs"),
        include_str!("morpho.rs"),
        include_str!("cage.rs"),
        include_str!("pendle.rs"),
        include_str!("across.rs"),
        include_str!("staker.rs"),
        // The caged Safe's rules are the allowlist's.
        include_str!("settings.rs"),
        // The deploying node's flags (its clock, its code size limit).
        include_str!("snapshot.rs"),
    ] {
        h.update(part.as_bytes());
    }
    h.update(&pinned);
    // The chains deployed.
    for chain in crate::CHAIN_IDS {
        h.update(chain.to_be_bytes());
    }
    // The devnet's own contracts and their compiler script.
    let own = super::vaults::SOURCES.iter().map(|s| devnet_dir.join("contracts").join(s));
    let pendle_sy = PENDLE_SY_SOURCES.iter().map(|s| devnet_dir.join("contracts/pendle-sy").join(s));
    let scripts = [
        devnet_dir.join("contracts/PolicyCage.sol"),
        devnet_dir.join("compile.js"),
        devnet_dir.join("install-packed.sh"),
    ];
    for file in own.chain(pendle_sy).chain(scripts) {
        h.update(std::fs::read(&file).map_err(|e| io(&file, e))?);
    }
    Ok(hex::encode(&h.finalize()[..8]))
}

/// The code size the deploying node allows: `@pendle/core-v2` 6.11.0's `ActionAddRemoveLiqV3`
/// artifact is 24,745 bytes, 169 over EIP-170's 24,576. The limit applies only to creating code,
/// so the devnets started from the snapshot keep anvil's default and run it unchanged.
const DEPLOY_CODE_SIZE_LIMIT: &str = "24832";

/// Pendle's SY and what it imports (`devnet/contracts/pendle-sy/`).
const PENDLE_SY_SOURCES: &[&str] = &[
    "core/StandardizedYield/SYBase.sol",
    "core/StandardizedYield/implementations/PendleERC4626SY.sol",
    "core/erc20/PendleERC20.sol",
    "core/erc20/PendleERC20Permit.sol",
    "core/libraries/ArrayLib.sol",
    "core/libraries/BoringOwnableUpgradeable__deprecated.sol",
    "core/libraries/Errors.sol",
    "core/libraries/TokenHelper.sol",
    "core/libraries/math/PMath.sol",
    "interfaces/IERC4626.sol",
    "interfaces/IStandardizedYield.sol",
    "interfaces/IWETH.sol",
];

/// Where the snapshots of the stack `devnet_dir` pins are kept: in `devnet_dir/.snapshots`,
/// beside its packages, so every project and every test using that devnet deploys it once (a
/// snapshot is named by its fingerprint, so sharing it is safe); `fallback` when that directory
/// cannot be written (a read-only install).
pub fn cache_for(devnet_dir: &Path, fallback: &Path) -> PathBuf {
    let shared = devnet_dir.join(".snapshots");
    let probe = shared.join(format!(".probe-{}", std::process::id()));
    let writable = std::fs::create_dir_all(&shared).is_ok() && std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    if writable { shared } else { fallback.to_owned() }
}

fn io(path: &Path, e: impl std::fmt::Display) -> SnapshotError {
    SnapshotError::Io { path: path.to_owned(), message: e.to_string() }
}

impl Snapshot {
    /// The snapshot for the current deployer and packages under `cache`: read it if it exists,
    /// else deploy on a scratch anvil, dump, and store it (atomically: concurrent callers each
    /// build one and the first rename wins).
    pub fn ensure(
        rt: &Runtime,
        binary: &Path,
        devnet_dir: &Path,
        cache: &Path,
        progress: impl Fn(&str) + 'static,
    ) -> Result<Self, SnapshotError> {
        let dir = cache.join(fingerprint(devnet_dir)?);
        if let Ok(snapshot) = Self::read(&dir) {
            return Ok(snapshot);
        }
        progress("deploying the contracts once, on both chains; later devnets start from the dumped states");
        std::fs::create_dir_all(cache).map_err(|e| io(cache, e))?;
        let tmp = cache.join(format!(".tmp-{}-{:?}", std::process::id(), std::thread::current().id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let modules = devnet_dir.join("node_modules");
        let progress: std::rc::Rc<dyn Fn(&str)> = std::rc::Rc::new(progress);
        for chain in crate::CHAIN_IDS {
            let into = if chain == crate::CHAIN_ID { tmp.clone() } else { tmp.join(chain.to_string()) };
            let said = progress.clone();
            let step = move |s: &str| said(&format!("chain {chain}: {s}"));
            deploy_chain(rt, binary, &modules, chain, &into, step)?;
        }
        if std::fs::rename(&tmp, &dir).is_err() {
            // Another process stored the same snapshot first; use theirs.
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Self::read(&dir)
    }

    fn read(dir: &Path) -> Result<Self, SnapshotError> {
        let mut first = Self::read_chain(dir)?;
        first.second = Some(Box::new(Self::read_chain(&dir.join(crate::SECOND_CHAIN_ID.to_string()))?));
        Ok(first)
    }

    /// One chain's state and deployments in `dir`.
    fn read_chain(dir: &Path) -> Result<Self, SnapshotError> {
        let file = dir.join("deployments.json");
        let text = std::fs::read(&file).map_err(|e| io(&file, e))?;
        let deployments = serde_json::from_slice(&text).map_err(|e| io(&file, e))?;
        let state = dir.join("state.json");
        if !state.is_file() {
            return Err(io(&state, "missing"));
        }
        Ok(Self { state, deployments, second: None })
    }

    /// The devnet's second chain.
    pub fn second(&self) -> Result<&Snapshot, DevnetError> {
        self.second.as_deref().ok_or_else(|| {
            DevnetError::Start(format!(
                "chain {} is the devnet's second chain; it has none",
                self.deployments.chain_id
            ))
        })
    }

    /// Start a fresh anvil from this snapshot on a free port.
    pub fn spawn(&self, rt: &Runtime, binary: &Path) -> Result<Anvil, DevnetError> {
        self.spawn_on(rt, binary, 0)
    }

    /// Start a fresh anvil from this snapshot on `port` (0 = a free one).
    pub fn spawn_on(&self, rt: &Runtime, binary: &Path, port: u16) -> Result<Anvil, DevnetError> {
        let (state, chain) = (self.state.to_string_lossy(), self.deployments.chain_id.to_string());
        let node = Anvil::spawn_on(binary, port, &["--load-state", &state, "--chain-id", &chain])?;
        self.freshen(rt, &node.url())?;
        Ok(node)
    }

    /// Ready a devnet just started from this snapshot: a block at the time of day (see
    /// [`mine_now`]) and every price feed re-stamped, as a real feed's heartbeat keeps it fresh
    /// (the host refuses a feed's answer older than `max_feed_age_secs`).
    pub fn freshen(&self, rt: &Runtime, rpc: &str) -> Result<(), DevnetError> {
        mine_now(rt, rpc)?;
        rt.block_on(super::feeds::restamp(rpc, &self.deployments.feeds, 0))
            .map(drop)
            .map_err(|e| DevnetError::Start(format!("re-stamping the price feeds: {e}")))
    }
}

/// Deploy the stack on a scratch anvil for `chain` and store its state and deployments in `into`.
fn deploy_chain(
    rt: &Runtime,
    binary: &Path,
    modules: &Path,
    chain: u64,
    into: &Path,
    progress: impl Fn(&str) + 'static,
) -> Result<(), SnapshotError> {
    // The deploy moves the clock on (the canonical pool's window, Pendle's TWAP window), so
    // it starts that far in the past: a fresh snapshot's head is then not ahead of the wall
    // clock, where signatures with deadlines (ERC-8004's) would already have expired.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let rewind = u64::from(super::pendle::TWAP_SECS + super::fixtures::CANONICAL_WINDOW_SECS) + 60;
    let (genesis, chain_id) = (now.saturating_sub(rewind).to_string(), chain.to_string());
    let args =
        ["--code-size-limit", DEPLOY_CODE_SIZE_LIMIT, "--timestamp", &genesis, "--chain-id", &chain_id];
    let node = Anvil::spawn(binary, &args)?;
    let deployments = rt.block_on(deploy_all(&node.url(), modules, progress))?;
    let state = rt.block_on(dump_state(&node.url())).map_err(|e| io(into, e))?;
    drop(node);
    std::fs::create_dir_all(into).map_err(|e| io(into, e))?;
    let json = serde_json::to_vec_pretty(&deployments).map_err(|e| io(into, e))?;
    std::fs::write(into.join("deployments.json"), json).map_err(|e| io(into, e))?;
    std::fs::write(into.join("state.json"), state).map_err(|e| io(into, e))
}

/// Save the node's current state to `path` (load it with `--load-state`).
pub fn save_state(rt: &Runtime, rpc: &str, path: &Path) -> Result<(), DevnetError> {
    let state = rt.block_on(dump_state(rpc)).map_err(DevnetError::Start)?;
    std::fs::write(path, state).map_err(|e| DevnetError::Start(format!("writing {}: {e}", path.display())))
}

/// Mine one block so that the head's timestamp is now. A loaded state's head carries the time
/// of the dump; plans take their deadlines from the head, and the next real block is stamped
/// with the wall clock, so without this a snapshot older than a deadline yields plans that
/// expire on arrival. A snapshot made in the last minute carries a head a little in the future
/// (the deploy lets the canonical pool's window pass): anvil does not take that time from the
/// state it loads, so the block is stamped just after the head, never before it.
pub fn mine_now(rt: &Runtime, rpc: &str) -> Result<(), DevnetError> {
    let url = rpc.parse().map_err(|e| DevnetError::Start(format!("{e}")))?;
    let provider = ProviderBuilder::new().connect_http(url);
    let fail =
        |e: alloy::transports::TransportError| DevnetError::Start(format!("mining the first block: {e}"));
    rt.block_on(async {
        let head = provider
            .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
            .await
            .map_err(fail)?
            .map(|b| b.header.timestamp)
            .unwrap_or_default();
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if now <= head {
            provider
                .raw_request::<_, serde_json::Value>("evm_setNextBlockTimestamp".into(), (head + 1,))
                .await
                .map_err(fail)?;
        }
        provider.raw_request::<_, serde_json::Value>("evm_mine".into(), ()).await.map(drop).map_err(fail)
    })
}

/// anvil's state as the JSON `--load-state` reads (the RPC returns it gzip-compressed).
async fn dump_state(rpc: &str) -> Result<Vec<u8>, String> {
    let url = rpc.parse().map_err(|e| format!("{e}"))?;
    let provider = ProviderBuilder::new().connect_http(url);
    let gz: Bytes = provider.raw_request("anvil_dumpState".into(), ()).await.map_err(|e| e.to_string())?;
    let mut json = Vec::with_capacity(gz.len() * 8);
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut json).map_err(|e| format!("gunzip: {e}"))?;
    Ok(json)
}

#[cfg(test)]
mod tests {
    use super::cache_for;

    #[test]
    fn snapshots_are_kept_beside_the_devnet_unless_it_cannot_be_written() {
        let root = std::env::temp_dir().join(format!("bardo-snapshot-cache-{}", std::process::id()));
        let devnet = root.join("devnet");
        std::fs::create_dir_all(&devnet).expect("devnet dir");
        let fallback = root.join("project/.bardo/devnet");
        assert_eq!(cache_for(&devnet, &fallback), devnet.join(".snapshots"));
        let left: Vec<_> = std::fs::read_dir(devnet.join(".snapshots")).expect("made").collect();
        assert!(left.is_empty(), "the write probe is removed: {left:?}");
        // A devnet/ whose .snapshots cannot be made (here a file is in its way): the project's own.
        let blocked = root.join("blocked");
        std::fs::create_dir_all(&blocked).expect("dir");
        std::fs::write(blocked.join(".snapshots"), b"").expect("file");
        assert_eq!(cache_for(&blocked, &fallback), fallback);
        let _ = std::fs::remove_dir_all(&root);
    }
}
