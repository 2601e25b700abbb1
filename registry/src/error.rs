//! Registry errors: each says what failed and what to do.

/// Why a publish, pull or signature check failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("invalid reference `{reference}`: {reason}")]
    Reference { reference: String, reason: String },
    #[error(
        "registry {registry} is unreachable: {reason}; check that it is running, or list it under [registry] insecure if it speaks plain HTTP"
    )]
    Unreachable { registry: String, reason: String },
    #[error("{reference} was not found in the registry: {reason}")]
    NotFound { reference: String, reason: String },
    #[error(
        "{what} of {reference} does not match its digest: expected {expected}, got {actual}; the registry's copy was altered — do not use it"
    )]
    Tampered { reference: String, what: String, expected: String, actual: String },
    #[error("{reference} is not a Wasm component artifact: {reason}")]
    Layout { reference: String, reason: String },
    #[error("{reference} has no signature (no `{tag}` tag); the trust policy requires one from {signers}")]
    Unsigned { reference: String, tag: String, signers: String },
    #[error("{reference}: {reason}")]
    BadSignature { reference: String, reason: String },
    #[error("key {path}: {reason}")]
    Key { path: String, reason: String },
    #[error(
        "registry {registry} refused access to {reference}: {reason}; give its login under [[registry.auth]] (registry, username, password_env) or with `docker login {registry}`"
    )]
    Unauthorized { registry: String, reference: String, reason: String },
    #[error("registry request for {reference} failed: {reason}")]
    Request { reference: String, reason: String },
}

impl RegistryError {
    /// Whether the registry could not be reached at all (a cached copy may stand in).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Self::Unreachable { .. })
    }

    /// Classify an OCI client error for `reference`.
    pub(crate) fn from_oci(
        reference: &oci_client::Reference,
        e: oci_client::errors::OciDistributionError,
    ) -> Self {
        use oci_client::errors::{OciDistributionError as E, OciErrorCode as C};
        let whole = reference.whole();
        match e {
            E::RequestError(r) if r.is_connect() || r.is_timeout() || r.is_request() => {
                Self::Unreachable { registry: reference.registry().to_owned(), reason: chain(&r) }
            }
            E::UnauthorizedError { url } => Self::unauthorized(reference, format!("{url} answered 401")),
            E::AuthenticationFailure(reason) => Self::unauthorized(reference, reason),
            E::ServerError { code: code @ (401 | 403), message, .. } => {
                Self::unauthorized(reference, format!("{code} {message}"))
            }
            E::RegistryError { ref envelope, .. } if any_code(envelope, &[C::Unauthorized, C::Denied]) => {
                Self::unauthorized(reference, e.to_string())
            }
            E::ImageManifestNotFoundError(reason) => Self::NotFound { reference: whole, reason },
            E::ServerError { code: 404, message, .. } => Self::NotFound { reference: whole, reason: message },
            E::RegistryError { ref envelope, .. }
                if any_code(envelope, &[C::ManifestUnknown, C::BlobUnknown, C::NameUnknown]) =>
            {
                Self::NotFound { reference: whole, reason: e.to_string() }
            }
            E::DigestError(d) => Self::Tampered {
                reference: whole,
                what: "a blob".into(),
                expected: String::new(),
                actual: d.to_string(),
            },
            other => Self::Request { reference: whole, reason: other.to_string() },
        }
    }
}

impl RegistryError {
    pub(crate) fn unauthorized(reference: &oci_client::Reference, reason: String) -> Self {
        Self::Unauthorized { registry: reference.registry().to_owned(), reference: reference.whole(), reason }
    }
}

/// Whether the registry's error envelope carries one of `codes`.
fn any_code(envelope: &oci_client::errors::OciEnvelope, codes: &[oci_client::errors::OciErrorCode]) -> bool {
    envelope.errors.iter().any(|x| codes.contains(&x.code))
}

/// An error and its causes on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
