//! `Capability<T>`: proof, checked by the compiler, that the safety chain permitted `T`.
//!
//! Only this module's parent can mint one (`pub(crate)` constructor used by `safety::commit`);
//! it is neither `Clone`, `Copy` nor `Default`; and the one function that broadcasts takes it by
//! value, so a permitted write executes at most once and an unpermitted one cannot be expressed.

/// A single-use authorization to execute `T`.
#[derive(Debug)]
pub struct Capability<T> {
    inner: T,
}

impl<T> Capability<T> {
    /// Mint: only the commit path of the safety chain calls this, after every check passed.
    pub(super) fn mint(inner: T) -> Self {
        Self { inner }
    }

    /// Give up the capability and take what it authorizes (consumes it).
    pub(crate) fn into_inner(self) -> T {
        self.inner
    }

    /// What it authorizes, read only.
    pub fn get(&self) -> &T {
        &self.inner
    }
}
