//! One sender per wallet: a commit sends its transactions only while it holds its wallet's
//! lease, so their nonces are consecutive and no other commit's transaction takes one of them
//! (two senders both reading the pending nonce send two transactions with the same nonce; one
//! fails with "nonce too low" after the other's plan was half sent). In this process a busy
//! set; with the permit files also an exclusive lock on a file per wallet; with `[cluster]` a
//! sealed document per wallet naming its holder until a time, renewed while it sends, taken
//! over only once lapsed (its holder died).

use super::{PermitError, Permits, Store, millis_since_epoch};
use alloy::primitives::Address;
use bardo_core::sync::lock;
use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// The wallets this process is sending for.
#[derive(Debug, Default)]
pub(super) struct Busy {
    wallets: Mutex<BTreeSet<String>>,
    freed: Condvar,
}

/// The right to send for one wallet, released on drop.
pub struct WalletLease<'a> {
    permits: &'a Permits,
    name: String,
    holder: String,
    /// With the permit files: the wallet's lock file, locked.
    file: Option<std::fs::File>,
}

/// A fleet document naming a wallet's sender.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Holder {
    pub(super) holder: String,
    pub(super) until_ms: u64,
}

impl Permits {
    /// Wait (at most `wait`) for the right to send for `wallet` on `chain` as `holder` (a write
    /// path's instance), held until `until` unless renewed ([`WalletLease::renew`]).
    pub fn wallet_lease(
        &self,
        chain: u64,
        wallet: Address,
        holder: &str,
        until: impl Fn() -> SystemTime,
        wait: Duration,
    ) -> Result<WalletLease<'_>, PermitError> {
        let name = format!("{chain}-{}", wallet.to_string().to_lowercase());
        let deadline = Instant::now() + wait;
        let busy = || {
            PermitError::Unavailable(format!(
                "another commit is sending for wallet {wallet} on chain {chain} and did not finish within {} s; nothing was sent, preview again",
                wait.as_secs()
            ))
        };
        // This process first: its own commits queue here, not on the store.
        {
            let mut wallets = lock(&self.busy.wallets);
            while wallets.contains(&name) {
                let left = deadline.checked_duration_since(Instant::now()).ok_or_else(busy)?;
                wallets = self
                    .busy
                    .freed
                    .wait_timeout(wallets, left)
                    .map(|(w, _)| w)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            wallets.insert(name.clone());
        }
        let mut lease = WalletLease { permits: self, name, holder: holder.to_owned(), file: None };
        match &self.store {
            Store::Memory(_) => {}
            Store::Files(files) => {
                let file = files.wallet_lock(&lease.name).map_err(PermitError::Store)?;
                loop {
                    match file.try_lock() {
                        Ok(()) => break,
                        Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        Err(std::fs::TryLockError::WouldBlock) => return Err(busy()),
                        Err(std::fs::TryLockError::Error(e)) => {
                            return Err(PermitError::Store(e.to_string()));
                        }
                    }
                }
                lease.file = Some(file);
            }
            Store::Cluster(shared) => loop {
                let now = millis_since_epoch(SystemTime::now());
                let claim = Holder { holder: lease.holder.clone(), until_ms: millis_since_epoch(until()) };
                if shared.claim_wallet(&lease.name, &claim, now)? {
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(busy());
                }
                std::thread::sleep(Duration::from_millis(50));
            },
        }
        Ok(lease)
    }
}

impl WalletLease<'_> {
    /// Hold it until `until` (a fleet's lease lapses unless renewed).
    pub fn renew(&self, until: SystemTime) -> Result<(), PermitError> {
        if let Store::Cluster(shared) = &self.permits.store {
            let claim = Holder { holder: self.holder.clone(), until_ms: millis_since_epoch(until) };
            shared.renew_wallet(&self.name, &claim)?;
        }
        Ok(())
    }
}

impl Drop for WalletLease<'_> {
    fn drop(&mut self) {
        if let Store::Cluster(shared) = &self.permits.store
            && let Err(e) = shared.release_wallet(&self.name, &self.holder)
        {
            tracing::warn!("wallet {}: cannot release its lease ({e}); it lapses", self.name);
        }
        if let Some(file) = self.file.take() {
            let _ = file.unlock();
        }
        lock(&self.permits.busy.wallets).remove(&self.name);
        self.permits.busy.freed.notify_all();
    }
}
