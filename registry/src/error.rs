//! Registry errors: each says what failed and what to do.

/// Why a publish, pull or signature check failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The text is not an image reference.
    #[error("invalid reference `{reference}`: {reason}")]
    Reference {
        /// The text as given.
        reference: String,
        /// Why it does not parse, and the expected form.
        reason: String,
    },
    /// The registry could not be connected to.
    #[error(
        "registry {registry} is unreachable: {reason}; check that it is running, or list it under [registry] insecure if it speaks plain HTTP"
    )]
    Unreachable {
        /// The registry host (`host[:port]`).
        registry: String,
        /// The connection error and its causes.
        reason: String,
    },
    /// The manifest, tag, blob or repository does not exist.
    #[error("{reference} was not found in the registry: {reason}")]
    NotFound {
        /// The reference asked for.
        reference: String,
        /// The registry's answer.
        reason: String,
    },
    /// Bytes the registry sent do not match their digest.
    #[error(
        "{what} of {reference} does not match its digest: expected {expected}, got {actual}; the registry's copy was altered — do not use it"
    )]
    Tampered {
        /// The artifact's reference.
        reference: String,
        /// The part that did not match (`the manifest`, `the component layer`, a blob).
        what: String,
        /// The digest (or size) it should have had.
        expected: String,
        /// What was received instead.
        actual: String,
    },
    /// Not a Wasm component in the Wasm OCI layout, or over a size limit.
    #[error("{reference} is not a Wasm component artifact: {reason}")]
    Layout {
        /// The artifact's reference.
        reference: String,
        /// What about the layout is wrong.
        reason: String,
    },
    /// The trust policy requires a signature and the manifest has none.
    #[error("{reference} has no signature (no `{tag}` tag); the trust policy requires one from {signers}")]
    Unsigned {
        /// The artifact's reference.
        reference: String,
        /// The signature tag that was looked for.
        tag: String,
        /// The trusted signers, for the message.
        signers: String,
    },
    /// Signatures exist but none is a trusted key's signature of this manifest.
    #[error("{reference}: {reason}")]
    BadSignature {
        /// The artifact's reference.
        reference: String,
        /// Why each signature found was refused.
        reason: String,
    },
    /// A signing or verifying key could not be created or read.
    #[error("key {path}: {reason}")]
    Key {
        /// The key file (`<new>` for a key being generated).
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The registry refused the login, or the configured login's secret is unavailable.
    #[error(
        "registry {registry} refused access to {reference}: {reason}; give its login under [[registry.auth]] (registry, username, password_env) or with `docker login {registry}`"
    )]
    Unauthorized {
        /// The registry host (`host[:port]`).
        registry: String,
        /// The reference asked for.
        reference: String,
        /// The registry's answer, or why no login could be sent.
        reason: String,
    },
    /// Any other failed registry request.
    #[error("registry request for {reference} failed: {reason}")]
    Request {
        /// The reference asked for.
        reference: String,
        /// The error.
        reason: String,
    },
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
