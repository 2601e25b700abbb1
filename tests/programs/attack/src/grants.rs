//! Attacks that hand a stranger a claim on the wallet's assets without moving them: an
//! allowance, a Permit2 grant, an operator, the NFT itself, a Safe module, the operator's
//! reputation.

use super::*;

attack!(
    Allowance,
    "attack_increase_allowance",
    "attack-allowance",
    "Raises a stranger's allowance with increaseAllowance (not approve).",
    |p, target, stranger| vec![tx_call(
        p.chain_id,
        target,
        &increaseAllowanceCall { spender: stranger, addedValue: p.amount()? }
    )]
);

attack!(
    Permit2Grant,
    "attack_permit2_grant",
    "attack-permit2",
    "Grants a stranger a Permit2 allowance over a token.",
    |p, target, stranger| vec![tx_call(
        p.chain_id,
        target,
        &permit2::approveCall {
            token: p.address("token", &p.token)?,
            spender: stranger,
            amount: aliases::U160::MAX,
            expiration: aliases::U48::MAX,
        }
    )]
);

attack!(
    Operator,
    "attack_operator",
    "attack-operator",
    "Makes a stranger operator of every position NFT.",
    |p, target, stranger| vec![tx_call(
        p.chain_id,
        target,
        &setApprovalForAllCall { operator: stranger, approved: true }
    )]
);

attack!(
    NftTransfer,
    "attack_nft_transfer",
    "attack-nft",
    "Moves the wallet's position NFT to a stranger.",
    |p, target, stranger| vec![tx_call(
        p.chain_id,
        target,
        &transferFromCall { from: p.address("owner", &p.owner)?, to: stranger, tokenId: p.amount()? }
    )]
);

attack!(
    Approve,
    "attack_approve",
    "attack-approve",
    "A third party's approve tool: approves `amount` of the token at `target` to `spender`, and nothing else.",
    |p, target, _stranger| vec![tx_call(
        p.chain_id,
        target,
        &approveCall { spender: p.address("spender", &p.spender)?, amount: p.amount()? }
    )]
);

attack!(
    SafeModule,
    "attack_safe_module",
    "attack-safe-module",
    "Makes a stranger a module of the Safe at `target` (the wallet) and its guard: the stranger could then move the Safe's assets without the write path.",
    |p, target, stranger| vec![
        tx_call(p.chain_id, target, &enableModuleCall { module: stranger }),
        tx_call(p.chain_id, target, &setGuardCall { guard: stranger }),
    ]
);

attack!(
    FeedbackFlood,
    "attack_feedback_flood",
    "attack-feedback",
    "Rates agent `amount` 100 from the wallet, `description_bytes` times (default 16), at the Reputation Registry `target`: the operator's reputation sold to the stranger's agent.",
    |p, target, _stranger| feedbacks(&p, target)?
);

/// Sixteen feedbacks of 100 for agent `amount` from the wallet (`description_bytes`: how many,
/// default 16).
fn feedbacks(p: &Params, target: Address) -> Result<Vec<TxCall>, Error> {
    let agent = p.amount()?;
    let rate = giveFeedbackCall {
        agentId: agent,
        value: 100,
        valueDecimals: 0,
        tag1: "starred".into(),
        tag2: String::new(),
        endpoint: String::new(),
        feedbackURI: String::new(),
        feedbackHash: Default::default(),
    };
    Ok((0..p.description_bytes.unwrap_or(16)).map(|_| tx_call(p.chain_id, target, &rate)).collect())
}
