//! What a task does: a read answers at once; a write previews (plan, hooks, simulation), waits
//! for the caller's confirmation with its permit as an artifact, then commits or cancels. Every
//! call goes through the adapter, so the same limits, result filter and safety chain hold as
//! for every other front end; a state change is stored, published on the fabric and audited.

use crate::tasks::{State, Tasks, new_id};
use bardo_agent::Adapter;
use bardo_core::control::CallControl;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::fabric::{Fabric, GolemEvent, now_ms};
use bardo_safety::audit_log::AuditEvent;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// How often a waiting task looks whether another door committed or cancelled its permit.
const ELSEWHERE_POLL: Duration = Duration::from_millis(500);

/// What the caller asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// An agent-facing tool other than preview/commit/cancel (`query_state`, `search_context`, …).
    Tool {
        /// The agent tool.
        name: String,
        /// Its arguments.
        args: Value,
    },
    /// A write: preview action `kind`, then wait for confirmation.
    Action {
        /// The action kind (`swap`).
        kind: String,
        /// Its params.
        params: Value,
    },
    /// Commit (true) or cancel (false) the permit the task waits on.
    Confirm(bool),
}

/// The adapter now (it changes on a hot reload).
pub type AdapterSource = Arc<dyn Fn() -> Arc<Adapter> + Send + Sync>;

/// Runs tasks.
pub(crate) struct Runner {
    pub(crate) tasks: Arc<Tasks>,
    adapter: AdapterSource,
    fabric: Arc<Fabric>,
    /// Tasks whose answer is being carried out: one answer a task (two confirms at once each
    /// ran a commit, and both callers were told `failed` while the swap went through).
    answering: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// An agent message with `text` and, if any, a data part.
pub(crate) fn agent_message(task: &crate::tasks::Record, text: &str, data: Option<Value>) -> Value {
    let mut parts = vec![json!({"text": text})];
    if let Some(d) = data {
        parts.push(json!({"data": d, "mediaType": "application/json"}));
    }
    json!({"messageId": new_id("msg-"), "role": "ROLE_AGENT", "taskId": task.id,
           "contextId": task.context_id, "parts": parts})
}

fn error_data(e: &ToolError) -> Value {
    json!({"code": e.code, "message": e.message, "retryable": e.retryable})
}

impl Runner {
    /// A runner over `tasks`, calling through `adapter`, publishing on `fabric`.
    pub(crate) fn new(tasks: Arc<Tasks>, adapter: AdapterSource, fabric: Arc<Fabric>) -> Arc<Self> {
        Arc::new(Self { tasks, adapter, fabric, answering: Default::default() })
    }

    /// Set task `id`'s state: stored, published, audited (with its permit). A store failure is
    /// logged: the task's watchers still learn the state from the error path of the caller.
    pub(crate) fn set(&self, id: &str, state: State, text: &str, data: Option<Value>) {
        let Some(record) = self.tasks.get(id) else { return };
        let message = agent_message(&record, text, data);
        match self.tasks.set_state(id, state, Some(message)) {
            Ok(r) => {
                let permit_id = r.permit_id.clone();
                // The audit log is the write path's record: a write's task is audited in every
                // state once its permit exists (the preview itself, or its refusal, is audited
                // by the write path), and a write path with a fabric publishes what it audits.
                // A read's task is a fabric event (journaled) only.
                let path = (self.adapter)().write_path().clone();
                if permit_id.is_none() || !path.publishes() {
                    self.fabric.emit(GolemEvent::TaskStatusChanged {
                        task_id: id.to_owned(),
                        state: state.name(),
                        permit_id: permit_id.clone(),
                    });
                }
                if permit_id.is_some() {
                    let event =
                        AuditEvent::TaskStatus { task_id: id.to_owned(), state: state.name(), permit_id };
                    if let Err(e) = path.log(event) {
                        tracing::error!("cannot audit task {id} {}: {}", state.name(), e.message);
                    }
                }
            }
            Err(e) => tracing::error!("cannot store task {id} {}: {e}", state.name()),
        }
    }

    fn fail(&self, id: &str, e: &ToolError) {
        let state = if e.code == ErrorCode::Cancelled { State::Canceled } else { State::Failed };
        self.set(id, state, &format!("{}: {}", e.code.as_str(), e.message), Some(error_data(e)));
    }

    /// Start task `id` on `ask` (a new task): `working` now, the rest in the background.
    pub(crate) fn start(self: &Arc<Self>, id: &str, ask: Ask) {
        let text = match &ask {
            Ask::Tool { name, .. } => format!("calling {name}"),
            Ask::Action { kind, .. } => format!("planning {kind}: plan, safety checks, simulation"),
            Ask::Confirm(_) => String::new(),
        };
        self.set(id, State::Working, &text, None);
        let control = Arc::new(self.progress_control(id));
        self.tasks.set_control(id, Some(control.clone()));
        let (me, id) = (self.clone(), id.to_owned());
        tokio::task::spawn_blocking(move || {
            let adapter = (me.adapter)();
            match ask {
                Ask::Tool { name, args } => match adapter.call_with(&name, &args, &control) {
                    Ok(answer) => {
                        me.artifact(&id, "result", &format!("the answer of {name}"), answer);
                        me.set(&id, State::Completed, &format!("{name} answered"), None);
                    }
                    Err(e) => me.fail(&id, &e),
                },
                Ask::Action { kind, params } => {
                    let args = json!({"kind": kind, "params": params});
                    match adapter.call_with("preview_action", &args, &control) {
                        Ok(permit) => me.waiting(&id, &adapter, permit, &control),
                        Err(e) => me.fail(&id, &e),
                    }
                }
                Ask::Confirm(_) => {}
            }
            me.tasks.set_control(&id, None);
            me.release(&id);
        });
    }

    /// The preview gave `permit`: its artifact, `input-required`, and the expiry watch. A task
    /// cancelled while it previewed cancels the permit instead.
    fn waiting(self: &Arc<Self>, id: &str, adapter: &Adapter, permit: Value, control: &CallControl) {
        let permit_id = permit["permit_id"].as_str().unwrap_or_default().to_owned();
        if control.is_cancelled() {
            let _ = adapter.call("cancel_action", &json!({"permit_id": permit_id}));
            self.set(
                id,
                State::Canceled,
                "cancelled by the caller; the permit was cancelled, nothing was sent",
                None,
            );
            return;
        }
        let expires_at_ms = now_ms() + permit["expires_in_s"].as_u64().unwrap_or(0) * 1000;
        if let Err(e) = self.tasks.set_permit(id, &permit_id, expires_at_ms) {
            tracing::error!("cannot store task {id}'s permit: {e}");
        }
        let mut shown = permit.clone();
        shown["expires_at"] = json!(
            chrono::DateTime::from_timestamp_millis(expires_at_ms as i64)
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        );
        self.artifact(id, "permit", "the simulated plan: expected outcome, risk tier, expiry", shown.clone());
        let mut text = "simulated and permitted; nothing is sent until you confirm: reply on this task with a data part \
             {\"confirm\": true} to commit, or {\"confirm\": false} to cancel, before the permit expires"
            .to_owned();
        if let Ok(Some(held)) = adapter.write_path().pending_confirmation(&permit_id) {
            text = format!(
                "{text}. The permit is held for a person ({} in [safety]): only the operator's token confirms it (or \
                 `bardo tui`, `bardo confirm`)\n{}",
                held.policy,
                held.summary()
            );
        }
        self.set(id, State::InputRequired, &text, Some(shown));
        self.watch_expiry(id, &permit_id, expires_at_ms);
    }

    /// While task `id` waits on its permit: when another door commits or cancels the permit, the
    /// task ends with it (it stayed `input-required`); when the permit expires, `failed`, code
    /// `expired`.
    pub(crate) fn watch_expiry(self: &Arc<Self>, id: &str, permit_id: &str, expires_at_ms: u64) {
        let (me, id, permit_id) = (self.clone(), id.to_owned(), permit_id.to_owned());
        tokio::spawn(async move {
            loop {
                let left = expires_at_ms.saturating_sub(now_ms());
                if left == 0 {
                    me.expire(&id, &permit_id);
                    return;
                }
                tokio::time::sleep(Duration::from_millis(left).min(ELSEWHERE_POLL)).await;
                let (watcher, task, permit) = (me.clone(), id.clone(), permit_id.clone());
                let done =
                    tokio::task::spawn_blocking(move || watcher.closed_elsewhere(&task, &permit)).await;
                if done.unwrap_or(true) {
                    return;
                }
            }
        });
    }

    /// Whether task `id` stopped waiting on `permit_id`: answered here, or the permit closed by
    /// another door (the task then ends saying so).
    fn closed_elsewhere(&self, id: &str, permit_id: &str) -> bool {
        let Some(r) = self.tasks.get(id) else { return true };
        if r.state != State::InputRequired || r.permit_id.as_deref() != Some(permit_id) {
            return true;
        }
        if self.answering.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(id) {
            return false;
        }
        use bardo_safety::permit::PermitError;
        let closed = (self.adapter)().write_path().permit_closed(permit_id);
        let records = format!("`bardo records` shows permit `{permit_id}`");
        match closed {
            Some(PermitError::Consumed(_)) => {
                let text =
                    format!("committed through another door; this task sent nothing itself: {records}");
                self.set(id, State::Completed, &text, None);
                true
            }
            Some(PermitError::Cancelled(_) | PermitError::Revoked(_)) => {
                let text =
                    format!("the permit was cancelled through another door; nothing was sent: {records}");
                self.set(id, State::Canceled, &text, None);
                true
            }
            _ => false,
        }
    }

    /// Fail task `id` if it still waits on `permit_id`.
    pub(crate) fn expire(&self, id: &str, permit_id: &str) {
        let Some(r) = self.tasks.get(id) else { return };
        if r.state == State::InputRequired && r.permit_id.as_deref() == Some(permit_id) {
            let e = ToolError::retryable(
                ErrorCode::Expired,
                format!("permit `{permit_id}` expired before the task was confirmed; send the action again"),
            );
            self.set(id, State::Failed, &format!("expired: {}", e.message), Some(error_data(&e)));
        }
    }

    /// The caller confirmed (`commit`) or declined task `id`, which waits on a permit:
    /// `working` now, the commit or cancel in the background.
    /// Take task `id`'s one answer: false when another request is answering it, or it no longer
    /// waits for one. Given back when the answer is carried out ([`Self::confirm`]) or by
    /// [`Self::release`].
    pub(crate) fn take_answer(&self, id: &str) -> bool {
        let mut answering = self.answering.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let waiting = self.tasks.get(id).is_some_and(|r| r.state == State::InputRequired);
        waiting && answering.insert(id.to_owned())
    }

    /// Give back task `id`'s answer unused.
    pub(crate) fn release(&self, id: &str) {
        self.answering.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
    }

    /// Carry out task `id`'s answer (taken with [`Self::take_answer`]).
    pub(crate) fn confirm(self: &Arc<Self>, id: &str, commit: bool) {
        let Some(permit_id) = self.tasks.get(id).and_then(|r| r.permit_id) else {
            self.release(id);
            return;
        };
        let text =
            if commit { "committing: re-simulate, sign, send, verify" } else { "cancelling the permit" };
        self.set(id, State::Working, text, None);
        let control = Arc::new(self.progress_control(id));
        self.tasks.set_control(id, Some(control.clone()));
        let (me, id) = (self.clone(), id.to_owned());
        tokio::task::spawn_blocking(move || {
            let adapter = (me.adapter)();
            let args = json!({"permit_id": permit_id});
            if commit {
                match adapter.call_with("commit_action", &args, &control) {
                    Ok(receipt) => {
                        me.artifact(
                            &id,
                            "receipt",
                            "the executed write, verified from its receipts",
                            receipt,
                        );
                        me.set(&id, State::Completed, "committed and verified", None);
                    }
                    Err(e) => me.fail(&id, &e),
                }
            } else {
                match adapter.call("cancel_action", &args) {
                    Ok(_) => me.set(
                        &id,
                        State::Canceled,
                        "declined: the permit was cancelled, nothing was sent",
                        None,
                    ),
                    Err(e) => me.fail(&id, &e),
                }
            }
            me.tasks.set_control(&id, None);
        });
    }

    /// Cancel task `id`'s waiting permit (`tasks/cancel` on an `input-required` task).
    pub(crate) fn cancel_waiting(&self, id: &str) -> Result<(), ToolError> {
        let permit_id = self.tasks.get(id).and_then(|r| r.permit_id).unwrap_or_default();
        (self.adapter)().call("cancel_action", &json!({"permit_id": permit_id}))?;
        self.set(
            id,
            State::Canceled,
            "cancelled by the caller: the permit was cancelled, nothing was sent",
            None,
        );
        Ok(())
    }

    fn artifact(&self, id: &str, name: &str, description: &str, data: Value) {
        let artifact = json!({"artifactId": new_id("artifact-"), "name": name, "description": description,
                              "parts": [{"data": data, "mediaType": "application/json"}]});
        if let Err(e) = self.tasks.add_artifact(id, artifact) {
            tracing::error!("cannot store task {id}'s {name}: {e}");
        }
    }

    /// A call control whose progress steps become `working` status updates.
    fn progress_control(self: &Arc<Self>, id: &str) -> CallControl {
        let (me, id) = (Arc::downgrade(self), id.to_owned());
        CallControl::new().on_progress(move |p| {
            // A step is a `working` update for watchers, not a state change: not published or audited.
            if let Some(r) = me.upgrade().and_then(|me| me.tasks.get(&id).map(|r| (me, r))) {
                let text = format!("step {}/{}: {}", p.step + 1, p.total, p.name);
                let _ = r.0.tasks.set_state(&id, State::Working, Some(agent_message(&r.1, &text, None)));
            }
        })
    }

    /// After a restart: work that was running cannot resume (`failed`, retryable); a waiting
    /// permit's expiry is watched again (or has passed).
    pub(crate) fn recover(self: &Arc<Self>) {
        for r in self.tasks.list(None, None) {
            match r.state {
                State::Submitted | State::Working => {
                    let e = ToolError::retryable(
                        ErrorCode::Internal,
                        "the server restarted while this task was working; a write's chain state was reconciled \
                         at start: check query_grimoire, then send the task again",
                    );
                    self.fail(&r.id, &e);
                }
                State::InputRequired => match (&r.permit_id, r.expires_at_ms) {
                    (Some(p), Some(at)) => self.watch_expiry(&r.id, p, at),
                    _ => self.expire(&r.id, ""),
                },
                _ => {}
            }
        }
    }
}
