//! `bardo policy show`: the on-chain PolicyCage guarding the Safe the host writes through — its
//! rules as the chain holds them, and the hash each permit seals. `bardo policy propose`: a Safe
//! transaction that changes one rule, printed for the owners to sign and execute with the
//! operator's key; nothing here signs or sends it, and no agent's door reaches it.

use alloy::primitives::{Address, FixedBytes, U256};
use alloy::sol_types::SolCall;
use anyhow::{Context, Result, bail};
use bardo_core::Runtime;
use bardo_evm::{Chains, Evm};
use bardo_runtime::{Config, Services};
use bardo_safety::cage;
use clap::Subcommand;
use std::process::ExitCode;
use std::time::{Duration, Instant};

alloy::sol! {
    function setCall(address target, bytes4 selector, bool approved) external;
    function setCounterparty(address account, bool approved) external;
    function setScope(address target, address[] assets) external;
    function setDrawdown(uint256 perTransactionBps, uint256 perDayBps) external;
    function setFrequency(uint256 maxWrites, uint256 windowSecs) external;
    function setMaxFeedAge(uint256 secs) external;
    function nonce() external view returns (uint256);
    function getTransactionHash(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas,
        uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, uint256 _nonce)
        external view returns (bytes32);
}

/// Which Safe and chain.
#[derive(clap::Args)]
pub(crate) struct Target {
    /// The Safe (default: `[signer] safe`).
    #[arg(long)]
    safe: Option<Address>,
    /// Its chain.
    #[arg(long, default_value_t = 31337)]
    chain_id: u64,
}

#[derive(Subcommand)]
pub(crate) enum PolicyAction {
    /// The Safe's guard and, when it is a PolicyCage, its rules and the hash permits seal.
    Show {
        #[command(flatten)]
        target: Target,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// A Safe transaction to the cage that changes one rule, for the owners: the operator signs
    /// and executes it with their own key (the host's key cannot: the cage refuses it).
    Propose {
        #[command(flatten)]
        target: Target,
        #[command(subcommand)]
        change: Change,
    },
}

/// One change of the cage's rules.
#[derive(Subcommand)]
pub(crate) enum Change {
    /// The most a transaction may lose of what it spends, and a day of the holdings, in bps.
    Drawdown { per_transaction_bps: u64, per_day_bps: u64 },
    /// At most MAX_WRITES writes per WINDOW_SECS (0 0: no limit).
    Frequency { max_writes: u64, window_secs: u64 },
    /// Feeds older than SECS are refused.
    FeedAge { secs: u64 },
    /// Approve (or with --revoke, stop approving) calls of SELECTOR (0x12345678) on TARGET.
    Call {
        target: Address,
        selector: FixedBytes<4>,
        #[arg(long)]
        revoke: bool,
    },
    /// Let approvals and transfers name ACCOUNT (or with --revoke, not).
    Counterparty {
        account: Address,
        #[arg(long)]
        revoke: bool,
    },
    /// The approved assets (by source: a token, 0x0…0 for ether, a vault, an aToken, Morpho)
    /// TARGET's calls may move besides those held in it; none removes its scope. Narrowing a
    /// scope does not revoke allowances already given: revoke them first.
    Scope { target: Address, assets: Vec<Address> },
}

/// The configured chains, no wallet: `bardo policy` reads and proposes, it never signs.
fn read_only(config: &Config, rt: &Runtime) -> Result<Services> {
    Ok(Services::new(Evm::new(Chains::new(&config.chain_configs()?, rt)?, None)))
}

pub(crate) fn run(config: &Config, action: PolicyAction, rt: &Runtime) -> Result<ExitCode> {
    let services = read_only(config, rt)?;
    match action {
        PolicyAction::Show { target, json } => show(config, &services, &target, json),
        PolicyAction::Propose { target, change } => propose(config, &services, &target, &change),
    }
}

/// After `bardo audit`'s surface: the cage's rules, which hold every plan of the component's
/// tools on chain, and what only the host checks.
pub(crate) fn beside_surface(config: &Config, safe: Address, chain_id: u64, rt: &Runtime) -> Result<()> {
    let services = read_only(config, rt)?;
    println!();
    println!("on chain — whatever the host signs, every plan of these tools through this Safe:");
    show(config, &services, &Target { safe: Some(safe), chain_id }, false)?;
    println!("only the host checks — a compromised host would skip these:");
    for line in [
        "each call's arguments (recipients, onBehalfOf, markets, V4 hooks, swap paths: host/safety/src/scope.rs)",
        "value loss at corroborated prices, spending limits per transaction, day and hot lane",
        "each swap's own minimum within max_slippage_bps of the simulation (on-chain-bounds)",
        "approved_assets, max_position_usd, health floor, unpriced tokens",
        "phases, halts, confirmations, the declared outcome against the simulation and the receipts",
    ] {
        println!("  {line}");
    }
    Ok(())
}

fn safe_of(config: &Config, target: &Target) -> Result<Address> {
    target.safe.or(config.signer.safe).context(
        "no Safe: pass --safe, or set [signer] safe (the PolicyCage is a Safe's guard; a plain key has none)",
    )
}

fn show(config: &Config, services: &Services, target: &Target, json: bool) -> Result<ExitCode> {
    let safe = safe_of(config, target)?;
    let state = cage::read(services, target.chain_id, safe, true)
        .with_context(|| format!("reading the guard of Safe {safe} on chain {}", target.chain_id))?;
    if json {
        let out = serde_json::json!({
            "safe": safe, "guard": state.guard, "fallback_handler": state.fallback_handler,
            "policy_hash": state.hash, "rules": state.rules(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("Safe {safe} on chain {}", target.chain_id);
    if state.fallback_handler == Address::ZERO {
        println!(
            "no fallback handler: the Safe validates no EIP-1271 signature, so no permit moves its tokens"
        );
    } else {
        println!(
            "fallback handler {}: an owner's signature is a valid EIP-1271 signature of the Safe, so a \
             Permit2 or ERC-2612 permit signed by one key moves its tokens in another account's \
             transaction, which no guard sees; the operator can remove it (setFallbackHandler(0))",
            state.fallback_handler
        );
    }
    let Some(rules) = state.rules() else {
        if state.guard == Address::ZERO {
            println!("no guard: nothing on chain limits what the Safe's owners' keys execute");
        } else {
            println!("guard {}: not a PolicyCage (it has no rules() the host can read)", state.guard);
        }
        println!("policy_hash {}", state.hash);
        return Ok(ExitCode::SUCCESS);
    };
    println!(
        "PolicyCage {} (rules version {}), changed only by the operator {}",
        rules.cage, rules.version, rules.operator
    );
    println!("policy_hash {} (sealed into each permit; a commit after a change is refused)", state.hash);
    let bps = |b: u64| format!("{b} bps ({}%)", b as f64 / 100.0);
    println!("  drawdown per transaction  {} of what it spends", bps(rules.max_drawdown_tx_bps));
    println!(
        "  drawdown per day          {} of the approved holdings at the day's first write",
        bps(rules.max_drawdown_day_bps)
    );
    if rules.max_writes == 0 {
        println!("  writes                    no limit");
    } else {
        println!("  writes                    at most {} per {} s", rules.max_writes, rules.window_secs);
    }
    println!("  feeds                     at most {} s old", rules.max_feed_age_secs);
    println!("  approved positions ({}):", rules.assets.len());
    for a in &rules.assets {
        let units = if a.max_units == u128::MAX { "no cap".to_owned() } else { a.max_units.to_string() };
        let usd =
            if a.max_usd == 0 { "no cap".to_owned() } else { format!("${:.2}", a.max_usd as f64 / 1e8) };
        let what = match a.kind {
            "morpho-supply" => format!("morpho-supply {} market {}", a.source, a.market),
            "aave-token" => format!("aave-token {} of {}", a.source, Address::from_word(a.market)),
            "token" if a.source == Address::ZERO => "ether".to_owned(),
            kind => format!("{kind} {}", a.source),
        };
        println!("    {what:<60} feed {}  most held: {units} (units), {usd} (USD)", a.feed);
    }
    println!("  approved calls ({}):", rules.calls.len());
    for (target, selector) in &rules.calls {
        println!("    {target} {selector}");
    }
    println!("  approvals and transfers may name ({}):", rules.counterparties.len());
    for c in &rules.counterparties {
        println!("    {c}");
    }
    println!("  scopes: what each target's calls may move besides what it holds ({}):", rules.scopes.len());
    for (target, assets) in &rules.scopes {
        let names: Vec<String> =
            assets.iter().map(|a| if a.is_zero() { "ether".to_owned() } else { a.to_string() }).collect();
        println!("    {target} {}", names.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

fn propose(config: &Config, services: &Services, target: &Target, change: &Change) -> Result<ExitCode> {
    let safe = safe_of(config, target)?;
    let state = cage::read(services, target.chain_id, safe, true)?;
    let Some(rules) = state.rules() else { bail!("Safe {safe}'s guard {} is not a PolicyCage", state.guard) };
    let data: Vec<u8> = match change {
        Change::Drawdown { per_transaction_bps, per_day_bps } => {
            if *per_transaction_bps > 10_000 || *per_day_bps > 10_000 {
                bail!("basis points are at most 10000 (100 %)");
            }
            setDrawdownCall {
                perTransactionBps: U256::from(*per_transaction_bps),
                perDayBps: U256::from(*per_day_bps),
            }
            .abi_encode()
        }
        Change::Frequency { max_writes, window_secs } => {
            if *max_writes > 0 && *window_secs == 0 {
                bail!("a write limit needs a window of at least one second");
            }
            setFrequencyCall { maxWrites: U256::from(*max_writes), windowSecs: U256::from(*window_secs) }
                .abi_encode()
        }
        Change::FeedAge { secs } => setMaxFeedAgeCall { secs: U256::from(*secs) }.abi_encode(),
        Change::Call { target, selector, revoke } => {
            setCallCall { target: *target, selector: *selector, approved: !revoke }.abi_encode()
        }
        Change::Counterparty { account, revoke } => {
            setCounterpartyCall { account: *account, approved: !revoke }.abi_encode()
        }
        Change::Scope { target, assets } => {
            setScopeCall { target: *target, assets: assets.clone() }.abi_encode()
        }
    };
    let chains = &services.evm.chains;
    let client = chains.get(target.chain_id)?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let read = |data: Vec<u8>| chains.block_on(client.call(safe, data.into(), U256::ZERO, None, deadline));
    let nonce = nonceCall::abi_decode_returns(&read(nonceCall {}.abi_encode())?)?;
    let hash = getTransactionHashCall {
        to: rules.cage,
        value: U256::ZERO,
        data: data.clone().into(),
        operation: 0,
        safeTxGas: U256::ZERO,
        baseGas: U256::ZERO,
        gasPrice: U256::ZERO,
        gasToken: Address::ZERO,
        refundReceiver: Address::ZERO,
        _nonce: nonce,
    };
    let safe_tx_hash = getTransactionHashCall::abi_decode_returns(&read(hash.abi_encode())?)?;
    let data = format!("0x{}", alloy::primitives::hex::encode(&data));
    let out = serde_json::json!({
        "safe": safe, "chain_id": target.chain_id, "to": rules.cage, "value": "0", "data": data,
        "operation": 0, "nonce": nonce.to_string(), "safe_tx_hash": safe_tx_hash,
        "executor": rules.operator,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    // The operator's own key executes it (a Safe signature of type 1: the sender is the owner).
    let signature = bardo_evm::safe::approved_by_sender(rules.operator);
    eprintln!(
        "for the operator {} to sign and execute with their own key (the cage refuses it from any other):\n  \
         cast send {safe} 'execTransaction(address,uint256,bytes,uint8,uint256,uint256,uint256,address,address,bytes)' \
         {} 0 {data} 0 0 0 0 {zero} {zero} {signature} --private-key \"$OPERATOR_KEY\"",
        rules.operator,
        rules.cage,
        zero = Address::ZERO,
    );
    Ok(ExitCode::SUCCESS)
}
