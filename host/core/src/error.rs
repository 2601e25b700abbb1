//! The host's domain error: what a tool call, or a host import, reports to the caller.

use serde::Serialize;
use std::fmt;

/// The kind of a failure (mirrors `bardo:host/types.error-code`, plus the host-only `cancelled` and
/// `unavailable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// Malformed or out-of-range parameters.
    InvalidParams,
    /// The chain id is not configured.
    ChainNotSupported,
    /// The thing asked for does not exist.
    NotFound,
    /// The RPC node failed.
    Rpc,
    /// The EVM reverted.
    Reverted,
    /// Policy refused the request.
    Denied,
    /// The call ran past its time budget.
    Timeout,
    /// A resource limit was hit (fuel, memory, result size, rate).
    LimitExceeded,
    /// A write needs a signing key and none is configured.
    WalletNotConfigured,
    /// A plugin or host failure that is not the caller's fault.
    Internal,
    /// The caller cancelled the call (an MCP client's `notifications/cancelled`).
    Cancelled,
    /// The fleet's shared state (NATS, with `[cluster]`) cannot be reached: nothing was done;
    /// retry when it is back (host-only, like `cancelled`).
    Unavailable,
    /// A write's later transaction failed after earlier ones were mined: the message names
    /// every hash; the plan is half done and must not be retried as it is (host-only).
    PartiallyExecuted,
    /// The configured confirmation policy (`[safety] confirm`) holds this commit until a human
    /// confirms it; nothing was sent; commit again once confirmed (host-only).
    ConfirmationRequired,
    /// The permit's time to live passed before it was committed: nothing was sent; preview
    /// again (host-only).
    Expired,
}

impl ErrorCode {
    /// The stable machine name, e.g. `limit-exceeded`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidParams => "invalid-params",
            Self::ChainNotSupported => "chain-not-supported",
            Self::NotFound => "not-found",
            Self::Rpc => "rpc",
            Self::Reverted => "reverted",
            Self::Denied => "denied",
            Self::Timeout => "timeout",
            Self::LimitExceeded => "limit-exceeded",
            Self::WalletNotConfigured => "wallet-not-configured",
            Self::Internal => "internal",
            Self::Cancelled => "cancelled",
            Self::Unavailable => "unavailable",
            Self::PartiallyExecuted => "partially-executed",
            Self::ConfirmationRequired => "confirmation-required",
            Self::Expired => "expired",
        }
    }
}

/// A typed failure with a message that says what to do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
pub struct ToolError {
    /// The kind, for an agent to branch on.
    pub code: ErrorCode,
    /// What went wrong and what to do next.
    pub message: String,
    /// Whether repeating the call later may succeed.
    pub retryable: bool,
}

impl ToolError {
    /// A non-retryable error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), retryable: false }
    }

    /// A retryable error.
    pub fn retryable(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), retryable: true }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}
