//! A local OCI registry for tests and benchmarks: Debian's `docker-registry` (installed by
//! `make setup`) on a free loopback port, storing under a directory the caller owns.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `docker-registry serve`, killed on drop.
pub struct LocalRegistry {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// Its filesystem storage.
    pub storage: PathBuf,
    child: Child,
}

impl LocalRegistry {
    /// Start one storing under `dir`; waits until `/v2/` answers (at most 10 s).
    pub fn start(dir: &Path) -> std::io::Result<Self> {
        Self::start_with(dir, None)
    }

    /// Start one that requires the logins in `htpasswd` (bcrypt entries), if given.
    pub fn start_with(dir: &Path, htpasswd: Option<&Path>) -> std::io::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let addr = format!("127.0.0.1:{port}");
        let storage = dir.join("storage");
        let config = dir.join("registry.yml");
        let mut yaml = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n",
            storage.display()
        );
        if let Some(path) = htpasswd {
            yaml.push_str(&format!("auth:\n  htpasswd:\n    realm: bardo\n    path: {}\n", path.display()));
        }
        std::fs::write(&config, yaml)?;
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("cannot start docker-registry ({e}); `make setup` installs it"),
                )
            })?;
        let mut server = Self { addr, storage, child };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.answers() {
            if Instant::now() > deadline || server.child.try_wait()?.is_some() {
                return Err(std::io::Error::other("docker-registry did not answer /v2/ within 10 s"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    fn answers(&self) -> bool {
        let Ok(mut s) = std::net::TcpStream::connect(&self.addr) else { return false };
        let _ = write!(s, "GET /v2/ HTTP/1.0\r\nHost: {}\r\n\r\n", self.addr);
        let mut head = [0u8; 12];
        // 401: up, and asking for a login.
        s.read_exact(&mut head).is_ok() && (head.ends_with(b"200") || head.ends_with(b"401"))
    }

    /// The stored file of blob `digest` (tests tamper with it).
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage.join(format!("docker/registry/v2/blobs/sha256/{}/{hex}/data", &hex[..2.min(hex.len())]))
    }

    /// Stop it (the storage stays).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LocalRegistry {
    fn drop(&mut self) {
        self.stop();
    }
}
