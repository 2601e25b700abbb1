//! Constructors for the typed [`Error`]: every error names its kind and says what to do next.

use crate::{Error, ErrorCode};

/// An error of kind `code` that is not worth retrying.
pub fn error(code: ErrorCode, message: impl Into<String>) -> Error {
    Error { code, message: message.into(), retryable: false }
}

/// The params are wrong; `message` should say which field and what is expected.
pub fn invalid_params(message: impl Into<String>) -> Error {
    error(ErrorCode::InvalidParams, message)
}

/// The thing asked for does not exist.
pub fn not_found(message: impl Into<String>) -> Error {
    error(ErrorCode::NotFound, message)
}

/// The plugin failed in a way that is not the caller's fault.
pub fn internal(message: impl Into<String>) -> Error {
    error(ErrorCode::Internal, message)
}

/// The host asked for a tool this plugin does not implement.
pub fn unknown_tool(tool: &str) -> Error {
    not_found(format!("this plugin has no tool `{tool}`; list the tools with `bardo tools`"))
}

/// The chain is not one this plugin (or host) has configuration for.
pub fn chain_not_supported(message: impl Into<String>) -> Error {
    error(ErrorCode::ChainNotSupported, message)
}
