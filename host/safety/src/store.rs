//! A JSON file that several `bardo` processes change in turn (permits, the spending ledger):
//! read, change and rewrite under an exclusive lock on a `.lock` beside it, the rewrite atomic
//! (write a temp file, rename).

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::File;
use std::path::Path;

/// Apply `f` to the contents of `path` (default when the file is missing) under the lock and
/// write the result back. Errors name the file.
pub(super) fn with_locked<T, R>(path: &Path, f: impl FnOnce(&mut T) -> R) -> Result<R, String>
where
    T: Default + Serialize + DeserializeOwned,
{
    let _lock = lock(path)?;
    let mut value: T = read(path)?;
    let out = f(&mut value);
    replace(path, &value)?;
    Ok(out)
}

/// The exclusive lock on `<path>.lock` (`permits.json` → `permits.lock`), its directory created
/// when missing; released when the file is dropped.
pub(super) fn lock(path: &Path) -> Result<File, String> {
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path.with_extension("lock"))
        .map_err(io)?;
    lock.lock().map_err(io)?;
    Ok(lock)
}

/// Replace `path` by `value` as JSON, atomically: a temp file beside it, renamed over it.
pub(super) fn replace<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let json = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, json).and_then(|_| std::fs::rename(&tmp, path)).map_err(io)
}

/// The contents of `path` (default when the file is missing), read without the lock: every
/// write replaces the file by a rename, so a reader sees one whole version or the next.
pub(super) fn read<T>(path: &Path) -> Result<T, String>
where
    T: Default + DeserializeOwned,
{
    match std::fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes).map_err(|e| format!("{} is corrupt: {e}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The files in `dir` whose names end in `suffix`: (name without it, path). A missing
/// directory has none.
pub(super) fn listed(dir: &Path, suffix: &str) -> Result<Vec<(String, std::path::PathBuf)>, String> {
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    let read = match std::fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(e)),
    };
    let mut files = Vec::new();
    for item in read {
        let item = item.map_err(io)?;
        let name = item.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(suffix) {
            files.push((stem.to_owned(), item.path()));
        }
    }
    Ok(files)
}
