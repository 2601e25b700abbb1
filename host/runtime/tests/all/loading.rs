//! Loading: the import policy, bad components, the lock file, the compiled-artifact cache,
//! and the catalog's profile selection.

use super::{engine, host};
use bardo_core::ErrorCode;
use bardo_core::profile::Profile;
use bardo_core::tool::RequiredCapability;
use bardo_runtime::config::Config;
use bardo_runtime::engine::{CacheOutcome, Engine, Limits};
use bardo_runtime::plugin::{Host, LoadError, WasiPolicy};
use bardo_runtime::setup;
use bardo_test_artifacts::{
    FS_IMPORT, HELLO, HOSTILE, KIND_THIEF, NO_CATALOG, OVERREACH, PROMPT_KIND, SOCKET_IMPORT, UNISWAP, bytes,
};
use std::path::Path;

fn load_err(guest: &str) -> String {
    let mut h = host(&[]);
    match h.load_file(Path::new(guest)) {
        Ok(_) => panic!("{guest} must be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn filesystem_import_is_refused_naming_it() {
    let e = load_err(FS_IMPORT);
    assert!(e.contains("import `wasi:filesystem/"), "{e}");
    assert!(e.contains(r#"grant = ["wasi:filesystem"]"#), "the error says how to grant it: {e}");
}

#[test]
fn socket_import_is_refused_naming_it() {
    let e = load_err(SOCKET_IMPORT);
    assert!(e.contains("import `wasi:sockets/"), "{e}");
}

#[test]
fn granted_filesystem_loads_but_sees_no_host_files() {
    let policy = WasiPolicy {
        grant: vec!["wasi:filesystem".into(), "wasi:clocks/wall-clock".into()],
        preopens: vec![],
    };
    let mut h = Host::new(
        engine(),
        crate::no_services(),
        Profile::parse("dev").expect("profile"),
        Limits::default(),
        policy,
    )
    .expect("host");
    h.load_file(Path::new(FS_IMPORT)).expect("granted, so it loads");
    let r = h.call("sneaky_read_file", "{}");
    let e = r.result.expect_err("no directory is preopened");
    assert!(!e.message.contains("root:"), "{e}");
}

#[test]
fn reader_importing_signer_is_refused() {
    let e = load_err(OVERREACH);
    assert!(e.contains("may not import `signer`"), "{e}");
}

#[test]
fn component_without_catalog_is_refused() {
    let e = load_err(NO_CATALOG);
    assert!(e.contains("does not export `bardo:plugin/catalog"), "{e}");
}

#[test]
fn bytes_that_are_not_wasm_are_refused() {
    let mut h = host(&[]);
    let e = h.load_bytes("notes.txt", b"definitely not wasm").err().expect("refused").to_string();
    assert!(e.contains("does not start with the wasm magic bytes"), "{e}");
    let core = b"\0asm\x01\0\0\0";
    let e = h.load_bytes("core.wasm", core).err().expect("refused").to_string();
    assert!(e.contains("core wasm module"), "{e}");
    let mut truncated = bytes(HELLO);
    truncated.truncate(truncated.len() / 2);
    let e = h.load_bytes("truncated.wasm", &truncated).err().expect("refused");
    assert!(matches!(e, LoadError::NotAComponent { .. }), "{e}");
}

#[test]
fn the_same_file_twice_is_refused() {
    let mut h = host(&[HELLO]);
    let e = h.load_file(Path::new(HELLO)).err().expect("second copy refused").to_string();
    assert!(e.contains("plugin `hello` is loaded twice"), "{e}");
    assert!(h.call("hello_greet", r#"{"name":"a"}"#).result.is_ok(), "the first copy still serves");
}

#[test]
fn manifest_and_stats_are_reported() {
    let h = host(&[HELLO]);
    let plugin = &h.plugins()[0];
    assert_eq!(&*plugin.name, "hello");
    assert_eq!(plugin.manifest.version, "0.1.0");
    let def = &h.catalog()["hello_greet"].def;
    assert_eq!(def.input_schema["properties"]["name"]["type"], "string");
    assert_eq!(def.progress_steps, ["greet", "read block"]);
    let r = h.call("hello_greet", r#"{"name":"golem"}"#);
    assert_eq!(r.result.as_deref(), Ok(r#"{"greeting":"hello, golem","block_number":null}"#));
    assert!(r.stats.fuel_consumed > 0 && r.stats.fuel_consumed < 1_000_000, "{:?}", r.stats);
    assert!(r.stats.peak_memory_bytes >= 64 << 10, "{:?}", r.stats);
    assert!(!r.stats.wall.is_zero());
    assert_eq!(r.events.events.len(), 1, "one progress step");
}

#[test]
fn typed_errors_for_bad_calls() {
    let h = host(&[HELLO]);
    let e = h.call("hello_greet", r#"{"name":""}"#).result.expect_err("empty name");
    assert_eq!(e.code, ErrorCode::InvalidParams);
    assert!(e.message.contains("1 to 64 characters"), "{e}");
    let e = h.call("hello_greet", r#"{"nome":"x"}"#).result.expect_err("unknown field");
    assert_eq!(e.code, ErrorCode::InvalidParams);
    let e = h.call("hello_greet", "not json").result.expect_err("not json");
    assert_eq!(e.code, ErrorCode::InvalidParams);
    let e = h.call("nope_no_tool", "{}").result.expect_err("unknown tool");
    assert_eq!(e.code, ErrorCode::NotFound);
    let big = format!(r#"{{"name":"{}"}}"#, "x".repeat(2 << 20));
    let r = h.call("hello_greet", &big);
    assert_eq!(r.result.expect_err("params too large").code, ErrorCode::InvalidParams);
    assert_eq!(r.stats.fuel_consumed, 0, "refused before any plugin code ran");
}

#[test]
fn chain_without_configuration_is_a_typed_error() {
    let h = host(&[HELLO]);
    let e = h.call("hello_greet", r#"{"name":"a","chain_id":31337}"#).result.expect_err("no chain");
    assert_eq!(e.code, ErrorCode::ChainNotSupported);
    assert!(e.message.contains("chain 31337 is not configured"), "{e}");
}

#[test]
fn compiled_artifacts_are_cached_by_digest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wasm = bytes(HELLO);
    let first = Engine::new(Some(dir.path().to_owned())).expect("engine");
    assert_eq!(first.compile(&wasm).expect("compile").1, CacheOutcome::Compiled);
    let files: Vec<_> = std::fs::read_dir(dir.path()).expect("cache dir").filter_map(Result::ok).collect();
    assert_eq!(files.len(), 1);
    let digest = hex_sha256(&wasm);
    assert!(files[0].file_name().to_string_lossy().starts_with(&digest), "keyed by the sha256 of the bytes");
    let second = Engine::new(Some(dir.path().to_owned())).expect("engine");
    assert_eq!(second.compile(&wasm).expect("cached").1, CacheOutcome::Hit);
    // A corrupt artifact is ignored and rebuilt, never trusted.
    std::fs::write(files[0].path(), b"garbage").expect("corrupt it");
    assert_eq!(second.compile(&wasm).expect("recompiled").1, CacheOutcome::Compiled);
}

/// A host on an engine whose cache is `cache`, with default services and profile `dev`.
fn cached_host(cache: &Path) -> Host {
    let engine = Engine::new(Some(cache.to_owned())).expect("engine");
    Host::new(
        engine,
        crate::no_services(),
        Profile::parse("dev").expect("dev"),
        Limits::default(),
        WasiPolicy::default(),
    )
    .expect("host")
}

#[test]
fn a_listed_load_runs_no_plugin_code_until_the_first_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cache, file) = (dir.path().join("cache"), dir.path().join("hello.wasm"));
    std::fs::copy(HELLO, &file).expect("copy");
    let greet = r#"{"name":"golem"}"#;
    let answer = r#"{"greeting":"hello, golem","block_number":null}"#;

    // The first load reads the component (and keeps what it read); the second lists it.
    let mut first = cached_host(&cache);
    let read = first.load_file(&file).expect("load");
    assert!(read.code_made(), "the first load instantiated the component to read its manifest");
    let mut second = cached_host(&cache);
    let listed = second.load_file(&file).expect("listed load");
    assert!(!listed.code_made(), "no component mapped, no plugin code run to list its tools");
    assert_eq!(listed.manifest, read.manifest);
    assert_eq!(listed.surface, read.surface);
    assert_eq!(second.catalog().keys().collect::<Vec<_>>(), first.catalog().keys().collect::<Vec<_>>());
    // Its first call makes the code, and the call is the same call.
    assert_eq!(second.call("hello_greet", greet).result.as_deref(), Ok(answer));
    assert!(listed.code_made());
    assert_eq!(listed.instance_stats().made_on_call + listed.instance_stats().taken_ready, 1);

    // The policy still decides: a listing does not carry a grant the host does not give.
    let mut strict = cached_host(&cache);
    let mut fs_first = Host::new(
        Engine::new(Some(cache.clone())).expect("engine"),
        crate::no_services(),
        Profile::parse("dev").expect("dev"),
        Limits::default(),
        WasiPolicy {
            grant: vec!["wasi:filesystem".into(), "wasi:clocks/wall-clock".into()],
            preopens: vec![],
        },
    )
    .expect("host");
    let fs_file = dir.path().join("fs.wasm");
    std::fs::copy(FS_IMPORT, &fs_file).expect("copy");
    fs_first.load_file(&fs_file).expect("granted, so it loads and is listed");
    let e =
        strict.load_file(&fs_file).err().expect("listed, and still refused without the grant").to_string();
    assert!(e.contains("import `wasi:filesystem/"), "{e}");

    // The compiled code left the cache: the first call compiles the file again, as verified.
    let compiled: Vec<_> = std::fs::read_dir(&cache)
        .expect("cache")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .collect();
    let mut third = cached_host(&cache);
    let relisted = third.load_file(&file).expect("listed");
    assert!(!relisted.code_made());
    compiled.iter().for_each(|p| std::fs::remove_file(p).expect("remove compiled code"));
    assert_eq!(third.call("hello_greet", greet).result.as_deref(), Ok(answer));

    // ... but never a file that changed since it was verified.
    let mut fourth = cached_host(&cache);
    let stale = fourth.load_file(&file).expect("listed");
    assert!(!stale.code_made());
    std::fs::read_dir(&cache)
        .expect("cache")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
        .for_each(|e| std::fs::remove_file(e.path()).expect("remove compiled code"));
    std::fs::copy(UNISWAP, &file).expect("replace the file");
    let e = fourth.call("hello_greet", greet).result.expect_err("changed since verified");
    assert_eq!(e.code, ErrorCode::Internal);
    assert!(e.message.contains("changed since bardo verified it") && e.message.contains("restart"), "{e}");

    // An unusable listing is ignored: the load reads the component again, and rewrites it.
    std::fs::copy(HELLO, &file).expect("restore the file");
    for entry in std::fs::read_dir(&cache).expect("cache").filter_map(Result::ok) {
        if entry.file_name().to_string_lossy().ends_with(".listing.json") {
            std::fs::write(entry.path(), b"{not json").expect("corrupt the listing");
        }
    }
    let mut fifth = cached_host(&cache);
    assert!(fifth.load_file(&file).expect("read again").code_made());
    assert!(!cached_host(&cache).load_file(&file).expect("listed again").code_made());
}

fn hex_sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn config_in(dir: &Path, extra: &str) -> Config {
    let text = format!(
        "profile = \"dev\"\nplugins = [\"plugins\"]\nlock = \"bardo.lock\"\ncache_dir = \"cache\"\n{extra}"
    );
    let path = dir.join("bardo.toml");
    std::fs::write(&path, text).expect("write config");
    Config::load(&path, true).expect("config")
}

#[test]
fn lock_pins_plugins_and_refuses_a_changed_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(HELLO, dir.path().join("plugins/hello.wasm")).expect("copy");
    let config = config_in(dir.path(), "");
    let opened = setup::open(&config, None, crate::host_runtime()).expect("open");
    assert!(opened.refused.is_empty());
    assert!(opened.host.catalog().contains_key("hello_greet"));
    let lock = std::fs::read_to_string(dir.path().join("bardo.lock")).expect("lock written");
    assert!(lock.contains(&hex_sha256(&bytes(HELLO))), "{lock}");

    // Swap different bytes in under the same name: refused, the rest of the host unaffected.
    std::fs::copy(HOSTILE, dir.path().join("plugins/hello.wasm")).expect("swap");
    let opened = setup::open(&config, None, crate::host_runtime()).expect("open");
    assert_eq!(opened.refused.len(), 1);
    let e = opened.refused[0].to_string();
    assert!(e.contains("but") && e.contains("pins") && e.contains("bardo lock"), "{e}");
    assert!(opened.host.catalog().is_empty(), "nothing from the refused file was loaded");

    // Re-pinning on purpose makes it load.
    setup::relock(&config).expect("relock");
    let opened = setup::open(&config, None, crate::host_runtime()).expect("open");
    assert!(opened.refused.is_empty());
    assert!(opened.host.catalog().contains_key("hostile_spin"));
}

#[test]
fn profile_selects_tools_and_limits_per_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(HELLO, dir.path().join("plugins/hello.wasm")).expect("copy");
    std::fs::copy(HOSTILE, dir.path().join("plugins/hostile.wasm")).expect("copy");
    let config =
        config_in(dir.path(), "[profiles.trader]\nfuel = 1000\n[tools]\ndisable = [\"hostile_panic\"]\n");
    // `data` is in every profile; `dev` tools only in dev.
    let trader = setup::open(&config, Some("trader"), crate::host_runtime()).expect("open").host;
    assert_eq!(trader.catalog().keys().collect::<Vec<_>>(), ["hello_greet"]);
    assert_eq!(trader.limits().fuel, 1000, "per-profile fuel");
    let e = trader.call("hello_greet", r#"{"name":"x"}"#).result.expect_err("1000 fuel is not enough");
    assert_eq!(e.code, ErrorCode::LimitExceeded);
    let dev = setup::open(&config, Some("dev"), crate::host_runtime()).expect("open").host;
    assert!(dev.catalog().contains_key("hostile_spin"));
    assert!(!dev.catalog().contains_key("hostile_panic"), "disabled by override");
    assert_eq!(dev.limits().fuel, 10_000_000);
    assert!(setup::open(&config, Some("nonsense"), crate::host_runtime()).is_err());
}

#[test]
fn one_tool_serves_each_action_kind() {
    // A second writer claiming `swap` would take the agent's swaps over: refused at load,
    // naming both tools and how to choose.
    // (Its read tool named like Uniswap's is disabled here: that clash has a test of its own.)
    let profile = |disable: &[&str]| {
        Profile::parse("trader")
            .expect("profile")
            .with_overrides(&[], &disable.iter().map(|d| (*d).to_owned()).collect::<Vec<_>>())
            .with_capabilities([RequiredCapability::Wallet])
    };
    let host = |disable: &[&str], first: &str| {
        let mut h = Host::new(
            engine(),
            super::no_services(),
            profile(disable),
            Limits::default(),
            WasiPolicy::default(),
        )
        .expect("host");
        h.load_file(Path::new(first)).expect("the first plugin");
        h
    };
    let shadow = "kind-thief:uniswap_get_pool_info";
    let mut h = host(&[shadow], UNISWAP);
    let e = h.load_file(Path::new(KIND_THIEF)).err().expect("a second `swap` is refused");
    assert!(
        matches!(&e, LoadError::ActionKindTaken { tool, kind, other_tool, .. }
            if tool == "thief_plan_swap" && kind == "swap" && other_tool == "uniswap_execute_swap"),
        "{e}"
    );
    assert!(e.to_string().contains("[tools] disable = [\"kind-thief:thief_plan_swap\"]"), "{e}");
    assert_eq!(h.plugins().len(), 1, "nothing of the refused plugin was loaded");
    // Whichever loads first, the second is refused: no load order silently decides.
    let mut h = host(&[shadow], KIND_THIEF);
    assert!(matches!(h.load_file(Path::new(UNISWAP)), Err(LoadError::ActionKindTaken { .. })));
    // The operator picks one: with the thief's tool disabled, both load and `swap` has one tool.
    let mut h = host(&[shadow, "kind-thief:thief_plan_swap"], UNISWAP);
    h.load_file(Path::new(KIND_THIEF)).expect("loads once its claim is disabled");
    let swaps: Vec<&str> = h
        .catalog()
        .values()
        .filter(|e| e.def.action_kinds.iter().any(|k| k == "swap"))
        .map(|e| e.def.name.as_str())
        .collect();
    assert_eq!(swaps, ["uniswap_execute_swap"]);
}

#[test]
fn a_kind_written_as_prose_for_the_hosts_prompt_is_refused_at_load() {
    // Its kind would appear inside the host's confirmation request ("Confirm `<kind>` …") as if
    // the host had written it.
    let mut h = crate::host(&[HELLO]);
    let e = h.load_file(Path::new(PROMPT_KIND)).err().expect("refused at load");
    let message = e.to_string();
    assert!(message.contains("prompt_plan_swap") && message.contains("action kind"), "{message}");
    assert!(message.contains("a-z, 0-9, '_' and '-'"), "{message}");
    assert!(!message.contains("\n  spends"), "the kind is quoted, not printed raw: {message}");
    assert_eq!(h.plugins().len(), 1, "nothing of it was loaded");
    assert!(!h.catalog().contains_key("prompt_plan_swap"));
}

#[test]
fn a_tool_name_two_plugins_declare_is_refused_until_one_plugins_is_disabled_by_its_qualified_name() {
    let open = |disable: &[&str]| {
        let profile = Profile::parse("trader")
            .expect("profile")
            .with_overrides(&[], &disable.iter().map(|d| (*d).to_owned()).collect::<Vec<_>>())
            .with_capabilities([RequiredCapability::Wallet]);
        let mut h =
            Host::new(engine(), super::no_services(), profile, Limits::default(), WasiPolicy::default())
                .expect("host");
        h.load_file(Path::new(UNISWAP)).expect("uniswap");
        let thief = h.load_file(Path::new(KIND_THIEF));
        (h, thief)
    };
    let (h, refused) = open(&["kind-thief:thief_plan_swap"]);
    let e = refused.err().expect("the name clash is refused");
    assert!(
        matches!(&e, LoadError::DuplicateTool { tool, other, .. } if tool == "uniswap_get_pool_info" && other == "uniswap"),
        "{e}"
    );
    // The refusal names the exact line that resolves it.
    assert!(e.to_string().contains("[tools] disable = [\"kind-thief:uniswap_get_pool_info\"]"), "{e}");
    assert_eq!(h.plugins().len(), 1);
    // That line: both load; the name is Uniswap's.
    let (h, loaded) = open(&["kind-thief:thief_plan_swap", "kind-thief:uniswap_get_pool_info"]);
    loaded.expect("loads once its tool is disabled");
    assert_eq!(&*h.catalog()["uniswap_get_pool_info"].plugin.name, "uniswap");
    // The other plugin's instead: the name is the thief's.
    let (h, loaded) = open(&["kind-thief:thief_plan_swap", "uniswap:uniswap_get_pool_info"]);
    loaded.expect("loads once Uniswap's tool is disabled");
    assert_eq!(&*h.catalog()["uniswap_get_pool_info"].plugin.name, "kind-thief");
    // The bare name disables both: no clash, neither serves it.
    let (h, loaded) = open(&["kind-thief:thief_plan_swap", "uniswap_get_pool_info"]);
    loaded.expect("loads: the name is disabled in both");
    assert!(!h.catalog().contains_key("uniswap_get_pool_info"));
}

#[test]
fn two_copies_of_one_plugin_are_refused_naming_both_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("hello-copy.wasm");
    std::fs::copy(bardo_test_artifacts::HELLO, &copy).expect("copy");
    let mut h = crate::host(&[bardo_test_artifacts::HELLO]);
    let Err(e) = h.load_file(&copy) else { panic!("a second copy loaded") };
    let message = e.to_string();
    assert!(message.contains("loaded twice") && message.contains("hello-copy.wasm"), "{message}");
    assert!(message.contains("bardo_plugin_hello.wasm"), "{message}");
    assert_eq!(h.catalog().len(), 1, "the first copy still serves");
}

/// A reload rebuilds the host and keeps what it can of its services: the chains, the warm fork
/// and the wallet survive a change of plugin settings (which are read anew), and are rebuilt when
/// `[chains]` changes.
#[test]
fn a_reload_keeps_the_chains_unless_their_section_changed() {
    use bardo_runtime::live::Live;
    use std::sync::Arc;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins");
    std::fs::copy(HELLO, dir.path().join("plugins/hello.wasm")).expect("copy");
    let config = dir.path().join("bardo.toml");
    let write = |rpc: &str, greeting: &str| {
        let text = format!(
            "profile = \"data\"\nplugins = [\"plugins\"]\ncache_dir = \"cache\"\n[chains.31337]\nrpc = \"{rpc}\"\n\
             [settings.hello]\ngreeting = \"{greeting}\"\n"
        );
        std::fs::write(&config, text).expect("config");
    };
    write("http://127.0.0.1:1", "hi");
    let live = Live::open(&config, &[], crate::host_runtime()).expect("live");
    let first = live.host("data").expect("host");
    assert_eq!(first.services().settings.of("hello"), Some(r#"{"greeting":"hi"}"#));

    write("http://127.0.0.1:1", "hello");
    live.reload().expect("reload");
    let second = live.host("data").expect("host");
    assert!(!Arc::ptr_eq(&first, &second), "a new host");
    assert!(Arc::ptr_eq(&first.services().evm, &second.services().evm), "the same chains and fork");
    assert_eq!(second.services().settings.of("hello"), Some(r#"{"greeting":"hello"}"#), "settings read anew");

    write("http://127.0.0.1:2", "hello");
    live.reload().expect("reload");
    let third = live.host("data").expect("host");
    assert!(!Arc::ptr_eq(&second.services().evm, &third.services().evm), "[chains] changed: new chains");
    let rpc = third.services().evm.chains.get(31337).expect("chain").rpc_url().to_owned();
    assert!(rpc.contains(":2"), "{rpc}");
}
