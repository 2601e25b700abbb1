//! The task store: every task as A2A shows it, one JSON file a task, written whole and renamed
//! into place, so a restart finds each task as its last state change left it. Live watchers of a
//! task get its changes as A2A stream responses through a broadcast channel, subscribed under
//! the same lock that orders the changes: no change falls between a snapshot and the stream.

use bardo_core::control::CallControl;
use bardo_core::sync::lock;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Stream responses kept for a slow watcher before it is told it lagged.
const WATCH_BUFFER: usize = 256;

/// Finished tasks kept in memory (for `GetTask` and `ListTasks`).
const KEEP_FINISHED: usize = 10_000;

/// Finished tasks older than this are removed when the store opens (the audit log keeps their
/// record).
const RETAIN_FINISHED: chrono::TimeDelta = chrono::TimeDelta::days(30);

/// A task's state (A2A `TaskState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Received, not started.
    Submitted,
    /// Planning, simulating, or executing.
    Working,
    /// A permit waits for the caller's confirmation.
    InputRequired,
    /// Done: the read's answer or the write's verified receipt is an artifact.
    Completed,
    /// Declined or cancelled: nothing was sent.
    Canceled,
    /// Refused or failed, with a typed error.
    Failed,
}

impl State {
    /// The A2A wire name.
    pub(crate) fn wire(self) -> &'static str {
        match self {
            Self::Submitted => "TASK_STATE_SUBMITTED",
            Self::Working => "TASK_STATE_WORKING",
            Self::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            Self::Completed => "TASK_STATE_COMPLETED",
            Self::Canceled => "TASK_STATE_CANCELED",
            Self::Failed => "TASK_STATE_FAILED",
        }
    }

    /// The state from its wire name.
    pub(crate) fn from_wire(s: &str) -> Option<Self> {
        [Self::Submitted, Self::Working, Self::InputRequired, Self::Completed, Self::Canceled, Self::Failed]
            .into_iter()
            .find(|st| st.wire() == s)
    }

    /// The name events and the audit log use (`input-required`).
    pub(crate) fn name(self) -> String {
        serde_json::to_value(self).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
    }

    /// Nothing more happens to the task.
    pub(crate) fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Canceled | Self::Failed)
    }

    /// A stream of the task ends here: terminal, or waiting for the caller.
    pub(crate) fn ends_stream(self) -> bool {
        self.is_terminal() || self == Self::InputRequired
    }
}

/// One task, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    /// `task-` and 32 hex digits.
    pub id: String,
    /// The conversation it belongs to.
    pub context_id: String,
    /// Its state.
    pub state: State,
    /// The agent's message with the state (A2A `Message`).
    pub status_message: Option<Value>,
    /// When the state was set (RFC 3339).
    pub timestamp: String,
    /// Its artifacts (A2A `Artifact`s): the answer, the permit, the receipt.
    pub artifacts: Vec<Value>,
    /// The caller's messages (A2A `Message`s).
    pub history: Vec<Value>,
    /// The permit a write waits on or executed.
    pub permit_id: Option<String>,
    /// When that permit expires (Unix ms).
    pub expires_at_ms: Option<u64>,
    /// A write's task (stored at every change); a read's lives in memory only.
    #[serde(default)]
    pub write: bool,
}

impl Record {
    /// The task as A2A shows it, with at most `history_length` of the latest messages.
    pub(crate) fn task(&self, history_length: Option<usize>) -> Value {
        let keep = history_length.unwrap_or(self.history.len()).min(self.history.len());
        let mut status = json!({"state": self.state.wire(), "timestamp": self.timestamp});
        if let Some(m) = &self.status_message {
            status["message"] = m.clone();
        }
        json!({
            "id": self.id,
            "contextId": self.context_id,
            "status": status,
            "artifacts": self.artifacts,
            "history": self.history[self.history.len() - keep..],
        })
    }

    fn status_update(&self) -> Value {
        let task = self.task(Some(0));
        json!({"statusUpdate": {"taskId": self.id, "contextId": self.context_id, "status": task["status"]}})
    }
}

struct Entry {
    record: Record,
    watchers: broadcast::Sender<Value>,
    /// The call running for the task, to cancel it.
    control: Option<Arc<CallControl>>,
}

/// The store.
pub(crate) struct Tasks {
    dir: PathBuf,
    entries: Mutex<HashMap<String, Entry>>,
}

/// The task store could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("A2A task store {path}: {message}")]
pub struct StoreError {
    path: PathBuf,
    message: String,
}

fn store_error(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError { path: path.to_owned(), message: e.to_string() }
}

fn write_record(dir: &Path, record: &Record) -> Result<(), StoreError> {
    let path = dir.join(format!("{}.json", record.id));
    let tmp = dir.join(format!("{}.json.tmp", record.id));
    let text = serde_json::to_vec_pretty(record).map_err(|e| store_error(&path, e))?;
    std::fs::write(&tmp, text).map_err(|e| store_error(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| store_error(&path, e))
}

/// A fresh unguessable id with `prefix`.
pub(crate) fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 16];
    // The OS generator failing is not recoverable for ids that must not repeat.
    getrandom::getrandom(&mut bytes).expect("the OS random generator");
    format!("{prefix}{}", hex::encode(bytes))
}

/// Now, RFC 3339 with milliseconds (protobuf `Timestamp` JSON).
pub(crate) fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Tasks {
    /// The store in `dir` (created if missing), with every task it holds.
    pub(crate) fn open(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| store_error(dir, e))?;
        let mut entries = HashMap::new();
        for file in std::fs::read_dir(dir).map_err(|e| store_error(dir, e))? {
            let path = file.map_err(|e| store_error(dir, e))?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).map_err(|e| store_error(&path, e))?;
            let record: Record = serde_json::from_str(&text).map_err(|e| store_error(&path, e))?;
            let old = chrono::DateTime::parse_from_rfc3339(&record.timestamp)
                .is_ok_and(|t| chrono::Utc::now().signed_duration_since(t) > RETAIN_FINISHED);
            if record.state.is_terminal() && old {
                std::fs::remove_file(&path).map_err(|e| store_error(&path, e))?;
                continue;
            }
            let (watchers, _) = broadcast::channel(WATCH_BUFFER);
            entries.insert(record.id.clone(), Entry { record, watchers, control: None });
        }
        Ok(Self { dir: dir.to_owned(), entries: Mutex::new(entries) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        lock(&self.entries)
    }

    /// Store `record` if it is a write's task, before its watchers hear of the change. A read's
    /// task lives in memory only: it settles within one call, its answer is in the response, and
    /// an agent's stream of reads must not become a stream of files.
    fn save(&self, record: &Record) -> Result<(), StoreError> {
        if record.write { write_record(&self.dir, record) } else { Ok(()) }
    }

    /// Keep at most [`KEEP_FINISHED`] finished tasks in memory: the oldest go first (a write's
    /// stays on disk until [`RETAIN_FINISHED`]).
    fn evict(entries: &mut HashMap<String, Entry>) {
        if entries.len() <= KEEP_FINISHED + KEEP_FINISHED / 10 {
            return; // the common case, without a scan
        }
        let finished = entries.values().filter(|e| e.record.state.is_terminal()).count();
        if finished <= KEEP_FINISHED + KEEP_FINISHED / 10 {
            return;
        }
        let mut old: Vec<(String, String)> = entries
            .values()
            .filter(|e| e.record.state.is_terminal())
            .map(|e| (e.record.timestamp.clone(), e.record.id.clone()))
            .collect();
        old.sort();
        for (_, id) in old.into_iter().take(finished - KEEP_FINISHED) {
            entries.remove(&id);
        }
    }

    /// A new `submitted` task in `context_id` with the caller's first message; `write`: it
    /// will hold a permit.
    pub(crate) fn create(
        &self,
        context_id: String,
        message: Value,
        write: bool,
    ) -> Result<Record, StoreError> {
        let record = Record {
            id: new_id("task-"),
            context_id,
            state: State::Submitted,
            status_message: None,
            timestamp: now_rfc3339(),
            artifacts: Vec::new(),
            history: vec![message],
            permit_id: None,
            expires_at_ms: None,
            write,
        };
        self.save(&record)?;
        let (watchers, _) = broadcast::channel(WATCH_BUFFER);
        let mut entries = self.lock();
        Self::evict(&mut entries);
        entries.insert(record.id.clone(), Entry { record: record.clone(), watchers, control: None });
        Ok(record)
    }

    /// Task `id` now.
    pub(crate) fn get(&self, id: &str) -> Option<Record> {
        self.lock().get(id).map(|e| e.record.clone())
    }

    /// Every task, newest state change first, filtered by context and state.
    pub(crate) fn list(&self, context_id: Option<&str>, state: Option<State>) -> Vec<Record> {
        let mut all: Vec<Record> = self
            .lock()
            .values()
            .map(|e| e.record.clone())
            .filter(|r| context_id.is_none_or(|c| r.context_id == c) && state.is_none_or(|s| r.state == s))
            .collect();
        all.sort_by(|a, b| b.timestamp.cmp(&a.timestamp).then_with(|| a.id.cmp(&b.id)));
        all
    }

    /// Task `id` now and its changes from now on.
    pub(crate) fn watch(&self, id: &str) -> Option<(Record, broadcast::Receiver<Value>)> {
        self.lock().get(id).map(|e| (e.record.clone(), e.watchers.subscribe()))
    }

    /// Change task `id` with `change`, store it, and tell its watchers `update(record)`, if the
    /// change is one they see.
    fn change(
        &self,
        id: &str,
        change: impl FnOnce(&mut Record),
        update: impl FnOnce(&Record) -> Option<Value>,
    ) -> Result<Record, StoreError> {
        let mut entries = self.lock();
        let entry = entries.get_mut(id).ok_or_else(|| store_error(&self.dir, format!("no task {id}")))?;
        let mut record = entry.record.clone();
        change(&mut record);
        self.save(&record)?;
        if let Some(update) = update(&record) {
            let _ = entry.watchers.send(update);
        }
        entry.record = record.clone();
        Ok(record)
    }

    /// Set task `id`'s state with the agent's `message`.
    pub(crate) fn set_state(
        &self,
        id: &str,
        state: State,
        message: Option<Value>,
    ) -> Result<Record, StoreError> {
        self.change(
            id,
            |r| {
                r.state = state;
                r.status_message = message;
                r.timestamp = now_rfc3339();
            },
            |r| Some(r.status_update()),
        )
    }

    /// Record the permit task `id` waits on (watchers see it as the `permit` artifact).
    pub(crate) fn set_permit(
        &self,
        id: &str,
        permit_id: &str,
        expires_at_ms: u64,
    ) -> Result<Record, StoreError> {
        self.change(
            id,
            |r| {
                r.permit_id = Some(permit_id.to_owned());
                r.expires_at_ms = Some(expires_at_ms);
            },
            |_| None,
        )
    }

    /// Add `artifact` to task `id`.
    pub(crate) fn add_artifact(&self, id: &str, artifact: Value) -> Result<Record, StoreError> {
        let event = artifact.clone();
        self.change(
            id,
            |r| r.artifacts.push(artifact),
            |r| {
                Some(json!({"artifactUpdate": {"taskId": r.id, "contextId": r.context_id, "artifact": event,
                                               "append": false, "lastChunk": true}}))
            },
        )
    }

    /// Add the caller's `message` to task `id`'s history (no stream response: the caller sent it).
    pub(crate) fn add_message(&self, id: &str, message: Value) -> Result<Record, StoreError> {
        self.change(id, |r| r.history.push(message), |_| None)
    }

    /// Remember the call running for task `id` (none: it ended).
    pub(crate) fn set_control(&self, id: &str, control: Option<Arc<CallControl>>) {
        if let Some(e) = self.lock().get_mut(id) {
            e.control = control;
        }
    }

    /// The call running for task `id`.
    pub(crate) fn control(&self, id: &str) -> Option<Arc<CallControl>> {
        self.lock().get(id).and_then(|e| e.control.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_survives_reopening_and_watchers_see_each_change_once() {
        let dir = tempfile::tempdir().expect("dir");
        let tasks = Tasks::open(dir.path()).expect("open");
        let t = tasks.create("ctx-1".into(), json!({"messageId": "m1"}), true).expect("create");
        let (snapshot, mut rx) = tasks.watch(&t.id).expect("watch");
        assert_eq!(snapshot.state, State::Submitted);
        tasks.set_state(&t.id, State::Working, None).expect("working");
        tasks.add_artifact(&t.id, json!({"artifactId": "a1"})).expect("artifact");
        tasks.set_permit(&t.id, "permit-1", 42).expect("permit");
        tasks.set_state(&t.id, State::InputRequired, None).expect("input");
        let first = rx.try_recv().expect("status");
        assert_eq!(first["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING");
        assert_eq!(rx.try_recv().expect("artifact")["artifactUpdate"]["artifact"]["artifactId"], "a1");
        assert_eq!(
            rx.try_recv().expect("input")["statusUpdate"]["status"]["state"],
            "TASK_STATE_INPUT_REQUIRED"
        );
        assert!(rx.try_recv().is_err(), "nothing twice");

        let reopened = Tasks::open(dir.path()).expect("reopen");
        let back = reopened.get(&t.id).expect("kept");
        assert_eq!(back.state, State::InputRequired);
        assert_eq!(back.permit_id.as_deref(), Some("permit-1"));
        assert_eq!(back.task(Some(0))["history"], json!([]));
        assert_eq!(back.task(None)["history"][0]["messageId"], "m1");
        assert_eq!(reopened.list(Some("ctx-1"), Some(State::InputRequired)).len(), 1);
        assert!(reopened.list(Some("ctx-2"), None).is_empty());
    }

    #[test]
    fn finished_tasks_past_retention_are_pruned_and_waiting_ones_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let tasks = Tasks::open(dir.path()).expect("open");
        let done = tasks.create("c".into(), json!({}), true).expect("create");
        let read = tasks.create("c".into(), json!({}), false).expect("create");
        tasks.set_state(&read.id, State::Completed, None).expect("done");
        let waiting = tasks.create("c".into(), json!({}), true).expect("create");
        for (t, state) in [(&done, State::Completed), (&waiting, State::InputRequired)] {
            let mut r = tasks.set_state(&t.id, state, None).expect("state");
            r.timestamp = "2020-01-01T00:00:00.000Z".into();
            tasks.save(&r).expect("backdate");
        }
        let reopened = Tasks::open(dir.path()).expect("reopen");
        assert!(reopened.get(&done.id).is_none(), "an old finished task is pruned");
        assert!(reopened.get(&waiting.id).is_some(), "an unfinished one is kept, however old");
        assert!(
            tasks.get(&read.id).is_some() && reopened.get(&read.id).is_none(),
            "a read's task is in memory only"
        );
    }

    #[test]
    fn memory_keeps_the_latest_finished_tasks_and_every_unfinished_one() {
        let dir = tempfile::tempdir().expect("dir");
        let tasks = Tasks::open(dir.path()).expect("open");
        let waiting = tasks.create("c".into(), json!({}), false).expect("create");
        let first = tasks.create("c".into(), json!({}), false).expect("create");
        tasks.set_state(&first.id, State::Completed, None).expect("done");
        for _ in 0..KEEP_FINISHED + KEEP_FINISHED / 10 + 1 {
            let t = tasks.create("c".into(), json!({}), false).expect("create");
            tasks.set_state(&t.id, State::Completed, None).expect("done");
        }
        assert!(tasks.get(&first.id).is_none(), "the oldest finished task went");
        assert!(tasks.get(&waiting.id).is_some(), "an unfinished task stays");
        assert!(tasks.list(None, None).len() <= KEEP_FINISHED + KEEP_FINISHED / 10 + 2);
    }

    #[test]
    fn states_round_trip_their_wire_names() {
        for s in [
            State::Submitted,
            State::Working,
            State::InputRequired,
            State::Completed,
            State::Canceled,
            State::Failed,
        ] {
            assert_eq!(State::from_wire(s.wire()), Some(s));
        }
        assert_eq!(State::InputRequired.name(), "input-required");
        assert!(State::InputRequired.ends_stream() && !State::InputRequired.is_terminal());
    }
}
