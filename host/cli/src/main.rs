//! `bardo`: the Bardo Tools host CLI.

use anyhow::{Context, Result};
use args::{AuditLogAction, Cli, Command, Expose, ToolArgs, ToolsAction};
use bardo_core::Runtime;
use bardo_runtime::config::Config;
use bardo_runtime::setup;
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod approval_page;
mod archetypes_cli;
mod args;
mod audit_cli;
mod audit_log_cli;
mod devnet_cli;
mod events_cli;
mod fleet_cli;
mod human;
mod identity_cli;
mod init_cli;
mod journaling;
mod mcp_cli;
mod plugin_cli;
mod policy_cli;
mod records_cli;
mod scaffold;
mod serve;
mod tools_cli;
mod tui_cli;
mod write_cli;

// mimalloc, not glibc's malloc: a served call allocates on one thread and frees on another,
// which glibc answered with arena consolidation (~10% of a small MCP call's time).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `rel` in the checkout this binary was built from (its `devnet/`, its `sdk/`), which a config
/// kept elsewhere still finds.
fn built_from(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

fn main() -> ExitCode {
    // No transparent huge pages for this process: mimalloc would back its heap with 2 MiB
    // pages, each zeroed whole on first touch — 40 % of a `bardo tools` and 15 MB of its RSS
    // for a heap of a few MB. (Inherited by the processes it starts: anvil, the sidecar.)
    let thp = rustix::thread::disable_transparent_huge_pages(true);
    use tracing_subscriber::{Layer, filter, layer::SubscriberExt, util::SubscriberInitExt};
    // Progress a person waits on, as plain lines; everything else by `BARDO_LOG` (default warn).
    let progress = tracing_subscriber::fmt::layer()
        .without_time()
        .with_level(false)
        .with_target(false)
        .with_writer(std::io::stderr)
        .with_filter(filter::Targets::new().with_target(bardo_runtime::PROGRESS, tracing::Level::INFO));
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Colour only for a person: a pipe or a file gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(tracing_subscriber::EnvFilter::new(log_filter(
            std::env::var("BARDO_LOG").ok().as_deref(),
        )));
    tracing_subscriber::registry().with(progress).with(logs).init();
    quiet_on_closed_stdout();
    if let Err(e) = thp {
        tracing::debug!("transparent huge pages stay on: {e}");
    }
    match run(Cli::parse()) {
        Ok(code) => code,
        // The fleet's store out of reach, or tampered with, is the one error shape every
        // command shares: `unavailable` (retryable) or `denied`.
        Err(e) if let Some(error) = store_error(&e) => {
            println!("{}", serde_json::json!({ "error": error }));
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The `BARDO_LOG` filter: a bare level (`debug`) is bardo's own logs at that level and every
/// other crate's warnings — wasmtime's and the HTTP stack's internals at `debug` drown what a
/// person looks for; a filter with targets (`debug,cranelift=info`, `wasmtime=trace`) is taken
/// as written. Unset: warnings.
fn log_filter(env: Option<&str>) -> String {
    match env.map(str::trim) {
        None | Some("") => "warn".into(),
        Some(level) if level.parse::<tracing::Level>().is_ok() => format!("warn,bardo={level}"),
        Some(filter) => filter.into(),
    }
}

/// `bardo tools | head`: a reader that stops reading ends this process quietly, as any Unix
/// tool does (exit 141, 128 + SIGPIPE), not with a panic and a backtrace. The signal itself
/// stays ignored (Rust's default) so a server outlives a closed socket or a dead sidecar's
/// pipe; `println!` then panics on EPIPE, which this hook turns into that exit.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

/// The fleet's NATS store could not be reached (`unavailable`, retryable), or this host found
/// it tampered with (`denied`), if that is what `e` comes to.
fn store_error(e: &anyhow::Error) -> Option<bardo_core::ToolError> {
    use bardo_cluster::ClusterError;
    use bardo_core::{ErrorCode, ToolError};
    use bardo_safety::audit_log::AuditError;
    use bardo_safety::setup::SetupError;
    e.chain().find_map(|cause| {
        let cluster = cause.downcast_ref::<ClusterError>().or(match cause.downcast_ref::<SetupError>() {
            Some(SetupError::Cluster(c)) => Some(c),
            _ => None,
        });
        match (cluster, cause.downcast_ref::<AuditError>()) {
            (Some(c), _) if c.retryable() => {
                Some(ToolError::retryable(ErrorCode::Unavailable, c.to_string()))
            }
            (Some(c @ ClusterError::Tampered(_)), _) => {
                Some(ToolError::new(ErrorCode::Denied, c.to_string()))
            }
            (_, Some(a @ AuditError::Unavailable(_))) => {
                Some(ToolError::retryable(ErrorCode::Unavailable, a.to_string()))
            }
            _ => None,
        }
    })
}

fn run(cli: Cli) -> Result<ExitCode> {
    // The one async runtime of this process: chains, streams, registry transfers, the devnet.
    let rt = Runtime::new().context("starting the async runtime")?;
    let rt = &rt;
    let explicit = cli.config != Path::new("bardo.toml");
    let config = || load_config(&cli.config, explicit).context("loading configuration");
    let mut command = cli.command;
    // `--archetype NAME` runs the command with that archetype's profile.
    match &mut command {
        Command::Tools { scope, .. }
        | Command::Stream { scope, .. }
        | Command::Tui { scope, .. }
        | Command::Call(ToolArgs { scope, .. })
        | Command::Plan(ToolArgs { scope, .. })
        | Command::Preview { scope, .. }
        | Command::Commit { scope, .. }
        | Command::Mcp { scope, .. }
        | Command::Serve { scope, .. } => archetypes_cli::spec(&mut scope.profile, &scope.archetype)?,
        Command::Run { profile, archetype, .. } => {
            let mut one = None;
            archetypes_cli::spec(&mut one, archetype)?;
            profile.extend(one);
        }
        _ => {}
    }
    match command {
        Command::Archetypes { action } => archetypes_cli::run(&config()?, action),
        Command::Tools { profiles: true, json, .. } => {
            println!("{}", bardo_core::profile::table(json));
            Ok(ExitCode::SUCCESS)
        }
        Command::Tools { action: Some(ToolsAction::Describe { tool, profile, json }), .. } => {
            tools_cli::describe(&config()?, &tool, profile.as_deref(), json, rt)
        }
        Command::Tools { scope, json, .. } => tools_cli::list(&config()?, scope.profile.as_deref(), json, rt),
        Command::Stream { tool, params, scope } => {
            events_cli::stream(&config()?, &tool, &params, scope.profile.as_deref(), rt)
        }
        Command::Tui { scope, resume_from } => {
            tui_cli::tui(&config()?, scope.profile.as_deref(), resume_from, rt)
        }
        Command::Events { resume_from, no_follow } => {
            events_cli::events(&config()?, resume_from, no_follow, rt)
        }
        Command::Call(ToolArgs { tool, params, scope, json }) => {
            let config = config()?;
            let opened = setup::open(&config, scope.profile.as_deref(), rt)?;
            report_refused(&opened.refused);
            // A memory tool sees (and adds to) the fleet's memory.
            bardo_safety::setup::fleet_memory(&config, opened.host.services())?;
            let report = opened.host.call(&tool, &params);
            // Journaled, so a `bardo tui` elsewhere shows the read in its tool activity.
            let (fabric, journaling) = journaling::reads_fabric(&config, rt);
            for event in report.lifecycle(&tool, opened.host.catalog().get(&tool).map(|e| &e.def)) {
                fabric.emit(event);
            }
            journaling.finish(rt, &fabric);
            print_call(report, json)
        }
        Command::Plan(ToolArgs { tool, params, scope, json }) => {
            let opened = setup::open(&config()?, scope.profile.as_deref(), rt)?;
            report_refused(&opened.refused);
            print_call(opened.host.plan(&tool, &params), json)
        }
        Command::Preview { kind, params, scope, json } => {
            let profile = scope.profile.as_deref();
            write_cli::preview(&config()?, &kind, &params, profile, human::wants_json(json), rt)
        }
        Command::Commit { permit_id, scope, json } => {
            let permit_id = write_cli::permit_arg(permit_id)?;
            write_cli::commit(&config()?, &permit_id, scope.profile.as_deref(), human::wants_json(json), rt)
        }
        Command::Cancel { permit_id, profile, json } => write_cli::cancel(
            &config()?,
            &write_cli::permit_arg(permit_id)?,
            profile.as_deref(),
            human::wants_json(json),
            rt,
        ),
        Command::Confirm { open: true, url: Some(url), .. } => write_cli::open_page(&config()?, &url),
        Command::Confirm { permit_id, profile, json, .. } => write_cli::confirm(
            &config()?,
            &write_cli::permit_arg(permit_id.unwrap_or_default())?,
            profile.as_deref(),
            human::wants_json(json),
            rt,
        ),
        Command::Init { profile, keystore, no_keystore, import_key_env, password_file } => init_cli::init(
            &cli.config,
            &init_cli::Init { profile, keystore, no_keystore, import_key_env, password_file },
        ),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "bardo",
                &mut script,
            );
            if shell == clap_complete::Shell::Bash {
                script.extend_from_slice(tools_cli::BASH_DYNAMIC.as_bytes());
            }
            match std::io::Write::write_all(&mut std::io::stdout(), &script) {
                // `| head`: the reader had enough.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
                _ => Ok(ExitCode::SUCCESS),
            }
        }
        Command::CompleteValues { what } => tools_cli::complete_values(&config()?, what, rt),
        Command::Resume => write_cli::resume(&config()?, rt),
        Command::Fleet { action } => fleet_cli::run(&config()?, action),
        Command::Records { permit, status, json, file } => {
            let config = config()?;
            let file = file.unwrap_or_else(|| config.resolve(&safety_of(&config).audit_log));
            records_cli::records(&file, permit.as_deref(), status.as_deref(), json)
        }
        Command::AuditLog { action: AuditLogAction::Show { file, json } } => {
            audit_log_cli::show(&config()?, file, json)
        }
        Command::AuditLog { action: AuditLogAction::Verify { file } } => {
            audit_log_cli::verify(&config()?, file, rt)
        }
        Command::Audit { file, new, json, safe, chain_id } => {
            if json && safe.is_some() {
                anyhow::bail!("--safe prints text; for JSON use `bardo policy show --json --safe …`");
            }
            let code = audit_cli::run(&file, new.as_deref(), json, rt)?;
            if let Some(safe) = safe {
                policy_cli::beside_surface(&config()?, safe, chain_id, rt)?;
            }
            Ok(code)
        }
        Command::Devnet { action } => devnet_cli::run(&cli.config, action, rt),
        Command::Identity { action } => identity_cli::run(&config()?, action, rt),
        Command::Policy { action } => policy_cli::run(&config()?, action, rt),
        Command::Mcp { scope, http, no_auth, expose, watch_ms } => {
            let (profile, auth) = (scope.profile.as_deref(), mcp_cli::auth(no_auth));
            mcp_cli::run(&cli.config, profile, http, auth, expose, watch_ms, rt)
        }
        Command::Serve { scope, listen, no_auth, a2a, mcp, expose, watch_ms } => {
            let protocols = serve::Protocols { a2a: a2a || !mcp, mcp: mcp || !a2a };
            let door = serve::Door { listen, auth: mcp_cli::auth(no_auth), protocols };
            serve::run(&cli.config, scope.profile.as_deref(), door, mcp_cli::exposure(expose), watch_ms, rt)
        }
        Command::Run { profile, watch_ms, .. } => plugin_cli::serve(&cli.config, &profile, watch_ms, rt),
        // A new plugin needs no configuration.
        Command::Plugin { action: plugin_cli::PluginAction::New { name, write, stream, dir, sdk } } => {
            plugin_cli::new(&name, write, stream, &dir, sdk.as_deref())
        }
        Command::Plugin { action } => plugin_cli::run(&config()?, action, rt),
        Command::Lock => {
            let lock = setup::relock(&config()?)?;
            for e in lock.entries() {
                println!("{}  {}", e.sha256, e.file);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// bardo.toml with every part's section checked (each is read again where it is used): a key
/// no part owns, or one its section does not know, is refused with the file and the key named.
pub(crate) fn load_config(path: &Path, required: bool) -> Result<Config> {
    use bardo_runtime::config::Section;
    if !required && !path.exists() {
        eprintln!(
            "note: no {} here: running on the defaults (profile `data`, plugins from ./plugins, no chains); \
             `bardo init` writes a commented one",
            path.display()
        );
    }
    let config = Config::load(path, required)?;
    let sections = config.sections();
    sections.get::<bardo_safety::SafetyConfig>()?;
    sections.get::<bardo_agent::AgentConfig>()?;
    sections.optional::<bardo_cluster::ClusterSettings>()?;
    sections.get::<bardo_sidecar::SidecarSettings>()?;
    sections.get::<bardo_mcp::config::McpConfig>()?;
    sections.get::<bardo_tui::config::TuiSettings>()?;
    sections.optional::<bardo_a2a::IdentityConfig>()?;
    sections.get::<bardo_memory::MemorySettings>()?;
    sections.refuse_unknown(
        &[
            bardo_safety::SafetyConfig::NAME,
            bardo_agent::AgentConfig::NAME,
            bardo_cluster::ClusterSettings::NAME,
            bardo_sidecar::SidecarSettings::NAME,
            bardo_mcp::config::McpConfig::NAME,
            bardo_tui::config::TuiSettings::NAME,
            bardo_a2a::IdentityConfig::NAME,
            bardo_memory::MemorySettings::NAME,
        ],
        bardo_runtime::config::RUNTIME_KEYS,
    )?;
    Ok(config)
}

/// `bardo init`: a commented `bardo.toml` at `path`, never over an existing one.
/// `[safety]`, checked when the file was loaded.
pub(crate) fn safety_of(config: &Config) -> bardo_safety::SafetyConfig {
    config.section().unwrap_or_default()
}

/// `[cluster]`, checked when the file was loaded.
pub(crate) fn cluster_of(config: &Config) -> Option<bardo_cluster::ClusterSettings> {
    config.optional().ok().flatten()
}

/// This host's name in the fleet's events.
pub(crate) fn fleet_host(config: &Config) -> String {
    cluster_of(config).map_or_else(bardo_cluster::default_host, |c| c.host_name())
}

/// How long this host's fleet subscription leases live unrenewed.
pub(crate) fn fleet_lease(config: &Config) -> std::time::Duration {
    cluster_of(config).map(|c| c.lease()).unwrap_or_default()
}

/// The fleet's cluster when `[cluster]` is set: its stream holds the audit chain.
pub(crate) fn fleet_chain(config: &Config) -> anyhow::Result<Option<bardo_cluster::Cluster>> {
    Ok(bardo_safety::setup::cluster(config)?)
}

/// The host key `[safety] host_key` names, if it exists: verifying never creates one, and
/// without it the audit checkpoint's MAC cannot be checked.
pub(crate) fn host_key_if_present(config: &Config) -> Result<Option<bardo_safety::host_key::HostKey>> {
    let path = config.resolve(&safety_of(config).host_key);
    if !path.exists() {
        return Ok(None);
    }
    let key = bardo_safety::host_key::HostKey::load_or_create(&path).map_err(anyhow::Error::msg)?;
    Ok(Some(key))
}

pub(crate) fn report_refused(refused: &[setup::Refused]) {
    for e in refused {
        eprintln!("refused: {e}");
    }
}

/// Print a call's cost to stderr and its answer (or `{"error": ...}`, exit 1) to stdout: as the
/// tool wrote it for a program (`--json`, or stdout not a terminal), indented for a person.
fn print_call<T: serde::Serialize>(
    report: bardo_runtime::plugin::CallReport<T>,
    json: bool,
) -> Result<ExitCode> {
    let s = report.stats;
    // A call refused before an instance existed (an unknown tool, bad params) cost nothing.
    if s.peak_memory_bytes > 0 || s.fuel_consumed > 0 {
        // After an interrupt wasmtime has not counted the interrupted frames' fuel: a lower bound.
        let at_least = if s.interrupted { "≥" } else { "" };
        eprintln!(
            "fuel {at_least}{}  wall {} µs  peak memory {} KiB  events {}",
            s.fuel_consumed,
            s.wall.as_micros(),
            s.peak_memory_bytes >> 10,
            report.events.events.len()
        );
    }
    match report.result {
        Ok(answer) => {
            // Read tools answer JSON text; print it as is rather than as a JSON string.
            let value = serde_json::to_value(&answer)?;
            let for_people = !human::wants_json(json);
            match value.as_str() {
                Some(text) if for_people => match serde_json::from_str::<serde_json::Value>(text) {
                    Ok(parsed) => println!("{}", serde_json::to_string_pretty(&parsed)?),
                    Err(_) => println!("{text}"),
                },
                Some(text) => println!("{text}"),
                None if for_people => println!("{}", serde_json::to_string_pretty(&value)?),
                None => println!("{value}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("{}", serde_json::to_string(&serde_json::json!({"error": e}))?);
            Ok(ExitCode::from(1))
        }
    }
}
