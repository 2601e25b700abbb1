//! `commit_action` under a confirmation policy (`[safety] confirm`). An MCP client is whatever
//! calls the tools — usually the agent itself — so its answer counts only where the operator
//! opted in (`[safety.confirm] via` names `mcp-elicitation`, for a door a person faces); else the
//! commit is told to wait for the operator (`bardo confirm`, `bardo tui`, the approval page) and
//! nothing is asked. Where it counts, before the commit the client's user is asked through MCP
//! elicitation (`elicitation/create`, a form with one
//! boolean, the message the host's own summary of the permit). Accept records the confirmation
//! in the permit store; decline cancels the permit; no answer within `[mcp]
//! confirm_timeout_secs` (or the permit's expiry) leaves it open. Meanwhile a confirmation from
//! anywhere else (`bardo tui`, `bardo confirm`) releases the commit too. A client that declared
//! no elicitation capability is told what to do instead; the write path refuses the commit
//! unconfirmed whatever happens here.

use bardo_core::error::{ErrorCode, ToolError};
use bardo_safety::WritePath;
use bardo_safety::confirm::Channel;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, ServerRequest,
};
use rmcp::service::PeerRequestOptions;
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{RoleServer, ServiceError};
use std::sync::Arc;
use std::time::Duration;

/// How often a waiting commit looks for a confirmation given elsewhere.
const POLL: Duration = Duration::from_millis(250);

/// Where the person is asked, in the audit log's declines.
const BY: &str = "mcp elicitation";

/// Ask the client's user to confirm permit `permit_id` if the policy holds it; Ok once it is
/// confirmed (or the policy does not hold it), else the error the commit answers with.
pub(crate) async fn confirm(
    path: &Arc<WritePath>,
    permit_id: &str,
    context: &RequestContext<RoleServer>,
    timeout: Duration,
) -> Result<(), ToolError> {
    let peer = &context.peer;
    // Not open (used, expired, cancelled): the commit itself refuses it, on the record.
    let Ok(Some(pending)) = blocking(path, permit_id, |p, id| p.pending_confirmation(id)).await else {
        return Ok(());
    };
    if !path.accepts_confirmation_via(Channel::McpElicitation) {
        return Err(ToolError::retryable(
            ErrorCode::ConfirmationRequired,
            format!(
                "permit `{permit_id}` waits for the operator to confirm it ({} in [safety]); an MCP client's own \
                 answer does not count on this host ([safety.confirm] via), since the client may be the agent. \
                 Ask the operator to confirm it (`bardo confirm {permit_id}`, `bardo tui`, or the approval page \
                 of `bardo serve`), then call commit_action again before it expires",
                pending.policy
            ),
        ));
    }
    if !peer.supported_elicitation_modes().contains(&ElicitationMode::Form) {
        return Err(ToolError::retryable(
            ErrorCode::ConfirmationRequired,
            format!(
                "permit `{permit_id}` waits for a person to confirm it ({} in [safety]) and this MCP client \
                 cannot ask its user (it declared no `elicitation` capability): confirm it in `bardo tui` (y) \
                 or with `bardo confirm {permit_id}`, then call commit_action again before it expires",
                pending.policy
            ),
        ));
    }
    let schema = ElicitationSchema::builder()
        .required_bool("confirm")
        .description("true to sign and send this write; false to cancel it")
        .build()
        .map_err(|e| ToolError::new(ErrorCode::Internal, format!("the confirmation form: {e}")))?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: pending.summary(),
        requested_schema: schema,
    };
    let options = PeerRequestOptions::with_timeout(timeout.min(pending.expires_in));
    let asked = peer
        .send_cancellable_request(ServerRequest::ElicitRequest(ElicitRequest::new(params)), options)
        .await
        .map_err(|e| {
            ToolError::retryable(
                ErrorCode::ConfirmationRequired,
                format!(
                    "asking the client's user to confirm permit `{permit_id}` failed ({e}); nothing was sent"
                ),
            )
        })?;
    // Kept to withdraw the question when it is answered elsewhere (the handle is consumed by
    // awaiting its answer).
    let question = asked.id.clone();
    let ask = async {
        match asked.await_response().await? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(ServiceError::UnexpectedResponse),
        }
    };
    let elsewhere = async {
        loop {
            tokio::time::sleep(POLL).await;
            if let Ok(Some(_)) = blocking(path, permit_id, |p, id| p.confirmed_by(id)).await {
                return;
            }
        }
    };
    let answer = tokio::select! {
        answer = ask => answer,
        () = elsewhere => {
            // Confirmed in `bardo tui`, `bardo confirm` or the page: the client's user is no
            // longer asked (its dialog would confirm nothing).
            let withdrawn = CancelledNotificationParam::new(
                Some(question),
                Some("confirmed by the operator elsewhere".into()),
            );
            if let Err(e) = peer.notify_cancelled(withdrawn).await {
                tracing::debug!("withdrawing the elicitation: {e}");
            }
            return Ok(());
        }
        () = context.ct.cancelled() => {
            return Err(ToolError::new(ErrorCode::Cancelled, "the client cancelled the commit while its user was asked; nothing was sent"));
        }
    };
    match answer {
        Ok(result) => {
            let yes = result.action == ElicitationAction::Accept
                && result.content.as_ref().and_then(|c| c.get("confirm")).and_then(|v| v.as_bool())
                    == Some(true);
            if yes {
                // The principal as MCP knows it: the client's own name for itself.
                let client = peer.peer_info().map(|i| i.client_info.name.clone()).unwrap_or_default();
                let by = format!("mcp client {client:?}");
                blocking(path, permit_id, move |p, id| p.confirm(id, Channel::McpElicitation, &by)).await
            } else {
                Err(blocking(path, permit_id, |p, id| Ok(p.declined(id, BY, false))).await?)
            }
        }
        Err(ServiceError::Timeout { .. }) => {
            Err(blocking(path, permit_id, |p, id| Ok(p.declined(id, BY, true))).await?)
        }
        Err(e) => Err(ToolError::retryable(
            ErrorCode::ConfirmationRequired,
            format!(
                "asking the client's user to confirm permit `{permit_id}` failed ({e}); nothing was sent: confirm \
                 it in `bardo tui` (y) or with `bardo confirm {permit_id}`, then call commit_action again"
            ),
        )),
    }
}

/// `f` on the write path off the async threads (the permit store is files or NATS).
async fn blocking<T: Send + 'static>(
    path: &Arc<WritePath>,
    permit_id: &str,
    f: impl FnOnce(&WritePath, &str) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let (path, id) = (path.clone(), permit_id.to_owned());
    tokio::task::spawn_blocking(move || f(&path, &id)).await.unwrap_or_else(|e| {
        Err(ToolError::new(ErrorCode::Internal, format!("the permit store call failed: {e}")))
    })
}
