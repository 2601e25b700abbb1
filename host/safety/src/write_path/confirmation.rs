//! Confirmation by policy (`[safety] confirm`): which open permits wait for a person, what that
//! person is shown, and their answer — counted only through the channels the operator accepts
//! (`via`), recorded in the permit store (so `y` in one process's `bardo tui` releases a commit
//! another process's door waits on) and audited with its channel. Whether a permit waits is
//! sealed into it at preview; the commit refuses an unconfirmed permit
//! (`confirmation-required`), whichever door asks and whatever that door's own policy.

use super::{WritePath, permit_error};
use crate::audit_log::AuditEvent;
use crate::confirm::{Channel, ConfirmPolicy};
use crate::permit::ActionPermit;
use bardo_core::error::{ErrorCode, ToolError};
use std::time::Duration;

/// An open permit the policy holds until a person confirms it.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The permit, as sealed.
    pub permit: ActionPermit,
    /// The policy that holds it (`confirm = "always"`).
    pub policy: String,
    /// How long it stays valid.
    pub expires_in: Duration,
}

impl Pending {
    /// What a person is asked, from the host's own simulation and prices (not the plugin's
    /// account): kind, what leaves and reaches the wallet with USD values, the contracts the
    /// plan calls, risk and expiry.
    pub fn summary(&self) -> String {
        let p = &self.permit;
        let mut lines = vec![format!(
            "Confirm `{}` on chain {} (permit {}), planned by `{}`, risk {}:",
            p.kind,
            p.chain_id,
            p.permit_id,
            p.tool,
            serde_json::to_value(p.risk_tier)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        )];
        for change in &p.balance_changes {
            let usd = change.usd.map_or_else(|| "no trusted price".to_owned(), |u| format!("{u:+.2} USD"));
            let way = if change.delta.starts_with('-') { "out" } else { "in" };
            let token = change.asset.map(|a| format!(", token {}", a.to_checksum(None))).unwrap_or_default();
            lines.push(format!("  {way}: {} ({usd}{token})", change.amount()));
        }
        lines.push(match p.spend_usd {
            Some(usd) => {
                format!("  spends {usd:.2} USD (outflows and allowances left, at the host's prices)")
            }
            None => "  its spend could not be valued at the host's prices".to_owned(),
        });
        let mut targets: Vec<String> = p.plan.calls.iter().map(|c| c.to.to_checksum(None)).collect();
        targets.dedup();
        lines.push(format!("  calls: {}", targets.join(", ")));
        lines.push(format!(
            "  expires in {} s; held by {} in [safety]",
            self.expires_in.as_secs(),
            self.policy
        ));
        lines.join("\n")
    }
}

impl WritePath {
    /// Hold commits to `policy` (the configured `[safety] confirm` for this host's profile).
    pub fn with_confirm_policy(mut self, policy: ConfirmPolicy) -> Self {
        self.confirm = policy;
        self
    }

    /// Count a person's confirmation only through `via` (`[safety.confirm] via`).
    pub fn with_confirm_via(mut self, via: Vec<Channel>) -> Self {
        self.via = via;
        self
    }

    /// The confirmation policy in force.
    pub fn confirm_policy(&self) -> ConfirmPolicy {
        self.confirm
    }

    /// Whether a confirmation through `channel` counts here.
    pub fn accepts_confirmation_via(&self, channel: Channel) -> bool {
        self.via.contains(&channel)
    }

    /// The policy that holds a plan spending `spend_usd` on this host, if it does: what a
    /// preview seals into its permit.
    pub(super) fn holds_spend(&self, spend_usd: Option<f64>) -> Option<String> {
        self.confirm.requires(spend_usd).then(|| self.confirm.to_string())
    }

    /// The policy that holds `permit`, if one does: the one sealed into it at preview, else this
    /// host's own (a permit previewed before the host's policy was tightened waits too).
    pub(super) fn holds(&self, permit: &ActionPermit) -> Option<String> {
        permit.confirmation.clone().or_else(|| self.holds_spend(permit.spend_usd))
    }

    /// Whether open permit `permit_id` waits for a person: None when no policy holds it or
    /// someone confirmed it already; an error when it is not open.
    pub fn pending_confirmation(&self, permit_id: &str) -> Result<Option<Pending>, ToolError> {
        let now = (self.clock)();
        let (permit, confirmed_by) = self.permits.open_permit(permit_id, now).map_err(permit_error)?;
        let Some(policy) = self.holds(&permit).filter(|_| confirmed_by.is_none()) else {
            return Ok(None);
        };
        let expires_in = (permit.created_at + permit.ttl).duration_since(now).unwrap_or_default();
        Ok(Some(Pending { permit, policy, expires_in }))
    }

    /// The last `n` audit records, oldest first, each as its JSON (for the approval page).
    pub fn recent_audit(&self, n: usize) -> Result<Vec<serde_json::Value>, ToolError> {
        let lines = self.audit.lines().map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string()))?;
        Ok(lines[lines.len().saturating_sub(n)..]
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect())
    }

    /// Why permit `permit_id` is no longer open (used, cancelled, revoked, expired), if it is not:
    /// for a door waiting on it, which another door may have committed or cancelled.
    pub fn permit_closed(&self, permit_id: &str) -> Option<crate::permit::PermitError> {
        self.permits.open_permit(permit_id, (self.clock)()).err()
    }

    /// Who confirmed open permit `permit_id`, if anyone has.
    pub fn confirmed_by(&self, permit_id: &str) -> Result<Option<String>, ToolError> {
        let (_, by) = self.permits.open_permit(permit_id, (self.clock)()).map_err(permit_error)?;
        Ok(by)
    }

    /// A person (`by`, as `channel` knows them) confirmed open permit `permit_id`: any commit
    /// of it may now proceed. Refused (`denied`) through a channel the operator does not accept.
    /// Audited with the channel.
    pub fn confirm(&self, permit_id: &str, channel: Channel, by: &str) -> Result<(), ToolError> {
        if !self.accepts_confirmation_via(channel) {
            let via: Vec<&str> = self.via.iter().map(|c| c.as_str()).collect();
            return Err(ToolError::new(
                ErrorCode::Denied,
                format!(
                    "a confirmation through {channel} does not count on this host ([safety.confirm] via = {via:?}): \
                     whoever can answer there may be the agent itself. The operator confirms permit `{permit_id}` \
                     with `bardo confirm {permit_id}` or in `bardo tui`; add \"{channel}\" to via only where a \
                     person, not an agent, answers it"
                ),
            ));
        }
        self.permits.confirm(permit_id, by, (self.clock)()).map_err(permit_error)?;
        self.log(AuditEvent::PermitConfirmed {
            permit_id: permit_id.to_owned(),
            by: by.to_owned(),
            channel: Some(channel.as_str().to_owned()),
        })
    }

    /// The person asked through `by` declined permit `permit_id` (it is cancelled: nothing is
    /// sent, its spend released), or no answer came in time (`timed_out`: it stays open for
    /// another front end). Audited; the error is what the caller of the commit is told.
    pub fn declined(&self, permit_id: &str, by: &str, timed_out: bool) -> ToolError {
        self.declined_because(permit_id, by, timed_out, None)
    }

    /// [`Self::declined`], with the person's reason on record.
    pub fn declined_because(
        &self,
        permit_id: &str,
        by: &str,
        timed_out: bool,
        reason: Option<&str>,
    ) -> ToolError {
        if let Err(e) = self.log(AuditEvent::ConfirmationDeclined {
            permit_id: permit_id.to_owned(),
            by: by.to_owned(),
            timed_out,
            reason: reason.map(str::to_owned),
        }) {
            return e;
        }
        if timed_out {
            return ToolError::retryable(
                ErrorCode::ConfirmationRequired,
                format!(
                    "no one confirmed permit `{permit_id}` through {by} in time; nothing was sent. It stays open \
                     until it expires: confirm it in `bardo tui` (y) or with `bardo confirm {permit_id}`, then \
                     commit again"
                ),
            );
        }
        if let Err(e) = self.cancel(permit_id) {
            tracing::warn!("cancelling declined permit {permit_id}: {e}");
        }
        ToolError::new(
            ErrorCode::Denied,
            format!(
                "the person asked through {by} declined permit `{permit_id}`; it is cancelled and nothing was sent"
            ),
        )
    }
}
