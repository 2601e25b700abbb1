//! The PolicyCage on chain (`devnet/contracts/PolicyCage.sol`): the devnet's caged Safe (owners:
//! the dev key — the host's — and the operator; threshold 1) whose guard is the cage. Each rule
//! is tried at its edge (allowed) and one unit over it (reverted, with the custom error that
//! names it), by Safe transactions the host's key submits directly — as a compromised host would,
//! with no safety chain in the way. Then the host's own path: honest flows commit through the
//! cage, a plan the cage would revert is refused at preview by the cage's rule name, and a commit
//! whose cage changed since its preview is refused.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, B256, Bytes, U256, aliases::U24, aliases::U160};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use alloy::sol_types::{SolCall, SolEvent, SolInterface};
use bardo_devnet::cage::{AssetKind, OPERATOR_ACCOUNT};
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_evm::{SafeKey, SimCall};
use bardo_safety::cage::PolicyCage::PolicyCageErrors;
use bardo_safety::hooks::PolicyCage as HostPolicy;
use bardo_test_artifacts::{AAVE, MORPHO, UNISWAP, VAULT};
use bardo_test_support::safe::{caged_safe, dev_safe, devnet_safe_host, fund_safe};
use bardo_test_support::{devnet, runtime};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

alloy::sol! {
    function balanceOf(address account) external view returns (uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function increaseAllowance(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function deposit() external payable;
    function latestRoundData() external view returns (uint80 roundId, int256 answer, uint256 startedAt,
        uint256 updatedAt, uint80 answeredInRound);
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient;
        uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256 amountOut);
    function setGuard(address guard) external;
    function addOwnerWithThreshold(address owner, uint256 threshold) external;
    function setCall(address target, bytes4 selector, bool approved) external;
    function setAsset(uint8 kind, address source, bytes32 market, address feed, uint128 maxUnits, uint128 maxUsd) external;
    function setDrawdown(uint256 perTransactionBps, uint256 perDayBps) external;
    function setFrequency(uint256 maxWrites, uint256 windowSecs) external;
    function setScope(address target, address[] assets) external;
    function publish() external;
    function dayStartUsd() external view returns (uint256);
    function dayLostUsd() external view returns (uint256);
    event Checked(bytes32 indexed txHash, uint256 spentUsd, uint256 receivedUsd);
}

/// A stranger: no rule names it.
const STRANGER: Address = alloy::primitives::address!("0x000000000000000000000000000000000000dead");

struct Env {
    node: Anvil,
    d: Deployments,
    provider: DynProvider,
    rt: tokio::runtime::Runtime,
    /// The caged Safe.
    safe: Address,
    /// Its guard.
    cage: Address,
    /// The host's key: an owner of the Safe, which the cage holds to its rules.
    host_key: Address,
}

fn units(n: u64, decimals: u32) -> U256 {
    U256::from(n) * U256::from(10u64).pow(U256::from(decimals))
}

/// The devnet's caged Safe holding 10,000 USDC, 5 WETH and 1 ether.
fn env() -> Env {
    let (node, d) = devnet();
    fund_safe(
        &node.url(),
        &d,
        d.cage.safe,
        units(1, 18),
        &[("USDC", units(10_000, 6)), ("WETH", units(5, 18))],
    );
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let (safe, cage, host_key) = (d.cage.safe, d.cage.cage, d.deployer);
    Env { node, d, provider, rt: runtime(), safe, cage, host_key }
}

fn call(to: Address, data: impl SolCall) -> SimCall {
    SimCall { to, data: data.abi_encode().into(), value: U256::ZERO }
}

impl Env {
    fn token(&self, symbol: &str) -> Address {
        self.d.tokens[symbol].address
    }

    fn read<C: SolCall>(&self, to: Address, c: C) -> C::Return {
        let tx = TransactionRequest::default().to(to).with_input(c.abi_encode());
        let out = self.rt.block_on(self.provider.call(tx).into_future()).expect("eth_call");
        C::abi_decode_returns(&out).expect("decode")
    }

    fn balance(&self, symbol: &str) -> U256 {
        self.read(self.token(symbol), balanceOfCall { account: self.safe })
    }

    fn raw(&self, method: &'static str, params: Value) -> Value {
        self.rt.block_on(self.provider.raw_request::<_, Value>(method.into(), params)).expect(method)
    }

    /// The Safe transaction `from` (an owner) executes: `calls` batched through
    /// MultiSendCallOnly, as the host sends a plan.
    fn batch(&self, from: Address, calls: &[SimCall]) -> SimCall {
        caged_safe(&self.d).wrap(from, calls)
    }

    /// One Safe transaction `from` executes of `data` to `to` (`operation` 1: a delegatecall).
    fn single(&self, from: Address, to: Address, data: Bytes, operation: u8) -> SimCall {
        caged_safe(&self.d).single(from, to, data, operation)
    }

    /// Submit `tx` from `from` as it is, the gas set so a revert is mined rather than refused
    /// by estimation: the receipt, and the cage's rule when it reverted (read by replaying it).
    fn submit(&self, from: Address, tx: &SimCall) -> (TransactionReceipt, Option<String>) {
        let request = TransactionRequest::default().from(from).to(tx.to).with_input(tx.data.clone());
        let rule = match self.rt.block_on(self.provider.call(request.clone()).into_future()) {
            Ok(_) => None,
            Err(e) => Some(rule_of(&e)),
        };
        let receipt = self
            .rt
            .block_on(async {
                // Tests revert the chain to snapshots, and right after `evm_revert` anvil can
                // still hold the reverted transaction: in its *pending* count (so the nonce is
                // the count at the head — automine: nothing is ever pending here; seen once, the
                // next one queued behind a nonce gap for ever) and in its pool, which refuses
                // the next of that nonce as an underpriced replacement (seen once, in a clean
                // clone's run) and lets go within moments: that refusal alone is tried again,
                // for at most 5 s.
                let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
                let (hash, nonce) = loop {
                    let nonce = self.provider.get_transaction_count(from).latest().await?;
                    let request = request.clone().gas_limit(8_000_000).nonce(nonce);
                    match self.provider.send_transaction(request).await {
                        Ok(pending) => break (*pending.tx_hash(), nonce),
                        Err(e)
                            if e.to_string().contains("replacement transaction underpriced")
                                && std::time::Instant::now() < until =>
                        {
                            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        }
                        Err(e) => return Err(e),
                    }
                };
                // Polled, not watched: a block watcher loses its place when the chain reverts.
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
                loop {
                    if let Some(r) = self.provider.get_transaction_receipt(hash).await? {
                        return Ok::<_, alloy::transports::TransportError>(r);
                    }
                    assert!(
                        std::time::Instant::now() < deadline,
                        "transaction {hash} (nonce {nonce}) not mined in 60 s: a nonce gap?"
                    );
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            })
            .expect("mined");
        (receipt, rule)
    }

    /// `tx` from the host's key goes through: its receipt.
    fn passes(&self, tx: &SimCall) -> TransactionReceipt {
        let (receipt, rule) = self.submit(self.host_key, tx);
        assert!(receipt.status() && rule.is_none(), "the cage let it through: {rule:?}");
        receipt
    }

    /// `tx` from `from` is reverted on chain by the cage with `rule`: nothing it did stays.
    fn reverted_by(&self, from: Address, tx: &SimCall, rule: &str) -> String {
        let before = (self.balance("USDC"), self.balance("WETH"), self.safe_nonce());
        let (receipt, named) = self.submit(from, tx);
        assert!(!receipt.status(), "mined and reverted on chain");
        let named = named.expect("a cage error");
        assert!(named.starts_with(rule), "refused by {rule}, got {named}");
        assert_eq!(
            (self.balance("USDC"), self.balance("WETH"), self.safe_nonce()),
            before,
            "nothing changed"
        );
        named
    }

    fn safe_nonce(&self) -> U256 {
        alloy::sol! { function nonce() external view returns (uint256); }
        self.read(self.safe, nonceCall {})
    }

    /// The operator changes the rules: one Safe transaction of `calls` to the cage.
    fn operator(&self, calls: &[SimCall]) {
        let tx = self.batch(OPERATOR_ACCOUNT, calls);
        let (receipt, rule) = self.submit(OPERATOR_ACCOUNT, &tx);
        assert!(receipt.status(), "the operator's change: {rule:?}");
    }

    fn rule(&self, data: impl SolCall) -> SimCall {
        call(self.cage, data)
    }

    fn snapshot(&self) -> Value {
        self.raw("evm_snapshot", json!([]))
    }

    fn revert_to(&self, id: &Value) {
        assert_eq!(self.raw("evm_revert", json!([id])), json!(true));
    }

    /// The full-range USDC/WETH V3 pool's swap of `amount_in` of `token_in` for `token_out`
    /// (fee 3000) to `recipient`, with no minimum: approve then `exactInputSingle`.
    fn v3_swap(&self, token_in: &str, token_out: &str, amount_in: U256, recipient: Address) -> Vec<SimCall> {
        let router = self.d.uniswap_v3["swap_router"];
        let params = ExactInputSingleParams {
            tokenIn: self.token(token_in),
            tokenOut: self.token(token_out),
            fee: U24::from(3000),
            recipient,
            deadline: U256::MAX,
            amountIn: amount_in,
            amountOutMinimum: U256::ZERO,
            sqrtPriceLimitX96: U160::ZERO,
        };
        vec![
            call(self.token(token_in), approveCall { spender: router, amount: amount_in }),
            call(router, exactInputSingleCall { params }),
        ]
    }

    /// What the cage saw the transaction spend and receive (USD, 8 decimals).
    fn checked(&self, receipt: &TransactionReceipt) -> (U256, U256) {
        let log = receipt
            .inner
            .logs()
            .iter()
            .find(|l| l.address() == self.cage && l.topics().first() == Some(&Checked::SIGNATURE_HASH))
            .expect("Checked");
        let c = Checked::decode_log(&log.inner).expect("decode");
        (c.spentUsd, c.receivedUsd)
    }
}

/// The cage's rule an `eth_call`'s revert names.
fn rule_of(e: &alloy::transports::RpcError<alloy::transports::TransportErrorKind>) -> String {
    let data = e.as_error_resp().and_then(|r| r.as_revert_data()).unwrap_or_default();
    match PolicyCageErrors::abi_decode(&data) {
        Ok(error) => bardo_safety::cage::explain(&data).unwrap_or_else(|| format!("{error:?}")),
        Err(_) => format!("not a cage error: {e}"),
    }
}

/// Approved targets and selectors; approvals and transfers only to named counterparties.
#[test]
fn calls_are_approved_by_target_and_selector_and_name_only_approved_counterparties() {
    let e = env();
    let (usdc, router) = (e.token("USDC"), e.d.uniswap_v3["swap_router"]);
    let key = e.host_key;
    e.passes(&e.batch(key, &[call(usdc, approveCall { spender: router, amount: U256::from(1) })]));
    let approve_stranger = call(usdc, approveCall { spender: STRANGER, amount: U256::MAX });
    let named = e.reverted_by(key, &e.batch(key, &[approve_stranger]), "CounterpartyNotApproved");
    assert!(named.contains(&format!("{STRANGER:?}")), "{named}");
    // A transfer of an approved asset to a stranger, as one call or in a batch.
    let to_stranger = transferCall { to: STRANGER, amount: units(1_000, 6) };
    e.reverted_by(key, &e.single(key, usdc, to_stranger.abi_encode().into(), 0), "CounterpartyNotApproved");
    // A selector the token's role does not use, and a target no rule names.
    let more = call(usdc, increaseAllowanceCall { spender: router, amount: U256::from(1) });
    e.reverted_by(key, &e.batch(key, &[more]), "CallNotApproved");
    let ether = SimCall { to: STRANGER, data: Bytes::new(), value: U256::from(1) };
    let named = e.reverted_by(key, &e.batch(key, &[ether]), "CallNotApproved");
    assert!(named.contains("0x00000000"), "a plain ether transfer is selector 0: {named}");
}

/// An approval may name only a spender whose scope holds the token — what the spender may then
/// move, a call to it reaches, so the cage reads it: USDC to the WETH vault (a counterparty whose
/// scope is WETH) is refused as an ERC-20 approval and through Permit2, WETH to it passes; once
/// the operator narrows the V3 router's scope to WETH, the swap's approval of USDC is refused.
#[test]
fn an_approval_names_only_a_spender_whose_scope_holds_the_token() {
    mod permit2 {
        alloy::sol! { function approve(address token, address spender, uint160 amount, uint48 expiration) external; }
    }
    let e = env();
    let key = e.host_key;
    let (usdc, weth) = (e.token("USDC"), e.token("WETH"));
    let (vault, permit2) = (e.d.vaults["bvWETH"].address, e.d.uniswap_v4["permit2"]);
    let approve =
        |token: Address| e.batch(key, &[call(token, approveCall { spender: vault, amount: U256::from(1) })]);
    e.passes(&approve(weth));
    let named = e.reverted_by(key, &approve(usdc), "ApprovalOutsideScope");
    assert!(named.contains(&format!("{usdc:?}")) && named.contains(&format!("{vault:?}")), "{named}");
    let through = |token: Address| {
        let amount = alloy::primitives::aliases::U160::from(1);
        let expiration = alloy::primitives::aliases::U48::MAX;
        e.batch(key, &[call(permit2, permit2::approveCall { token, spender: vault, amount, expiration })])
    };
    e.passes(&through(weth));
    e.reverted_by(key, &through(usdc), "ApprovalOutsideScope");
    let router = e.d.uniswap_v3["swap_router"];
    let swap = e.batch(key, &e.v3_swap("USDC", "WETH", units(1_000, 6), e.safe));
    let start = e.snapshot();
    e.passes(&swap);
    e.revert_to(&start);
    e.operator(&[e.rule(setScopeCall { target: router, assets: vec![weth] })]);
    e.reverted_by(key, &swap, "ApprovalOutsideScope");
}

/// A position may grow to its maximum in units and in USD, not one unit past it.
#[test]
fn a_position_may_reach_its_maximum_in_units_and_usd_but_not_pass_it() {
    let e = env();
    let (weth, feed) = (e.token("WETH"), e.d.feeds["WETH"]);
    let key = e.host_key;
    let wrap = |wei: U256| {
        e.batch(key, &[SimCall { to: weth, data: depositCall {}.abi_encode().into(), value: wei }])
    };
    let held = e.balance("WETH");
    let one = units(1, 17);
    let asset = |max_units: U256, max_usd: U256| {
        e.rule(setAssetCall {
            kind: AssetKind::Token as u8,
            source: weth,
            market: B256::ZERO,
            feed,
            maxUnits: max_units.to::<u128>(),
            maxUsd: max_usd.to::<u128>(),
        })
    };
    e.operator(&[asset(held + one, U256::ZERO)]);
    e.passes(&wrap(one));
    assert_eq!(e.balance("WETH"), held + one, "at its maximum in units");
    e.reverted_by(key, &wrap(U256::from(1)), "PositionAboveMax");

    // In USD: at the feed's answer, 8 decimals; 5e6 wei of WETH at $2,000 is one unit of USD.
    let price = U256::try_from(e.read(feed, latestRoundDataCall {}).answer).expect("positive");
    let usd = |wei: U256| wei * price / units(1, 18);
    let held = e.balance("WETH");
    let step = units(1, 18) / price; // wei per 1e-8 USD
    assert_eq!(usd(step), U256::from(1), "the devnet's WETH is priced so one step is one USD unit");
    e.operator(&[asset(U256::from(u128::MAX), usd(held) + U256::from(1))]);
    e.passes(&wrap(step));
    e.reverted_by(key, &wrap(step), "PositionUsdAboveMax");
}

/// A transaction may lose up to `perTransactionBps` of what it spends, measured at the feeds:
/// the same swap passes at the bound and reverts one basis point under it.
#[test]
fn a_swap_may_lose_its_bound_of_what_it_spends_and_not_one_basis_point_more() {
    let e = env();
    let key = e.host_key;
    let swap = e.batch(key, &e.v3_swap("USDC", "WETH", units(1_000, 6), e.safe));
    // A snapshot is used up by reverting to it: each run takes the next.
    let mut start = e.snapshot();
    e.operator(&[
        e.rule(setDrawdownCall { perTransactionBps: U256::from(10_000), perDayBps: U256::from(10_000) })
    ]);
    let (spent, received) = e.checked(&e.passes(&swap));
    assert!(spent > received, "a swap pays a fee: spent {spent}, received {received}");
    // The least bound that lets it through: ceil(lost / spent) in bps.
    let lost = spent - received;
    let bound = (lost * U256::from(10_000)).div_ceil(spent);
    for (bps, allowed) in [(bound, true), (bound - U256::from(1), false)] {
        e.revert_to(&start);
        start = e.snapshot();
        e.operator(&[e.rule(setDrawdownCall { perTransactionBps: bps, perDayBps: U256::from(10_000) })]);
        if allowed {
            assert_eq!(e.checked(&e.passes(&swap)), (spent, received), "the same swap");
        } else {
            e.reverted_by(key, &swap, "DrawdownPerTransaction");
        }
    }
}

/// The day's writes may lose up to `perDayBps` of the approved holdings at its first write; the
/// swap that takes the day past it reverts. (The bound is set after the day's first swap, from
/// what it lost: measured once rather than assumed equal in a second run of the same swap.)
#[test]
fn the_days_losses_add_up_to_their_bound() {
    let e = env();
    let key = e.host_key;
    let swap = |usdc: u64| e.batch(key, &e.v3_swap("USDC", "WETH", units(usdc, 6), e.safe));
    let drawdown = |per_day: U256| {
        e.operator(&[e.rule(setDrawdownCall { perTransactionBps: U256::from(10_000), perDayBps: per_day })])
    };
    drawdown(U256::from(9_999));
    e.passes(&swap(1_000));
    let (day_start, lost) = (e.read(e.cage, dayStartUsdCall {}), e.read(e.cage, dayLostUsdCall {}));
    assert!(day_start > U256::ZERO && lost > U256::ZERO, "the day started at {day_start}, lost {lost}");
    // The least bound the day's loss so far fits (a rule change keeps the day's count), and one
    // basis point of the day's start more.
    let bound = (lost * U256::from(10_000)).div_ceil(day_start);
    drawdown(bound + U256::from(1));
    // A swap losing less than that basis point fits ($22,000 of holdings: 1 bp is $2.20); one
    // losing more — 2,000 USDC pays 0.3 %, $6, in fees alone — takes the day past it.
    e.passes(&swap(10));
    let named = e.reverted_by(key, &swap(2_000), "DrawdownPerDay");
    assert!(named.contains(&format!("maxBps: {}", bound + U256::from(1))), "{named}");
}

/// At most `maxWrites` writes in any window: the next waits for the oldest to leave it.
#[test]
fn writes_are_limited_per_window() {
    let e = env();
    let key = e.host_key;
    let (usdc, router) = (e.token("USDC"), e.d.uniswap_v3["swap_router"]);
    let write = |n: u64| e.batch(key, &[call(usdc, approveCall { spender: router, amount: U256::from(n) })]);
    e.operator(&[e.rule(setFrequencyCall { maxWrites: U256::from(2), windowSecs: U256::from(600) })]);
    e.passes(&write(1));
    e.passes(&write(2));
    e.reverted_by(key, &write(3), "TooFrequent");
    e.raw("evm_increaseTime", json!([600]));
    e.raw("evm_mine", json!([]));
    e.passes(&write(4));
}

/// The host's key cannot remove the guard, change a rule, touch the Safe from a batch or
/// delegatecall anywhere but MultiSendCallOnly; the operator's key can change what it owns.
#[test]
fn only_the_operator_changes_the_safe_or_its_rules() {
    let e = env();
    let key = e.host_key;
    let unguard = setGuardCall { guard: Address::ZERO }.abi_encode();
    e.reverted_by(key, &e.single(key, e.safe, unguard.clone().into(), 0), "OperatorOnly");
    let loosen = setDrawdownCall { perTransactionBps: U256::from(10_000), perDayBps: U256::from(10_000) };
    e.reverted_by(key, &e.single(key, e.cage, loosen.abi_encode().into(), 0), "OperatorOnly");
    let owner = addOwnerWithThresholdCall { owner: STRANGER, threshold: U256::from(1) };
    e.reverted_by(key, &e.batch(key, &[call(e.safe, owner)]), "SelfCallInBatch");
    let usdc = e.token("USDC");
    let delegated = transferCall { to: key, amount: U256::from(1) }.abi_encode();
    e.reverted_by(key, &e.single(key, usdc, delegated.into(), 1), "DelegateCallRefused");
    // The operator, an owner whose key the host does not hold, removes the guard.
    let (receipt, _) = e.submit(OPERATOR_ACCOUNT, &e.single(OPERATOR_ACCOUNT, e.safe, unguard.into(), 0));
    assert!(receipt.status(), "the operator's own change");
    let slot = e.rt.block_on(
        e.provider
            .get_storage_at(e.safe, U256::from_be_bytes(bardo_safety::cage::GUARD_SLOT.0))
            .into_future(),
    );
    assert_eq!(slot.expect("slot"), U256::ZERO, "no guard");
}

/// The guard reads the rules as published. A rule the operator changes takes effect when their
/// transaction ends; one changed while no guard was set (so nothing published it) leaves every
/// plan refused until the operator publishes — never checked against the stale copy.
#[test]
fn a_rule_change_takes_effect_when_published_and_nothing_passes_before() {
    let e = env();
    let key = e.host_key;
    let (usdc, router) = (e.token("USDC"), e.d.uniswap_v3["swap_router"]);
    let write = |n: u64| e.batch(key, &[call(usdc, approveCall { spender: router, amount: U256::from(n) })]);
    e.passes(&write(1));
    // The operator takes the guard off, then revokes the approval and sets the guard again: with
    // no guard when that transaction began, no check ran after it and nothing was published.
    let guard = |guard: Address| call(e.safe, setGuardCall { guard });
    e.operator(&[guard(Address::ZERO)]);
    let revoke = setCallCall { target: usdc, selector: approveCall::SELECTOR.into(), approved: false };
    e.operator(&[e.rule(revoke), guard(e.cage)]);
    e.reverted_by(key, &write(2), "RulesNotPublished");
    e.operator(&[e.rule(publishCall {})]);
    e.reverted_by(key, &write(3), "CallNotApproved");
    // Approved again by the operator with the guard on: in force as their transaction ends.
    e.operator(&[e.rule(setCallCall {
        target: usdc,
        selector: approveCall::SELECTOR.into(),
        approved: true,
    })]);
    e.passes(&write(4));
}

/// The owner's key cannot move the caged Safe's tokens outside a Safe transaction: a Permit2
/// permit it signs as the Safe (EIP-1271, which Safe's `CompatibilityFallbackHandler` accepts
/// from any owner) drains the dev Safe in a stranger's transaction no guard sees; the caged
/// Safe has no fallback handler, so the same permit is refused and nothing moves.
#[test]
fn a_permit_signed_by_the_hosts_key_moves_nothing_from_the_caged_safe() {
    use alloy::signers::SignerSync;
    use alloy::sol_types::SolStruct;
    /// The EIP-712 types signed: Permit2's (with the spender) and Safe's message.
    mod signed {
        alloy::sol! {
            struct TokenPermissions { address token; uint256 amount; }
            struct PermitTransferFrom { TokenPermissions permitted; address spender; uint256 nonce; uint256 deadline; }
            struct SafeMessage { bytes message; }
        }
    }
    alloy::sol! {
        struct TokenPermissions { address token; uint256 amount; }
        struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }
        struct SignatureTransferDetails { address to; uint256 requestedAmount; }
        function permitTransferFrom(PermitTransferFrom permit, SignatureTransferDetails transferDetails,
            address owner, bytes signature) external;
        function domainSeparator() external view returns (bytes32);
        function DOMAIN_SEPARATOR() external view returns (bytes32);
    }
    let e = env();
    let key = e.host_key;
    fund_safe(&e.node.url(), &e.d, e.d.safe.dev_safe, U256::ZERO, &[("USDC", units(1_000, 6))]);
    let (usdc, permit2) = (e.token("USDC"), e.d.uniswap_v4["permit2"]);
    // A stranger's account: anvil's third, which the node signs for.
    let thief = alloy::primitives::address!("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC");
    let signer: alloy::signers::local::PrivateKeySigner = bardo_devnet::DEV_KEY.parse().expect("dev key");
    assert_eq!(signer.address(), key, "the host's key signs");
    let amount = units(100, 6);
    let mut stolen = Vec::new();
    for (i, wallet) in [dev_safe(&e.d, SafeKey::Owner), caged_safe(&e.d)].into_iter().enumerate() {
        // The Safe approved Permit2, as its swaps do (the cage lets this through).
        e.passes(&wallet.wrap(key, &[call(usdc, approveCall { spender: permit2, amount: U256::MAX })]));
        let permit = PermitTransferFrom {
            permitted: TokenPermissions { token: usdc, amount },
            nonce: U256::from(i),
            deadline: U256::from(u64::MAX),
        };
        // Permit2's EIP-712 digest with the thief as spender, then Safe's message hash of it.
        let eip712 = |domain: B256, struct_hash: B256| {
            alloy::primitives::keccak256([&[0x19, 0x01][..], &domain[..], &struct_hash[..]].concat())
        };
        let permitted = signed::TokenPermissions { token: usdc, amount };
        let signed_permit = signed::PermitTransferFrom {
            permitted,
            spender: thief,
            nonce: permit.nonce,
            deadline: permit.deadline,
        };
        let digest = eip712(e.read(permit2, DOMAIN_SEPARATORCall {}), signed_permit.eip712_hash_struct());
        let message = signed::SafeMessage { message: digest.to_vec().into() };
        let hash = eip712(e.read(wallet.safe, domainSeparatorCall {}), message.eip712_hash_struct());
        let signature = signer.sign_hash_sync(&hash).expect("sign");
        let mut packed = signature.as_bytes().to_vec();
        packed[64] = 27 + signature.v() as u8;
        let before = e.read(usdc, balanceOfCall { account: wallet.safe });
        let steal = permitTransferFromCall {
            permit,
            transferDetails: SignatureTransferDetails { to: thief, requestedAmount: amount },
            owner: wallet.safe,
            signature: packed.into(),
        };
        let (receipt, _) = e.submit(thief, &call(permit2, steal));
        let after = e.read(usdc, balanceOfCall { account: wallet.safe });
        stolen.push((receipt.status(), before - after));
    }
    assert_eq!(stolen[0], (true, amount), "the dev Safe's fallback handler accepts the host key's permit");
    assert_eq!(stolen[1], (false, U256::ZERO), "the caged Safe validates no signature: nothing moves");
}

/// The attacks a compromised host makes with the Safe owner's key, each reverted on chain: an
/// unapproved asset bought, and a swap sandwiched to 10 % under the feeds' value while it
/// waited in the mempool (automine off: front-run, victim and back-run in one block).
#[test]
fn an_unapproved_asset_bought_or_a_sandwiched_swap_is_reverted_on_chain() {
    let e = env();
    let key = e.host_key;
    // WBTC is not approved: buying it is value leaving the approved holdings.
    let wbtc = e.batch(key, &e.v3_swap("WETH", "WBTC", units(1, 18), e.safe));
    let named = e.reverted_by(key, &wbtc, "DrawdownPerTransaction");
    assert!(named.contains("receivedUsd: 0"), "{named}");

    let attacker = e.d.accounts[2];
    let router = e.d.uniswap_v3["swap_router"];
    let usdc = e.token("USDC");
    // Ordered in the block by their tips, as a searcher's bundle is.
    let send = |from: Address, to: Address, data: Vec<u8>, tip: u128| {
        let tx = TransactionRequest::default()
            .from(from)
            .to(to)
            .with_input(data)
            .gas_limit(2_000_000)
            .max_fee_per_gas(200_000_000_000)
            .max_priority_fee_per_gas(tip);
        e.rt.block_on(async { e.provider.send_transaction(tx).await.map(|p| *p.tx_hash()) }).expect("sent")
    };
    let approve = approveCall { spender: router, amount: U256::MAX }.abi_encode();
    send(attacker, usdc, approve, 1_000_000_000);
    e.raw("evm_mine", json!([]));
    let victim_before = e.balance("USDC");
    e.raw("evm_setAutomine", json!([false]));
    // The front-run: $150,000 of WETH bought from the full-range pool moves its price ~30 %.
    let front = &e.v3_swap("USDC", "WETH", units(150_000, 6), attacker)[1];
    let front = send(attacker, front.to, front.data.to_vec(), 50_000_000_000);
    let victim = e.batch(key, &e.v3_swap("USDC", "WETH", units(1_000, 6), e.safe));
    let victim = send(key, victim.to, victim.data.to_vec(), 1_000_000_000);
    e.raw("evm_mine", json!([]));
    e.raw("evm_setAutomine", json!([true]));
    let receipt = |h: B256| {
        e.rt.block_on(e.provider.get_transaction_receipt(h).into_future()).expect("receipt").expect("mined")
    };
    let (front, victim) = (receipt(front), receipt(victim));
    assert!(front.status(), "the front-run went through");
    assert_eq!(front.block_number, victim.block_number, "in one block, the front-run first");
    assert!(front.transaction_index < victim.transaction_index);
    assert!(!victim.status(), "the sandwiched swap reverted on chain");
    assert_eq!(e.balance("USDC"), victim_before, "the Safe's USDC stayed");
    // Replayed on the state it met: the rule that reverted it.
    let again = e.batch(key, &e.v3_swap("USDC", "WETH", units(1_000, 6), e.safe));
    let named = e.reverted_by(key, &again, "DrawdownPerTransaction");
    let (spent, received) = parse_drawdown(&named);
    assert!(received * U256::from(10) < spent * U256::from(9), "received 10 % under value: {named}");
}

fn parse_drawdown(named: &str) -> (U256, U256) {
    let field = |name: &str| -> U256 {
        let at = named.find(name).unwrap_or_else(|| panic!("{name} in {named}")) + name.len() + 2;
        named[at..].split([',', ' ', '}']).next().expect("value").parse().expect("number")
    };
    (field("spentUsd"), field("receivedUsd"))
}

/// The host writing through the caged Safe: the demo's swap, an Aave supply, a Morpho supply and
/// a vault deposit each pass the cage; each permit carries the cage's `policy_hash`; a plan the
/// cage would revert is refused at preview with the cage's rule; a commit after the operator
/// changed a rule is refused before it is sent.
#[test]
fn honest_flows_pass_the_cage_and_the_host_checks_it_before_sending() {
    let e = env();
    let settings = BTreeMap::from([
        ("aave".to_owned(), e.d.aave_settings()),
        ("uniswap".to_owned(), e.d.uniswap_settings()),
        ("morpho".to_owned(), e.d.morpho_settings()),
        ("vault".to_owned(), e.d.vault_settings()),
    ]);
    let guests = [UNISWAP, AAVE, MORPHO, VAULT];
    let host =
        Arc::new(devnet_safe_host(&e.node.url(), bardo_devnet::DEV_KEY, caged_safe(&e.d), settings, &guests));
    let (path, _audit) =
        bardo_test_support::writes::guarded_path(&host, &e.d, HostPolicy::default(), e.d.write_targets());
    let p = |extra: Value| {
        let mut params = json!({"chain_id": CHAIN_ID});
        params.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        params
    };
    let flows = [
        ("swap", p(json!({"token_in": "USDC", "token_out": "WETH", "amount": "1000", "slippage_bps": 50}))),
        ("supply", p(json!({"asset": "USDC", "amount": "1000"}))),
        ("morpho-supply", p(json!({"market": "WETH/USDC", "amount": "1000"}))),
        ("vault_deposit", p(json!({"vault": "bvUSDC", "amount": "1000"}))),
    ];
    let mut hashes = Vec::new();
    for (kind, params) in &flows {
        let usdc = e.balance("USDC");
        let permit = path.preview(kind, params).unwrap_or_else(|err| panic!("preview {kind}: {err}"));
        assert_eq!(permit.sender, e.safe, "{kind}: the caged Safe's plan");
        hashes.push(permit.policy_hash.expect("a Safe's permit seals its cage"));
        let done = path.commit(&permit.permit_id).unwrap_or_else(|err| panic!("commit {kind}: {err}"));
        assert!(done.outcome_mismatch.is_empty(), "{kind}: {:?}", done.outcome_mismatch);
        assert_eq!(usdc - e.balance("USDC"), units(1_000, 6), "{kind}: 1,000 USDC went in");
    }
    assert!(hashes.windows(2).all(|w| w[0] == w[1]), "the rules did not change: {hashes:?}");

    // The cage would revert the next write: refused at preview, by its rule.
    let swap = &flows[0].1;
    e.operator(&[e.rule(setFrequencyCall { maxWrites: U256::from(1), windowSecs: U256::from(3_600) })]);
    let permit = path.preview("swap", swap).expect("the first write of the window");
    assert_ne!(permit.policy_hash, Some(hashes[0]), "the rules changed: so did the hash");
    path.commit(&permit.permit_id).expect("commit");
    let refused = path.preview("swap", swap).expect_err("the cage's window is full");
    assert_eq!(refused.code, bardo_core::ErrorCode::Denied);
    assert!(refused.message.contains("TooFrequent"), "{}", refused.message);

    // A rule changed between preview and commit: the commit is refused before it is sent.
    e.operator(&[e.rule(setFrequencyCall { maxWrites: U256::ZERO, windowSecs: U256::ZERO })]);
    let permit = path.preview("swap", swap).expect("no frequency limit now");
    let nonce = e.safe_nonce();
    e.operator(&[
        e.rule(setDrawdownCall { perTransactionBps: U256::from(200), perDayBps: U256::from(1_000) })
    ]);
    let refused = path.commit(&permit.permit_id).expect_err("the cage changed");
    assert_eq!(refused.code, bardo_core::ErrorCode::Denied);
    assert!(refused.message.contains("PolicyCage changed"), "{}", refused.message);
    assert_eq!(e.safe_nonce(), nonce + U256::from(1), "only the operator's change was executed");
}

/// Gas: the same swap and Aave supply from the dev Safe (no guard) and from the caged Safe, each
/// from the same state; the cage's overhead is the difference (floor: 60,000 on a swap).
#[test]
fn the_cages_gas_overhead_on_a_swap_and_an_aave_supply() {
    let e = env();
    let key = e.host_key;
    fund_safe(
        &e.node.url(),
        &e.d,
        e.d.safe.dev_safe,
        units(1, 18),
        &[("USDC", units(10_000, 6)), ("WETH", units(5, 18))],
    );
    let pool = e.d.aave_v3["pool"];
    alloy::sol! { function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode) external; }
    let usdc = e.token("USDC");
    let wallets = [dev_safe(&e.d, SafeKey::Owner), caged_safe(&e.d)];
    // Warm both Safes alike: one write each first, so neither pays first-write storage and the
    // cage's day has begun (its first write of a day values every holding: reported apart).
    for wallet in &wallets {
        let warm = wallet.wrap(key, &[call(usdc, approveCall { spender: pool, amount: U256::ZERO })]);
        let (r, rule) = e.submit(key, &warm);
        assert!(r.status(), "{rule:?}");
    }
    let mut report = Vec::new();
    for flow in ["swap", "supply"] {
        let mut gas = Vec::new();
        for wallet in &wallets {
            let calls = match flow {
                "swap" => e.v3_swap("USDC", "WETH", units(1_000, 6), wallet.safe),
                _ => vec![
                    call(usdc, approveCall { spender: pool, amount: units(1_000, 6) }),
                    call(
                        pool,
                        supplyCall {
                            asset: usdc,
                            amount: units(1_000, 6),
                            onBehalfOf: wallet.safe,
                            referralCode: 0,
                        },
                    ),
                ],
            };
            // Each from the same chain state: the pool's ticks, oracle slots and Aave's reserve
            // cost what they cost to whichever Safe goes first, so each goes first.
            let snapshot = e.snapshot();
            let (r, rule) = e.submit(key, &wallet.wrap(key, &calls));
            assert!(r.status(), "{flow} through {}: {rule:?}", wallet.safe);
            gas.push(r.gas_used);
            e.revert_to(&snapshot);
        }
        let overhead = gas[1] as i64 - gas[0] as i64;
        eprintln!("cage gas on a {flow}: {} without, {} with, overhead {overhead}", gas[0], gas[1]);
        report.push((flow, overhead));
    }
    // The cage reads only the positions the swap's targets reach (USDC, WETH and ether: the
    // router's scope), which the swap itself then finds warm, and the two feeds that price what
    // moved (about 23,200 of it: Chainlink's `latestRoundData`, four cold slots each).
    let swap = report[0].1;
    assert!(swap <= CAGE_SWAP_GAS_BOUND, "the cage costs {swap} gas on a swap (floor {CAGE_SWAP_GAS_BOUND})");
}

/// The floor for the cage on the devnet's V3 swap (measured 59,475: one storage slot,
/// the rules as one data contract's code, lean reads; 78,832 with scopes alone; 115,189 when it
/// read all seven positions).
const CAGE_SWAP_GAS_BOUND: i64 = 60_000;
