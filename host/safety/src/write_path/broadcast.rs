//! The only way to reach the chain with a write: it takes a [`Capability`] and consumes it.

use super::Approved;
use super::capability::Capability;
use crate::audit_log::AuditEvent;
use crate::permit::ActionPermit;
use alloy::network::TransactionBuilder;
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use bardo_core::error::{ErrorCode, ToolError};
use bardo_evm::SimCall;
use bardo_runtime::Services;

/// What was sent: the permit, a receipt per transaction, and the records the audit log could
/// not take meanwhile (sending goes on: a half-sent plan is worse than a missing record).
pub(super) type Sent = (ActionPermit, Vec<TransactionReceipt>, Vec<String>);

/// Sign and send the permitted calls in order, waiting for each receipt; stop at a revert. The
/// only way to reach the chain with a write: it needs the capability, and consumes it. A call
/// that fails after earlier ones were mined is `partially-executed`, naming every hash.
pub(super) fn broadcast(
    capability: Capability<Approved>,
    services: &Services,
    record: &dyn Fn(AuditEvent) -> Result<(), ToolError>,
) -> Result<Sent, ToolError> {
    let Approved { permit, gas } = capability.into_inner();
    let no_wallet =
        || ToolError::new(ErrorCode::WalletNotConfigured, "no wallet is configured; nothing was sent");
    let wallet = services.evm.wallet.as_ref().ok_or_else(no_wallet)?;
    let chains = &services.evm.chains;
    let client = chains
        .get(permit.chain_id)
        .map_err(|e| ToolError::new(ErrorCode::ChainNotSupported, e.to_string()))?;
    let url =
        client.rpc_url().parse().map_err(|e| ToolError::new(ErrorCode::Internal, format!("rpc url: {e}")))?;
    let provider = ProviderBuilder::new().wallet(wallet.transaction_signer()).connect_http(url);
    // What the simulation ran: the calls, or through a Safe one transaction of them all.
    let calls: Vec<SimCall> = permit.plan.calls.iter().map(SimCall::from).collect();
    let (sender, transactions) = services.evm.transactions(permit.sender, &calls);
    if sender != wallet.address() {
        return Err(ToolError::new(
            ErrorCode::Denied,
            format!(
                "permit `{}` is for {}, which this host's key does not sign for; nothing was sent",
                permit.permit_id, permit.sender
            ),
        ));
    }
    let safe = services.evm.safe_of(permit.sender);
    let describe = |i: usize| match safe {
        Some(_) => format!("the Safe transaction of {} calls", permit.plan.calls.len()),
        None => permit.plan.calls[i].description.clone(),
    };
    let mut receipts: Vec<TransactionReceipt> = Vec::with_capacity(transactions.len());
    let mut unrecorded = Vec::new();
    // The error of a call after others were mined says what is on chain.
    let failed = |receipts: &[TransactionReceipt], code: ErrorCode, message: String| {
        if receipts.is_empty() {
            return ToolError::new(code, message);
        }
        let mined: Vec<String> = receipts.iter().map(|r| r.transaction_hash.to_string()).collect();
        ToolError::new(
            ErrorCode::PartiallyExecuted,
            format!(
                "{message}, after {} of {} transactions were mined ({}); the plan is half done: read the wallet's state before planning again",
                receipts.len(),
                transactions.len(),
                mined.join(", ")
            ),
        )
    };
    for (i, call) in transactions.iter().enumerate() {
        // The simulated gas plus a quarter: storage writes that depend on the block timestamp
        // (a V3 oracle observation, interest accrual) can cost more one second later.
        let limit = gas.get(i).map_or(1_000_000, |g| g * 5 / 4 + 20_000);
        let tx = TransactionRequest::default()
            .from(sender)
            .to(call.to)
            .with_input(call.data.clone())
            .value(call.value)
            .with_gas_limit(limit)
            .with_chain_id(permit.chain_id);
        let receipt = chains
            .block_on(async { provider.send_transaction(tx).await?.get_receipt().await })
            .map_err(|e| failed(&receipts, ErrorCode::Rpc, format!("sending `{}`: {e}", describe(i))))?;
        // A module's Safe transaction is mined even when its batch failed (and undone).
        let batch_failed =
            safe.is_some_and(|s| s.batch_failed(receipt.inner.logs().iter().map(|l| &l.inner)));
        let executed = AuditEvent::ActionExecuted {
            permit_id: permit.permit_id.clone(),
            tx_hash: receipt.transaction_hash.to_string(),
            gas_used: receipt.gas_used,
            success: receipt.status() && !batch_failed,
        };
        if let Err(e) = record(executed) {
            tracing::error!(
                "{}: transaction {} was not recorded: {e}",
                permit.permit_id,
                receipt.transaction_hash
            );
            unrecorded.push(format!("ActionExecuted {}: {}", receipt.transaction_hash, e.message));
        }
        if batch_failed {
            return Err(failed(
                &receipts,
                ErrorCode::Reverted,
                format!(
                    "`{}` ran none of its calls on chain: the Safe logged ExecutionFromModuleFailure (transaction {})",
                    describe(i),
                    receipt.transaction_hash
                ),
            ));
        }
        let ok = receipt.status();
        if !ok {
            return Err(failed(
                &receipts,
                ErrorCode::Reverted,
                format!("`{}` reverted on chain (transaction {})", describe(i), receipt.transaction_hash),
            ));
        }
        receipts.push(receipt);
    }
    Ok((permit, receipts, unrecorded))
}
