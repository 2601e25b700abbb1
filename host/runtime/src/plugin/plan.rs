//! Write tools, plugin side: ask for a plan, and later for the actual outcome read from the
//! receipts. Nothing here signs or sends; executing a plan is the write path's job.

use super::{Host, call, check_params};
use crate::caps::chain::wit_receipt;
use crate::caps::convert;
use alloy::rpc::types::TransactionReceipt;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::tool::{CapabilityTier, WritePlan};
use std::sync::Arc;

impl Host {
    /// The catalog entry and write exports serving write tool `tool`, params size checked.
    fn writer(
        &self,
        tool: &str,
        params_json: &str,
    ) -> Result<(&super::CatalogEntry, &super::code::Code, &super::write::GuestIndices), ToolError> {
        let entry = self.entry(tool, CapabilityTier::Write)?;
        check_params(entry, tool, params_json)?;
        let code = entry.plugin.code()?;
        let indices = code.write.as_ref().ok_or_else(|| {
            ToolError::new(
                ErrorCode::Internal,
                format!("plugin `{}` declares write tools but exports no `write`", entry.plugin.name),
            )
        })?;
        Ok((entry, code, indices))
    }

    /// Plan write tool `tool` with JSON params, in a fresh instance under the limits.
    pub fn plan(&self, tool: &str, params_json: &str) -> call::CallReport<WritePlan> {
        self.plan_control(tool, params_json, None)
    }

    /// [`Self::plan`] with a caller's control (progress as it happens, cancel).
    pub fn plan_with(
        &self,
        tool: &str,
        params_json: &str,
        control: &Arc<super::CallControl>,
    ) -> call::CallReport<WritePlan> {
        self.plan_control(tool, params_json, Some(control))
    }

    fn plan_control(
        &self,
        tool: &str,
        params_json: &str,
        control: Option<&Arc<super::CallControl>>,
    ) -> call::CallReport<WritePlan> {
        let (entry, code, indices) = match self.writer(tool, params_json) {
            Ok(found) => found,
            Err(e) => return call::CallReport::refused(e),
        };
        let plugin = &entry.plugin;
        let control = control.map(|c| (c, entry.def.progress_steps.as_slice()));
        let report = call::run_with(
            &self.env(),
            &code.instances,
            &plugin.name,
            tool,
            entry.def.tick_budget,
            control,
            |store, instance| {
                let guest = indices.load(&mut *store, instance)?;
                let answer = guest.call_plan(&mut *store, &entry.guest_name, params_json)?;
                let max = self.limits().plan_max_bytes;
                Ok(answer.map_err(convert::tool_error).and_then(|plan| {
                    let size = convert::plan_size(&plan);
                    if size > max {
                        return Err(ToolError::new(
                            ErrorCode::LimitExceeded,
                            format!(
                                "plugin `{}` returned a plan of {size} bytes for `{tool}`, over the {max} byte limit ([limits] plan_max_bytes); it was neither parsed nor stored",
                                plugin.name
                            ),
                        ));
                    }
                    convert::write_plan(plan).map_err(|reason| {
                        ToolError::new(
                            ErrorCode::Internal,
                            format!(
                                "plugin `{}` returned an unusable plan for `{tool}`: {reason}",
                                plugin.name
                            ),
                        )
                    })
                }))
            },
        );
        report.host_chain_first(self.services(), params_json)
    }

    /// The actual outcome of an executed plan of `tool`, as the plugin reads it from the
    /// receipts (mined on `chain`, in plan order).
    pub fn verify(
        &self,
        tool: &str,
        params_json: &str,
        chain: u64,
        receipts: &[TransactionReceipt],
    ) -> call::CallReport<serde_json::Value> {
        let (entry, _, indices) = match self.writer(tool, params_json) {
            Ok(found) => found,
            Err(e) => return call::CallReport::refused(e),
        };
        let plugin = &entry.plugin;
        let receipts: Vec<_> = receipts.iter().map(|r| wit_receipt(chain, r)).collect();
        let limits = &self.limits;
        self.run_entry(entry, tool, |store, instance| {
            let guest = indices.load(&mut *store, instance)?;
            let answer = guest.call_verify(&mut *store, &entry.guest_name, params_json, &receipts)?;
            Ok(answer.map_err(convert::tool_error).and_then(|json| {
                let json = call::cap_result(json, limits, &plugin.name, tool)?;
                serde_json::from_str(&json).map_err(|e| {
                    ToolError::new(
                        ErrorCode::Internal,
                        format!(
                            "plugin `{}` verified `{tool}` with output that is not JSON: {e}",
                            plugin.name
                        ),
                    )
                })
            }))
        })
    }
}
