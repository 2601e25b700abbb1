//! A plugin built the way an attacker would build it (tests/programs/attack, against `sdk/`
//! only), one write tool per way value could leave the wallet without the operator's consent.
//! Every one is refused at preview, twice over: by the call scopes (the allowlist's roles) and,
//! with every contract unscoped, by the change set the host derives from the simulation. The
//! devnet's balances, allowances, operators and NFT owners are unchanged afterwards.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256, address};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::ErrorCode;
use bardo_core::scope::Role;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::plugin::Host;
use bardo_safety::WritePath;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_test_artifacts::{ATTACK, UNISWAP};
use bardo_test_support::devnet_host;
use bardo_test_support::{devnet, runtime};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

sol! {
    function balanceOf(address account) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
    function isApprovedForAll(address owner, address operator) external view returns (bool);
    function ownerOf(uint256 id) external view returns (address);
    function getModulesPaginated(address start, uint256 pageSize) external view returns (address[] array, address next);
}

mod permit2 {
    alloy::sol! {
        function allowance(address owner, address token, address spender) external view returns (uint160, uint48, uint48);
    }
}

/// The attacker.
pub(crate) const STRANGER: Address = address!("0x5555555555555555555555555555555555555555");

pub(crate) struct Env {
    pub(crate) node: Anvil,
    pub(crate) d: Deployments,
    /// Scoped by the devnet's roles.
    pub(crate) scoped: WritePath,
    /// Every contract unscoped: only the change-set derivation stands in the way.
    pub(crate) loose: WritePath,
    pub(crate) host: Arc<Host>,
    /// The wallet: the dev key's account, or the dev Safe it writes through.
    pub(crate) wallet: Address,
    pub(crate) _dir: tempfile::TempDir,
}

pub(crate) fn env() -> Env {
    let (node, d) = devnet();
    let host = Arc::new(devnet_host(&node.url(), d.uniswap_settings(), true, &[UNISWAP, ATTACK]));
    over(node, d, host, |d| d.deployer)
}

/// The attacks' environment with the dev Safe as the wallet, funded as the dev account is.
fn env_through_safe() -> Env {
    let (node, d) = devnet();
    let settings = BTreeMap::from([("uniswap".to_owned(), d.uniswap_settings())]);
    let safe = bardo_test_support::safe::dev_safe(&d, bardo_evm::SafeKey::Owner);
    let host = Arc::new(bardo_test_support::safe::devnet_safe_host(
        &node.url(),
        bardo_devnet::DEV_KEY,
        safe,
        settings,
        &[UNISWAP, ATTACK],
    ));
    let units = |n: u64, decimals: u32| U256::from(n) * U256::from(10u64).pow(U256::from(decimals));
    bardo_test_support::safe::fund_dev_safe(
        &node.url(),
        &d,
        units(10, 18),
        &[("USDC", units(100_000, 6)), ("WETH", units(10, 18))],
    );
    over(node, d, host, |d| d.safe.dev_safe)
}

fn over(node: Anvil, d: Deployments, host: Arc<Host>, wallet: impl Fn(&Deployments) -> Address) -> Env {
    let wallet = wallet(&d);
    let dir = tempfile::tempdir().expect("tempdir");
    let scoped = write_path(&host, &d, &dir, "scoped", d.write_targets());
    let loose = write_path(
        &host,
        &d,
        &dir,
        "loose",
        d.write_targets().into_keys().map(|a| (a, Role::Unscoped)).collect(),
    );
    Env { node, d, scoped, loose, host, wallet, _dir: dir }
}

/// A write path over `host` allowing `roles`, auditing to `<name>.jsonl` in `dir`.
pub(crate) fn write_path(
    host: &Arc<Host>,
    d: &Deployments,
    dir: &tempfile::TempDir,
    name: &str,
    roles: BTreeMap<Address, Role>,
) -> WritePath {
    let slippage = bardo_safety::hooks::on_chain_bounds::DEFAULT_MAX_SLIPPAGE_BPS;
    write_path_allowing(host, d, dir, name, roles, slippage)
}

/// [`write_path`], its plans' on-chain bounds allowed `max_slippage_bps` from what they simulate.
fn write_path_allowing(
    host: &Arc<Host>,
    d: &Deployments,
    dir: &tempfile::TempDir,
    name: &str,
    roles: BTreeMap<Address, Role>,
    max_slippage_bps: u32,
) -> WritePath {
    let hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage::default()),
        Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, roles)]))),
        Box::new(ApprovalGuard),
    ];
    let log = AuditLog::open(&dir.path().join(format!("{name}.jsonl")), HostKey::ephemeral()).expect("log");
    let loss = bardo_safety::hooks::value_guard::DEFAULT_MAX_LOSS_BPS;
    let after = bardo_test_support::writes::guards_allowing(
        host.services(),
        d,
        d.write_targets(),
        loss,
        max_slippage_bps,
    );
    WritePath::new(host.clone(), host.services().clone(), hooks, log).with_after_simulation(after)
}

/// What the attacks could change, read from the devnet.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct State {
    balances: Vec<U256>,
    native: U256,
    allowances: Vec<U256>,
    permit2: Vec<U256>,
    operator: bool,
    nft_owner: Option<Address>,
}

impl Env {
    /// Another write path on this devnet allowing `roles`.
    pub(crate) fn path_with(&self, name: &str, roles: BTreeMap<Address, Role>) -> WritePath {
        write_path(&self.host, &self.d, &self._dir, name, roles)
    }

    pub(crate) fn view<C: SolCall>(&self, to: Address, call: C) -> C::Return {
        let provider = ProviderBuilder::new().connect_http(self.node.url().parse().expect("url"));
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = runtime().block_on(provider.call(tx).into_future()).expect("eth_call");
        C::abi_decode_returns(&out).expect("decode")
    }

    pub(crate) fn token(&self, symbol: &str) -> Address {
        self.d.tokens[symbol].address
    }

    pub(crate) fn state(&self, nft: Option<U256>) -> State {
        let wallet = self.wallet;
        let tokens = ["WETH", "USDC"].map(|s| self.token(s));
        let npm = self.d.uniswap_v3["position_manager"];
        let permit2 = self.d.uniswap_v4["permit2"];
        let provider = ProviderBuilder::new().connect_http(self.node.url().parse().expect("url"));
        State {
            balances: tokens.iter().map(|t| self.view(*t, balanceOfCall { account: wallet })).collect(),
            native: runtime().block_on(provider.get_balance(wallet).into_future()).expect("balance"),
            allowances: tokens
                .iter()
                .map(|t| self.view(*t, allowanceCall { owner: wallet, spender: STRANGER }))
                .collect(),
            permit2: tokens
                .iter()
                .map(|t| {
                    let a = self.view(
                        permit2,
                        permit2::allowanceCall { owner: wallet, token: *t, spender: STRANGER },
                    );
                    U256::from(a._0)
                })
                .collect(),
            operator: self.view(npm, isApprovedForAllCall { owner: wallet, operator: STRANGER }),
            nft_owner: nft.map(|id| self.view(npm, ownerOfCall { id })),
        }
    }

    /// Run `commit` with a buyer of `amount` USDC of WETH on every V3 WETH/USDC pool landing just
    /// before its first transaction, in the same block (automine off, a higher tip): a sandwich's
    /// front half.
    pub(crate) fn sandwiched<T: Send>(&self, amount: U256, commit: impl FnOnce() -> T + Send) -> T {
        let provider = ProviderBuilder::new().connect_http(self.node.url().parse().expect("url"));
        let rt = runtime();
        let (usdc, weth, router) = (self.token("USDC"), self.token("WETH"), self.d.uniswap_v3["swap_router"]);
        let other = self.d.accounts[1];
        let send =
            |to: Address, data: Vec<u8>| TransactionRequest::default().from(other).to(to).with_input(data);
        let approve = approveCall { spender: router, amount: U256::MAX }.abi_encode();
        assert!(rt.block_on(bardo_test_support::send(&provider, send(usdc, approve))).status());
        let raw = |method: &'static str, params: Value| {
            rt.block_on(provider.raw_request::<_, Value>(method.into(), params)).expect(method)
        };
        raw("evm_setAutomine", json!([false]));
        std::thread::scope(|s| {
            let frontrun = s.spawn(|| {
                // Once the commit's first transaction waits in the mempool, the buyer's swaps
                // with a higher tip land before it in the same block.
                while raw("txpool_status", json!([]))["pending"].as_str().unwrap_or("0x0") == "0x0" {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                for fee in [500u32, 3000] {
                    let swap = exactInputSingleCall {
                        params: ExactInputSingleParams {
                            tokenIn: usdc,
                            tokenOut: weth,
                            fee: alloy::primitives::aliases::U24::from(fee),
                            recipient: other,
                            deadline: U256::MAX,
                            amountIn: amount,
                            amountOutMinimum: U256::ZERO,
                            sqrtPriceLimitX96: alloy::primitives::aliases::U160::ZERO,
                        },
                    }
                    .abi_encode();
                    let tx = send(router, swap)
                        .with_gas_limit(400_000)
                        .with_max_priority_fee_per_gas(50_000_000_000)
                        .with_max_fee_per_gas(100_000_000_000);
                    rt.block_on(async { provider.send_transaction(tx).await.map(|_| ()) })
                        .expect("front-run");
                }
                raw("evm_mine", json!([]));
                raw("evm_setAutomine", json!([true]));
            });
            let result = commit();
            frontrun.join().expect("front-run thread");
            result
        })
    }

    /// Params of `attack_raw`: `calls` (target, calldata) as the plugin plans them, declaring
    /// `outcome` when given (else nothing).
    pub(crate) fn raw(&self, calls: &[(Address, Vec<u8>)], outcome: Option<&Value>) -> Value {
        let listed: Vec<Value> = calls
            .iter()
            .map(|(to, data)| json!({"to": to.to_string(), "data": alloy::primitives::hex::encode_prefixed(data)}))
            .collect();
        let mut extra = json!({"raw": Value::Array(listed).to_string()});
        if let Some(outcome) = outcome {
            extra["outcome"] = json!(outcome.to_string());
        }
        self.params(calls.first().map_or(Address::ZERO, |c| c.0), extra)
    }

    /// Params of an attack on `target`.
    pub(crate) fn params(&self, target: Address, extra: Value) -> Value {
        let mut p =
            json!({"chain_id": CHAIN_ID, "target": target.to_string(), "stranger": STRANGER.to_string()});
        if let (Some(p), Some(extra)) = (p.as_object_mut(), extra.as_object()) {
            p.extend(extra.clone());
        }
        p
    }
}

pub(crate) fn refused(path: &WritePath, kind: &str, params: &Value, hook: &str, hint: &str) {
    let e = path.preview(kind, params).expect_err(&format!("{kind} must be refused"));
    assert_eq!(e.code, ErrorCode::Denied, "{kind}: {e}");
    assert!(
        e.message.starts_with(hook) && e.message.contains(hint),
        "{kind}: {:?} should come from {hook} and mention {hint:?}",
        e.message
    );
}

#[test]
fn every_attack_is_refused_by_scope_and_by_the_derived_change_set() {
    every_attack_is_refused(&env());
}

/// The same attacks with the dev Safe as the wallet: refused the same way, its position minted
/// through it; and a plan that would make a stranger the Safe's module or guard is refused
/// whatever the allowlist says.
#[test]
fn every_attack_is_refused_as_before_with_a_safe_as_the_wallet() {
    let e = env_through_safe();
    every_attack_is_refused(&e);
    let safe = e.d.safe.dev_safe;
    let params = e.params(safe, json!({}));
    refused(&e.scoped, "attack-safe-module", &params, "allowlist-guard", "to the wallet");
    let with_safe = e.d.write_targets().into_keys().chain([safe]).map(|a| (a, Role::Unscoped)).collect();
    refused(
        &e.path_with("safe-unscoped", with_safe),
        "attack-safe-module",
        &params,
        "allowlist-guard",
        "itself",
    );
    let modules: Vec<Address> = e
        .view(
            safe,
            getModulesPaginatedCall {
                start: address!("0x0000000000000000000000000000000000000001"),
                pageSize: U256::from(10),
            },
        )
        .array;
    assert!(modules.is_empty(), "no module was enabled");
}

fn every_attack_is_refused(e: &Env) {
    // The wallet owns a position (minted through the write path, its NFT declared).
    let add = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "0.5", "amount_b": "1000", "full_range": true});
    let permit = e.scoped.preview("add-liquidity", &add).expect("preview add");
    let added = e.scoped.commit(&permit.permit_id).expect("commit add");
    let id: U256 = added.actual["position_id"].as_str().expect("id").parse().expect("u256");
    let before = e.state(Some(id));
    assert_eq!(before.nft_owner, Some(e.wallet));

    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let (npm, router, permit2) =
        (e.d.uniswap_v3["position_manager"], e.d.uniswap_v3["swap_router"], e.d.uniswap_v4["permit2"]);
    let universal_router = e.d.uniswap_v4["universal_router"];
    let one = "1000000000000000000";
    let attacks = [
        ("attack-allowance", e.params(usdc, json!({"amount": "1000000000"}))),
        ("attack-permit2", e.params(permit2, json!({"token": usdc.to_string()}))),
        ("attack-operator", e.params(npm, json!({}))),
        ("attack-nft", e.params(npm, json!({"owner": e.wallet.to_string(), "amount": id.to_string()}))),
        (
            "attack-recipient",
            e.params(
                router,
                json!({"token": usdc.to_string(), "token_out": weth.to_string(), "amount": "1000000000"}),
            ),
        ),
        (
            "attack-unwrap",
            e.params(
                router,
                json!({"token": weth.to_string(), "token_out": usdc.to_string(), "amount": one}),
            ),
        ),
        (
            "attack-router",
            e.params(
                universal_router,
                json!({"token": usdc.to_string(), "token_out": weth.to_string(), "amount": "1000000000"}),
            ),
        ),
    ];
    // First line: each call is out of its contract's scope.
    let scope_hints = [
        "not in the scope",
        "not allowlisted",
        "not in the scope",
        "not in the scope",
        "must be the wallet",
        "must be the wallet",
        "V3_SWAP_EXACT_IN recipient; it must be the wallet",
    ];
    for ((kind, params), hint) in attacks.iter().zip(scope_hints) {
        refused(&e.scoped, kind, params, "allowlist-guard", hint);
    }
    // Second line, every contract unscoped: the simulation shows what the plan hid.
    let derived_hints = [
        "undeclared authority: allowance",
        "undeclared authority: Permit2",
        "made operator",
        "given away",
        &usdc.to_string(),
        &weth.to_string(),
        &usdc.to_string(),
    ];
    for ((kind, params), hint) in attacks.iter().zip(derived_hints) {
        // An unlimited Permit2 grant is refused from its calldata before anything runs.
        let (hook, hint) = match *kind {
            "attack-permit2" => ("approval-guard", "unlimited"),
            _ => ("hallucination-detector", hint),
        };
        refused(&e.loose, kind, params, hook, hint);
    }
    // Declaring the grant honestly does not make it acceptable: the spender is not allowlisted.
    let mut honest = attacks[0].1.clone();
    honest["outcome"] = json!(
        json!({"balance_changes": [], "authorities": [
        {"token": usdc.to_string(), "spender": STRANGER.to_string(), "amount": "1000000000"}]})
        .to_string()
    );
    refused(&e.loose, "attack-allowance", &honest, "allowlist-guard", "not on the allowlist");
    // A swap whose proceeds go to the stranger, its outflow declared honestly: the wallet gives
    // $1,000 and gets nothing back.
    let mut honest = attacks[4].1.clone();
    honest["outcome"] = json!(
        json!({"balance_changes": [{"token": usdc.to_string(), "delta": "-1000000000"}],
        "authorities": [{"token": usdc.to_string(), "spender": router.to_string(), "amount": "1000000000"}]})
        .to_string()
    );
    let stays_with_stranger = format!("in {STRANGER}, which gave the wallet nothing");
    refused(&e.loose, "attack-recipient", &honest, "stranded-value", &stays_with_stranger);
    // The same for the unwrapped ether.
    let mut honest = attacks[5].1.clone();
    honest["outcome"] = json!(
        json!({"balance_changes": [{"token": weth.to_string(), "delta": format!("-{one}")}]}).to_string()
    );
    refused(&e.loose, "attack-unwrap", &honest, "stranded-value", &stays_with_stranger);
    assert_eq!(e.state(Some(id)), before, "nothing moved");
}

/// `changes` as a declared outcome param: `[(token or "native", delta, tolerance)]`.
pub(crate) fn declaring(changes: &[(String, String, &str)]) -> Value {
    let changes: Vec<Value> = changes
        .iter()
        .map(|(token, delta, tolerance)| json!({"token": token, "delta": delta, "tolerance": tolerance}))
        .collect();
    json!(json!({"balance_changes": changes}).to_string())
}

#[test]
fn value_left_in_a_router_is_refused_however_little() {
    let e = env();
    let before = e.state(None);
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let (router, swap_router) = (e.d.uniswap_v4["universal_router"], e.d.uniswap_v3["swap_router"]);
    let wallet = e.d.deployer.to_string();
    let lots = "1000000000000000000000000";
    // 1 % more ether than the router wraps: within the 3 % loss tolerance, so only the
    // stranded-value check stands between the extra 0.01 ETH and whoever sweeps the router.
    let mut wrap = e.params(router, json!({"amount": "1000000000000000000", "value": "1010000000000000000"}));
    wrap["outcome"] = declaring(&[
        ("native".into(), "-1010000000000000000".into(), "0"),
        (weth.to_string(), "1000000000000000000".into(), "0"),
    ]);
    refused(&e.scoped, "attack-wrap-overpay", &wrap, "stranded-value", "10000000000000000 wei of ether");
    refused(&e.scoped, "attack-wrap-overpay", &wrap, "stranded-value", "(universal-router)");
    // A swap whose output stays in the router (recipient ADDRESS_THIS, which the router's scope
    // allows between steps).
    let mut keeps = e.params(
        router,
        json!({"token": usdc.to_string(), "token_out": weth.to_string(), "amount": "1000000000"}),
    );
    keeps["outcome"] = json!(
        json!({"balance_changes": [{"token": usdc.to_string(), "delta": "-1000000000"}],
            "authorities": [
                {"token": usdc.to_string(), "spender": e.d.uniswap_v4["permit2"].to_string(), "amount": "1000000000"},
                {"token": usdc.to_string(), "spender": router.to_string(), "amount": "1000000000",
                    "permit2": true, "expiration": "281474976710655"}]})
        .to_string()
    );
    refused(&e.scoped, "attack-router-keeps", &keeps, "stranded-value", &format!("of {weth} in {router}"));
    // 1 % too much ether for SwapRouter's WETH in: the rest waits for anyone's `refundETH`.
    let mut overpay = e.params(
        swap_router,
        json!({"token": weth.to_string(), "token_out": usdc.to_string(), "owner": wallet,
            "amount": "100000000000000000", "value": "101000000000000000"}),
    );
    overpay["outcome"] = declaring(&[
        ("native".into(), "-101000000000000000".into(), "0"),
        (usdc.to_string(), "1".into(), lots),
    ]);
    refused(&e.scoped, "attack-swaprouter-overpay", &overpay, "stranded-value", "(uniswap-v3-swap-router)");
    // The exact amounts pass the same check: the same attack tools, paying exactly.
    let mut exact = wrap.clone();
    exact["value"] = json!("1000000000000000000");
    exact["outcome"] = declaring(&[
        ("native".into(), "-1000000000000000000".into(), "0"),
        (weth.to_string(), "1000000000000000000".into(), "0"),
    ]);
    let permit = e.scoped.preview("attack-wrap-overpay", &exact).expect("an exact wrap is fine");
    e.scoped.cancel(&permit.permit_id).expect("cancel");
    assert_eq!(e.state(None), before, "nothing moved");
}

#[test]
fn a_plan_of_megabytes_is_refused_before_it_is_parsed_or_stored() {
    let e = env();
    let usdc = e.token("USDC");
    let audit = e._dir.path().join("scoped.jsonl");
    let huge = e.params(usdc, json!({"description_bytes": 2 << 20}));
    let err = e.scoped.preview("attack-huge-plan", &huge).expect_err("2 MiB plan");
    assert_eq!(err.code, ErrorCode::LimitExceeded, "{err}");
    assert!(err.message.contains("over the 262144 byte limit ([limits] plan_max_bytes)"), "{err}");
    let size = std::fs::metadata(&audit).map_or(0, |m| m.len());
    assert!(size < 64 << 10, "the audit log holds {size} bytes: the plan was stored");
    // The same plan, described in a few words, passes the size check (and then the others).
    let small = e.params(usdc, json!({"description_bytes": 100}));
    let permit = e.scoped.preview("attack-huge-plan", &small).expect("a small plan");
    e.scoped.cancel(&permit.permit_id).expect("cancel");
}

#[test]
fn a_swap_through_a_pool_whose_hook_can_skim_it_needs_the_hook_allowlisted() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let hook = e.d.uniswap_v4["fee_taking_hook"];
    let params = e.params(
        e.d.uniswap_v4["universal_router"],
        json!({"token": usdc.to_string(), "token_out": weth.to_string(), "amount": "1000000000",
            "hooks": hook.to_string()}),
    );
    // The real FeeTakingHook on the devnet: its address grants afterSwapReturnDelta.
    refused(&e.scoped, "attack-hooked", &params, "allowlist-guard", "may change the amounts");
    // With the hook allowlisted (role v4-hook) the scope lets the swap through; the plan's
    // empty declaration is then what refuses it — the simulation shows what it really moves.
    let mut trusting = e.d.write_targets();
    trusting.insert(hook, Role::V4Hook);
    let path = e.path_with("trusting", trusting);
    refused(&path, "attack-hooked", &params, "hallucination-detector", &usdc.to_string());
    // A hook is never called as a contract, allowlisted or not.
    assert!(
        bardo_safety::scope::check(
            Role::V4Hook,
            &[0xde, 0xad, 0xbe, 0xef],
            U256::ZERO,
            e.d.deployer,
            &|_| Some(Role::Unscoped),
            &Default::default()
        )
        .expect_err("no function")
        .contains("not in the scope")
    );
}

#[test]
fn the_simulated_change_set_sees_native_coin_nfts_and_authorities() {
    let e = env();
    // A plain swap: exactly two balances change, and the router keeps no allowance.
    let permit = e
        .scoped
        .preview(
            "swap",
            &json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "100"}),
        )
        .expect("preview");
    let declared = &permit.expected_outcome["balance_changes"];
    assert_eq!(declared.as_array().map(Vec::len), Some(2), "{declared}");
    // An exact-out swap leaves allowances up to its maximum (the token's to Permit2, Permit2's to
    // the router), which it declares.
    let exact_out = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "0.01", "side": "exact_out"});
    let permit = e.scoped.preview("swap", &exact_out).expect("preview exact out");
    let declared = &permit.expected_outcome["authorities"];
    assert_eq!(declared[0]["spender"], json!(e.d.uniswap_v4["permit2"].to_checksum(None)), "{declared}");
    assert_eq!(declared[1]["spender"], json!(e.d.uniswap_v4["universal_router"].to_checksum(None)));
    assert_eq!(declared[1]["permit2"], true);
    let done = e.scoped.commit(&permit.permit_id).expect("commit exact out");
    assert_eq!(done.ground_truth, "receipt");
}

sol! {
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline;
        uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256 amountOut);
    function approve(address spender, uint256 amount) external returns (bool);
}

#[test]
fn a_front_run_between_commit_and_mining_is_found_in_the_receipts_and_makes_the_host_cautious() {
    let e = env();
    // An operator who lets the chain's bounds sit 25 % from what plans simulate (the default is
    // 1 %, under which this swap's own minimum would refuse the preview).
    let wide = write_path_allowing(&e.host, &e.d, &e._dir, "wide", e.d.write_targets(), 2_500);
    let (usdc, weth) = (e.token("USDC"), e.token("WETH"));
    // Wide slippage: the front-run makes the swap worse, not revert.
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000", "slippage_bps": 2000});
    let permit = wide.preview("swap", &params).expect("preview");
    let result = e.sandwiched(U256::from(2_000_000_000u64), || wide.commit(&permit.permit_id));
    let result = result.expect("the swap executes, at a worse price");
    assert_eq!(result.ground_truth, "receipt");
    let weth_text = weth.to_string();
    assert!(
        result.outcome_mismatch.iter().any(|m| m.contains(&weth_text)),
        "the WETH received differs from the declaration: {:?}",
        result.outcome_mismatch
    );
    assert_eq!(wide.phase(), bardo_core::tool::Phase::Cautious, "a divergence makes the host cautious");
    // Its outcome record says so (the agent tags its grimoire episode for replay from the same
    // `outcome_mismatch`: `bardo-agent`'s `adapter` tests).
    let records = bardo_safety::records::read(&e._dir.path().join("wide.jsonl")).expect("records");
    let outcome = records.iter().find(|r| r.permit_id == permit.permit_id).and_then(|r| r.outcome.clone());
    let outcome = outcome.expect("an outcome record");
    assert!(!outcome.verified && outcome.divergence == result.outcome_mismatch, "{outcome:?}");
    // An undisturbed write matches its declaration exactly.
    let again = wide.preview(
        "swap",
        &json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "10"}),
    );
    let done = wide.commit(&again.expect("preview").permit_id).expect("commit");
    assert!(done.outcome_mismatch.is_empty(), "{:?}", done.outcome_mismatch);
    let changes = done.changes.expect("derived from the receipts");
    assert!(
        changes.balance(Some(weth)).is_positive() && changes.balance(Some(usdc)).is_negative(),
        "{changes:?}"
    );
}

/// A plan of three transactions whose last one reverts after the first two were mined (the
/// router's code replaced while it waits in the mempool: a state change no simulation saw) is
/// `partially-executed`, naming every hash, audited as a divergence, and the host made cautious.
#[test]
fn a_plan_whose_last_call_reverts_after_the_others_were_mined_is_partially_executed_and_lowers_the_phase() {
    let e = env();
    let provider = ProviderBuilder::new().connect_http(e.node.url().parse().expect("url"));
    let rt = runtime();
    let weth = e.token("WETH");
    let params = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "DAI", "amount": "2"});
    let permit = e.scoped.preview("swap", &params).expect("preview");
    assert_eq!(permit.plan.calls.len(), 3, "WETH → Permit2, Permit2 → router, execute");
    let router = e.d.uniswap_v4["universal_router"];
    let before = e.view(weth, balanceOfCall { account: e.d.deployer });
    let raw = |method: &'static str, params: Value| {
        rt.block_on(provider.raw_request::<_, Value>(method.into(), params)).expect(method)
    };
    raw("evm_setAutomine", json!([false]));
    let result = std::thread::scope(|s| {
        let miner = s.spawn(|| {
            // Each of the commit's transactions mined on its own block once it waits; the
            // router's code becomes a bare revert just before the last one is mined.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            for i in 0..3 {
                while raw("txpool_status", json!([]))["pending"].as_str().unwrap_or("0x0") == "0x0" {
                    if std::time::Instant::now() > deadline {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                if i == 2 {
                    raw("anvil_setCode", json!([router, "0x60006000fd"]));
                }
                raw("evm_mine", json!([]));
            }
        });
        let result = e.scoped.commit(&permit.permit_id);
        miner.join().expect("miner thread");
        raw("evm_setAutomine", json!([true]));
        result
    });
    let err = result.expect_err("the last call reverted");
    assert_eq!(err.code, ErrorCode::PartiallyExecuted, "{err}");
    assert!(err.message.contains("after 2 of 3 transactions were mined"), "{err}");
    let hashes = err.message.matches("0x").count();
    assert!(hashes >= 3, "the two mined and the reverted transaction are named: {err}");
    assert_eq!(e.view(weth, balanceOfCall { account: e.d.deployer }), before, "the swap itself did not run");
    assert_eq!(
        e.scoped.phase(),
        bardo_core::tool::Phase::Cautious,
        "a half-done plan makes the host cautious"
    );
    let log = std::fs::read_to_string(e._dir.path().join("scoped.jsonl")).expect("audit log");
    let mismatch = log.lines().find(|l| l.contains("\"OutcomeMismatch\"")).expect("audited as a divergence");
    assert!(mismatch.contains(&permit.permit_id) && mismatch.contains("2 of 3"), "{mismatch}");
}

mod erc8004 {
    alloy::sol! {
        function register(string agentURI) external returns (uint256);
        function setAgentURI(uint256 agentId, string newURI) external;
        function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes signature) external;
        function transferFrom(address from, address to, uint256 tokenId) external;
        function approve(address to, uint256 tokenId) external;
        function setApprovalForAll(address operator, bool approved) external;
        function giveFeedback(uint256 agentId, int128 value, uint8 valueDecimals, string tag1, string tag2,
            string endpoint, string feedbackURI, bytes32 feedbackHash) external;
        function validationResponse(bytes32 requestHash, uint8 response, string responseURI, bytes32 responseHash,
            string tag) external;
    }
}

/// The ERC-8004 registries' scopes: an agent is registered and updated, never given away, and
/// its verified wallet (where it is paid) may only become the wallet; feedback and validation
/// calls go to their own registry only, and none takes ether.
#[test]
fn an_agent_is_never_given_away_and_is_paid_only_to_the_wallet() {
    use erc8004::*;
    let (wallet, thief) = (
        address!("0x00000000000000000000000000000000000a11ce"),
        address!("0x0000000000000000000000000000000000000bad"),
    );
    let check = |role: Role, call: Vec<u8>, value: u64| {
        bardo_safety::scope::check(role, &call, U256::from(value), wallet, &|_| None, &Default::default())
    };
    let identity = Role::Erc8004IdentityRegistry;
    assert!(check(identity, registerCall { agentURI: "data:,{}".into() }.abi_encode(), 0).is_ok());
    let to = |new_wallet| setAgentWalletCall {
        agentId: U256::from(1),
        newWallet: new_wallet,
        deadline: U256::MAX,
        signature: vec![1].into(),
    };
    assert!(check(identity, to(wallet).abi_encode(), 0).is_ok());
    // What an identity says and where it is paid: in scope only for the operator's own command.
    let uri = setAgentURICall { agentId: U256::from(1), newURI: "data:,{}".into() }.abi_encode();
    let operator_only = |call: &[u8]| bardo_safety::scope::operator_only(identity, call);
    assert_eq!(operator_only(&uri), Some("setAgentURI(uint256,string)"));
    assert!(operator_only(&to(wallet).abi_encode()).is_some());
    assert_eq!(operator_only(&registerCall { agentURI: "data:,{}".into() }.abi_encode()), None);
    assert_eq!(bardo_safety::scope::operator_only(Role::Erc20, &uri), None, "only on an identity registry");
    let e = check(identity, to(thief).abi_encode(), 0).expect_err("paid elsewhere");
    assert!(e.contains("newWallet") && e.contains("must be the wallet"), "{e}");
    for call in [
        transferFromCall { from: wallet, to: thief, tokenId: U256::from(1) }.abi_encode(),
        approveCall { to: thief, tokenId: U256::from(1) }.abi_encode(),
        setApprovalForAllCall { operator: thief, approved: true }.abi_encode(),
    ] {
        let e = check(identity, call, 0).expect_err("an agent given away");
        assert!(e.contains("not in the scope of a erc8004-identity-registry"), "{e}");
    }
    assert!(
        check(identity, registerCall { agentURI: String::new() }.abi_encode(), 1)
            .expect_err("ether")
            .contains("wei")
    );
    let feedback = giveFeedbackCall {
        agentId: U256::from(1),
        value: 87,
        valueDecimals: 0,
        tag1: "starred".into(),
        tag2: String::new(),
        endpoint: String::new(),
        feedbackURI: String::new(),
        feedbackHash: Default::default(),
    }
    .abi_encode();
    assert!(check(Role::Erc8004ReputationRegistry, feedback.clone(), 0).is_ok());
    assert!(
        check(Role::Erc8004ValidationRegistry, feedback.clone(), 0).is_err(),
        "each call to its own registry"
    );
    assert!(check(identity, feedback, 0).is_err());
    let answer = validationResponseCall {
        requestHash: Default::default(),
        response: 100,
        responseURI: String::new(),
        responseHash: Default::default(),
        tag: String::new(),
    };
    assert!(check(Role::Erc8004ValidationRegistry, answer.abi_encode(), 0).is_ok());
}
