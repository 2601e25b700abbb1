//! A fleet subscription survives the death of the `bardo stream` process delivering it, and
//! `bardo events` resumes the fleet's stream from a fleet sequence: two `bardo` processes on one
//! devnet and one real three-node JetStream cluster (replicas 3). The write path's fleet
//! (permits, limits, halt, audit chain across hosts) is tested in `bardo-safety`.

use alloy::primitives::U256;
use bardo_cluster::Cluster;
use bardo_devnet::Anvil;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::nats::NatsCluster;
use bardo_runtime::fleet_events::{self, FleetEnvelope};
use std::time::Duration;

struct Fleet {
    node: Anvil,
    d: Deployments,
    nats: NatsCluster,
}

/// What a `bardo stream` process in `dir` printed.
fn logs(dir: &tempfile::TempDir) -> String {
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap_or_default();
    format!("stdout:\n{}\nstderr:\n{}", read("stdout.log"), read("stderr.log"))
}

/// Every fleet event in the stream so far (waiting up to `within` for `n` of type `kind`).
fn fleet_events_of(cluster: &Cluster, kind: &str, n: usize, within: Duration) -> Vec<FleetEnvelope> {
    let mut feed = cluster.subscribe_events(Some(1)).expect("subscribe");
    let deadline = std::time::Instant::now() + within;
    let mut got = Vec::new();
    while got.iter().filter(|e: &&FleetEnvelope| e.event["type"] == kind).count() < n {
        assert!(std::time::Instant::now() < deadline, "{n} {kind} events within {within:?}; got {got:#?}");
        match feed.next(Duration::from_millis(200)).expect("feed") {
            Some(Ok(m)) => got.push(fleet_events::decode(&m).expect("decodes")),
            Some(Err(gap)) => panic!("{gap}"),
            None => {}
        }
    }
    got
}

/// Two `bardo stream` processes, hosts `a` and `b`, run one fleet subscription (a token jar's
/// deposits); the holder of its lease delivers it. Killed with SIGKILL, the other takes over
/// within the lease's time and back-fills what was mined meanwhile: every deposit is in the
/// fleet's events once, in order, and `bardo events` resumes them from a fleet sequence.
#[test]
fn when_the_host_delivering_a_subscription_dies_another_takes_over_and_nothing_is_lost_or_doubled() {
    use alloy::network::TransactionBuilder;
    use alloy::providers::ProviderBuilder;
    use alloy::sol_types::SolCall;
    use std::process::Command;
    alloy::sol! { function transfer(address to, uint256 amount) external returns (bool); }

    let (node, d) = bardo_test_support::devnet();
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = NatsCluster::start(dir.path(), 3).expect("a three-node nats-server cluster");
    let f = Fleet { node, d, nats };
    let jar = f.d.accounts[7];
    let params = format!(r#"{{"chain_id":31337,"jar":"{}","tokens":["USDC"]}}"#, jar.to_checksum(None));
    let nats: Vec<String> = f.nats.urls().iter().map(|u| format!("{u:?}")).collect();
    // The fleet's key, which seals its shared state: every host holds the same one.
    let key_path = dir.path().join("fleet.key");
    let key = bardo_safety::host_key::HostKey::load_or_create(&key_path).expect("the fleet's key");
    let dirs = ["a", "b"].map(|host| {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
        std::fs::copy(bardo_test_artifacts::STREAMING, dir.path().join("plugins/streaming.wasm")).expect("copy");
        std::fs::write(dir.path().join("streaming.json"), f.d.streaming_settings().to_string()).expect("settings");
        let config = format!(
            "profile = \"data\"\nplugins = [\"plugins\"]\n[chains.31337]\nrpc = \"{}\"\n[settings]\nstreaming = \"streaming.json\"\n\
             [safety]\nhost_key = {:?}\n\
             [cluster]\nnats = [{}]\nname = \"fleet\"\nreplicas = 3\nhost = \"{host}\"\nlease_ms = 1500\n",
            f.node.url(),
            key_path,
            nats.join(", ")
        );
        std::fs::write(dir.path().join("bardo.toml"), config).expect("config");
        dir
    });
    let start = |dir: &tempfile::TempDir| {
        let log = |name: &str| std::fs::File::create(dir.path().join(name)).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_bardo"))
            .current_dir(dir.path())
            .args(["stream", "stream_tokenjar", "--params", &params])
            .env("BARDO_LOG", "bardo_runtime=info")
            .stdout(log("stdout.log"))
            .stderr(log("stderr.log"))
            .spawn()
            .expect("bardo stream");
        // A bound on a hang, not a timing check: the plugin is compiled first, on a loaded machine.
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while !std::fs::read_to_string(dir.path().join("stderr.log"))
            .unwrap_or_default()
            .contains("subscribed fleet-")
        {
            assert!(std::time::Instant::now() < deadline, "not subscribed: {}", logs(dir));
            std::thread::sleep(Duration::from_millis(50));
        }
        child
    };
    let mut children = [start(&dirs[0]), start(&dirs[1])];

    let rt = bardo_test_support::runtime();
    let provider = ProviderBuilder::new().connect_http(f.node.url().parse().expect("url"));
    let deposit = |usdc: u64| {
        let call = transferCall { to: jar, amount: U256::from(usdc * 1_000_000) };
        let tx = alloy::rpc::types::TransactionRequest::default()
            .from(f.d.deployer)
            .to(f.d.tokens["USDC"].address)
            .with_input(call.abi_encode());
        rt.block_on(bardo_test_support::send(&provider, tx));
    };
    let cluster = bardo_test_support::nats::connect_sealed(&f.nats, "fleet", 3, std::sync::Arc::new(key));
    let updates = |events: &[FleetEnvelope]| -> Vec<(String, String)> {
        events
            .iter()
            .filter(|e| e.event["type"] == "TokenJarUpdate")
            .map(|e| (e.event["data"]["amount"].as_str().expect("amount").to_owned(), e.host.clone()))
            .collect()
    };

    for usdc in 1..=3 {
        deposit(usdc);
    }
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        fleet_events_of(&cluster, "TokenJarUpdate", 3, Duration::from_secs(60))
    }))
    .unwrap_or_else(|_| panic!("a: {}\nb: {}", logs(&dirs[0]), logs(&dirs[1])));
    let before = updates(&first);
    let owner = before[0].1.clone();
    assert!(before.iter().all(|(_, host)| *host == owner), "one host delivers: {before:?}");
    let (dead, survivor) = if owner == "a" { (0, "b") } else { (1, "a") };
    children[dead].kill().expect("SIGKILL the delivering host");
    children[dead].wait().expect("reaped");

    // Mined while nobody holds the lease: back-filled by the survivor once it takes over.
    deposit(4);
    deposit(5);
    let _ = fleet_events_of(&cluster, "TokenJarUpdate", 5, Duration::from_secs(60));
    deposit(6);
    let events = fleet_events_of(&cluster, "TokenJarUpdate", 6, Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(500));
    let all = updates(&fleet_events_of(&cluster, "TokenJarUpdate", 6, Duration::from_secs(5)));
    let amounts: Vec<&str> = all.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(amounts, ["1", "2", "3", "4", "5", "6"], "each deposit once, in order: {all:?}");
    assert!(all[3..].iter().all(|(_, host)| host == survivor), "the survivor took over: {all:?}");

    // `bardo events` follows the fleet's stream: resumed from the sequence of the 4th deposit.
    let fourth = events.iter().filter(|e| e.event["type"] == "TokenJarUpdate").nth(3).expect("4th").seq;
    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dirs[1].path())
        .args(["events", "--resume-from", &fourth.to_string(), "--no-follow"])
        .output()
        .expect("bardo events");
    assert!(o.status.success(), "{o:?}");
    let printed: Vec<FleetEnvelope> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(printed.first().map(|e| e.seq), Some(fourth));
    let printed_amounts: Vec<(String, String)> = updates(&printed);
    assert_eq!(printed_amounts, all[3..], "the same events, from the fleet's sequence {fourth}");
    // `--no-follow` alone: the whole stream, every deposit in it.
    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dirs[1].path())
        .args(["events", "--no-follow"])
        .output()
        .expect("bardo events");
    let printed: Vec<FleetEnvelope> =
        String::from_utf8_lossy(&o.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert_eq!(updates(&printed), all, "{o:?}");

    let alive = 1 - dead;
    children[alive].kill().expect("stop");
    children[alive].wait().expect("reaped");
}

/// A fleet's NATS out of reach is one error shape from every command: `unavailable`, retryable,
/// as JSON on stdout (exit 1), never a bare message.
#[test]
fn every_command_reports_an_unreachable_fleet_as_unavailable_json() {
    use std::process::Command;
    let dir = tempfile::tempdir().expect("tempdir");
    let closed = super::free_port();
    std::fs::write(
        dir.path().join("bardo.toml"),
        format!(
            "profile = \"trader\"\nplugins = []\n[cluster]\nnats = [\"nats://127.0.0.1:{closed}\"]\ntimeout_ms = 500\n"
        ),
    )
    .expect("config");
    for args in [&["cancel", "permit-00"][..], &["audit-log", "verify"], &["resume"]] {
        let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
            .current_dir(dir.path())
            .args(args)
            .output()
            .expect("bardo");
        assert_eq!(o.status.code(), Some(1), "{args:?}: {o:?}");
        let out: serde_json::Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {o:?}"));
        assert_eq!(out["error"]["code"], "unavailable", "{args:?}: {out}");
        assert_eq!(out["error"]["retryable"], true, "{args:?}: {out}");
    }
}

/// An admin deletes the fleet's state stream while it is halted: every `bardo` command on a
/// host that anchored the fleet fails closed, saying what it saw, and `bardo resume` cannot lift
/// it; only `bardo fleet reanchor` with the host key does, and the audit chain records it.
#[test]
fn a_host_halted_on_a_deleted_state_stream_runs_again_only_when_the_operator_reanchors() {
    use std::process::Command;
    let root = tempfile::tempdir().expect("tempdir");
    let nats = NatsCluster::start(root.path(), 1).expect("nats-server");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("bardo.toml"),
        format!(
            "profile = \"data\"\nplugins = []\n[cluster]\nnats = [{:?}]\nname = \"anchored\"\n",
            nats.urls()[0]
        ),
    )
    .expect("config");
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
            .current_dir(dir.path())
            .args(args)
            .output()
            .expect("bardo");
        (
            o.status.code(),
            format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
        )
    };
    // The operator's halt, then the admin's deletion.
    assert_eq!(run(&["resume"]).0, Some(0));
    assert!(dir.path().join(".bardo/fleet-anchor.json").exists(), "anchored on first use");
    bardo_test_support::nats::Intruder::connect(&nats).delete_stream("BARDO_anchored_STATE");
    let (code, out) = run(&["resume"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("made again") && out.contains("bardo fleet reanchor"), "{out}");
    let (code, out) = run(&["resume"]);
    assert_eq!(code, Some(1), "still halted: {out}");
    assert!(out.contains("halted itself"), "{out}");
    // Without the host key nobody re-anchors.
    let key = dir.path().join(".bardo/host.key");
    let aside = dir.path().join("host.key.aside");
    std::fs::rename(&key, &aside).expect("key aside");
    let (code, out) = run(&["fleet", "reanchor", "--reason", "checked"]);
    assert_ne!(code, Some(0), "{out}");
    assert!(out.contains("host key"), "{out}");
    std::fs::rename(&aside, &key).expect("key back");
    let (code, out) = run(&["fleet", "reanchor", "--reason", "state stream restored empty after the drill"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("re-anchored") && out.contains("made again"), "{out}");
    assert_eq!(run(&["resume"]).0, Some(0), "runs again");
    let (code, out) = run(&["audit-log", "show", "--json"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("FleetReanchored") && out.contains("restored empty after the drill"), "{out}");
    let (code, out) = run(&["audit-log", "verify"]);
    assert_eq!(code, Some(0), "{out}");
}
