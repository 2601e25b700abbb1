//! The only way to reach the chain with a write: it takes a [`Capability`] and consumes it.
//! Write-ahead: each transaction is signed here, and its record — permit, step, nonce, hash and
//! the signed bytes — is durable in the audit log (the file synced, the fleet's stream
//! acknowledged) before the bytes leave the host; a transaction whose record cannot be made is
//! not sent. After a crash, [`super::sends`] resolves every recorded send against the chain.

use super::Approved;
use super::capability::Capability;
use crate::audit_log::AuditEvent;
use crate::permit::ActionPermit;
use alloy::eips::eip2718::Encodable2718;
use alloy::network::{NetworkTransactionBuilder, TransactionBuilder};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use bardo_core::error::{ErrorCode, ToolError};
use bardo_evm::SimCall;
use bardo_runtime::Services;

/// What was sent: the permit, a receipt per transaction, and the records the audit log could
/// not take meanwhile (sending goes on: a half-sent plan is worse than a missing record).
pub(super) type Sent = (ActionPermit, Vec<TransactionReceipt>, Vec<String>);

/// Sign and send the permitted calls in order, from nonce `nonce` on, each recorded before it
/// is sent and waited for (unless `cancelled` says stop before the first); stop at a revert. The only way to reach the chain with a write: it
/// needs the capability, and consumes it. A call that fails after earlier ones were mined is
/// `partially-executed`, naming every hash; one whose record could not be made is not sent.
pub(super) fn broadcast(
    capability: Capability<Approved>,
    services: &Services,
    nonce: u64,
    cancelled: &dyn Fn() -> Option<ToolError>,
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
    let provider = ProviderBuilder::new().connect_http(url);
    let signer = wallet.transaction_signer();
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
    let steps = u32::try_from(transactions.len()).unwrap_or(u32::MAX);
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
            .with_chain_id(permit.chain_id)
            .with_nonce(nonce + i as u64);
        let signed = chains.block_on(async {
            let fees = provider.estimate_eip1559_fees().await.map_err(|e| e.to_string())?;
            let tx = tx
                .max_fee_per_gas(fees.max_fee_per_gas)
                .max_priority_fee_per_gas(fees.max_priority_fee_per_gas);
            tx.build(&signer).await.map_err(|e| e.to_string())
        });
        let envelope = signed
            .map_err(|e| failed(&receipts, ErrorCode::Rpc, format!("signing `{}`: {e}", describe(i))))?;
        let raw = envelope.encoded_2718();
        let hash = *envelope.tx_hash();
        // The caller may still stop it before its first transaction; once one is out, the rest
        // of the plan follows (a half-sent plan is worse).
        if i == 0
            && let Some(stopped) = cancelled()
        {
            return Err(stopped);
        }
        // Write-ahead: nothing leaves the host that the log does not hold first.
        let ahead = AuditEvent::TransactionSigned {
            permit_id: permit.permit_id.clone(),
            step: i as u32,
            steps,
            chain_id: permit.chain_id,
            from: sender.to_checksum(None),
            nonce: nonce + i as u64,
            tx_hash: hash.to_string(),
            raw: alloy::hex::encode_prefixed(&raw),
        };
        record(ahead).map_err(|e| {
            failed(
                &receipts,
                if receipts.is_empty() { e.code } else { ErrorCode::PartiallyExecuted },
                format!("`{}` was not sent: its record could not be written ({})", describe(i), e.message),
            )
        })?;
        crate::failpoint::hit_at(&permit.permit_id, "signed", i);
        let receipt = chains
            .block_on(async {
                let pending = provider.send_raw_transaction(&raw).await?;
                crate::failpoint::hit_at(&permit.permit_id, "sent", i);
                pending.get_receipt().await
            })
            .map_err(|e| {
                let sent = format!(
                    "sending `{}` (transaction {hash}, recorded: a restart resolves it against the chain): {e}",
                    describe(i)
                );
                failed(&receipts, ErrorCode::Rpc, sent)
            })?;
        crate::failpoint::hit_at(&permit.permit_id, "mined", i);
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
