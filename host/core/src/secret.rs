//! Secrets — the signing key, keystore and registry passwords, bearer tokens — as the
//! specification's `TaintedString` ("TaintedString: sensitive data handling"): the value lives in
//! one zeroized-on-drop buffer, there is no `Display` and no `Serialize`, `Debug` prints only the
//! labels, and reading it takes an explicit [`TaintedString::expose_secret`]. Its labels say
//! where it may flow ([`TaintedString::can_flow_to`]); [`TaintedString::appears_in`] lets an
//! output filter withhold any text that holds it. Child processes the host starts (anvil, the
//! sidecar's Node, npm, the devnet's compiler) get an environment without secrets ([`scrub_env`]).

use crate::sync::lock;
use std::collections::BTreeSet;
use zeroize::Zeroizing;

/// Where a secret must not go (the specification's taint labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaintLabel {
    /// The wallet's key material: never leaves the process.
    WalletSecret,
    /// The operator's credentials (passwords, bearer tokens): never to an LLM's context.
    OwnerSecret,
    /// Strategy parameters: never to the shared knowledge store.
    StrategyConfidential,
    /// Personal data: never to the shared knowledge store without anonymisation.
    UserPii,
    /// From outside: validate before use.
    UntrustedExternal,
}

/// Where data may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataSink {
    /// An agent's (LLM's) context: tool answers, errors, MCP and A2A messages.
    LlmContext,
    /// The Event Fabric (and its journal, the TUI).
    EventFabric,
    /// Shared knowledge stores (Styx, Lethe).
    StyxLethe,
}

/// A secret string. Deliberately neither `Display` nor `Serialize`.
#[derive(Clone)]
pub struct TaintedString {
    value: Zeroizing<String>,
    labels: BTreeSet<TaintLabel>,
}

impl std::fmt::Debug for TaintedString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TaintedString(<redacted>, {:?})", self.labels)
    }
}

impl TaintedString {
    /// Take ownership of `value` (zeroized when this is dropped) with `labels`.
    pub fn new(value: Zeroizing<String>, labels: &[TaintLabel]) -> Self {
        Self { value, labels: labels.iter().copied().collect() }
    }

    /// A secret read from environment variable `var`; none when it is unset or empty. `var` is
    /// remembered as a secret's: [`scrub_env`] keeps it from child processes.
    pub fn from_env(var: &str, labels: &[TaintLabel]) -> Option<Self> {
        lock(&SECRET_VARS).insert(var.to_owned());
        let value = Zeroizing::new(std::env::var(var).ok()?);
        (!value.trim().is_empty()).then(|| Self::new(value, labels))
    }

    /// The secret itself, for the one call that needs it (parsing a key, comparing a token).
    /// Never format, log or send what this returns.
    pub fn expose_secret(&self) -> &str {
        &self.value
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// Whether data with these labels may flow to `sink` (the specification's rules).
    pub fn can_flow_to(&self, sink: DataSink) -> bool {
        let has = |l| self.labels.contains(&l);
        match sink {
            DataSink::LlmContext => !has(TaintLabel::WalletSecret) && !has(TaintLabel::OwnerSecret),
            DataSink::EventFabric => !has(TaintLabel::WalletSecret),
            DataSink::StyxLethe => {
                !has(TaintLabel::StrategyConfidential)
                    && !has(TaintLabel::UserPii)
                    && !has(TaintLabel::WalletSecret)
            }
        }
    }

    /// Whether `text` holds the secret, in any letter case (hex keys are printed both ways) and
    /// with or without a `0x` prefix.
    pub fn appears_in(&self, text: &str) -> bool {
        let secret = self.value.trim();
        let secret = secret.strip_prefix("0x").or_else(|| secret.strip_prefix("0X")).unwrap_or(secret);
        if secret.is_empty() || text.len() < secret.len() {
            return false;
        }
        // A window-by-window comparison: no lowercase copy of the secret is made.
        text.as_bytes().windows(secret.len()).any(|w| w.eq_ignore_ascii_case(secret.as_bytes()))
    }
}

/// The environment variables secrets were read from (the operator may name them anything).
static SECRET_VARS: std::sync::Mutex<BTreeSet<String>> = std::sync::Mutex::new(BTreeSet::new());

/// Names of environment variables that hold secrets by convention.
fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["PRIVATE_KEY", "PASSWORD", "SECRET", "TOKEN", "MNEMONIC"].iter().any(|s| upper.contains(s))
}

/// Start `cmd` without the host's secrets in its environment: every variable a secret was read
/// from ([`TaintedString::from_env`]) and every one whose name says it is a secret
/// (`*PRIVATE_KEY*`, `*PASSWORD*`, `*SECRET*`, `*TOKEN*`, `*MNEMONIC*`).
pub fn scrub_env(cmd: &mut std::process::Command) {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if looks_secret(&name) {
            cmd.env_remove(name.as_ref());
        }
    }
    for name in lock(&SECRET_VARS).iter() {
        cmd.env_remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0xAC0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

    fn key() -> TaintedString {
        TaintedString::new(Zeroizing::new(KEY.to_owned()), &[TaintLabel::WalletSecret])
    }

    #[test]
    fn debug_shows_only_the_labels() {
        let shown = format!("{:?} {:#?}", key(), vec![key()]);
        assert!(!key().appears_in(&shown), "{shown}");
        assert!(shown.contains("redacted") && shown.contains("WalletSecret"), "{shown}");
    }

    #[test]
    fn it_is_found_in_any_case_with_or_without_0x() {
        let k = key();
        assert!(k.appears_in(&format!("error: {}", &KEY[2..].to_lowercase())));
        assert!(k.appears_in(&KEY.to_uppercase()));
        assert!(k.appears_in(KEY));
        assert!(!k.appears_in(&KEY[..40]), "a prefix is not the key");
        assert!(!TaintedString::new(Zeroizing::new(String::new()), &[]).appears_in("anything"));
    }

    #[test]
    fn labels_decide_the_sinks_as_the_specification_says() {
        let wallet = key();
        assert!(!wallet.can_flow_to(DataSink::LlmContext));
        assert!(!wallet.can_flow_to(DataSink::EventFabric));
        assert!(!wallet.can_flow_to(DataSink::StyxLethe));
        let token = TaintedString::new(Zeroizing::new("t".into()), &[TaintLabel::OwnerSecret]);
        assert!(!token.can_flow_to(DataSink::LlmContext));
        assert!(token.can_flow_to(DataSink::EventFabric));
        assert!(token.can_flow_to(DataSink::StyxLethe));
        let plan = TaintedString::new(Zeroizing::new("p".into()), &[TaintLabel::StrategyConfidential]);
        assert!(plan.can_flow_to(DataSink::LlmContext) && !plan.can_flow_to(DataSink::StyxLethe));
        let pii = TaintedString::new(Zeroizing::new("p".into()), &[TaintLabel::UserPii]);
        assert!(!pii.can_flow_to(DataSink::StyxLethe));
    }

    #[test]
    fn child_environments_lose_secrets() {
        for name in ["BARDO_PRIVATE_KEY", "BARDO_KEYSTORE_PASSWORD", "MCP_TOKENS", "aws_secret_access_key"] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["PATH", "HOME", "NODE_OPTIONS", "RUST_LOG"] {
            assert!(!looks_secret(name), "{name}");
        }
        // A variable a secret was read from goes too, whatever its name.
        assert!(TaintedString::from_env("BARDO_TEST_UNSET_WALLET_VAR", &[]).is_none());
        let mut cmd = std::process::Command::new("env");
        scrub_env(&mut cmd);
        let removed: Vec<_> =
            cmd.get_envs().filter(|(_, v)| v.is_none()).map(|(k, _)| k.to_owned()).collect();
        assert!(removed.iter().any(|k| k == "BARDO_TEST_UNSET_WALLET_VAR"), "{removed:?}");
    }
}
