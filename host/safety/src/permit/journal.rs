//! Where a permit is first written: each process appends the permits it issues to a journal of
//! its own (`<book>.d/journal/<pid>-<ms>.jsonl`, one JSON line each) that it keeps open, under
//! the store's lock. Creating a file per preview cost ~0.2 ms on the disk measured — more than
//! the rest of the store; an append to an open file costs a write. A permit's later states
//! (taken, sending, settled) go to its own file in `<book>.d/`, which wins over its line.
//!
//! Lines are not synced: a permit whose line a crash lost is not found and is previewed again,
//! as one whose audit record was lost (a commit needs that record on disk anyway).

use super::{Entry, KEEP_SETTLED, SWEEP_EVERY, valid_id};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

#[derive(Serialize)]
struct LineOut<'a> {
    id: &'a str,
    entry: &'a Entry,
}

#[derive(Deserialize)]
struct LineIn {
    id: String,
    entry: Entry,
}

/// Only the id of a line, for the index (the entry is skipped, not built).
#[derive(Deserialize)]
struct LineId {
    id: String,
}

/// This process's journal, open for appending.
#[derive(Debug)]
struct Own {
    file: File,
    path: PathBuf,
    len: u64,
    opened: SystemTime,
}

/// Where a journaled permit's line is.
#[derive(Debug)]
struct Line {
    journal: PathBuf,
    offset: u64,
    len: usize,
}

/// This process's journal and an index of every journal's lines, read as far as `read` says.
/// Used only under the store's lock.
#[derive(Debug)]
pub(super) struct Journals {
    dir: PathBuf,
    own: Option<Own>,
    at: HashMap<String, Line>,
    read: HashMap<PathBuf, u64>,
}

fn millis(t: SystemTime) -> u128 {
    t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or_default()
}

/// Each complete line of `bytes` (read from `start` in its file): its offset in the file and text.
fn lines(bytes: &[u8], start: u64) -> impl Iterator<Item = (u64, &[u8])> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let nl = bytes[pos..].iter().position(|b| *b == b'\n')?;
        let line = (start + pos as u64, &bytes[pos..pos + nl]);
        pos += nl + 1;
        Some(line)
    })
}

impl Journals {
    pub(super) fn new(dir: PathBuf) -> Self {
        Self { dir, own: None, at: HashMap::new(), read: HashMap::new() }
    }

    /// Append `entry` as permit `id` to this process's journal, starting one if it has none.
    pub(super) fn append(&mut self, id: &str, entry: &Entry, now: SystemTime) -> Result<(), String> {
        let mut line = serde_json::to_vec(&LineOut { id, entry }).map_err(|e| text(&self.dir, e))?;
        line.push(b'\n');
        let own = match &mut self.own {
            Some(own) => own,
            None => {
                std::fs::create_dir_all(&self.dir).map_err(|e| text(&self.dir, e))?;
                let path = self.dir.join(format!("{}-{}.jsonl", std::process::id(), millis(now)));
                let file =
                    File::options().create_new(true).append(true).open(&path).map_err(|e| text(&path, e))?;
                self.own.insert(Own { file, path, len: 0, opened: now })
            }
        };
        if let Err(e) = own.file.write_all(&line) {
            // A part of the line may be written: later lines go to a new journal, not after it.
            let path = self.own.take().map(|o| o.path).unwrap_or_default();
            return Err(text(&path, e));
        }
        let at = Line { journal: own.path.clone(), offset: own.len, len: line.len() - 1 };
        own.len += line.len() as u64;
        self.read.insert(own.path.clone(), own.len);
        self.at.insert(id.to_owned(), at);
        Ok(())
    }

    /// The entry journaled for `id`, reading the lines no lookup has read yet.
    pub(super) fn find(&mut self, id: &str) -> Result<Option<Entry>, String> {
        if !self.at.contains_key(id) {
            self.index()?;
        }
        let Some(line) = self.at.get(id) else { return Ok(None) };
        let mut bytes = vec![0; line.len];
        let read = File::open(&line.journal).and_then(|mut f| {
            f.seek(SeekFrom::Start(line.offset))?;
            f.read_exact(&mut bytes)
        });
        match read {
            Ok(()) => {}
            // Swept by another process meanwhile.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.at.remove(id);
                return Ok(None);
            }
            Err(e) => return Err(text(&line.journal, e)),
        }
        let parsed: LineIn = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{} is corrupt at byte {}: {e}", line.journal.display(), line.offset))?;
        Ok((parsed.id == id).then_some(parsed.entry))
    }

    /// The journal files: every `*.jsonl` in the directory.
    fn files(&self) -> Result<Vec<PathBuf>, String> {
        Ok(super::super::store::listed(&self.dir, ".jsonl")?.into_iter().map(|(_, path)| path).collect())
    }

    /// Index the lines of every journal past what was read of it. A line that does not parse (a
    /// crash cut it) is skipped; an unterminated end is left for later.
    fn index(&mut self) -> Result<(), String> {
        for path in self.files()? {
            let from = self.read.get(&path).copied().unwrap_or(0);
            let mut bytes = Vec::new();
            let read = File::open(&path).and_then(|mut f| {
                f.seek(SeekFrom::Start(from))?;
                f.read_to_end(&mut bytes)
            });
            match read {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(text(&path, e)),
            }
            let mut end = from;
            for (offset, line) in lines(&bytes, from) {
                end = offset + line.len() as u64 + 1;
                if let Ok(LineId { id }) = serde_json::from_slice(line)
                    && valid_id(&id)
                {
                    self.at.insert(id, Line { journal: path.clone(), offset, len: line.len() });
                }
            }
            self.read.insert(path, end);
        }
        Ok(())
    }

    /// Every journaled permit (a halt, a resume, the start's reconciliation: not per call).
    pub(super) fn all(&self) -> Result<Vec<(String, Entry)>, String> {
        let mut all = Vec::new();
        for path in self.files()? {
            for (id, entry) in Self::entries(&path)? {
                all.push((id, entry));
            }
        }
        Ok(all)
    }

    /// The permits in the journal at `path`, in order (missing: none).
    fn entries(path: &Path) -> Result<Vec<(String, Entry)>, String> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(text(path, e)),
        };
        Ok(lines(&bytes, 0)
            .filter_map(|(_, line)| serde_json::from_slice::<LineIn>(line).ok())
            .filter(|l| valid_id(&l.id))
            .map(|l| (l.id, l.entry))
            .collect())
    }

    /// Start a new journal for this process once its own is [`SWEEP_EVERY`] old, and remove the
    /// journals last written [`KEEP_SETTLED`] ago, first handing each of their permits to
    /// `rescue` (which keeps those still needed in their own files).
    pub(super) fn sweep(
        &mut self,
        now: SystemTime,
        mut rescue: impl FnMut(&str, &Entry) -> Result<(), String>,
    ) -> Result<(), String> {
        if self.own.as_ref().is_some_and(|o| now.duration_since(o.opened).is_ok_and(|age| age >= SWEEP_EVERY))
        {
            self.own = None;
        }
        let own = self.own.as_ref().map(|o| o.path.clone());
        for path in self.files()? {
            let old = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age >= KEEP_SETTLED));
            if !old || own.as_ref() == Some(&path) {
                continue;
            }
            for (id, entry) in Self::entries(&path)? {
                rescue(&id, &entry)?;
            }
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(text(&path, e)),
            }
            self.at.retain(|_, line| line.journal != path);
            self.read.remove(&path);
        }
        Ok(())
    }
}

pub(super) fn text(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

#[cfg(test)]
mod tests {
    use super::lines;

    #[test]
    fn lines_are_complete_ones_with_their_offsets() {
        let got: Vec<_> = lines(b"ab\n\ncde\nf", 10).collect();
        assert_eq!(got, [(10, &b"ab"[..]), (13, &b""[..]), (14, &b"cde"[..])]);
        assert_eq!(lines(b"", 0).count(), 0);
    }
}
