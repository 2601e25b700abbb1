//! What the integration tests and benchmarks of the host's crates share: the repository's
//! devnet (deployed once into a snapshot, then a fresh anvil per test in ~0.1 s), one engine
//! with a compiled-artifact cache and one async runtime per process (as a host process has),
//! hosts over the devnet with guest components loaded, a streaming session, a real OCI registry,
//! a fleet's NATS connection, and (feature `safety`) a plugin behind the write path.
//! Everything here is real: anvil, the published contracts, NATS; nothing is mocked.

use alloy::network::TransactionBuilder as _;
use alloy::primitives::{Address, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use alloy::sol_types::SolCall;
use bardo_core::Runtime;
use bardo_core::profile::Profile;
use bardo_core::tool::RequiredCapability;
use bardo_devnet::snapshot::Snapshot;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_evm::chain::{ChainConfig, Chains};
use bardo_evm::{Evm, Wallet};
use bardo_runtime::Services;
use bardo_runtime::engine::{Engine, Limits};
use bardo_runtime::plugin::{Host, WasiPolicy};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

pub mod chain;
pub mod nats;
pub mod registry;
pub mod safe;
pub mod streams;
#[cfg(feature = "safety")]
pub mod writes;

alloy::sol! {
    function balanceOf(address account) external view returns (uint256);
}

/// The repository's root (this crate is `host/test-support/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("repo root").to_owned()
}

/// The embedding model memory searches with, as `scripts/setup.sh` unpacks it.
pub fn embedding_model() -> PathBuf {
    let dir = root().join(".cache/models/all-MiniLM-L6-v2");
    assert!(
        dir.join("model.safetensors").is_file(),
        "no embedding model in {}: run scripts/setup.sh",
        dir.display()
    );
    dir
}

/// The target directory's scratch space (`target/tmp`, as `CARGO_TARGET_TMPDIR`), found from
/// the running test or bench binary (`target/<profile>/deps/…`).
pub fn target_tmp() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    exe.ancestors().nth(3).expect("target dir").join("tmp")
}

/// A checksummed address in an answer, as an address.
pub fn addr(v: &Value) -> Address {
    let text = v.as_str().unwrap_or_else(|| panic!("{v} is not a string"));
    assert!(Address::parse_checksummed(text, None).is_ok(), "{text} is checksummed");
    text.parse().expect("address")
}

/// A decimal string in an answer, as a number.
pub fn u256(v: &Value) -> U256 {
    v.as_str().unwrap_or_else(|| panic!("{v} is not a decimal string")).parse().expect("decimal")
}

/// One async runtime for the whole process, as a host process has one.
pub fn host_runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::new().expect("runtime"))
}

/// A current-thread runtime for a test's own RPC calls.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// One engine for the whole process, with a compiled-artifact cache shared by every test
/// binary, so each component is compiled once per build.
pub fn engine() -> Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(Some(target_tmp().join("bardo-cache"))).expect("engine")).clone()
}

/// Services with no chains, wallet or settings (hosts that need none share them).
pub fn no_services() -> Arc<Services> {
    static SERVICES: OnceLock<Arc<Services>> = OnceLock::new();
    SERVICES.get_or_init(|| Arc::new(Services::empty(host_runtime()))).clone()
}

/// A host with `profile` and `limits`, no chains, and the given guest components loaded.
pub fn host_with(profile: &str, limits: Limits, guests: &[&str]) -> Host {
    let mut host = Host::new(
        engine(),
        no_services(),
        Profile::parse(profile).expect("profile"),
        limits,
        WasiPolicy::default(),
    )
    .expect("host");
    for g in guests {
        host.load_file(Path::new(g)).unwrap_or_else(|e| panic!("loading {g}: {e}"));
    }
    host
}

/// A `dev`-profile host with default limits and no chains.
pub fn host(guests: &[&str]) -> Host {
    host_with("dev", Limits::default(), guests)
}

/// The deployed devnet's snapshot (deployed once per fingerprint of the deployer), shared by
/// every test of the process.
pub fn snapshot() -> &'static Snapshot {
    static SNAPSHOT: OnceLock<Snapshot> = OnceLock::new();
    SNAPSHOT.get_or_init(|| {
        // The cache `bardo devnet up` uses too: the CLI's tests and `make demo` deploy no more.
        let devnet = root().join("devnet");
        let cache = bardo_devnet::snapshot::cache_for(&devnet, &target_tmp().join("devnet"));
        Snapshot::ensure(host_runtime(), &Anvil::binary(&root()), &devnet, &cache, |_| {})
            .expect("devnet snapshot (run `make setup`)")
    })
}

/// A fresh anvil started from the deployed-devnet snapshot (~100 ms), and where everything is.
pub fn devnet() -> (Anvil, bardo_devnet::deploy::Deployments) {
    let s = snapshot();
    (s.spawn(host_runtime(), &Anvil::binary(&root())).expect("anvil from snapshot"), s.deployments.clone())
}

/// A fresh anvil of the devnet's second chain ([`bardo_devnet::SECOND_CHAIN_ID`]) started from
/// its snapshot, and where everything is on it.
pub fn second_devnet() -> (Anvil, bardo_devnet::deploy::Deployments) {
    let s = snapshot().second().expect("the snapshot holds the second chain");
    (s.spawn(host_runtime(), &Anvil::binary(&root())).expect("anvil from snapshot"), s.deployments.clone())
}

/// The snapshot and a fresh anvil started from it (a benchmark's devnet).
pub fn snapshot_and_anvil() -> (&'static Snapshot, Anvil) {
    let s = snapshot();
    (s, s.spawn(host_runtime(), &Anvil::binary(&root())).expect("anvil from snapshot"))
}

/// A bare anvil, nothing deployed.
pub fn anvil() -> Anvil {
    Anvil::spawn(&Anvil::binary(&root()), &[]).expect("anvil (run `make setup`)")
}

/// Send `tx` and wait for its receipt, with a gas limit a quarter above the node's estimate: an
/// estimate made in one second can fall short in the next (Uniswap V3 writes an oracle
/// observation, Aave accrues interest, only when the block timestamp moved).
pub async fn send<P: Provider>(provider: &P, tx: TransactionRequest) -> TransactionReceipt {
    let gas = provider.estimate_gas(tx.clone()).await.expect("estimate gas");
    let tx = tx.with_gas_limit(gas * 5 / 4 + 20_000);
    provider.send_transaction(tx).await.expect("send").get_receipt().await.expect("receipt")
}

/// `account`'s balance of ERC-20 `token` on the devnet `node`, read directly from the chain.
pub fn balance_of(node: &Anvil, token: Address, account: Address) -> U256 {
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    let tx = TransactionRequest::default().to(token).input(balanceOfCall { account }.abi_encode().into());
    let out = runtime().block_on(provider.call(tx).into_future()).expect("balanceOf");
    balanceOfCall::abi_decode_returns(&out).expect("decode")
}

/// A `dev`-profile host on the chain at `url` (two retries), no wallet, `guests` loaded.
pub fn host_on(url: &str, guests: &[&str]) -> Host {
    let config = ChainConfig { retries: 2, ..ChainConfig::new(url.to_owned()) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), host_runtime()).expect("chains");
    let mut host = Host::new(
        engine(),
        Arc::new(Services::new(Evm::new(chains, None))),
        Profile::parse("dev").expect("profile"),
        Limits::default(),
        WasiPolicy::default(),
    )
    .expect("host");
    for g in guests {
        host.load_file(Path::new(g)).expect("load");
    }
    host
}

/// A `dev`-profile host on the devnet at `url` with the dev wallet (if `wallet`), `settings` for
/// the uniswap plugin, and `guests` loaded.
pub fn devnet_host(url: &str, settings: Value, wallet: bool, guests: &[&str]) -> Host {
    let settings = BTreeMap::from([("uniswap".to_owned(), settings)]);
    devnet_host_with(url, settings, wallet.then_some(bardo_devnet::DEV_KEY), guests)
}

/// A host on the devnet at `url` with plugin `settings` by plugin name, signing with `key`.
pub fn devnet_host_with(
    url: &str,
    settings: BTreeMap<String, Value>,
    key: Option<&str>,
    guests: &[&str],
) -> Host {
    host_over(devnet_services(url, settings, key), guests)
}

/// The chains of a host on the devnet at `url`: anvil mines a block per transaction, so every
/// read sees the newest head; marked `devnet` (the dev profile's cheat codes run on it).
pub fn devnet_chains(url: &str) -> Chains {
    let config = ChainConfig { head_ttl_ms: 0, devnet: true, ..ChainConfig::new(url) };
    Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), host_runtime()).expect("chains")
}

/// The services of a host on the devnet at `url`: plugin `settings` by name, signing with `key`.
pub fn devnet_services(url: &str, settings: BTreeMap<String, Value>, key: Option<&str>) -> Services {
    let wallet = key.map(|k| Wallet::from_signer(k.parse().expect("key")));
    Services::new(Evm::new(devnet_chains(url), wallet)).with_settings(settings, BTreeMap::new())
}

/// A `dev`-profile host over `services` (with the wallet capability) and `guests` loaded.
pub fn host_over(services: Services, guests: &[&str]) -> Host {
    let profile = Profile::parse("dev").expect("profile").with_capabilities([RequiredCapability::Wallet]);
    let mut host = Host::new(engine(), Arc::new(services), profile, Limits::default(), WasiPolicy::default())
        .expect("host");
    for g in guests {
        host.load_file(Path::new(g)).unwrap_or_else(|e| panic!("load {g}: {e}"));
    }
    host
}

/// A TCP proxy to `upstream` that holds every chunk the client sends for `delay`: a slow node.
/// (A fault injection: anvil itself cannot be made slow.)
pub fn slow_proxy(upstream: std::net::SocketAddr, delay: std::time::Duration) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = std::net::TcpStream::connect(upstream) else { continue };
            let (mut c_read, mut s_write) =
                (client.try_clone().expect("clone"), server.try_clone().expect("clone"));
            std::thread::spawn(move || {
                let mut buf = [0u8; 16 << 10];
                while let Ok(n @ 1..) = c_read.read(&mut buf) {
                    std::thread::sleep(delay);
                    if s_write.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
            let (mut s_read, mut c_write) = (server, client);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s_read, &mut c_write);
            });
        }
    });
    addr
}

/// The devnet's Across relayer serving `chains` (each node and its deployments) on a thread of
/// its own until dropped.
pub struct Relaying {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// What it did, a line per deposit decided.
    pub notes: Arc<std::sync::Mutex<Vec<String>>>,
}

/// Start the devnet's relayer over `chains`.
pub fn relaying(chains: &[(&Anvil, &bardo_devnet::deploy::Deployments)]) -> Relaying {
    use std::sync::atomic::{AtomicBool, Ordering};
    let served: Vec<(String, bardo_devnet::deploy::Deployments)> =
        chains.iter().map(|(node, d)| (node.url(), (*d).clone())).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let notes = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (stopping, said) = (stop.clone(), notes.clone());
    let thread = std::thread::spawn(move || {
        runtime().block_on(bardo_devnet::relayer::relay(
            &served,
            || stopping.load(Ordering::Relaxed),
            |note| said.lock().expect("notes").push(note.to_owned()),
        ))
    });
    Relaying { stop, thread: Some(thread), notes }
}

impl Drop for Relaying {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
