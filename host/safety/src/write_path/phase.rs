//! The phase and the emergency halt: what a write may do now, lowered by an agent (fleet-wide
//! with `[cluster]`), halted by an agent, lifted only by the operator's `bardo resume`.

use super::{WritePath, denied, permit_error};
use crate::audit_log::AuditEvent;
use crate::permit::{Halt, PermitError};
use bardo_core::error::ToolError;
use bardo_core::sync::{read, write};
use bardo_core::tool::Phase;

impl WritePath {
    /// The current phase: terminal while an emergency halt is in force (here or in another
    /// process sharing the permit file), else the one set.
    pub fn phase(&self) -> Phase {
        match self.controls() {
            Ok((None, phase)) => phase,
            // A store that cannot be read counts as halted: writes fail closed.
            Ok((Some(_), _)) | Err(_) => Phase::Terminal,
        }
    }

    /// The halt in force, if any, and the phase as set (see [`Self::phase_as_set`]): one read
    /// of the store.
    pub(super) fn controls(&self) -> Result<(Option<Halt>, Phase), PermitError> {
        let (halt, fleet) = self.permits.controls()?;
        let own = *read(&self.phase);
        Ok((halt, fleet.map_or(own, |f| lowest(own, f))))
    }

    /// The phase set by the operator or lowered by an agent (with `[cluster]`, by any host's
    /// agent), whether or not halted. A fleet phase that cannot be read counts as terminal.
    pub(super) fn phase_as_set(&self) -> Phase {
        self.controls().map_or(Phase::Terminal, |(_, phase)| phase)
    }

    /// Set the phase, in either direction: the operator's (`[safety] phase` in bardo.toml, at
    /// start). An agent only lowers it, through [`Self::lower_phase`].
    pub fn set_phase(&self, phase: Phase) {
        *write(&self.phase) = phase;
    }

    /// Move the phase towards terminal (thriving → cautious → defensive → survival), as the
    /// agent's directives may. Raising it is refused (`denied`): only the operator raises it.
    /// With `[cluster]` the phase is lowered for the whole fleet (an operator's `bardo resume`
    /// lifts it again).
    pub fn lower_phase(&self, phase: Phase) -> Result<(), ToolError> {
        let mut own = write(&self.phase);
        let (halt, fleet) = self.permits.controls().map_err(permit_error)?;
        if let Some(halt) = halt {
            return Err(permit_error(halt.refusal()));
        }
        let current = fleet.map_or(*own, |f| lowest(*own, f));
        if severity(phase) < severity(current) {
            let how = if fleet.is_some() {
                "run `bardo resume`"
            } else {
                "set `[safety] phase` in bardo.toml and restart"
            };
            return Err(denied(format!(
                "the phase is {} and only the operator can raise it (to {}): {how}",
                phase_name(current),
                phase_name(phase)
            )));
        }
        let shared = self
            .permits
            .change_fleet_phase(|lowered| {
                if lowered.is_none_or(|l| severity(phase) > severity(l)) {
                    *lowered = Some(phase);
                }
            })
            .map_err(permit_error)?;
        if shared.is_none() {
            *own = phase;
        }
        Ok(())
    }

    /// Refuse (`denied`) while an emergency halt is in force, set here or by another process
    /// sharing the permit file.
    pub(super) fn refuse_if_halted(&self) -> Result<(), ToolError> {
        match self.permits.halted().map_err(permit_error)? {
            Some(halt) => Err(permit_error(halt.refusal())),
            None => Ok(()),
        }
    }

    /// Emergency halt: kept in the permit store (seen by every process sharing its file, and
    /// after a restart), every open permit revoked in the same locked step; the phase reads
    /// terminal and previews and commits are refused until an operator runs `bardo resume`.
    pub fn halt(&self, reason: &str) -> Result<Vec<String>, ToolError> {
        let revoked = self.permits.halt(reason, (self.clock)()).map_err(permit_error)?;
        for id in &revoked {
            self.settle(id, false);
        }
        self.log(AuditEvent::Halted { reason: reason.to_owned(), revoked: revoked.clone() })?;
        Ok(revoked)
    }

    /// Stop on tampering with the stores (`reason`): with `[cluster]` this host halts itself on
    /// its local anchor (only `bardo fleet reanchor` lifts it), and the halt is set in the store
    /// too, for the processes and hosts that share it (best effort: the store is suspect).
    pub(super) fn halt_tampered(&self, reason: &str) {
        if let Some(cluster) = self.audit.cluster() {
            cluster.halt_tampered(reason);
        }
        if let Err(e) = self.halt(&format!("tampering: {reason}")) {
            tracing::error!("cannot set the halt in the store ({e}); {reason}");
        }
    }

    /// Lift an emergency halt (the operator's `bardo resume`, never an agent's), and with
    /// `[cluster]` the phase agents lowered fleet-wide; returns whether either was in force.
    /// The phase is again the one set; revoked permits stay revoked.
    pub fn resume(&self) -> Result<bool, ToolError> {
        // With `[cluster]` the phase agents lowered fleet-wide goes too: each host is back at
        // its own `[safety] phase`.
        let lowered =
            self.permits.change_fleet_phase(|lowered| lowered.take().is_some()).map_err(permit_error)?;
        let Some(halt) = self.permits.resume().map_err(permit_error)? else {
            return Ok(lowered == Some(true));
        };
        self.log(AuditEvent::Resumed { reason: halt.reason, halted_at_ms: halt.at_ms })?;
        Ok(true)
    }
}

/// How far towards terminal a phase is: an agent may only move it up this scale.
pub(super) fn severity(phase: Phase) -> u8 {
    match phase {
        Phase::Thriving => 0,
        Phase::Cautious => 1,
        Phase::Defensive => 2,
        Phase::Survival => 3,
        Phase::Terminal => 4,
    }
}

/// The nearer to terminal of two phases.
fn lowest(a: Phase, b: Phase) -> Phase {
    if severity(a) >= severity(b) { a } else { b }
}

/// A phase as bardo.toml and directives spell it.
fn phase_name(phase: Phase) -> String {
    format!("{phase:?}").to_lowercase()
}
