//! The events journal: `bardo stream` appends every Event Fabric envelope as a JSON line, so
//! `bardo events --resume-from N` can replay and follow them from another process. One writer
//! at a time (an exclusive lock for the writer's life) keeps sequence numbers unique; a new
//! writer continues the sequence where the journal ends.

use crate::fabric::{Envelope, Fabric, Gap};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Why the journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Reading, writing or locking the journal failed.
    #[error("events journal {path}: {source}")]
    Io {
        /// The journal (or its lock file).
        path: PathBuf,
        /// The I/O failure.
        source: std::io::Error,
    },
    /// Another writer holds the journal's lock.
    #[error(
        "events journal {0} is being written by another bardo process on this configuration (`bardo stream`, `mcp`, `serve` or `tui`)"
    )]
    Busy(PathBuf),
    /// A line that is not an envelope with a sequence number (or an envelope that would not encode).
    #[error("events journal {path} line {line} is not an event: {reason}")]
    Corrupt {
        /// The journal.
        path: PathBuf,
        /// The 1-based line number (0 when encoding an envelope to append).
        line: usize,
        /// Why the line was rejected.
        reason: String,
    },
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io { path: path.to_owned(), source }
}

/// The journal's writer.
pub struct Journal {
    file: File,
    _lock: File,
}

impl Journal {
    /// Open `path` for appending; returns the writer and the sequence number to continue from.
    pub fn open(path: &Path) -> Result<(Self, u64), JournalError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let lock_path = path.with_extension("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(JournalError::Busy(path.to_owned())),
            Err(std::fs::TryLockError::Error(e)) => return Err(io(&lock_path)(e)),
        }
        let last = read(path, 0)?.1.last().map_or(0, |(seq, _)| *seq);
        let file = OpenOptions::new().create(true).append(true).open(path).map_err(io(path))?;
        Ok((Self { file, _lock: lock }, last + 1))
    }

    /// Append one envelope; returns its JSON line (without the newline).
    pub fn append(&mut self, e: &Envelope, path: &Path) -> Result<String, JournalError> {
        let line = serde_json::to_string(e).map_err(|err| JournalError::Corrupt {
            path: path.to_owned(),
            line: 0,
            reason: err.to_string(),
        })?;
        writeln!(self.file, "{line}").map_err(io(path))?;
        Ok(line)
    }
}

/// A fabric's events appended to the journal by a task of their own: a slow disk never slows the
/// fabric (the task's subscription reports what it missed as a gap, logged). Dropped, it writes
/// what is ready and stops; [`JournalTask::finish`] also waits for that.
pub struct JournalTask {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl JournalTask {
    /// Journal every event `fabric` emits from now on with `journal` (opened on `path`), on `rt`.
    pub fn spawn(fabric: &Fabric, mut journal: Journal, path: PathBuf, rt: &tokio::runtime::Handle) -> Self {
        let mut events = fabric.subscribe(None);
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let task = rt.spawn(async move {
            let mut write = |e: &Envelope| {
                if let Err(e) = journal.append(e, &path) {
                    tracing::error!("cannot journal an event: {e}");
                }
            };
            loop {
                tokio::select! {
                    biased;
                    next = events.recv() => match next {
                        Some(Ok(e)) => write(&e),
                        Some(Err(gap)) => tracing::warn!("events not journaled: {gap}"),
                        None => return,
                    },
                    _ = &mut stopped => {
                        while let Some(Ok(e)) = events.try_recv() {
                            write(&e);
                        }
                        return;
                    }
                }
            }
        });
        Self { stop, task }
    }

    /// Journal what was emitted so far, then stop (gives up after 5 s).
    pub async fn finish(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), self.task).await;
    }
}

/// What `read` found: the range asked for that the journal no longer (or never) held, and the
/// lines from the first sequence number asked for on, with their numbers.
pub type Replay = (Option<Gap>, Vec<(u64, String)>);

/// The journal's events with sequence ≥ `from`, and the range before them that it no longer (or
/// never) held. A missing journal is empty.
pub fn read(path: &Path, from: u64) -> Result<Replay, JournalError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, Vec::new())),
        Err(e) => return Err(io(path)(e)),
    };
    let mut out = Vec::new();
    let mut first = None;
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io(path))?;
        let seq = seq_of(&line).ok_or_else(|| JournalError::Corrupt {
            path: path.to_owned(),
            line: i + 1,
            reason: "no sequence number".into(),
        })?;
        first.get_or_insert(seq);
        if seq >= from {
            out.push((seq, line));
        }
    }
    let gap = first.filter(|f| from < *f && from > 0).map(|f| Gap { from, to: f - 1 });
    Ok((gap, out))
}

fn seq_of(line: &str) -> Option<u64> {
    serde_json::from_str::<serde_json::Value>(line).ok()?["seq"].as_u64()
}

/// Follow `path` from byte `offset`: new complete lines, and the offset after them.
pub fn tail(path: &Path, offset: u64) -> Result<(Vec<String>, u64), JournalError> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), offset)),
        Err(e) => return Err(io(path)(e)),
    };
    file.seek(SeekFrom::Start(offset)).map_err(io(path))?;
    let mut reader = BufReader::new(file);
    let (mut lines, mut at) = (Vec::new(), offset);
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).map_err(io(path))?;
        // A line without its newline is still being written: leave it for the next look.
        if n == 0 || !line.ends_with('\n') {
            return Ok((lines, at));
        }
        at += n as u64;
        lines.push(line.trim_end().to_owned());
    }
}
