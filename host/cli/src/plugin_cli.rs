//! `bardo plugin …` (publish, pull, approve, list, precompile, keygen, new) and `bardo run`.

use anyhow::{Context, Result, bail};
use bardo_core::Runtime;
use bardo_registry::{Artifact, Transfer, sign};
use bardo_runtime::config::Config;
use bardo_runtime::distribution::lock::Lockfile;
use bardo_runtime::distribution::{self, Outcome, Puller};
use bardo_runtime::engine::Engine;
use bardo_runtime::live::Live;
use clap::Subcommand;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Subcommand)]
pub(crate) enum PluginAction {
    /// Publish a component in the Wasm OCI layout (REF without a tag gets the plugin's version).
    Publish {
        file: PathBuf,
        /// `registry/repository[:version]`, e.g. 127.0.0.1:5000/bardo/uniswap.
        reference: String,
        /// Sign the manifest digest with this P-256 key (PEM, from `bardo plugin keygen`).
        #[arg(long)]
        sign: Option<PathBuf>,
    },
    /// Pull a component, verify it and pin it in bardo.lock (an update whose capability surface
    /// grew is held until `bardo plugin approve`).
    Pull {
        reference: String,
        /// The name to load it under (default: the repository's last segment).
        #[arg(long = "as")]
        name: Option<String>,
        /// Profiles it is meant for (the import check refuses a writer for read-only ones).
        #[arg(long, value_delimiter = ',')]
        profiles: Vec<String>,
        /// Pin it even if its version is not newer than the active pin's.
        #[arg(long)]
        allow_downgrade: bool,
    },
    /// Activate the held update of NAME (shows what grew).
    Approve { name: String },
    /// Pinned and held components; with `--remote REF`, the versions a repository has.
    List {
        #[arg(long)]
        remote: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Compile the configured plugin files into the compiled-artifact cache (`make plugins`
    /// runs it), so that the next start loads each in a millisecond instead of compiling it.
    Precompile,
    /// Create a P-256 signing key (PATH) and its public key (PATH.pub).
    Keygen { path: PathBuf },
    /// Scaffold a plugin crate NAME that builds on its own (one read tool; `--write`: one write
    /// tool; `--stream`: one stream tool).
    New {
        name: String,
        /// Start with a write tool (the writer world).
        #[arg(long, conflicts_with = "stream")]
        write: bool,
        /// Start with a stream tool (the streamer world).
        #[arg(long)]
        stream: bool,
        /// Where to create it (default: the current directory).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// The bardo-sdk to depend on (default: the checkout this `bardo` was built from).
        #[arg(long)]
        sdk: Option<PathBuf>,
    },
}

/// `bardo plugin new`: needs no configuration.
pub(crate) fn new(name: &str, write: bool, stream: bool, dir: &Path, sdk: Option<&Path>) -> Result<ExitCode> {
    use crate::scaffold::{Kind, create};
    let kind = if write {
        Kind::Write
    } else if stream {
        Kind::Stream
    } else {
        Kind::Read
    };
    let root = create(name, kind, dir, sdk)?;
    println!("created {} ({kind:?} plugin `{name}`); next:", root.display());
    println!("  cd {} && cargo build --release --target wasm32-wasip2", root.display());
    println!("  then see its README.md to load, try and publish it");
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run(config: &Config, action: PluginAction, rt: &Runtime) -> Result<ExitCode> {
    let lock_path = config.resolve(&config.lock);
    match action {
        PluginAction::Publish { file, reference, sign: key } => {
            publish(config, &file, &reference, key.as_deref(), rt)
        }
        PluginAction::Pull { reference, name, profiles, allow_downgrade } => {
            let name = match name {
                Some(n) => n,
                None => default_name(&reference)?,
            };
            let engine = Engine::new(Some(config.resolve(&config.cache_dir)))?;
            let mut lock = Lockfile::read(&lock_path)?;
            let bar = Bar::new(&format!("pull {reference}"));
            let puller = Puller::new(config, rt).allow_downgrade(allow_downgrade);
            let outcome =
                distribution::sync(&puller, &engine, &mut lock, &name, &reference, &profiles, &|t| {
                    bar.update(t)
                });
            bar.finish();
            let outcome = outcome?;
            lock.write(&lock_path)?;
            Ok(report(&name, outcome))
        }
        PluginAction::Approve { name } => {
            let engine = Engine::new(Some(config.resolve(&config.cache_dir)))?;
            let mut lock = Lockfile::read(&lock_path)?;
            let (pin, diff) = distribution::approve(&Puller::new(config, rt), &engine, &mut lock, &name)?;
            if let Some(d) = &diff {
                super::audit_cli::print_changes(d);
            }
            lock.write(&lock_path)?;
            println!("approved {name} {} ({}); a running `bardo run` loads it now", pin.version, pin.digest);
            Ok(ExitCode::SUCCESS)
        }
        PluginAction::List { remote, json } => {
            if let Some(r) = remote {
                let reference = bardo_registry::parse_reference(&r)?;
                let versions = rt.block_on(Puller::new(config, rt).registry().versions(&reference))?;
                if json {
                    println!("{}", serde_json::json!({ "versions": versions }));
                    return Ok(ExitCode::SUCCESS);
                }
                for v in versions {
                    println!("{v}");
                }
                return Ok(ExitCode::SUCCESS);
            }
            let lock = Lockfile::read(&lock_path)?;
            if json {
                let out =
                    serde_json::json!({ "active": lock.oci, "held": lock.pending, "files": lock.entries() });
                println!("{}", serde_json::to_string_pretty(&out)?);
                return Ok(ExitCode::SUCCESS);
            }
            for p in &lock.oci {
                let routed = config.oci.get(&p.name).map(|s| s.profiles().join(",")).unwrap_or_default();
                let routed = if routed.is_empty() { "all profiles".into() } else { routed };
                println!(
                    "active   {:<16} {:<10} {}  {}  ({routed})",
                    p.name, p.version, p.digest, p.reference
                );
            }
            for p in &lock.pending {
                println!(
                    "HELD     {:<16} {:<10} {}  {}  (approve with `bardo plugin approve {}`)",
                    p.name, p.version, p.digest, p.reference, p.name
                );
            }
            for e in lock.entries() {
                println!("file     {:<16} {:<10} sha256:{}", e.file, "", e.sha256);
            }
            Ok(ExitCode::SUCCESS)
        }
        PluginAction::Precompile => precompile(config),
        PluginAction::New { name, write, stream, dir, sdk } => {
            new(&name, write, stream, &dir, sdk.as_deref())
        }
        PluginAction::Keygen { path } => {
            let (private, public) = sign::generate()?;
            let public_path = PathBuf::from(format!("{}.pub", path.display()));
            write_new(&path, &private)?;
            std::fs::write(&public_path, public)
                .with_context(|| format!("writing {}", public_path.display()))?;
            println!(
                "private key {} (keep it secret)\npublic key  {} (list it under [[registry.trust]] keys)",
                path.display(),
                public_path.display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn publish(
    config: &Config,
    file: &Path,
    reference: &str,
    key: Option<&Path>,
    rt: &Runtime,
) -> Result<ExitCode> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let key = key.map(sign::read_signing_key).transpose()?;
    let engine = Engine::new(None)?;
    let report = bardo_runtime::surface_audit::audit(engine, rt, &file.display().to_string(), &bytes)?;
    if let Some(why) = &report.policy_refusal {
        bail!("{} would be refused by hosts: {why}", file.display());
    }
    let mut parsed = bardo_registry::parse_reference(reference)?;
    match (reference.rsplit_once('/').is_some_and(|(_, last)| last.contains(':')), parsed.tag()) {
        (true, Some(tag)) if tag != report.version => bail!(
            "the tag `{tag}` differs from the plugin's version {}; publish it as {}:{}",
            report.version,
            reference.rsplit_once(':').map_or(reference, |(r, _)| r),
            report.version
        ),
        (true, _) => {}
        (false, _) => {
            parsed = bardo_registry::parse_reference(&format!("{reference}:{}", report.version))?;
        }
    }
    let artifact = Artifact {
        version: report.version.clone(),
        title: file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        description: Some(format!(
            "Bardo plugin `{}` ({} world)",
            report.plugin,
            report.world.map_or("no".into(), |w| format!("{w:?}"))
        )),
        author: None,
    };
    let registry = distribution::registry_client(config);
    let bar = Bar::new(&format!("publish {}", parsed.whole()));
    let published = rt.block_on(registry.publish(&parsed, bytes, &artifact, &|t| bar.update(t)));
    bar.finish();
    let published = published?;
    println!(
        "published {} {} ({} bytes, layer {})",
        published.reference, published.digest, published.size, published.layer
    );
    if let Some(key) = key {
        let tag = rt.block_on(registry.sign(&parsed, &published.digest, &key))?;
        println!("signed    {}", tag.whole());
    }
    Ok(ExitCode::SUCCESS)
}

/// Print what a pull did; a held update exits 3 (the operator has to act).
/// `bardo plugin precompile`: one line per component, what it cost. Compiling decides nothing:
/// a start still checks each file against `bardo.lock` and its surface against the policy.
fn precompile(config: &Config) -> Result<ExitCode> {
    let engine = Engine::new(Some(config.resolve(&config.cache_dir)))?;
    let files = config.plugin_files()?;
    let mut failed = 0;
    for (n, file) in files.iter().enumerate() {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let digest = bardo_runtime::engine::sha256_hex(&bytes);
        let of = format!("{}/{}", n + 1, files.len());
        if engine.is_cached(&digest) {
            println!("cached    {name} ({of})");
            continue;
        }
        let mib = bytes.len() as f64 / f64::from(1 << 20);
        eprint!("compiling {name} ({of}, {mib:.1} MiB) … ");
        let started = std::time::Instant::now();
        match engine.compile_digested(&bytes, &digest) {
            Ok(_) => eprintln!("{:.1} s", started.elapsed().as_secs_f64()),
            Err(e) => {
                eprintln!("failed: {e}");
                failed += 1;
            }
        }
    }
    println!("{} components in {}", files.len(), config.resolve(&config.cache_dir).display());
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn report(name: &str, outcome: Outcome) -> ExitCode {
    match outcome {
        Outcome::Unchanged(pin) => {
            println!("{name} {} ({}) is already pinned", pin.version, pin.digest);
            ExitCode::SUCCESS
        }
        Outcome::Pinned { pin, previous, diff } => {
            if let (Some(prev), Some(d)) = (&previous, &diff) {
                println!("{name} {} -> {}", prev.version, pin.version);
                super::audit_cli::print_changes(d);
            }
            println!("pinned {name} {} ({}) in the lock", pin.version, pin.digest);
            ExitCode::SUCCESS
        }
        Outcome::Held { pin, active, diff } => {
            println!("{name} {} -> {}", active.version, pin.version);
            super::audit_cli::print_changes(&diff);
            println!(
                "HELD: {name} {} stays inactive ({} keeps serving) until `bardo plugin approve {name}`",
                pin.version, active.version
            );
            ExitCode::from(3)
        }
        Outcome::Offline { pin, reason } => {
            eprintln!("warning: {reason}");
            println!("using the cached pinned {name} {} ({})", pin.version, pin.digest);
            ExitCode::SUCCESS
        }
    }
}

/// The repository's last path segment, without tag or digest.
fn default_name(reference: &str) -> Result<String> {
    let parsed = bardo_registry::parse_reference(reference)?;
    let name = parsed.repository().rsplit('/').next().unwrap_or_default().to_owned();
    if name.is_empty() {
        bail!("cannot name a plugin after {reference}; pass --as NAME");
    }
    Ok(name)
}

fn write_new(path: &Path, text: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("creating {} (it must not exist yet)", path.display()))?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

/// A transfer progress bar on stderr (hidden when stderr is not a terminal).
struct Bar(indicatif::ProgressBar);

impl Bar {
    fn new(what: &str) -> Self {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_message(what.to_owned());
        Self(bar)
    }

    fn update(&self, t: Transfer) {
        self.0.set_length(t.total);
        self.0.set_position(t.done);
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// `bardo run`: answer JSON requests from stdin, one per line, while watching for new plugins.
pub(crate) fn serve(
    config_path: &Path,
    profiles: &[String],
    watch_ms: u64,
    rt: &Runtime,
) -> Result<ExitCode> {
    let live = Arc::new(Live::open(config_path, profiles, rt)?);
    let _watcher = live.watch(std::time::Duration::from_millis(watch_ms.max(10)));
    // Each call journaled, so a `bardo tui` elsewhere shows it in its tool activity.
    let config = crate::load_config(config_path, true)?;
    let (fabric, journaling) = crate::journaling::reads_fabric(&config, rt);
    let default_profile = live.profiles()[0].clone();
    eprintln!("serving profiles {:?}; one JSON request per line on stdin", live.profiles());
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<serde_json::Value>(&line) {
            Err(e) => {
                serde_json::json!({"id": null, "error": {"code": "invalid-params", "message": format!("the request is not JSON: {e}"), "retryable": false}})
            }
            Ok(req) => {
                let id = req.get("id").cloned().unwrap_or(serde_json::Value::Null);
                let profile = req.get("profile").and_then(|p| p.as_str()).unwrap_or(&default_profile);
                match req.get("tool").and_then(|t| t.as_str()) {
                    None => {
                        serde_json::json!({"id": id, "error": {"code": "invalid-params", "message": "the request needs a `tool`", "retryable": false}})
                    }
                    Some(tool) => {
                        let params = req.get("params").cloned().unwrap_or_else(|| serde_json::json!({}));
                        let report = live.call(profile, tool, &params.to_string());
                        let def =
                            live.host(profile).and_then(|h| h.catalog().get(tool).map(|e| e.def.clone()));
                        for event in report.lifecycle(tool, def.as_ref()) {
                            fabric.emit(event);
                        }
                        match report.result {
                            Ok(text) => {
                                let value: serde_json::Value =
                                    serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
                                serde_json::json!({"id": id, "ok": value})
                            }
                            Err(e) => {
                                serde_json::json!({"id": id, "error": e})
                            }
                        }
                    }
                }
            }
        };
        let mut out = stdout.lock();
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    journaling.finish(rt, &fabric);
    Ok(ExitCode::SUCCESS)
}
