//! The write path from the command line: `bardo preview`, `commit`, `cancel`, `confirm` and
//! `resume`. Each opens the host's write path for one step, journals what it did (so a `bardo
//! tui` or `bardo events` elsewhere shows it) and prints the answer as JSON.

use crate::{fleet_chain, journaling, report_refused};
use anyhow::{Context, Result};
use bardo_core::Runtime;
use bardo_runtime::{Config, setup};
use bardo_safety::confirm::Channel;
use bardo_safety::permit::ActionPermit;
use std::process::ExitCode;
use std::sync::Arc;

/// `bardo preview KIND --params JSON`: a permit, or the refusal.
pub(crate) fn preview(
    config: &Config,
    kind: &str,
    params: &str,
    profile: Option<&str>,
    json: bool,
    rt: &Runtime,
) -> Result<ExitCode> {
    // Answered like `call`'s bad params: a typed error on stdout, exit 1.
    let params: serde_json::Value = match serde_json::from_str(params) {
        Ok(params) => params,
        Err(e) => {
            let message = format!("params of `{kind}` are not JSON: {e}");
            let e = bardo_core::ToolError::new(bardo_core::ErrorCode::InvalidParams, message);
            return print_write::<()>(Err(e));
        }
    };
    with_write_path(config, profile, rt, |path| {
        let previewed = path.preview(kind, &params);
        if !json && let Ok(p) = &previewed {
            println!("{}", crate::human::preview_text(p));
            return Ok(ExitCode::SUCCESS);
        }
        print_write(previewed.map(|p| {
            serde_json::json!({
                "permit_id": p.permit_id,
                "tool": p.tool,
                "sender": p.sender,
                "calls": p.plan.calls.iter().map(|c| &c.description).collect::<Vec<_>>(),
                "expected_outcome": p.expected_outcome,
                "simulation_hash": p.simulation_hash,
                "risk_tier": p.risk_tier,
                "expires_in_s": p.ttl.as_secs(),
                // What holds it for a person (`bardo confirm`), if anything does.
                "confirmation": p.confirmation,
            })
        }))
    })
}

/// `bardo commit PERMIT_ID`. Interrupted (SIGINT, SIGTERM) before its first transaction is
/// recorded, it stops there and the permit stays open; after, it finishes the transactions under
/// way and prints what was sent. A second interrupt exits at once: every transaction is recorded
/// before it is sent, and the next start resolves it from the chain.
pub(crate) fn commit(
    config: &Config,
    permit_id: &str,
    profile: Option<&str>,
    json: bool,
    rt: &Runtime,
) -> Result<ExitCode> {
    on_permit(config, permit_id, profile, rt, |path, permit| {
        let control = Arc::new(bardo_core::control::CallControl::new());
        let (again, interrupted_again) = std::sync::mpsc::channel::<()>();
        let interrupts = on_interrupt(rt, control.clone(), again);
        let done = std::thread::scope(|s| {
            // A second interrupt: say what this commit sent, then exit at once.
            s.spawn(move || {
                if interrupted_again.recv().is_ok() {
                    let sent = path.sends_of(permit_id).unwrap_or_default();
                    eprintln!("bardo: interrupted again: exiting; sent so far ({}):", sent.len());
                    for t in &sent {
                        eprintln!("  {}/{}  nonce {}  transaction {}", t.step + 1, t.steps, t.nonce, t.hash);
                    }
                    eprintln!("bardo: each is recorded; the next start (or `bardo audit-log verify`) resolves it from the chain");
                    std::process::exit(130);
                }
            });
            let done = path.commit_with(permit_id, &control);
            // Dropping the watcher drops its sender: the thread above ends.
            interrupts.abort();
            done
        });
        if !json && let Ok(r) = &done {
            println!("{}", crate::human::commit_text(r, permit));
            return Ok(ExitCode::SUCCESS);
        }
        print_write(done)
    })
}

/// Watch for SIGINT and SIGTERM while a commit runs: the first cancels it (if it has not begun
/// sending), the second is sent to `again`.
fn on_interrupt(
    rt: &Runtime,
    control: Arc<bardo_core::control::CallControl>,
    again: std::sync::mpsc::Sender<()>,
) -> tokio::task::JoinHandle<()> {
    rt.spawn(async move {
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        loop {
            let term = async {
                match terminate.as_mut() {
                    Some(t) => drop(t.recv().await),
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = term => {}
            }
            if control.is_cancelled() {
                let _ = again.send(());
                return;
            }
            control.cancel();
            eprintln!(
                "bardo: interrupted: a commit that has not sent stops here, its permit open; one that has finishes and records what it sent (interrupt again to exit at once)"
            );
        }
    })
}

/// The profile an open permit was previewed under, and the permit (none when it is not open).
type Previewed = (Option<String>, Option<ActionPermit>);

/// The profile a command on permit `id` runs under: the one it was previewed under (whose
/// tools and confirmation policy it was planned with); `--profile` naming another is refused
/// with that reason. A permit that is not open, or from before permits kept their profile: the
/// flag's, and the write path says what is wrong with the permit.
/// The permit itself comes back too (what its commit is compared with for a person).
fn profile_of_permit(
    config: &Config,
    id: &str,
    flag: Option<&str>,
) -> Result<Result<Previewed, bardo_core::ToolError>> {
    let permits = bardo_safety::setup::permits(config)?;
    let permit = permits.open_permit(id, std::time::SystemTime::now()).ok().map(|(permit, _)| permit);
    let previewed = permit.as_ref().and_then(|p| p.planned_on.as_ref()?.profile.clone());
    Ok(match (flag, previewed) {
        (Some(flag), Some(previewed)) if flag != previewed => Err(bardo_core::ToolError::new(
            bardo_core::ErrorCode::Denied,
            format!(
                "permit `{id}` was previewed under profile `{previewed}`, not `{flag}`: it runs under the \
                 profile that planned it (leave out --profile and bardo uses it)"
            ),
        )),
        (Some(flag), _) => Ok((Some(flag.to_owned()), permit)),
        (None, previewed) => Ok((previewed, permit)),
    })
}

/// Run `f` on the write path of the profile permit `id` was previewed under (with the permit,
/// while it is open); a `--profile` naming another is answered as a refusal.
fn on_permit(
    config: &Config,
    id: &str,
    flag: Option<&str>,
    rt: &Runtime,
    f: impl FnOnce(&bardo_safety::WritePath, Option<&ActionPermit>) -> Result<ExitCode>,
) -> Result<ExitCode> {
    let (profile, permit) = match profile_of_permit(config, id, flag)? {
        Ok(found) => found,
        Err(refused) => return print_write::<()>(Err(refused)),
    };
    with_write_path(config, profile.as_deref(), rt, |path| f(path, permit.as_ref()))
}

/// A write-path answer: `said` for a person when it succeeded and JSON is not wanted, else as
/// [`print_write`] prints it.
fn print_done(
    done: Result<serde_json::Value, bardo_core::ToolError>,
    json: bool,
    said: impl FnOnce() -> String,
) -> Result<ExitCode> {
    if !json && done.is_ok() {
        println!("{}", said());
        return Ok(ExitCode::SUCCESS);
    }
    print_write(done)
}

/// `bardo cancel PERMIT_ID`.
pub(crate) fn cancel(
    config: &Config,
    permit_id: &str,
    profile: Option<&str>,
    json: bool,
    rt: &Runtime,
) -> Result<ExitCode> {
    on_permit(config, permit_id, profile, rt, |path, _| {
        let done = path.cancel(permit_id).map(|()| serde_json::json!({"cancelled": permit_id}));
        print_done(done, json, || format!("cancelled {permit_id}: nothing was sent"))
    })
}

/// `bardo confirm PERMIT_ID`: the operator's confirmation.
pub(crate) fn confirm(
    config: &Config,
    permit_id: &str,
    profile: Option<&str>,
    json: bool,
    rt: &Runtime,
) -> Result<ExitCode> {
    on_permit(config, permit_id, profile, rt, |path, _| {
        let done = path
            .confirm(permit_id, Channel::Cli, &operator("bardo confirm"))
            .map(|()| serde_json::json!({"confirmed": permit_id}));
        print_done(done, json, || format!("confirmed {permit_id}: a commit of it may proceed now"))
    })
}

/// `bardo confirm --open --url URL`: a one-time link to the approval page, for whoever holds
/// the host key; opened in a browser when `xdg-open` is at hand.
pub(crate) fn open_page(config: &Config, url: &str) -> Result<ExitCode> {
    let safety: bardo_safety::SafetyConfig = config.section()?;
    let key = bardo_safety::host_key::HostKey::load_or_create(&config.resolve(&safety.host_key))
        .map_err(anyhow::Error::msg)?;
    let link = crate::approval_page::login_link(url, &key);
    println!("{link}");
    eprintln!(
        "a one-time link, good for {} s: open it in a browser",
        crate::approval_page::LOGIN_TTL.as_secs()
    );
    // Best effort: the link is printed whether or not a browser opens.
    let _ = std::process::Command::new("xdg-open")
        .arg(&link)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    Ok(ExitCode::SUCCESS)
}

/// The operator as a command run on this machine knows them: the front end and the user.
pub(crate) fn operator(front: &str) -> String {
    format!("operator ({front}, uid {})", rustix::process::getuid().as_raw())
}

/// `bardo resume`; `false` when there was no halt to lift.
pub(crate) fn resume(config: &Config, rt: &Runtime) -> Result<ExitCode> {
    with_write_path(config, None, rt, |path| {
        print_write(path.resume().map(|was_halted| serde_json::json!({"resumed": was_halted})))
    })
}

/// A permit id argument: as given, or with `-` the `permit_id` of the preview JSON on stdin
/// (so `bardo preview … > permit.json` then `bardo commit - < permit.json`).
pub(crate) fn permit_arg(arg: String) -> Result<String> {
    if arg != "-" {
        return Ok(arg);
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).context("reading stdin")?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("`-` reads a preview's JSON from stdin, and stdin is not JSON: {e}"))?;
    if let Some(id) = json["permit_id"].as_str() {
        return Ok(id.to_owned());
    }
    match json["error"]["message"].as_str() {
        Some(refused) => anyhow::bail!("stdin holds no permit: the preview was refused: {refused}"),
        None => anyhow::bail!("stdin holds no `permit_id`: give a preview's JSON or the permit id itself"),
    }
}

/// Run `f` on the write path, its steps (previews, hooks, permits, commits, cancels) journaled
/// like a serving process's — to the events file or the fleet's stream — so a `bardo tui` or
/// `bardo events` elsewhere shows what this command did. All of it is written before returning.
pub(crate) fn with_write_path(
    config: &Config,
    profile: Option<&str>,
    rt: &Runtime,
    f: impl FnOnce(&bardo_safety::WritePath) -> Result<ExitCode>,
) -> Result<ExitCode> {
    let opened = setup::open(config, profile, rt)?;
    report_refused(&opened.refused);
    let path = bardo_safety::setup::write_path(config, Arc::new(opened.host))?;
    let (fabric, journaling) = journaling::journaled_fabric(config, fleet_chain(config)?, rt)?;
    let path = path.with_fabric(fabric.clone());
    let done = f(&path);
    journaling.finish(rt, &fabric);
    done
}

/// Print a write-path answer, or `{"error": ...}` with exit 1.
pub(crate) fn print_write<T: serde::Serialize>(result: Result<T, bardo_core::ToolError>) -> Result<ExitCode> {
    match result {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("{}", serde_json::to_string(&serde_json::json!({"error": e}))?);
            Ok(ExitCode::from(1))
        }
    }
}
