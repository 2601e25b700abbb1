//! The PolicyCage on the devnet (`devnet/contracts/PolicyCage.sol`, compiled by the pinned
//! solc-js for Cancun's transient storage): a second Safe 1.4.1, owned by the dev key (the
//! host's) and the operator's key, threshold 1, whose transaction guard is a cage with the
//! devnet's rules — the calls its write targets' roles allow, approvals and transfers only to
//! them, the assets the demo's flows hold, what each target may move of them (its scope), and
//! the host's `[safety]` defaults as limits. Set up
//! in one Safe transaction before the guard exists; after it, only the operator changes them.

use super::deployer::{DeployError, Deployer};
pub use super::deployments::Cage;
use super::deployments::Deployments;
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, B256, Bytes, FixedBytes, U256, address, keccak256};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use bardo_core::scope::Role;
use bardo_evm::{SafeKey, SafeWallet, SimCall};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

sol! {
    function setCall(address target, bytes4 selector, bool approved) external;
    function setCounterparty(address account, bool approved) external;
    function setScope(address target, address[] assets) external;
    function setAsset(uint8 kind, address source, bytes32 market, address feed, uint128 maxUnits, uint128 maxUsd) external;
    function setDrawdown(uint256 perTransactionBps, uint256 perDayBps) external;
    function setFrequency(uint256 maxWrites, uint256 windowSecs) external;
    function setMaxFeedAge(uint256 secs) external;
    function publish() external;
    function setGuard(address guard) external;
}

/// The second of anvil's funded dev accounts: the devnet's operator, an owner of the caged Safe
/// whose key the host never holds (public test key).
pub const OPERATOR_ACCOUNT: Address = address!("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
/// Private key of [`OPERATOR_ACCOUNT`].
pub const OPERATOR_KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

/// The devnet cage's limits, the host's `[safety]` defaults: a write may lose 3 % of what it
/// spends (`max_value_loss_bps`), the day's writes 10 % of the holdings, a feed may be an hour
/// old (`max_feed_age_secs`), at most 120 writes an hour.
pub const MAX_DRAWDOWN_TX_BPS: u64 = 300;
/// The most the day's writes may lose, bps of the approved holdings at the day's first write.
pub const MAX_DRAWDOWN_DAY_BPS: u64 = 1_000;
/// Writes per [`WINDOW_SECS`].
pub const MAX_WRITES: u64 = 120;
/// The write-frequency window.
pub const WINDOW_SECS: u64 = 3_600;

/// `PolicyCage.Kind`: how a position is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum AssetKind {
    /// A token balance (address 0: ether).
    Token = 0,
    /// ERC-4626 shares, priced through `convertToAssets`.
    Vault = 1,
    /// A Morpho Blue supply position in one market.
    MorphoSupply = 2,
    /// An Aave V3 aToken, compared by its scaled balance (the market field: its underlying).
    AaveToken = 3,
}

/// The selectors a role's calls use (the cage's "approved targets with their selectors"; the
/// host's scopes then judge each call's arguments). Selector 0: a plain ether transfer.
pub fn role_selectors(role: Role) -> Vec<FixedBytes<4>> {
    const APPROVE: &str = "approve(address,uint256)";
    const TRANSFER: &str = "transfer(address,uint256)";
    const V3_SINGLE: &str = "(address,address,uint24,address,uint256,uint256,uint256,uint160)";
    const MARKET: &str = "(address,address,address,address,uint256)";
    let sigs: Vec<String> = match role {
        Role::Erc20 => vec![APPROVE.into(), TRANSFER.into()],
        Role::Weth => vec![APPROVE.into(), TRANSFER.into(), "deposit()".into(), "withdraw(uint256)".into()],
        Role::Permit2 => vec!["approve(address,address,uint160,uint48)".into()],
        Role::UniversalRouter => {
            vec!["execute(bytes,bytes[],uint256)".into(), "execute(bytes,bytes[])".into()]
        }
        Role::UniswapV3SwapRouter => vec![
            format!("exactInputSingle({V3_SINGLE})"),
            "exactInput((bytes,address,uint256,uint256,uint256))".into(),
            "exactOutputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))".into(),
            "exactOutput((bytes,address,uint256,uint256,uint256))".into(),
        ],
        Role::UniswapV2Router => vec![
            "swapExactTokensForTokens(uint256,uint256,address[],address,uint256)".into(),
            "swapTokensForExactTokens(uint256,uint256,address[],address,uint256)".into(),
            "addLiquidity(address,address,uint256,uint256,uint256,uint256,address,uint256)".into(),
            "removeLiquidity(address,address,uint256,uint256,uint256,address,uint256)".into(),
        ],
        Role::AaveV3Pool => vec![
            "supply(address,uint256,address,uint16)".into(),
            "withdraw(address,uint256,address)".into(),
            "borrow(address,uint256,uint256,uint16,address)".into(),
            "repay(address,uint256,uint256,address)".into(),
            "setUserUseReserveAsCollateral(address,bool)".into(),
        ],
        Role::Erc4626Vault => vec![
            APPROVE.into(),
            "deposit(uint256,address)".into(),
            "mint(uint256,address)".into(),
            "withdraw(uint256,address,address)".into(),
            "redeem(uint256,address,address)".into(),
        ],
        Role::MorphoBlue => vec![
            format!("supply({MARKET},uint256,uint256,address,bytes)"),
            format!("withdraw({MARKET},uint256,uint256,address,address)"),
            format!("borrow({MARKET},uint256,uint256,address,address)"),
            format!("repay({MARKET},uint256,uint256,address,bytes)"),
            format!("supplyCollateral({MARKET},uint256,address,bytes)"),
            format!("withdrawCollateral({MARKET},uint256,address,address)"),
        ],
        Role::UniswapV3PositionManager => vec![
            "mint((address,address,uint24,int24,int24,uint256,uint256,uint256,uint256,address,uint256))"
                .into(),
            "increaseLiquidity((uint256,uint256,uint256,uint256,uint256,uint256))".into(),
            "decreaseLiquidity((uint256,uint128,uint256,uint256,uint256))".into(),
            "collect((uint256,address,uint128,uint128))".into(),
            "burn(uint256)".into(),
        ],
        Role::UniswapV4PositionManager => vec!["modifyLiquidities(bytes,uint256)".into()],
        Role::Recipient => return vec![FixedBytes::ZERO],
        // Identity writes, hooks (never called) and unscoped contracts are not the cage's flows.
        _ => Vec::new(),
    };
    sigs.iter().map(|s| FixedBytes::from_slice(&keccak256(s.as_bytes())[..4])).collect()
}

/// The devnet's approved positions for the caged Safe: USDC, WETH and ether, Aave's aUSDC and
/// aWETH, the bvUSDC vault's shares and the WETH/USDC Morpho market's supply — each priced by
/// its (underlying's) feed, no cap in units or USD. WBTC and DAI are deliberately not approved.
pub fn approved_positions(d: &Deployments) -> Vec<(AssetKind, Address, B256, Address)> {
    let feed = |symbol: &str| d.feeds.get(symbol).copied().unwrap_or_default();
    let token = |symbol: &str| d.tokens.get(symbol).map(|t| t.address).unwrap_or_default();
    let mut out = vec![
        (AssetKind::Token, token("USDC"), B256::ZERO, feed("USDC")),
        (AssetKind::Token, token("WETH"), B256::ZERO, feed("WETH")),
        (AssetKind::Token, Address::ZERO, B256::ZERO, feed("WETH")),
    ];
    for symbol in ["USDC", "WETH"] {
        if let Some(a) = d.aave_v3.get(&format!("a_token_{symbol}")) {
            out.push((AssetKind::AaveToken, *a, token(symbol).into_word(), feed(symbol)));
        }
    }
    if let Some(v) = d.vaults.values().find(|v| v.asset == "USDC") {
        out.push((AssetKind::Vault, v.address, B256::ZERO, feed("USDC")));
    }
    if let Some(m) = d.morpho.markets.get("WETH/USDC") {
        out.push((AssetKind::MorphoSupply, d.morpho.morpho, m.id, feed("USDC")));
    }
    out
}

/// The approved assets each write target's calls may move besides those held in it (the cage's
/// scopes; a token's own balance, a vault's shares and Morpho's supply are held in the target):
/// WETH unwraps to ether; routers, Permit2 and the position managers move the approved tokens
/// and ether; Aave's pool the tokens and their aTokens; Morpho the tokens of its markets; a vault
/// its asset. The cage reads only what a transaction's targets reach, and refuses an approval of
/// a token to a spender whose scope lacks it.
pub fn target_scopes(d: &Deployments) -> BTreeMap<Address, Vec<Address>> {
    let token = |symbol: &str| d.tokens.get(symbol).map(|t| t.address).unwrap_or_default();
    // The approved positions of one kind, by source, as `approved_positions` names them.
    let positions = approved_positions(d);
    let of = |k: AssetKind| positions.iter().filter(|p| p.0 == k).map(|p| p.1).collect::<Vec<_>>();
    let tokens = of(AssetKind::Token);
    let mut scopes = BTreeMap::new();
    for (target, role) in caged_targets(d) {
        let scope = match role {
            Role::Weth => vec![Address::ZERO],
            Role::Permit2
            | Role::UniversalRouter
            | Role::UniswapV3SwapRouter
            | Role::UniswapV2Router
            | Role::UniswapV3PositionManager
            | Role::UniswapV4PositionManager => tokens.clone(),
            Role::AaveV3Pool => [tokens.clone(), of(AssetKind::AaveToken)].concat(),
            Role::MorphoBlue => vec![token("USDC"), token("WETH")],
            Role::Erc4626Vault => {
                d.vaults.values().filter(|v| v.address == target).map(|v| token(&v.asset)).collect()
            }
            _ => Vec::new(),
        };
        if !scope.is_empty() {
            scopes.insert(target, scope);
        }
    }
    scopes
}

/// The write targets the caged Safe may call: the devnet's, but Pendle's and the V3 Staker
/// (the cage has no scope for them yet; a caged Safe does not trade or stake there).
pub fn caged_targets(d: &Deployments) -> BTreeMap<Address, Role> {
    let pendle: BTreeSet<Address> = (d.pendle.contracts.get("router").copied().into_iter())
        .chain(d.pendle.markets.values().flat_map(|m| [m.market, m.pt, m.yt, m.sy]))
        .chain(d.uniswap_v3.get("staker").copied())
        .collect();
    d.write_targets().into_iter().filter(|(target, _)| !pendle.contains(target)).collect()
}

/// Deploy the caged Safe and its cage, set the devnet's rules, then the guard.
pub(super) async fn deploy(d: &Deployer, deployments: &Deployments) -> Result<Cage, DeployError> {
    (d.progress)("compiling the PolicyCage (Safe 1.4.1 guard) with solc-js for Cancun");
    super::vaults::node_compile(d, &["--via-ir", "--evm", "cancun", "--runs", "1000000", "PolicyCage.sol"])?;
    let s = &deployments.safe;
    // No fallback handler: with Safe's CompatibilityFallbackHandler an owner's signature makes an
    // EIP-1271 message valid, and a Permit2 (or ERC-2612) permit signed by the host's key alone
    // would move the Safe's tokens in someone else's transaction, which no guard ever sees.
    let safe = super::safe::create_safe(d, s, &[d.from, OPERATOR_ACCOUNT], Address::ZERO, 1).await?;
    let args = (safe, OPERATOR_ACCOUNT, s.multi_send_call_only).abi_encode_params();
    let cage = d.deploy(".bardo-build/PolicyCage.json", args, &BTreeMap::new()).await?;
    let call = |data: Vec<u8>| SimCall { to: cage, data: data.into(), value: U256::ZERO };
    let mut calls = Vec::new();
    let targets = caged_targets(deployments);
    let mut counterparties = BTreeSet::new();
    for (target, role) in &targets {
        for selector in role_selectors(*role) {
            calls.push(call(setCallCall { target: *target, selector, approved: true }.abi_encode()));
        }
        if !matches!(role, Role::Erc20 | Role::Weth) {
            counterparties.insert(*target);
        }
    }
    // Tokens a plan sends to a router (V2 pairs pull; V4 settles from the router): the targets
    // that move tokens, and the treasury.
    for account in counterparties {
        calls.push(call(setCounterpartyCall { account, approved: true }.abi_encode()));
    }
    for (kind, source, market, feed) in approved_positions(deployments) {
        let set = setAssetCall { kind: kind as u8, source, market, feed, maxUnits: u128::MAX, maxUsd: 0 };
        calls.push(call(set.abi_encode()));
    }
    for (target, assets) in target_scopes(deployments) {
        calls.push(call(setScopeCall { target, assets }.abi_encode()));
    }
    let limits = [
        setDrawdownCall {
            perTransactionBps: U256::from(MAX_DRAWDOWN_TX_BPS),
            perDayBps: U256::from(MAX_DRAWDOWN_DAY_BPS),
        }
        .abi_encode(),
        setFrequencyCall { maxWrites: U256::from(MAX_WRITES), windowSecs: U256::from(WINDOW_SECS) }
            .abi_encode(),
        setMaxFeedAgeCall { secs: U256::from(super::feeds::MAX_FEED_AGE_SECS) }.abi_encode(),
    ];
    calls.extend(limits.into_iter().map(call));
    // The guard reads the rules as published: the transaction that sets it is not checked by it.
    calls.push(call(publishCall {}.abi_encode()));
    // Last: the guard. From here on every change is the operator's.
    calls.push(SimCall {
        to: safe,
        data: setGuardCall { guard: cage }.abi_encode().into(),
        value: U256::ZERO,
    });
    let wallet = SafeWallet { safe, multi_send: s.multi_send_call_only, key: SafeKey::Owner };
    let tx = wallet.wrap(d.from, &calls);
    let request = TransactionRequest::default().to(tx.to).with_input(Bytes::from(tx.data.to_vec()));
    d.send("set the PolicyCage's rules and guard", request).await?;
    Ok(Cage { safe, cage, operator: OPERATOR_ACCOUNT })
}
