//! `bridge-guard`: a deposit into Across's SpokePool is judged by what arrives, not by what
//! leaves. For each `depositV3` to an allowlisted `across-spoke-pool`, before simulation:
//! the destination is another chain this host is configured for; the recipient is the wallet
//! there (or a `recipient` the destination's allowlist names); the output token is the input's
//! listed counterpart on that chain (`[safety] bridge_routes`: anyone may write any token as the
//! output, a worthless one included); no exclusive relayer and no message (an exclusive relayer
//! of the depositor's choosing may simply never fill, and nobody else may until its deadline);
//! the fill deadline leaves relayers time to fill; and what arrives — the output amount at the
//! destination's trusted prices, which the filling relayer must deliver exactly — is worth the
//! input at the origin's, less at most `max_value_loss_bps`. The deposit it allows is a finding
//! ([`Bridged`]): stranded-value takes the input held by the SpokePool as sent on, and the value
//! guard counts what arrives, each only where the simulation shows the SpokePool's own
//! `FundsDeposited` for it.

use super::{Decision, Findings, Proposal, SafetyHook};
use crate::scope::AllowedContracts;
use crate::scope::across::depositV3Call;
use crate::valuation::{MicroUsd, Valuer, usd};
use alloy::primitives::{Address, Log, U256};
use alloy::sol_types::SolEvent;
use bardo_core::error::ErrorCode;
use bardo_core::scope::Role;
use std::collections::BTreeMap;
use std::sync::Arc;

alloy::sol! {
    event FundsDeposited(bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount,
        uint256 indexed destinationChainId, uint256 indexed depositId, uint32 quoteTimestamp, uint32 fillDeadline,
        uint32 exclusivityDeadline, bytes32 indexed depositor, bytes32 recipient, bytes32 exclusiveRelayer, bytes message);
    event FilledRelay(bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount,
        uint256 repaymentChainId, uint256 indexed originChainId, uint256 indexed depositId, uint32 fillDeadline,
        uint32 exclusivityDeadline, bytes32 exclusiveRelayer, bytes32 indexed relayer, bytes32 depositor,
        bytes32 recipient, bytes32 messageHash, V3RelayExecutionEventInfo relayExecutionInfo);
    struct V3RelayExecutionEventInfo { bytes32 updatedRecipient; bytes32 updatedMessageHash; uint256 updatedOutputAmount; uint8 fillType; }
}

/// One origin chain's routes as configured: input token → destination chain id (a string: a
/// TOML or JSON key) → the token it arrives as there.
pub type Routes = BTreeMap<Address, BTreeMap<String, Address>>;

/// Every origin chain's routes, parsed: origin → input token → destination → output token.
pub type ByChain = BTreeMap<u64, BTreeMap<Address, BTreeMap<u64, Address>>>;

/// One origin chain's routes with their destination ids parsed.
pub fn parse(routes: Routes) -> Result<BTreeMap<Address, BTreeMap<u64, Address>>, String> {
    routes
        .into_iter()
        .map(|(input, to)| {
            let to = to
                .into_iter()
                .map(|(chain, output)| {
                    let id = chain
                        .parse::<u64>()
                        .map_err(|_| format!("{input}: key {chain:?} must be a chain id"))?;
                    Ok((id, output))
                })
                .collect::<Result<_, String>>()?;
            Ok((input, to))
        })
        .collect()
}

/// The least time a deposit leaves relayers to fill it, seconds.
pub const MIN_FILL_WINDOW_SECS: u64 = 600;

/// A deposit the guard allowed (sealed into the permit: the commit follows it to its fill).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Bridged {
    /// The origin's SpokePool (it holds the input until a relayer is repaid).
    pub spoke: Address,
    /// What leaves: the input token and amount.
    pub input: (Address, U256),
    /// Where it arrives.
    pub destination: u64,
    /// Who receives it there.
    pub recipient: Address,
    /// What arrives: the output token and amount (on the destination).
    pub output: (Address, U256),
    /// What arrives, at the destination's trusted prices.
    pub usd_out: MicroUsd,
    /// The destination's SpokePools (its allowlist's `across-spoke-pool`s): only their
    /// `FilledRelay` is the fill.
    pub destination_spokes: Vec<Address>,
}

impl Bridged {
    /// Whether `logs` (the simulation's) hold the SpokePool's own `FundsDeposited` for it.
    pub fn evidenced(&self, logs: &[&Log]) -> bool {
        logs.iter().filter(|l| l.address == self.spoke).any(|l| {
            FundsDeposited::decode_log_data(&l.data).is_ok_and(|e| {
                Address::from_word(e.inputToken) == self.input.0
                    && e.inputAmount == self.input.1
                    && Address::from_word(e.outputToken) == self.output.0
                    && e.outputAmount == self.output.1
                    && e.destinationChainId == U256::from(self.destination)
                    && Address::from_word(e.recipient) == self.recipient
            })
        })
    }
}

/// The bridge guard (before the simulator).
pub struct BridgeGuard {
    /// Prices on every chain.
    pub valuer: Valuer,
    /// The routes the operator lists.
    pub routes: ByChain,
    /// The allowlist with roles, per chain: the SpokePools, and the destinations' recipients.
    pub roles: BTreeMap<u64, AllowedContracts>,
    /// The chains and the wallet on each.
    pub services: Arc<bardo_runtime::Services>,
    /// The most a deposit may lose, basis points of what it gives (`[safety] max_value_loss_bps`).
    pub max_loss_bps: u32,
}

fn denied(reason: String) -> Decision {
    Decision::Reject { code: ErrorCode::Denied, reason }
}

impl BridgeGuard {
    /// Judge one deposit; what it bridges, or the refusal.
    fn deposit(&self, p: &Proposal<'_>, spoke: Address, d: &depositV3Call) -> Result<Bridged, Decision> {
        let origin = p.chain_id;
        let destination = u64::try_from(d.destinationChainId).unwrap_or(u64::MAX);
        if destination == origin {
            return Err(denied(format!(
                "a deposit into {spoke} names its own chain {origin} as the destination"
            )));
        }
        let evm = &self.services.evm;
        if evm.chains.get(destination).is_err() {
            return Err(Decision::Reject {
                code: ErrorCode::ChainNotSupported,
                reason: format!(
                    "a deposit into {spoke} sends to chain {destination}, which this host is not configured for: nothing \
                     could follow its fill or value what arrives; add [chains.{destination}] to bardo.toml"
                ),
            });
        }
        let wallet_there = evm.address(destination);
        let listed = self.roles.get(&destination).and_then(|r| r.get(&d.recipient)) == Some(&Role::Recipient);
        if wallet_there != Some(d.recipient) && !listed {
            return Err(denied(format!(
                "a deposit into {spoke} pays {} on chain {destination}; the recipient must be the wallet there{} or a \
                 `recipient` of chain {destination}'s allowlist",
                d.recipient,
                wallet_there.map(|w| format!(" ({w})")).unwrap_or_default()
            )));
        }
        let counterpart =
            self.routes.get(&origin).and_then(|r| r.get(&d.inputToken)).and_then(|r| r.get(&destination));
        if counterpart != Some(&d.outputToken) {
            return Err(denied(format!(
                "a deposit of {} from chain {origin} asks for {} on chain {destination}, which is not its bridged counterpart \
                 ({}; [safety] bridge_routes lists them)",
                d.inputToken,
                d.outputToken,
                counterpart.map_or_else(|| "no route is listed".to_owned(), |c| format!("that is {c}"))
            )));
        }
        if !d.exclusiveRelayer.is_zero() || d.exclusivityParameter != 0 {
            return Err(denied(format!(
                "a deposit into {spoke} gives relayer {} the fill to itself (exclusivity {}): a relayer the depositor picks \
                 may never fill, and nobody else may until then; deposit with no exclusive relayer",
                d.exclusiveRelayer, d.exclusivityParameter
            )));
        }
        if !d.message.is_empty() {
            return Err(denied(format!(
                "a deposit into {spoke} carries a {}-byte message for the recipient to run; the wallet takes none",
                d.message.len()
            )));
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let now = evm
            .chains
            .get(origin)
            .and_then(|c| evm.chains.block_on(c.block_timestamp(None, deadline)))
            .map_err(|e| Decision::Reject {
                code: ErrorCode::Rpc,
                reason: format!("reading chain {origin}'s clock: {e}"),
            })?;
        if u64::from(d.fillDeadline) < now + MIN_FILL_WINDOW_SECS {
            return Err(denied(format!(
                "a deposit into {spoke} must be filled by {}, {} s from now: less than the {MIN_FILL_WINDOW_SECS} s relayers \
                 are left to fill it",
                d.fillDeadline,
                i128::from(d.fillDeadline) - i128::from(now)
            )));
        }
        let value = |chain, token, amount| {
            self.valuer.usd(chain, token, amount).map_err(|e| {
                denied(format!(
                    "cannot value the deposit's {} on chain {chain}: {e}",
                    if chain == origin { "input" } else { "output" }
                ))
            })
        };
        let usd_in = value(origin, d.inputToken, d.inputAmount)?;
        let usd_out = value(destination, d.outputToken, d.outputAmount)?;
        let allowed = usd_in.saturating_mul(u128::from(self.max_loss_bps)) / 10_000;
        if usd_out.saturating_add(allowed) < usd_in {
            return Err(denied(format!(
                "a deposit gives {} on chain {origin} for {} to arrive on chain {destination} at trusted prices: it would lose {}, \
                 more than the {} bps allowed ([safety] max_value_loss_bps)",
                usd(usd_in),
                usd(usd_out),
                usd(usd_in - usd_out),
                self.max_loss_bps
            )));
        }
        let destination_spokes: Vec<Address> = self
            .roles
            .get(&destination)
            .map(|r| r.iter().filter(|(_, role)| **role == Role::AcrossSpokePool).map(|(a, _)| *a).collect())
            .unwrap_or_default();
        if destination_spokes.is_empty() {
            return Err(denied(format!(
                "chain {destination}'s allowlist names no `across-spoke-pool`: the host could not tell the deposit's fill from a                  forgery; list the destination's SpokePool"
            )));
        }
        Ok(Bridged {
            destination_spokes,
            spoke,
            input: (d.inputToken, d.inputAmount),
            destination,
            recipient: d.recipient,
            output: (d.outputToken, d.outputAmount),
            usd_out,
        })
    }
}

impl SafetyHook for BridgeGuard {
    fn name(&self) -> &'static str {
        "bridge-guard"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let roles = self.roles.get(&p.chain_id);
        for call in &p.plan.calls {
            if roles.and_then(|r| r.get(&call.to)) != Some(&Role::AcrossSpokePool) {
                continue;
            }
            // The scope admitted only `depositV3` here.
            let Some(d) = crate::scope::decode::<depositV3Call>(&call.data) else {
                return denied(format!("a call to the SpokePool {} is not a depositV3", call.to));
            };
            match self.deposit(p, call.to, &d) {
                Ok(bridged) => found.bridged.push(bridged),
                Err(refused) => return refused,
            }
        }
        Decision::Allow
    }
}

/// How long a commit waits for a deposit's fill by default.
pub const DEFAULT_FILL_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// A deposit followed to its destination.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fill {
    /// `filled`; `pending` when it had not arrived when the commit stopped waiting (a relayer
    /// may still fill it until its deadline: `bridge_get_status` follows it); `unknown` when
    /// the receipts hold no deposit or the destination could not be read.
    pub status: &'static str,
    /// The deposit's id on the origin's SpokePool.
    pub deposit_id: Option<String>,
    /// The destination chain.
    pub destination_chain_id: u64,
    /// The fill's transaction there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_tx: Option<String>,
    /// The relayer that filled it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relayer: Option<Address>,
    /// What it delivered, base units of the output token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered: Option<String>,
    /// How long the commit waited, milliseconds.
    pub waited_ms: u64,
    /// Why it is `unknown`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Fill {
    /// Its audit record.
    pub fn event(&self, permit_id: &str, origin: u64) -> crate::audit_log::AuditEvent {
        crate::audit_log::AuditEvent::BridgeFill {
            permit_id: permit_id.to_owned(),
            origin_chain_id: origin,
            deposit_id: self.deposit_id.clone().unwrap_or_default(),
            destination_chain_id: self.destination_chain_id,
            status: self.status.to_owned(),
            fill_tx: self.fill_tx.clone(),
            delivered: self.delivered.clone(),
        }
    }
}

/// Follow `bridged` from the origin's receipts (its deposit id, from the SpokePool's own
/// `FundsDeposited`) to its fill on the destination (a `FilledRelay` of a listed SpokePool there
/// for that origin and id), waiting at most `wait`.
pub fn follow(
    services: &bardo_runtime::Services,
    origin: u64,
    bridged: &Bridged,
    receipts: &[alloy::rpc::types::TransactionReceipt],
    wait: std::time::Duration,
) -> Fill {
    let started = std::time::Instant::now();
    let mut fill = Fill {
        status: "unknown",
        deposit_id: None,
        destination_chain_id: bridged.destination,
        fill_tx: None,
        relayer: None,
        delivered: None,
        waited_ms: 0,
        note: None,
    };
    let deposited =
        receipts.iter().flat_map(|r| r.inner.logs()).filter(|l| l.address() == bridged.spoke).find_map(|l| {
            let e = FundsDeposited::decode_log_data(l.data()).ok()?;
            (Address::from_word(e.outputToken) == bridged.output.0
                && e.outputAmount == bridged.output.1
                && e.destinationChainId == U256::from(bridged.destination))
            .then_some(e.depositId)
        });
    let Some(id) = deposited else {
        fill.note =
            Some(format!("the receipts hold no FundsDeposited of {} for this deposit", bridged.spoke));
        return fill;
    };
    fill.deposit_id = Some(id.to_string());
    let chains = &services.evm.chains;
    let Ok(dest) = chains.get(bridged.destination) else {
        fill.note = Some(format!("chain {} is no longer configured", bridged.destination));
        return fill;
    };
    let filter = alloy::rpc::types::Filter::new()
        .address(bridged.destination_spokes.clone())
        .event_signature(FilledRelay::SIGNATURE_HASH)
        .topic1(U256::from(origin))
        .topic2(id);
    let mut from_block = None;
    loop {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let found = chains.block_on(async {
            let head = dest.block_number(deadline).await?;
            // The relayer may fill within the same second: look a little back the first time.
            let from = *from_block.get_or_insert(head.saturating_sub(FILL_LOOKBACK_BLOCKS));
            dest.logs(&filter.clone().from_block(from).to_block(head), deadline).await
        });
        match found {
            Ok(logs) => {
                if let Some((tx, relayer, delivered)) = logs.iter().find_map(|l| {
                    let e = FilledRelay::decode_log_data(l.data()).ok()?;
                    Some((
                        l.transaction_hash.unwrap_or_default(),
                        Address::from_word(e.relayer),
                        e.outputAmount,
                    ))
                }) {
                    fill.status = "filled";
                    fill.note = None;
                    fill.fill_tx = Some(tx.to_string());
                    fill.relayer = Some(relayer);
                    fill.delivered = Some(delivered.to_string());
                    break;
                }
            }
            Err(e) => fill.note = Some(format!("reading chain {}: {e}", bridged.destination)),
        }
        if started.elapsed() >= wait {
            fill.status = if fill.note.is_some() { "unknown" } else { "pending" };
            break;
        }
        std::thread::sleep(FILL_POLL);
    }
    fill.waited_ms = started.elapsed().as_millis() as u64;
    fill
}

/// How far back the destination is searched for a fill, blocks.
const FILL_LOOKBACK_BLOCKS: u64 = 1_000;
/// How often the destination is read while waiting for a fill.
const FILL_POLL: std::time::Duration = std::time::Duration::from_millis(200);
