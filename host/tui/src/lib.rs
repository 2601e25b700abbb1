//! `bardo tui`: the terminal dashboard of the specification's TUI contract — pool explorer,
//! position monitor, price chart, tool activity, permits (commit and cancel through the host's
//! write path), the events log and alerts — drawn from the Event Fabric's events.
//!
//! Layers: [`model`] folds envelopes into state (pure), [`app`] turns keys into actions, [`ui`]
//! draws (pure over the model and a time), [`feed`] reads events, and [`run`] ties them to a
//! terminal. The host is reached only through [`Operator`], so this crate signs nothing and
//! decides nothing: a commit goes through the same write path as `bardo commit`.

pub mod app;
pub mod config;
pub mod feed;
pub mod model;
mod signals;
pub mod ui;

use app::{Action, App};
use feed::{Feed, Item};
use model::PermitRow;
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

/// What the dashboard asks of the host's write path.
pub trait Operator: Send + Sync {
    /// The open permits, oldest first.
    fn open_permits(&self) -> Result<Vec<PermitRow>, String>;
    /// Commit a permit; a one-line summary of what happened.
    fn commit(&self, permit_id: &str) -> Result<String, String>;
    /// Cancel a permit.
    fn cancel(&self, permit_id: &str) -> Result<(), String>;
    /// Confirm, as the person at this dashboard, a permit the confirmation policy holds: any
    /// front end waiting on it (an MCP client, an A2A task, `bardo commit`) may then commit it.
    fn confirm(&self, permit_id: &str) -> Result<(), String>;
}

/// Events applied per frame at most: a burst is spread over frames so keys stay responsive.
const PER_FRAME: usize = 20_000;
/// How often the permit store is read (under its lock: every permit file is read, so not more
/// often; the countdowns run on the local clock in between).
const PERMITS_EVERY: Duration = Duration::from_secs(1);

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Apply what a feed gave to the dashboard.
pub fn apply(app: &mut App, items: Vec<Item>) {
    for item in items {
        match item {
            Item::Event(v) => app.model.apply(v),
            Item::Gap { from, to } => app.model.gap(from, to),
            Item::Lagged { missed, recovered } => {
                app.model.lag_missed += missed;
                app.model.recovered += recovered;
            }
            Item::Trouble(why) => app.status = Some(format!("events: {why}")),
        }
    }
}

/// Run the dashboard in this terminal until `q`: events from `feed`, permits from `operator`
/// (None: read-only, with `why_not` in the Permits pane).
pub fn run(
    mut feed: impl Feed,
    operator: Result<Arc<dyn Operator>, String>,
    source: String,
) -> std::io::Result<()> {
    if !std::io::stdout().is_terminal() {
        return Err(std::io::Error::other(
            "bardo tui draws on a terminal and stdout is not one (`bardo events` prints the events as JSON lines)",
        ));
    }
    let mut app = App::new(source);
    // The permit store and the write path may wait on disk locks or a cluster: never on the
    // drawing thread. A poller reads the store; each commit or cancel runs on its own thread.
    let (permits_tx, permits_rx) = mpsc::channel::<Result<Vec<PermitRow>, String>>();
    let (done_tx, done_rx) = mpsc::channel::<String>();
    let (poke_tx, poke_rx) = mpsc::channel::<()>();
    let operator = match operator {
        Ok(op) => {
            let (op2, tx) = (op.clone(), permits_tx.clone());
            std::thread::spawn(move || {
                loop {
                    if tx.send(op2.open_permits()).is_err() {
                        return;
                    }
                    // Every second, or at once after a commit or cancel.
                    if let Err(mpsc::RecvTimeoutError::Disconnected) = poke_rx.recv_timeout(PERMITS_EVERY) {
                        return;
                    }
                }
            });
            Some(op)
        }
        Err(why) => {
            app.model.permits_error = Some(why);
            None
        }
    };
    let stop = signals::Stop::install()?;
    // Raw mode and the alternate screen; a panic restores the terminal before it is reported.
    let mut terminal = ratatui::try_init()?;
    let result = (|| -> std::io::Result<()> {
        loop {
            if stop.requested() {
                return Ok(());
            }
            apply(&mut app, feed.poll(PER_FRAME));
            while let Ok(read) = permits_rx.try_recv() {
                match read {
                    Ok(rows) => {
                        app.model.permits = rows;
                        app.model.permits_error = None;
                    }
                    Err(e) => app.model.permits_error = Some(e),
                }
            }
            while let Ok(message) = done_rx.try_recv() {
                app.status = Some(message);
                let _ = poke_tx.send(());
            }
            terminal.draw(|f| ui::draw(f, &app, now_ms()))?;
            if !event::poll(Duration::from_millis(100))? {
                continue;
            }
            let Event::Key(key) = event::read()? else {
                continue; // a resize is drawn by the next frame
            };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            let action = app.key(key);
            let op = match (&action, &operator) {
                (Action::Quit, _) => return Ok(()),
                (Action::None, _) => continue,
                (_, None) => {
                    let why = app.model.permits_error.clone().unwrap_or_default();
                    app.status = Some(format!("permits cannot be committed or cancelled here ({why})"));
                    continue;
                }
                (_, Some(op)) => op.clone(),
            };
            let done = done_tx.clone();
            std::thread::spawn(move || {
                let message = match action {
                    Action::Commit(id) => match op.commit(&id) {
                        Ok(summary) => format!("{id} committed: {summary}"),
                        Err(e) => format!("{id} NOT committed: {e}"),
                    },
                    Action::Cancel(id) => match op.cancel(&id) {
                        Ok(()) => format!("{id} cancelled"),
                        Err(e) => format!("{id} NOT cancelled: {e}"),
                    },
                    Action::Confirm(id) => match op.confirm(&id) {
                        Ok(()) => format!("{id} confirmed: whoever waits on it may commit it now"),
                        Err(e) => format!("{id} NOT confirmed: {e}"),
                    },
                    Action::Quit | Action::None => return,
                };
                let _ = done.send(message);
            });
        }
    })();
    ratatui::restore();
    stop.finished();
    drop(permits_tx);
    result
}
