//! A real OCI registry on a loopback port (Debian's `docker-registry`, installed by `make
//! setup`), its storage in a temp dir, and a work dir whose bardo.toml pulls from it.

use bardo_devnet::registry::LocalRegistry;
use bardo_registry::{Artifact, Credential, RegistryClient};
use bardo_runtime::config::Config;
use std::path::{Path, PathBuf};

/// A local registry (killed on drop) with its temp dir.
pub struct RegistryServer {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The login it requires, if any (`client` uses it).
    login: Option<(String, String)>,
    inner: LocalRegistry,
    _dir: tempfile::TempDir,
}

impl RegistryServer {
    /// A registry anyone may push to and pull from.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let inner = LocalRegistry::start(dir.path()).expect("local registry");
        Self { addr: inner.addr.clone(), login: None, inner, _dir: dir }
    }

    /// A registry that answers only `username` / `password` (htpasswd, bcrypt).
    pub fn start_with_login(username: &str, password: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let htpasswd = dir.path().join("htpasswd");
        let hash = bcrypt::hash(password, 4).expect("bcrypt");
        std::fs::write(&htpasswd, format!("{username}:{hash}\n")).expect("htpasswd");
        let inner = LocalRegistry::start_with(dir.path(), Some(&htpasswd)).expect("local registry");
        let login = Some((username.to_owned(), password.to_owned()));
        Self { addr: inner.addr.clone(), login, inner, _dir: dir }
    }

    /// A client with no login.
    pub fn anonymous(&self) -> RegistryClient {
        RegistryClient::new(std::slice::from_ref(&self.addr))
    }

    /// A client with the login the server requires.
    pub fn client(&self) -> RegistryClient {
        match &self.login {
            None => self.anonymous(),
            Some((username, password)) => self
                .anonymous()
                .with_credential(&self.addr, Credential::basic(username.clone(), password.clone())),
        }
    }

    /// Publish `file` as `repo:version` (its manifest version); returns (reference, manifest digest, layer digest).
    pub fn publish(&self, repo: &str, file: &str, version: &str) -> (String, String, String) {
        let reference = format!("{}/{repo}:{version}", self.addr);
        let parsed = bardo_registry::parse_reference(&reference).expect("reference");
        let bytes = std::fs::read(file).expect("component");
        let artifact = Artifact {
            version: version.into(),
            title: Path::new(file).file_name().expect("name").to_string_lossy().into_owned(),
            description: None,
            author: Some("bardo tests".into()),
        };
        let published = crate::host_runtime()
            .block_on_anywhere(self.client().publish(&parsed, bytes, &artifact, &|_| {}))
            .expect("publish");
        (reference, published.digest, published.layer)
    }

    /// Where the registry stores blob `digest` (to tamper with it).
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        self.inner.blob_path(digest)
    }

    /// Stop it (an unreachable registry).
    pub fn stop(&mut self) {
        self.inner.stop();
    }
}

/// A work dir with a bardo.toml: no plugin files, the registry insecure, plus `extra`.
pub fn workdir(server: &RegistryServer, extra: &str) -> (tempfile::TempDir, Config) {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = format!(
        "profile = \"data\"\nplugins = []\nlock = \"bardo.lock\"\ncache_dir = \"cache\"\n\n[registry]\ninsecure = [\"{}\"]\n{extra}",
        server.addr
    );
    std::fs::write(dir.path().join("bardo.toml"), text).expect("config");
    let config = Config::load(&dir.path().join("bardo.toml"), true).expect("config");
    (dir, config)
}
