//! The Uniswap plugin from an OCI registry to its first answer: cold (resolve, verify, download,
//! compile, load, first `uniswap_get_pool_info` on the devnet) against the same from the local
//! cache (cached component re-verified, compiled artifact deserialized), and, as the baseline
//! in the same run, the same plugin loaded from a local file.

use bardo_devnet::registry::LocalRegistry;
use bardo_registry::{Artifact, RegistryClient};
use bardo_runtime::config::Config;
use bardo_runtime::setup;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::path::Path;
use std::time::Duration;

const POOL: &str = r#"{"chain_id":31337,"token_a":"WETH","token_b":"USDC"}"#;

fn first_call(dir: &Path) {
    let config = Config::load(&dir.join("bardo.toml"), true).expect("config");
    let opened = setup::open(&config, Some("data"), bardo_test_support::host_runtime()).expect("open");
    assert!(
        opened.refused.is_empty(),
        "{:?}",
        opened.refused.iter().map(ToString::to_string).collect::<Vec<_>>()
    );
    let answer = opened.host.call("uniswap_get_pool_info", POOL).result.expect("pool info");
    assert!(answer.contains("sqrt_price_x96"), "{answer}");
}

/// A work dir whose bardo.toml loads the plugin from `source` (`[oci]` or a file).
fn workdir(root: &Path, name: &str, source: &str, url: &str, settings: &Path) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("bardo.toml"),
        format!(
            "profile = \"data\"\nlock = \"bardo.lock\"\ncache_dir = \"cache\"\n{source}\n\n[chains.31337]\nrpc = \"{url}\"\n\n[settings]\nuniswap = \"{}\"\n",
            settings.display()
        ),
    )
    .expect("config");
    dir
}

fn bench(c: &mut Criterion) {
    let (snapshot, node) = bardo_test_support::snapshot_and_anvil();
    let root = tempfile::tempdir().expect("tempdir");
    let registry = LocalRegistry::start(root.path()).expect("docker-registry (run `make setup`)");
    let reference = format!("{}/bardo/uniswap:0.1.0", registry.addr);
    let bytes = std::fs::read(bardo_test_artifacts::UNISWAP).expect("uniswap plugin");
    let artifact =
        Artifact { version: "0.1.0".into(), title: "uniswap.wasm".into(), description: None, author: None };
    let client = RegistryClient::new(std::slice::from_ref(&registry.addr));
    bardo_test_support::host_runtime()
        .block_on(client.publish(
            &bardo_registry::parse_reference(&reference).expect("ref"),
            bytes,
            &artifact,
            &|_| {},
        ))
        .expect("publish");
    let settings = root.path().join("uniswap.json");
    std::fs::write(&settings, snapshot.deployments.uniswap_settings().to_string()).expect("settings");
    let url = node.url();
    let oci_source = format!(
        "plugins = []\n\n[registry]\ninsecure = [\"{}\"]\n\n[oci]\nuniswap = \"{reference}\"",
        registry.addr
    );

    let mut g = c.benchmark_group("uniswap_first_answer");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let mut n = 0;
    g.bench_function("cold_pull_verify_compile_call", |b| {
        b.iter_batched(
            || {
                n += 1;
                workdir(root.path(), &format!("cold{n}"), &oci_source, &url, &settings)
            },
            |dir| first_call(&dir),
            BatchSize::PerIteration,
        )
    });
    let warm = workdir(root.path(), "warm", &oci_source, &url, &settings);
    first_call(&warm);
    g.bench_function("from_local_cache", |b| b.iter(|| first_call(&warm)));
    let file = workdir(
        root.path(),
        "file",
        &format!("plugins = [\"{}\"]", bardo_test_artifacts::UNISWAP),
        &url,
        &settings,
    );
    first_call(&file);
    g.bench_function("baseline_local_file_cached", |b| b.iter(|| first_call(&file)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
