//! Registry credentials: what the host's configuration names, and what `docker login` (or
//! `oras login`, `wkg`) left in Docker's `config.json`.

use bardo_core::secret::{TaintLabel, TaintedString};
use base64::Engine as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// How to log in to one registry.
#[derive(Clone)]
pub enum Credential {
    /// A user name and a password or token: sent as HTTP basic auth, or exchanged for a bearer
    /// token when the registry asks for one (ghcr.io, Docker Hub).
    Basic {
        /// The user name.
        username: String,
        /// The password or access token (zeroized on drop, never printed).
        password: TaintedString,
    },
    /// Configured, but the secret is not available (e.g. its environment variable is unset):
    /// every request to that registry fails with this reason instead of going out anonymously.
    Unavailable(String),
}

impl Credential {
    /// A user name and password login; the password is held as a secret from here on.
    pub fn basic(username: impl Into<String>, password: impl Into<String>) -> Self {
        let password = TaintedString::new(Zeroizing::new(password.into()), &[TaintLabel::OwnerSecret]);
        Self::Basic { username: username.into(), password }
    }
}

impl std::fmt::Debug for Credential {
    // Never print a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Basic { username, .. } => write!(f, "Basic({username}, <redacted>)"),
            Self::Unavailable(reason) => write!(f, "Unavailable({reason})"),
        }
    }
}

/// Docker's `config.json`: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`.
pub fn docker_config_path() -> Option<PathBuf> {
    match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => Some(PathBuf::from(dir).join("config.json")),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker/config.json")),
    }
}

/// The inline logins in a Docker `config.json` (`auths.HOST.auth` = base64 `user:password`, or
/// `username` / `password`), keyed by registry host. A missing file is no logins; an unreadable
/// one is an error naming it. Logins kept by a credential helper (`credsStore`, `credHelpers`)
/// are not read: name those registries in the host's configuration instead.
pub fn docker_logins(path: &Path) -> Result<BTreeMap<String, Credential>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        auths: BTreeMap<String, Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        auth: Option<String>,
        username: Option<String>,
        password: Option<String>,
    }
    let file: File =
        serde_json::from_str(&text).map_err(|e| format!("{} is not a Docker config: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for (key, entry) in file.auths {
        let host = registry_host(&key);
        let login = match (entry.auth.filter(|a| !a.is_empty()), entry.username, entry.password) {
            (Some(auth), _, _) => {
                let pair = base64::engine::general_purpose::STANDARD
                    .decode(auth.trim())
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .map(Zeroizing::new)
                    .and_then(|s| s.split_once(':').map(|(u, p)| (u.to_owned(), p.to_owned())));
                match pair {
                    Some((username, password)) => Credential::basic(username, password),
                    None => Credential::Unavailable(format!(
                        "the login for {host} in {} is not base64 `user:password`; log in again",
                        path.display()
                    )),
                }
            }
            (None, Some(username), Some(password)) => Credential::basic(username, password),
            // An identity token or a helper-kept login: nothing here to send.
            _ => continue,
        };
        out.insert(host, login);
    }
    Ok(out)
}

/// `https://index.docker.io/v1/` → `index.docker.io`; `127.0.0.1:5000` stays.
fn registry_host(key: &str) -> String {
    let rest = key.split_once("://").map_or(key, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_logins_are_read_by_host() {
        let dir = std::env::temp_dir().join(format!("bardo-docker-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("test setup");
        let path = dir.join("config.json");
        let auth = base64::engine::general_purpose::STANDARD.encode("ann:s3cr:et");
        std::fs::write(
            &path,
            format!(
                r#"{{"auths":{{"https://index.docker.io/v1/":{{"auth":"{auth}"}},
                "ghcr.io":{{"username":"bob","password":"tok"}},
                "quay.io":{{"identitytoken":"x"}},
                "bad.example":{{"auth":"not base64!"}}}},"credsStore":"desktop"}}"#
            ),
        )
        .expect("test setup");
        let logins = docker_logins(&path).expect("test setup");
        assert!(
            matches!(&logins["index.docker.io"], Credential::Basic { username, password } if username == "ann" && password.expose_secret() == "s3cr:et")
        );
        assert!(matches!(&logins["ghcr.io"], Credential::Basic { username, .. } if username == "bob"));
        assert!(!logins.contains_key("quay.io"), "an identity token is not a login");
        assert!(matches!(&logins["bad.example"], Credential::Unavailable(r) if r.contains("log in again")));
        assert!(!format!("{:?}", logins["ghcr.io"]).contains("tok"), "secrets are never printed");
        assert!(docker_logins(&dir.join("missing.json")).expect("test setup").is_empty());
        std::fs::write(&path, "{").expect("test setup");
        assert!(docker_logins(&path).expect_err("an error").contains("is not a Docker config"));
        std::fs::remove_dir_all(&dir).expect("test setup");
    }
}
