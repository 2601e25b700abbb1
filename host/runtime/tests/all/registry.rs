//! Plugin distribution against a real OCI registry: Debian's `docker-registry` on a loopback
//! port with its storage in a temp dir (installed by `make setup`).

use bardo_registry::{Artifact, Credential, RegistryClient, RegistryError, sign};
use bardo_runtime::config::Config;
use bardo_runtime::distribution::lock::Lockfile;
use bardo_runtime::distribution::{self, DistributionError, Outcome, Puller};
use bardo_runtime::live::Live;
use bardo_runtime::setup;
use bardo_test_artifacts::{ECHO_V1, ECHO_V2, ECHO_V3, EVIL_WRITER, HELLO, SOCKET_IMPORT};
use bardo_test_support::registry::{RegistryServer, workdir};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn reload(dir: &Path) -> Config {
    Config::load(&dir.join("bardo.toml"), true).expect("config")
}

pub(super) fn pull(config: &Config, name: &str, reference: &str) -> Result<Outcome, DistributionError> {
    let engine = crate::engine();
    let lock_path = config.resolve(&config.lock);
    let mut lock = Lockfile::read(&lock_path).expect("lock");
    let outcome = distribution::sync(
        &Puller::new(config, crate::host_runtime()),
        &engine,
        &mut lock,
        name,
        reference,
        &[],
        &|_| {},
    )?;
    lock.write(&lock_path).expect("write lock");
    Ok(outcome)
}

fn call_version(config: &Config, profile: &str) -> String {
    let opened = setup::open(config, Some(profile), crate::host_runtime()).expect("open");
    assert!(
        opened.refused.is_empty(),
        "refused: {:?}",
        opened.refused.iter().map(ToString::to_string).collect::<Vec<_>>()
    );
    let answer = opened.host.call("echo_get_version", r#"{"n":7}"#).result.expect("call");
    let v: serde_json::Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(v["n"], 7);
    v["version"].as_str().expect("version").to_owned()
}

#[test]
fn publish_pull_load_call_in_the_layout_wkg_reads() {
    let server = RegistryServer::start();
    let (reference, digest, layer) = server.publish("bardo/hello", HELLO, "0.1.0");
    let (dir, config) = workdir(&server, &format!("\n[oci]\nhello = \"{reference}\"\n"));

    // Loading pulls, verifies, pins and caches it; the tool answers.
    let opened = setup::open(&config, Some("data"), crate::host_runtime()).expect("open");
    assert!(opened.refused.is_empty());
    let answer = opened.host.call("hello_greet", r#"{"name":"registry"}"#).result.expect("call");
    assert!(answer.contains("hello, registry"), "{answer}");
    let lock = Lockfile::read(&dir.path().join("bardo.lock")).expect("lock");
    let pin = lock.oci_pin("hello").expect("pinned");
    assert_eq!(
        (pin.digest.as_str(), pin.layer.as_str(), pin.version.as_str()),
        (digest.as_str(), layer.as_str(), "0.1.0")
    );
    let cached = std::fs::read(dir.path().join(format!("cache/oci/{}.wasm", layer.replace(':', "-"))))
        .expect("cached");
    assert_eq!(cached, std::fs::read(HELLO).expect("hello"));

    // The layout, read back by a client nobody here wrote (oci-client's own pull; its config
    // checked field by field against the Wasm OCI artifact layout `wkg` reads).
    let oci = oci_client::Client::new(oci_client::client::ClientConfig {
        protocol: oci_client::client::ClientProtocol::Http,
        ..Default::default()
    });
    let parsed: oci_client::Reference = reference.parse().expect("ref");
    let (manifest, got_digest, config) = crate::host_runtime()
        .block_on_anywhere(
            oci.pull_manifest_and_config(&parsed, &oci_client::secrets::RegistryAuth::Anonymous),
        )
        .expect("oci-client reads it");
    assert_eq!(got_digest, digest);
    assert_eq!(manifest.media_type.as_deref(), Some("application/vnd.oci.image.manifest.v1+json"));
    assert_eq!(manifest.config.media_type, "application/vnd.wasm.config.v0+json");
    assert_eq!(
        manifest.layers.iter().map(|l| (l.media_type.as_str(), l.digest.as_str())).collect::<Vec<_>>(),
        [("application/wasm", layer.as_str())]
    );
    let config: serde_json::Value = serde_json::from_str(&config).expect("config json");
    assert_eq!((&config["architecture"], &config["os"]), (&"wasm".into(), &"wasip2".into()));
    assert_eq!(config["layerDigests"], serde_json::json!([layer.clone()]));
    let created = config["created"].as_str().expect("created");
    assert!(chrono::DateTime::parse_from_rfc3339(created).is_ok(), "created is an RFC 3339 time: {config}");
    let names = |key: &str| -> Vec<&str> {
        config["component"][key]
            .as_array()
            .expect("component section")
            .iter()
            .filter_map(|n| n.as_str())
            .collect()
    };
    assert!(names("imports").iter().any(|i| i.starts_with("bardo:host/chain@0.1")), "{config}");
    assert!(names("exports").iter().any(|e| e.starts_with("bardo:plugin/read@0.2")), "{config}");
    let annotations = manifest.annotations.expect("annotations");
    assert_eq!(annotations["org.opencontainers.image.version"], "0.1.0");
    assert_eq!(
        manifest.layers[0].annotations.as_ref().expect("layer annotations")["org.opencontainers.image.title"],
        "bardo_plugin_hello.wasm"
    );
    let image = crate::host_runtime()
        .block_on_anywhere(oci.pull(
            &parsed,
            &oci_client::secrets::RegistryAuth::Anonymous,
            vec!["application/wasm"],
        ))
        .expect("pull");
    assert_eq!(image.layers[0].data.as_ref(), cached.as_slice());

    // Only semver tags count as versions.
    server.publish("bardo/hello", HELLO, "0.1.0");
    let versions = crate::host_runtime().block_on_anywhere(server.client().versions(&parsed)).expect("tags");
    assert_eq!(versions, vec!["0.1.0".to_owned()]);
}

#[test]
fn tampered_blobs_and_a_tampered_cache_are_refused() {
    let server = RegistryServer::start();
    let (reference, _, layer) = server.publish("bardo/echo", ECHO_V1, "0.1.0");
    let blob = server.blob_path(&layer);
    let mut bytes = std::fs::read(&blob).expect("blob");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&blob, &bytes).expect("tamper");
    let (dir, config) = workdir(&server, "");
    match pull(&config, "echo", &reference) {
        Err(DistributionError::Registry(RegistryError::Tampered { .. })) => {}
        Err(other) => panic!("expected a tampered-layer refusal, got {other}"),
        Ok(_) => panic!("a tampered layer was accepted"),
    }
    assert!(Lockfile::read(&dir.path().join("bardo.lock")).expect("lock").oci.is_empty(), "nothing pinned");
    assert!(
        !dir.path().join("cache/oci").exists()
            || std::fs::read_dir(dir.path().join("cache/oci")).expect("dir").next().is_none()
    );

    // A good pull (other bytes: blobs are stored once per digest), then the cached copy
    // altered on disk: refused before use.
    let (reference, _, layer) = server.publish("bardo/echo2", ECHO_V2, "0.2.0");
    pull(&config, "echo", &reference).expect("pull");
    assert_eq!(call_version(&config, "data"), "0.2.0");
    let cached = dir.path().join(format!("cache/oci/{}.wasm", layer.replace(':', "-")));
    let mut bytes = std::fs::read(&cached).expect("cached");
    bytes[100] ^= 0xff;
    std::fs::write(&cached, bytes).expect("tamper cache");
    let opened = setup::open(&config, Some("data"), crate::host_runtime()).expect("open");
    let refused: Vec<String> = opened.refused.iter().map(ToString::to_string).collect();
    assert!(refused.iter().any(|r| r.contains("does not match its pin")), "{refused:?}");
    assert!(opened.host.catalog().get("echo_get_version").is_none());

    // A tampered manifest: the digest asked for no longer matches what the registry sends.
    let pinned = format!("{}/bardo/echo2@sha256:{}", server.addr, "0".repeat(64));
    assert!(pull(&config, "other", &pinned).is_err());
}

#[test]
fn signatures_are_required_where_the_trust_policy_says_so() {
    let server = RegistryServer::start();
    let keys = tempfile::tempdir().expect("keys");
    let (private_a, public_a) = sign::generate().expect("key a");
    let (_, public_b) = sign::generate().expect("key b");
    std::fs::write(keys.path().join("a.pem"), &private_a).expect("write");
    std::fs::write(keys.path().join("a.pub"), &public_a).expect("write");
    std::fs::write(keys.path().join("b.pub"), &public_b).expect("write");
    let key_a = sign::read_signing_key(&keys.path().join("a.pem")).expect("read");

    let (signed, digest, _) = server.publish("bardo/echo", ECHO_V1, "0.1.0");
    let parsed = bardo_registry::parse_reference(&signed).expect("ref");
    let tag = crate::host_runtime()
        .block_on_anywhere(server.client().sign(&parsed, &digest, &key_a))
        .expect("sign");
    assert_eq!(tag.tag(), Some(format!("{}.sig", digest.replace(':', "-")).as_str()));
    let (unsigned, _, _) = server.publish("bardo/unsigned", ECHO_V1, "0.1.0");
    let policy = |key: &str| {
        format!(
            "\n[[registry.trust]]\nprefix = \"{}/bardo/\"\nkeys = [\"{}\"]\n",
            server.addr,
            keys.path().join(key).display()
        )
    };

    // Signed by the trusted key: pulled.
    let (_d1, config) = workdir(&server, &policy("a.pub"));
    assert!(matches!(pull(&config, "echo", &signed), Ok(Outcome::Pinned { .. })));
    assert_eq!(call_version(&config, "data"), "0.1.0");
    // Unsigned under the policy: refused.
    let (_d2, config) = workdir(&server, &policy("a.pub"));
    match pull(&config, "echo", &unsigned) {
        Err(DistributionError::Registry(RegistryError::Unsigned { .. })) => {}
        other => panic!("expected unsigned refusal, got {:?}", other.err().map(|e| e.to_string())),
    }
    // Signed, but by a key the policy does not trust: refused.
    let (d3, config) = workdir(&server, &policy("b.pub"));
    match pull(&config, "echo", &signed) {
        Err(DistributionError::Registry(RegistryError::BadSignature { reason, .. })) => {
            assert!(reason.contains("none of the trusted keys"), "{reason}")
        }
        other => panic!("expected signature refusal, got {:?}", other.err().map(|e| e.to_string())),
    }
    assert!(Lockfile::read(&d3.path().join("bardo.lock")).expect("lock").oci.is_empty());
    // A signature copied onto another manifest does not verify for it.
    let (other, other_digest, _) = server.publish("bardo/echo", ECHO_V2, "0.2.0");
    let moved = format!("{}/bardo/echo:{}", server.addr, sign::signature_tag(&other_digest));
    let sig_ref = format!("{}/bardo/echo:{}", server.addr, sign::signature_tag(&digest));
    copy_manifest(&server, &sig_ref, &moved);
    let (_d4, config) = workdir(&server, &policy("a.pub"));
    match pull(&config, "echo", &other) {
        Err(DistributionError::Registry(RegistryError::BadSignature { reason, .. })) => {
            assert!(reason.contains("another manifest"), "{reason}")
        }
        other => panic!("expected signature refusal, got {:?}", other.err().map(|e| e.to_string())),
    }
    // require_signatures refuses what no policy covers.
    let (_d5, config) = workdir(&server, "require_signatures = true\n");
    assert!(matches!(pull(&config, "echo", &signed), Err(DistributionError::Invalid { .. })));
}

/// Re-tag a manifest (the registry's HTTP API: GET it, PUT it under another tag).
fn copy_manifest(server: &RegistryServer, from: &str, to: &str) {
    let path = |r: &str| {
        let (repo, tag) = r.trim_start_matches(&format!("{}/", server.addr)).rsplit_once(':').expect("tag");
        format!("/v2/{repo}/manifests/{tag}")
    };
    let request = |head: String, body: &[u8]| -> Vec<u8> {
        let mut s = std::net::TcpStream::connect(&server.addr).expect("connect");
        s.write_all(head.as_bytes()).expect("write");
        s.write_all(body).expect("write");
        let mut out = Vec::new();
        s.read_to_end(&mut out).expect("read");
        out
    };
    let got = request(
        format!(
            "GET {} HTTP/1.0\r\nHost: {}\r\nAccept: application/vnd.oci.image.manifest.v1+json\r\n\r\n",
            path(from),
            server.addr
        ),
        b"",
    );
    let split = got.windows(4).position(|w| w == b"\r\n\r\n").expect("headers") + 4;
    let body = &got[split..];
    let put = request(
        format!(
            "PUT {} HTTP/1.0\r\nHost: {}\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\nContent-Length: {}\r\n\r\n",
            path(to),
            server.addr,
            body.len()
        ),
        body,
    );
    assert!(
        String::from_utf8_lossy(&put).starts_with("HTTP/1.0 201")
            || String::from_utf8_lossy(&put).starts_with("HTTP/1.1 201"),
        "{}",
        String::from_utf8_lossy(&put)
    );
}

#[test]
fn imports_beyond_the_grants_are_refused_before_the_layer_is_downloaded() {
    let server = RegistryServer::start();
    // The layers are deleted from the registry: a refusal that names the imports proves the
    // host decided from the config alone.
    let (sockets, _, layer) = server.publish("bardo/sockets", SOCKET_IMPORT, "0.1.0");
    std::fs::remove_file(server.blob_path(&layer)).expect("delete layer");
    let (writer, _, layer) = server.publish("bardo/writer", EVIL_WRITER, "0.1.0");
    std::fs::remove_file(server.blob_path(&layer)).expect("delete layer");
    let (dir, config) = workdir(
        &server,
        &format!(
            "\n[oci.sockets]\nreference = \"{sockets}\"\n\n[oci.writer]\nreference = \"{writer}\"\nprofiles = [\"data\"]\n"
        ),
    );
    let opened = setup::open(&config, Some("data"), crate::host_runtime()).expect("open");
    let refused: Vec<String> = opened.refused.iter().map(ToString::to_string).collect();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(
        refused.iter().any(|r| r.contains("refused before download") && r.contains("wasi:sockets")),
        "{refused:?}"
    );
    assert!(
        refused.iter().any(|r| r.contains("refused before download") && r.contains("read-only profiles")),
        "{refused:?}"
    );
    assert!(Lockfile::read(&dir.path().join("bardo.lock")).expect("lock").oci.is_empty());
}

#[test]
fn an_update_whose_surface_grew_waits_for_approval() {
    let server = RegistryServer::start();
    let (v1, _, _) = server.publish("bardo/echo", ECHO_V1, "0.1.0");
    let (v2, _, _) = server.publish("bardo/echo", ECHO_V2, "0.2.0");
    let (v3, v3_digest, _) = server.publish("bardo/echo", ECHO_V3, "0.3.0");
    let (dir, config) = workdir(&server, "");
    assert!(matches!(pull(&config, "echo", &v1), Ok(Outcome::Pinned { previous: None, .. })));
    // Same surface: pinned at once.
    match pull(&config, "echo", &v2).expect("pull v2") {
        Outcome::Pinned { previous: Some(prev), diff: Some(d), .. } => {
            assert_eq!(prev.version, "0.1.0");
            assert!(!d.grew);
        }
        _ => panic!("v2 should replace v1"),
    }
    assert_eq!(call_version(&config, "dev"), "0.2.0");
    // A new write tool: held, v2 keeps serving.
    match pull(&config, "echo", &v3).expect("pull v3") {
        Outcome::Held { pin, active, diff } => {
            assert_eq!((pin.version.as_str(), active.version.as_str()), ("0.3.0", "0.2.0"));
            assert!(diff.grew);
            assert!(diff.added_tools.iter().any(|t| t.name == "echo_plan_nothing"));
            assert_eq!(
                diff.world.map(|(o, n)| (format!("{o:?}"), format!("{n:?}"))),
                Some(("Reader".into(), "Writer".into()))
            );
        }
        _ => panic!("v3 grew and must be held"),
    }
    let lock = Lockfile::read(&dir.path().join("bardo.lock")).expect("lock");
    assert_eq!(lock.oci_pin("echo").expect("pin").version, "0.2.0");
    assert_eq!(lock.pending[0].digest, v3_digest);
    assert_eq!(call_version(&config, "dev"), "0.2.0");
    // Approved: v3 serves.
    let mut lock = Lockfile::read(&dir.path().join("bardo.lock")).expect("lock");
    let (pin, diff) = distribution::approve(
        &Puller::new(&config, crate::host_runtime()),
        &crate::engine(),
        &mut lock,
        "echo",
    )
    .expect("approve");
    lock.write(&dir.path().join("bardo.lock")).expect("write");
    assert_eq!(pin.version, "0.3.0");
    assert!(diff.expect("diff").grew);
    assert_eq!(call_version(&config, "dev"), "0.3.0");
    assert!(matches!(
        distribution::approve(
            &Puller::new(&config, crate::host_runtime()),
            &crate::engine(),
            &mut lock,
            "echo"
        ),
        Err(DistributionError::NoPending(_))
    ));
}

#[test]
fn downgrades_and_re_tagged_releases_are_refused() {
    let server = RegistryServer::start();
    let (v1, _, _) = server.publish("bardo/echo", ECHO_V1, "0.1.0");
    let (v2, v2_digest, _) = server.publish("bardo/echo", ECHO_V2, "0.2.0");
    // The old release re-tagged as a newer one: its signed manifest says 0.1.0, the tag 0.9.0.
    let retagged = format!("{}/bardo/echo:0.9.0", server.addr);
    let artifact =
        Artifact { version: "0.1.0".into(), title: "echo.wasm".into(), description: None, author: None };
    let parsed = bardo_registry::parse_reference(&retagged).expect("reference");
    crate::host_runtime()
        .block_on_anywhere(server.client().publish(
            &parsed,
            std::fs::read(ECHO_V1).expect("v1"),
            &artifact,
            &|_| {},
        ))
        .expect("publish");
    let (dir, config) = workdir(&server, "");
    assert!(matches!(pull(&config, "echo", &v2), Ok(Outcome::Pinned { previous: None, .. })));
    let pinned = || Lockfile::read(&dir.path().join("bardo.lock")).expect("lock").oci_pin("echo").cloned();

    match pull(&config, "echo", &retagged) {
        Err(DistributionError::Invalid { reason, .. }) => {
            assert!(reason.contains("tagged 0.9.0"), "{reason}")
        }
        other => panic!("a re-tagged release must be refused, got {:?}", other.map(|_| ())),
    }
    match pull(&config, "echo", &v1) {
        Err(DistributionError::Downgrade { offered, active, .. }) => {
            assert_eq!((offered.as_str(), active.as_str()), ("0.1.0", "0.2.0"));
        }
        other => panic!("a downgrade must be refused, got {:?}", other.map(|_| ())),
    }
    assert_eq!(pinned().expect("pin").digest, v2_digest, "the active pin is untouched");
    assert_eq!(call_version(&config, "dev"), "0.2.0");

    // The operator's explicit choice.
    let lock_path = config.resolve(&config.lock);
    let mut lock = Lockfile::read(&lock_path).expect("lock");
    let puller = Puller::new(&config, crate::host_runtime()).allow_downgrade(true);
    let outcome = distribution::sync(&puller, &crate::engine(), &mut lock, "echo", &v1, &[], &|_| {});
    assert!(matches!(outcome, Ok(Outcome::Pinned { .. })), "{:?}", outcome.err());
    lock.write(&lock_path).expect("write lock");
    assert_eq!(call_version(&config, "dev"), "0.1.0");
}

#[test]
fn an_unreachable_registry_falls_back_to_the_cached_pin() {
    let mut server = RegistryServer::start();
    let (v1, _, _) = server.publish("bardo/echo", ECHO_V1, "0.1.0");
    let (v2, _, _) = server.publish("bardo/echo", ECHO_V2, "0.2.0");
    let (dir, config) = workdir(&server, &format!("\n[oci]\necho = \"{v1}\"\n"));
    assert_eq!(call_version(&config, "data"), "0.1.0");
    server.stop();
    // Loading needs no registry: the cached pin, re-verified.
    assert_eq!(call_version(&config, "data"), "0.1.0");
    // Following a new reference while the registry is down: the pinned version serves, warned.
    std::fs::write(
        dir.path().join("bardo.toml"),
        std::fs::read_to_string(dir.path().join("bardo.toml")).expect("read").replace(&v1, &v2),
    )
    .expect("write");
    let config = reload(dir.path());
    match pull(&config, "echo", &v2) {
        Ok(Outcome::Offline { pin, reason }) => {
            assert_eq!(pin.version, "0.1.0");
            assert!(reason.contains("unreachable"), "{reason}");
        }
        other => panic!("expected the cached fallback, got {:?}", other.err().map(|e| e.to_string())),
    }
    assert_eq!(call_version(&config, "data"), "0.1.0");
    // Nothing cached under a new name: a clear error.
    match pull(&config, "fresh", &v2) {
        Err(DistributionError::Registry(e)) => assert!(e.is_unreachable(), "{e}"),
        other => panic!("expected unreachable, got {:?}", other.err().map(|e| e.to_string())),
    }
}

#[test]
fn hot_swap_under_load_drops_no_call_and_canaries_route_per_profile() {
    let server = RegistryServer::start();
    let (v1, _, _) = server.publish("bardo/echo", ECHO_V1, "0.1.0");
    let (v2, _, _) = server.publish("bardo/echo", ECHO_V2, "0.2.0");
    let (dir, _) = workdir(
        &server,
        &format!(
            "\n[oci.echo]\nreference = \"{v1}\"\nprofiles = [\"data\"]\n\n[oci.echo-canary]\nreference = \"{v2}\"\nprofiles = [\"dev\"]\n"
        ),
    );
    let config_path = dir.path().join("bardo.toml");
    let live = Arc::new(
        Live::open(&config_path, &["data".into(), "dev".into()], crate::host_runtime()).expect("live"),
    );
    let answer = |profile: &str| -> String {
        let text = live.call(profile, "echo_get_version", r#"{"n":1}"#).result.expect("call");
        serde_json::from_str::<serde_json::Value>(&text).expect("json")["version"]
            .as_str()
            .expect("v")
            .to_owned()
    };
    // Canary: both versions loaded side by side, routed by profile.
    assert_eq!(answer("data"), "0.1.0");
    assert_eq!(answer("dev"), "0.2.0");

    let _watcher = live.watch(Duration::from_millis(50));
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed, v1_seen, v2_seen) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let started = Instant::now();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (live, stop, ok, failed, v1_seen, v2_seen) =
                (live.clone(), stop.clone(), ok.clone(), failed.clone(), v1_seen.clone(), v2_seen.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match live.call("data", "echo_get_version", r#"{"n":2}"#).result {
                        Ok(text) if text.contains("\"0.1.0\"") => {
                            v1_seen.fetch_add(1, Ordering::Relaxed);
                            ok.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(text) if text.contains("\"0.2.0\"") => {
                            v2_seen.fetch_add(1, Ordering::Relaxed);
                            ok.fetch_add(1, Ordering::Relaxed);
                        }
                        _ => {
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    // The operator moves the data profile to v2 in bardo.toml; the watcher pulls and swaps.
    let text = std::fs::read_to_string(&config_path).expect("read");
    std::fs::write(&config_path, text.replacen(&v1, &v2, 1)).expect("write");
    let swap_deadline = Instant::now() + Duration::from_secs(20);
    while live.reloads() == 0 {
        assert!(Instant::now() < swap_deadline, "the watcher did not reload");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(2000));
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().expect("worker");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    eprintln!(
        "hot swap: {ok} calls in {elapsed:.1} s ({:.0}/s), {} on v1, {} on v2, {failed} failed",
        ok as f64 / elapsed,
        v1_seen.load(Ordering::Relaxed),
        v2_seen.load(Ordering::Relaxed)
    );
    assert_eq!(failed, 0, "calls failed during the swap");
    assert!(ok as f64 / elapsed >= 1000.0, "{ok} calls in {elapsed:.1} s is under 1,000/s");
    assert!(v1_seen.load(Ordering::Relaxed) > 0 && v2_seen.load(Ordering::Relaxed) > 0);
    // After the swap every call is on v2.
    for _ in 0..50 {
        assert_eq!(answer("data"), "0.2.0");
    }
}

#[test]
fn a_registry_behind_a_login_is_reached_only_with_it() {
    let server = RegistryServer::start_with_login("ann", "pw-123");
    let reference = format!("{}/bardo/echo:0.1.0", server.addr);
    let parsed = bardo_registry::parse_reference(&reference).expect("reference");
    let artifact =
        Artifact { version: "0.1.0".into(), title: "echo.wasm".into(), description: None, author: None };
    let bytes = std::fs::read(ECHO_V1).expect("component");
    let publish = |client: RegistryClient| {
        crate::host_runtime().block_on_anywhere(client.publish(&parsed, bytes.clone(), &artifact, &|_| {}))
    };
    let refused = |r: Result<bardo_registry::Published, RegistryError>, why: &str| match r {
        Err(RegistryError::Unauthorized { registry, reason, .. }) => {
            assert_eq!(registry, server.addr);
            assert!(reason.contains(why), "{reason}");
        }
        other => panic!("expected unauthorized ({why}), got {:?}", other.map(|p| p.digest)),
    };
    refused(publish(server.anonymous()), "401");
    let wrong = Credential::basic("ann", "nope");
    refused(publish(server.anonymous().with_credential(&server.addr, wrong)), "401");
    let unset = Credential::Unavailable("$SOME_VAR is not set".into());
    refused(publish(server.anonymous().with_credential(&server.addr, unset)), "SOME_VAR");

    let published = publish(server.client()).expect("publish with the login");
    let client = server.client();
    let resolved =
        crate::host_runtime().block_on_anywhere(client.resolve(&parsed)).expect("resolve with the login");
    assert_eq!(resolved.digest, published.digest);
    assert_eq!(
        crate::host_runtime().block_on_anywhere(client.fetch(&resolved, &|_| {})).expect("fetch"),
        bytes
    );
    assert_eq!(
        crate::host_runtime().block_on_anywhere(client.versions(&parsed)).expect("versions"),
        ["0.1.0"]
    );
    match crate::host_runtime().block_on_anywhere(server.anonymous().resolve(&parsed)) {
        Err(RegistryError::Unauthorized { .. }) => {}
        other => panic!("an anonymous pull must be refused, got {:?}", other.map(|r| r.digest)),
    }
}

#[test]
fn the_new_plugins_publish_pull_and_load_each_at_its_own_version() {
    use bardo_test_artifacts::{BOOTSTRAP, INTELLIGENCE, SAFETY, TESTNET, VAULT, WALLET};
    let server = RegistryServer::start();
    let plugins = [
        ("wallet", WALLET),
        ("safety", SAFETY),
        ("intelligence", INTELLIGENCE),
        ("testnet", TESTNET),
        ("vault", VAULT),
        ("bootstrap", BOOTSTRAP),
    ];
    let mut oci = String::from("\n[oci]\n");
    for (name, file) in plugins {
        // The version each crate declares is the one its manifest carries and the tag says.
        let manifest = format!("{}/../../plugins/{name}/Cargo.toml", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(manifest).expect("Cargo.toml");
        let version = text
            .lines()
            .find_map(|l| l.strip_prefix("version = \"").and_then(|v| v.strip_suffix('"')))
            .expect("a version");
        let (reference, _, _) = server.publish(&format!("bardo/{name}"), file, version);
        oci += &format!("{name} = \"{reference}\"\n");
    }
    let (dir, config) = workdir(&server, &oci);
    let opened = setup::open(&config, Some("dev"), crate::host_runtime()).expect("open");
    assert!(
        opened.refused.is_empty(),
        "{:?}",
        opened.refused.iter().map(ToString::to_string).collect::<Vec<_>>()
    );
    let lock = Lockfile::read(&dir.path().join("bardo.lock")).expect("lock");
    for (name, _) in plugins {
        let loaded = opened.host.plugins().iter().find(|p| &*p.name == name).expect("loaded");
        assert_eq!(lock.oci_pin(name).expect("pinned").version, loaded.manifest.version, "{name}");
    }
    for tool in [
        "wallet_get_balances",
        "safety_check_token",
        "intel_compute_lvr",
        "testnet_mine",
        "vault_get_info",
        "bootstrap_check_setup",
    ] {
        assert!(opened.host.catalog().contains_key(tool), "{tool}");
    }
    let lvr =
        opened.host.call("intel_compute_lvr", r#"{"volatility":0.4,"price":"1"}"#).result.expect("call");
    assert!(lvr.contains("\"lvr_per_year\":0.02"), "{lvr}");
}
