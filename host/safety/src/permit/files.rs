//! Permits shared between processes as files: the emergency halt in the book file (the path
//! configured, `permits.json`), each permit first as a line in its issuing process's journal
//! (`permits.json.d/journal/`, see [`journal`]) and, once its state changes, in its own file
//! (`permits.json.d/permit-….json`). A preview appends one line, a commit writes one small
//! file: neither cost grows with the permits of the day, as rewriting one file holding all of
//! them did (73 ms a preview after ten thousand). Every change holds the exclusive lock on
//! `<book>.lock`; every file is replaced whole by a rename, so a reader without the lock sees
//! one version or the next.

use super::super::store;
use super::journal::{Journals, text};
use super::{Book, Entry, Halt, KEEP_SETTLED, Map, keep, valid_id};
use bardo_core::sync::lock;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

#[derive(Debug)]
pub(super) struct Files {
    book: PathBuf,
    dir: PathBuf,
    /// The lock file, kept open, and the journals. The mutex keeps this process's threads apart
    /// too: a file lock is held per open file, not per thread.
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    lock: Option<File>,
    journals: Journals,
}

/// The store's exclusive lock, released when dropped (with the mutex guarding `Inner`).
struct Held<'a> {
    inner: MutexGuard<'a, Inner>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(lock) = &self.inner.lock {
            let _ = lock.unlock();
        }
    }
}

impl Files {
    pub(super) fn new(book: &Path) -> Self {
        let mut name = book.file_name().unwrap_or_default().to_os_string();
        name.push(".d");
        let dir = book.with_file_name(name);
        let journals = Journals::new(dir.join("journal"));
        Self { book: book.to_owned(), dir, inner: Mutex::new(Inner { lock: None, journals }) }
    }

    /// The lock file of wallet `name`'s sender (see `wallet`), opened; its directory created.
    pub(super) fn wallet_lock(&self, name: &str) -> Result<File, String> {
        let path = self.dir.join(format!("wallet-{name}.lock"));
        let io = |e: std::io::Error| format!("{}: {e}", path.display());
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io)
    }

    fn entry_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// The exclusive lock every change holds (the same `.lock` file as before permits had files),
    /// its file opened once.
    fn lock(&self) -> Result<Held<'_>, String> {
        let mut inner = lock(&self.inner);
        match &inner.lock {
            Some(lock) => lock.lock().map_err(|e| text(&self.book, e))?,
            None => {
                std::fs::create_dir_all(&self.dir).map_err(|e| text(&self.dir, e))?;
                inner.lock = Some(store::lock(&self.book)?);
            }
        }
        Ok(Held { inner })
    }

    /// The book under the lock; permits an earlier version kept in it move to their own files.
    fn book_locked(&self) -> Result<Book, String> {
        let mut book: Book = store::read(&self.book)?;
        if !book.permits.is_empty() {
            for (id, entry) in std::mem::take(&mut book.permits) {
                if valid_id(&id) && !self.entry_path(&id).exists() {
                    store::replace(&self.entry_path(&id), &entry)?;
                }
            }
            store::replace(&self.book, &book)?;
        }
        Ok(book)
    }

    /// The halt in force, read without the lock.
    pub(super) fn halted(&self) -> Result<Option<Halt>, String> {
        store::read::<Book>(&self.book).map(|b| b.halted)
    }

    fn read_entry(path: &Path) -> Result<Option<(Entry, Vec<u8>)>, String> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(|e| Some((e, bytes)))
                .map_err(|e| format!("{} is corrupt: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(text(path, e)),
        }
    }

    /// Record the new permit `id` (its entry as `f` makes it from the halt in force, or `f`'s
    /// refusal) in this process's journal, under the lock.
    pub(super) fn insert<E>(
        &self,
        id: &str,
        now: SystemTime,
        f: impl FnOnce(Option<&Halt>) -> Result<Entry, E>,
    ) -> Result<Result<(), E>, String> {
        if !valid_id(id) {
            return Err(format!("`{id}` cannot name a permit: ids are `permit-` and hex digits"));
        }
        let mut held = self.lock()?;
        let book = self.book_locked()?;
        match f(book.halted.as_ref()) {
            Ok(entry) => held.inner.journals.append(id, &entry, now).map(Ok),
            Err(refused) => Ok(Err(refused)),
        }
    }

    /// Apply `f` to the halt in force and permit `id` (None when there is none) under the lock,
    /// writing the permit to its own file if `f` changed it.
    pub(super) fn with_entry<R>(
        &self,
        id: &str,
        f: impl FnOnce(Option<&Halt>, &mut Option<Entry>) -> R,
    ) -> Result<R, String> {
        let mut held = self.lock()?;
        let book = self.book_locked()?;
        if !valid_id(id) {
            let mut none = None;
            return Ok(f(book.halted.as_ref(), &mut none));
        }
        let path = self.entry_path(id);
        let mut entry = match Self::read_entry(&path)? {
            Some((entry, _)) => Some(entry),
            None => held.inner.journals.find(id)?,
        };
        let before = entry.as_ref().map(serde_json::to_vec).transpose().map_err(|e| text(&path, e))?;
        let out = f(book.halted.as_ref(), &mut entry);
        if let Some(entry) = &entry {
            let now = serde_json::to_vec(entry).map_err(|e| text(&path, e))?;
            if before.as_deref() != Some(now.as_slice()) {
                store::replace(&path, entry)?;
            }
        }
        Ok(out)
    }

    /// Apply `f` to the halt and every permit under the lock (a halt, a resume, the start's
    /// reconciliation: not per call), writing back what changed.
    pub(super) fn with_all<R>(&self, f: impl FnOnce(&mut Option<Halt>, &mut Map) -> R) -> Result<R, String> {
        let held = self.lock()?;
        let mut book = self.book_locked()?;
        let mut permits: Map = held.inner.journals.all()?.into_iter().collect();
        for (id, path) in self.entry_files()? {
            if let Some((entry, _)) = Self::read_entry(&path)? {
                permits.insert(id, entry);
            }
        }
        let (halt_before, permits_before) = (book.halted.clone(), permits.clone());
        let out = f(&mut book.halted, &mut permits);
        if book.halted != halt_before {
            store::replace(&self.book, &book)?;
        }
        for (id, entry) in &permits {
            let same = permits_before
                .get(id)
                .is_some_and(|b| serde_json::to_vec(b).ok() == serde_json::to_vec(entry).ok());
            if !same {
                store::replace(&self.entry_path(id), entry)?;
            }
        }
        Ok(out)
    }

    /// Every permit file: (id, path).
    fn entry_files(&self) -> Result<Vec<(String, PathBuf)>, String> {
        Ok(store::listed(&self.dir, ".json")?.into_iter().filter(|(id, _)| valid_id(id)).collect())
    }

    /// Remove the permits [`keep`] lets go: their own files changed within [`KEEP_SETTLED`] are
    /// not even read, and journals last written that long ago go once the permits still kept
    /// have their own files.
    pub(super) fn sweep(&self, now: SystemTime) -> Result<(), String> {
        let mut held = self.lock()?;
        for (_, path) in self.entry_files()? {
            let old = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age >= KEEP_SETTLED));
            if !old {
                continue;
            }
            if let Some((entry, _)) = Self::read_entry(&path)?
                && !keep(&entry, now)
            {
                std::fs::remove_file(&path).map_err(|e| text(&path, e))?;
            }
        }
        held.inner.journals.sweep(now, |id, entry| {
            let path = self.entry_path(id);
            if keep(entry, now) && !path.exists() {
                store::replace(&path, entry)?;
            }
            Ok(())
        })
    }
}
