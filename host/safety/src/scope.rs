//! Scoped calls: which functions of an allowlisted contract a plan may call, and which of their
//! parameters must be the wallet (a swap's recipient, a deposit's beneficiary) or allowlisted
//! (a spender). Checked from the calldata before simulation; anything else is refused. The
//! simulation-derived change set is the second line: it holds whatever the scope lets through
//! to the plan's declaration.

pub(crate) mod morpho;
pub(crate) mod pendle;
pub(crate) mod periphery;
pub(crate) mod universal_router;
pub(crate) mod v4_positions;

use alloy::primitives::{Address, B256};
use alloy::sol_types::SolCall;
use bardo_core::scope::Role;
use std::collections::{BTreeMap, BTreeSet};

/// Allowlisted contracts of one chain and their roles.
pub type AllowedContracts = BTreeMap<Address, Role>;

alloy::sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function deposit() external payable;
    function withdraw(uint256 wad) external;

    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient;
        uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    struct ExactInputParams { bytes path; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; }
    struct ExactOutputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient;
        uint256 deadline; uint256 amountOut; uint256 amountInMaximum; uint160 sqrtPriceLimitX96; }
    struct ExactOutputParams { bytes path; address recipient; uint256 deadline; uint256 amountOut; uint256 amountInMaximum; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256);
    function exactInput(ExactInputParams params) external payable returns (uint256);
    function exactOutputSingle(ExactOutputSingleParams params) external payable returns (uint256);
    function exactOutput(ExactOutputParams params) external payable returns (uint256);
    function unwrapWETH9(uint256 amountMinimum, address recipient) external payable;
    function refundETH() external payable;

    function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) external returns (uint256[]);
    function swapTokensForExactTokens(uint256 amountOut, uint256 amountInMax, address[] path, address to, uint256 deadline) external returns (uint256[]);
    function swapExactETHForTokens(uint256 amountOutMin, address[] path, address to, uint256 deadline) external payable returns (uint256[]);
    function swapETHForExactTokens(uint256 amountOut, address[] path, address to, uint256 deadline) external payable returns (uint256[]);
    function swapExactTokensForETH(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) external returns (uint256[]);
    function swapTokensForExactETH(uint256 amountOut, uint256 amountInMax, address[] path, address to, uint256 deadline) external returns (uint256[]);
    function addLiquidity(address tokenA, address tokenB, uint256 amountADesired, uint256 amountBDesired, uint256 amountAMin, uint256 amountBMin, address to, uint256 deadline) external returns (uint256, uint256, uint256);
    function removeLiquidity(address tokenA, address tokenB, uint256 liquidity, uint256 amountAMin, uint256 amountBMin, address to, uint256 deadline) external returns (uint256, uint256);

    struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper;
        uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; address recipient; uint256 deadline; }
    struct IncreaseLiquidityParams { uint256 tokenId; uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; uint256 deadline; }
    struct DecreaseLiquidityParams { uint256 tokenId; uint128 liquidity; uint256 amount0Min; uint256 amount1Min; uint256 deadline; }
    struct CollectParams { uint256 tokenId; address recipient; uint128 amount0Max; uint128 amount1Max; }
    function mint(MintParams params) external payable returns (uint256, uint128, uint256, uint256);
    function increaseLiquidity(IncreaseLiquidityParams params) external payable returns (uint128, uint256, uint256);
    function decreaseLiquidity(DecreaseLiquidityParams params) external payable returns (uint256, uint256);
    function collect(CollectParams params) external payable returns (uint256, uint256);
    function burn(uint256 tokenId) external payable;
    function multicall(bytes[] data) external payable returns (bytes[] results);
    function safeTransferFrom(address from, address to, uint256 tokenId, bytes data) external;

    function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode) external;
    function withdraw(address asset, uint256 amount, address to) external returns (uint256);
    function borrow(address asset, uint256 amount, uint256 interestRateMode, uint16 referralCode, address onBehalfOf) external;
    function repay(address asset, uint256 amount, uint256 interestRateMode, address onBehalfOf) external returns (uint256);
    function setUserUseReserveAsCollateral(address asset, bool useAsCollateral) external;
}

/// Permit2's `approve`, in its own namespace (it overloads the ERC-20 name).
mod permit2 {
    alloy::sol! {
        function approve(address token, address spender, uint160 amount, uint48 expiration) external;
    }
}

/// Uniswap's V3 Staker.
pub(crate) mod staker {
    alloy::sol! {
        struct IncentiveKey { address rewardToken; address pool; uint256 startTime; uint256 endTime; address refundee; }
        function stakeToken(IncentiveKey key, uint256 tokenId) external;
        function unstakeToken(IncentiveKey key, uint256 tokenId) external;
        function claimReward(address rewardToken, address to, uint256 amountRequested) external returns (uint256);
        function withdrawToken(uint256 tokenId, address to, bytes data) external;
    }
}

/// ERC-4626's functions, in their own namespace (`deposit`, `withdraw` and `mint` are
/// overloaded above).
mod erc4626 {
    alloy::sol! {
        function deposit(uint256 assets, address receiver) external returns (uint256);
        function mint(uint256 shares, address receiver) external returns (uint256);
        function withdraw(uint256 assets, address receiver, address owner) external returns (uint256);
        function redeem(uint256 shares, address receiver, address owner) external returns (uint256);
    }
}

/// ERC-8004's registries' write functions.
pub(crate) mod erc8004 {
    alloy::sol! {
        struct MetadataEntry { string metadataKey; bytes metadataValue; }
        function register() external returns (uint256);
        function register(string agentURI) external returns (uint256);
        function register(string agentURI, MetadataEntry[] metadata) external returns (uint256);
        function setAgentURI(uint256 agentId, string newURI) external;
        function setMetadata(uint256 agentId, string metadataKey, bytes metadataValue) external;
        function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes signature) external;
        function unsetAgentWallet(uint256 agentId) external;
        function giveFeedback(uint256 agentId, int128 value, uint8 valueDecimals, string tag1, string tag2,
            string endpoint, string feedbackURI, bytes32 feedbackHash) external;
        function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external;
        function appendResponse(uint256 agentId, address clientAddress, uint64 feedbackIndex, string responseURI,
            bytes32 responseHash) external;
        function validationRequest(address validatorAddress, uint256 agentId, string requestURI, bytes32 requestHash)
            external;
        function validationResponse(bytes32 requestHash, uint8 response, string responseURI, bytes32 responseHash,
            string tag) external;
    }
}

/// Across V3's SpokePool, as the scope reads it (the bridge guard reads the rest).
pub(crate) mod across {
    alloy::sol! {
        function depositV3(address depositor, address recipient, address inputToken, address outputToken,
            uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, address exclusiveRelayer,
            uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityParameter, bytes message) external payable;
    }
}

/// How one function's parameters are checked.
enum Party {
    /// No address parameter moves value elsewhere.
    None,
    /// This parameter must be the wallet.
    Wallet(&'static str, Address),
    /// Both parameters must be the wallet.
    Wallets([(&'static str, Address); 2]),
    /// This parameter must be allowlisted (or the wallet).
    Allowlisted(&'static str, Address),
    /// This parameter must be allowlisted as a `recipient` (or be the wallet).
    Recipient(&'static str, Address),
    /// Each recipient must be the wallet or a UniversalRouter placeholder for it or for itself
    /// (a position-manager call's: the wallet itself; a V3 collect's: or V4's PositionManager).
    Router(periphery::Parties),
    /// Each of these must be the wallet or the V4 PositionManager's placeholder for it.
    Positions(periphery::Recipients),
    /// This parameter must be a contract allowlisted with this role.
    Listed(&'static str, Address, Role),
    /// A position moved from `from` (must be the wallet) to `to` (must be an allowlisted
    /// `uniswap-v3-staker`, which keeps it as the wallet's deposit).
    IntoStaker { from: Address, to: Address },
}

/// `data` decoded as a call of `C`, if it is one.
pub(crate) fn decode<C: SolCall>(data: &[u8]) -> Option<C> {
    (data.len() >= 4 && data[..4] == C::SELECTOR).then(|| C::abi_decode(data).ok()).flatten()
}

/// Decode `data` as `C` and name the party it sends value to or authorises.
fn party<C: SolCall>(data: &[u8], f: impl FnOnce(C) -> Party) -> Option<(&'static str, Party)> {
    decode::<C>(data).map(|c| (C::SIGNATURE, f(c)))
}

fn erc20(data: &[u8]) -> Option<(&'static str, Party)> {
    // Revoking an approval (to zero) takes nothing from anyone, whoever the spender.
    party::<approveCall>(data, |c| {
        if c.amount.is_zero() { Party::None } else { Party::Allowlisted("spender", c.spender) }
    })
    .or_else(|| party::<transferCall>(data, |c| Party::Recipient("to", c.to)))
}

fn weth(data: &[u8]) -> Option<(&'static str, Party)> {
    erc20(data)
        .or_else(|| party::<depositCall>(data, |_| Party::None))
        .or_else(|| party::<withdraw_0Call>(data, |_| Party::None))
}

fn v3_router(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<exactInputSingleCall>(data, |c| Party::Wallet("recipient", c.params.recipient))
        .or_else(|| party::<exactInputCall>(data, |c| Party::Wallet("recipient", c.params.recipient)))
        .or_else(|| party::<exactOutputSingleCall>(data, |c| Party::Wallet("recipient", c.params.recipient)))
        .or_else(|| party::<exactOutputCall>(data, |c| Party::Wallet("recipient", c.params.recipient)))
        .or_else(|| party::<unwrapWETH9Call>(data, |c| Party::Wallet("recipient", c.recipient)))
        .or_else(|| party::<refundETHCall>(data, |_| Party::None))
}

fn v2_router(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<swapExactTokensForTokensCall>(data, |c| Party::Wallet("to", c.to))
        .or_else(|| party::<swapTokensForExactTokensCall>(data, |c| Party::Wallet("to", c.to)))
        .or_else(|| party::<swapExactETHForTokensCall>(data, |c| Party::Wallet("to", c.to)))
        .or_else(|| party::<swapETHForExactTokensCall>(data, |c| Party::Wallet("to", c.to)))
        .or_else(|| party::<swapExactTokensForETHCall>(data, |c| Party::Wallet("to", c.to)))
        .or_else(|| party::<swapTokensForExactETHCall>(data, |c| Party::Wallet("to", c.to)))
        .or_else(|| party::<addLiquidityCall>(data, |c| Party::Wallet("to", c.to)))
        .or_else(|| party::<removeLiquidityCall>(data, |c| Party::Wallet("to", c.to)))
}

fn v3_positions(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<mintCall>(data, |c| Party::Wallet("recipient", c.params.recipient))
        .or_else(|| party::<increaseLiquidityCall>(data, |_| Party::None))
        .or_else(|| party::<decreaseLiquidityCall>(data, |_| Party::None))
        .or_else(|| party::<collectCall>(data, |c| Party::Wallet("recipient", c.params.recipient)))
        .or_else(|| party::<burnCall>(data, |_| Party::None))
        .or_else(|| party::<safeTransferFromCall>(data, |c| Party::IntoStaker { from: c.from, to: c.to }))
        // A position approved only to a UniversalRouter, which acts on it only for its owner (a
        // migration's decrease, collect and burn; the burn clears the approval).
        .or_else(|| party::<approveCall>(data, |c| Party::Listed("to", c.spender, Role::UniversalRouter)))
}

fn v3_staker(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<staker::stakeTokenCall>(data, |_| Party::None)
        .or_else(|| party::<staker::unstakeTokenCall>(data, |_| Party::None))
        .or_else(|| party::<staker::claimRewardCall>(data, |c| Party::Wallet("to", c.to)))
        .or_else(|| party::<staker::withdrawTokenCall>(data, |c| Party::Wallet("to", c.to)))
}

fn aave_pool(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<supplyCall>(data, |c| Party::Wallet("onBehalfOf", c.onBehalfOf))
        .or_else(|| party::<withdraw_1Call>(data, |c| Party::Wallet("to", c.to)))
        .or_else(|| party::<borrowCall>(data, |c| Party::Wallet("onBehalfOf", c.onBehalfOf)))
        .or_else(|| party::<repayCall>(data, |c| Party::Wallet("onBehalfOf", c.onBehalfOf)))
        .or_else(|| party::<setUserUseReserveAsCollateralCall>(data, |_| Party::None))
}

/// A vault takes the wallet's assets for the wallet's shares and gives the wallet's shares back
/// for assets to the wallet; its shares are an ERC-20 like any other.
fn vault(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<erc4626::depositCall>(data, |c| Party::Wallet("receiver", c.receiver))
        .or_else(|| party::<erc4626::mintCall>(data, |c| Party::Wallet("receiver", c.receiver)))
        .or_else(|| {
            party::<erc4626::withdrawCall>(data, |c| {
                Party::Wallets([("receiver", c.receiver), ("owner", c.owner)])
            })
        })
        .or_else(|| {
            party::<erc4626::redeemCall>(data, |c| {
                Party::Wallets([("receiver", c.receiver), ("owner", c.owner)])
            })
        })
        .or_else(|| erc20(data))
}

/// An agent is minted to the caller (the wallet) and its registry enforces that only its owner
/// or operator updates it; the verified wallet, where the agent is paid, may only become the
/// wallet. Transfers and approvals of an agent are not in scope.
fn identity_registry(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<erc8004::register_0Call>(data, |_| Party::None)
        .or_else(|| party::<erc8004::register_1Call>(data, |_| Party::None))
        .or_else(|| party::<erc8004::register_2Call>(data, |_| Party::None))
        .or_else(|| party::<erc8004::setAgentURICall>(data, |_| Party::None))
        .or_else(|| party::<erc8004::setMetadataCall>(data, |_| Party::None))
        .or_else(|| party::<erc8004::setAgentWalletCall>(data, |c| Party::Wallet("newWallet", c.newWallet)))
        .or_else(|| party::<erc8004::unsetAgentWalletCall>(data, |_| Party::None))
}

/// Feedback moves no value; the registry checks who may give, revoke and respond.
fn reputation_registry(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<erc8004::giveFeedbackCall>(data, |_| Party::None)
        .or_else(|| party::<erc8004::revokeFeedbackCall>(data, |_| Party::None))
        .or_else(|| party::<erc8004::appendResponseCall>(data, |_| Party::None))
}

fn validation_registry(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<erc8004::validationRequestCall>(data, |_| Party::None)
        .or_else(|| party::<erc8004::validationResponseCall>(data, |_| Party::None))
}

fn permit2(data: &[u8]) -> Option<(&'static str, Party)> {
    party::<permit2::approveCall>(data, |c| Party::Allowlisted("spender", c.spender))
}

/// The function of a call with `data` to a contract of `role` that only the operator's own
/// command may plan (`bardo identity set-uri`), if it is one: what an identity says it is and
/// where it is paid are the operator's — a plugin's plan that repointed the host's agent at
/// another card would have the host vouch for an impersonator.
pub fn operator_only(role: Role, data: &[u8]) -> Option<&'static str> {
    if role != Role::Erc8004IdentityRegistry {
        return None;
    }
    party::<erc8004::setAgentURICall>(data, |_| Party::None)
        .or_else(|| party::<erc8004::setMetadataCall>(data, |_| Party::None))
        .or_else(|| party::<erc8004::setAgentWalletCall>(data, |_| Party::None))
        .or_else(|| party::<erc8004::unsetAgentWalletCall>(data, |_| Party::None))
        .map(|(function, _)| function)
}

/// A V3 position manager's `multicall`: the manager delegatecalls itself with each call, so the
/// batch is in scope when every call in it is (a rebalance's decrease, collect, burn and mint in
/// one transaction; the staker's unstake, claim and withdraw). No ether (each delegatecall would
/// see the same `msg.value`) and no batch inside a batch.
fn batch(
    role: Role,
    calls: &[alloy::primitives::Bytes],
    value: alloy::primitives::U256,
    wallet: Address,
    roles: &dyn Fn(Address) -> Option<Role>,
    morpho_markets: &BTreeSet<B256>,
) -> Result<(), String> {
    if !value.is_zero() {
        return Err(format!("multicall on a {role} is sent {value} wei"));
    }
    if calls.is_empty() {
        return Err(format!("multicall on a {role} holds no call"));
    }
    for (i, call) in calls.iter().enumerate() {
        if call.get(..4) == Some(&multicallCall::SELECTOR[..]) {
            return Err(format!("multicall on a {role} holds another multicall"));
        }
        let zero = alloy::primitives::U256::ZERO;
        check(role, call, zero, wallet, roles, morpho_markets)
            .map_err(|e| format!("multicall call {} of {}: {e}", i + 1, calls.len()))?;
    }
    Ok(())
}

/// Whether a call with `data` (and `value` wei) to a contract of `role` is in scope for
/// `wallet`, given what is allowlisted. Err says which function or parameter is refused.
pub fn check(
    role: Role,
    data: &[u8],
    value: alloy::primitives::U256,
    wallet: Address,
    roles: &dyn Fn(Address) -> Option<Role>,
    morpho_markets: &BTreeSet<B256>,
) -> Result<(), String> {
    if matches!(role, Role::UniswapV3PositionManager | Role::UniswapV3Staker)
        && let Some(calls) = decode::<multicallCall>(data)
    {
        return batch(role, &calls.data, value, wallet, roles, morpho_markets);
    }
    let allowlisted = |a: Address| roles(a).is_some();
    let allowlisted = &allowlisted;
    let found = match role {
        Role::Unscoped => return Ok(()),
        // Ether only: a plain transfer, no call data.
        Role::Recipient if data.is_empty() => Some(("a plain ether transfer", Party::None)),
        Role::Recipient => None,
        Role::Erc20 => erc20(data),
        Role::Weth => weth(data),
        Role::UniswapV3SwapRouter => v3_router(data),
        Role::UniswapV2Router => v2_router(data),
        Role::UniswapV3PositionManager => v3_positions(data),
        Role::UniswapV3Staker => v3_staker(data),
        Role::AaveV3Pool => aave_pool(data),
        Role::Erc4626Vault => vault(data),
        Role::Permit2 => permit2(data),
        Role::Erc8004IdentityRegistry => identity_registry(data),
        Role::Erc8004ReputationRegistry => reputation_registry(data),
        Role::Erc8004ValidationRegistry => validation_registry(data),
        Role::MorphoBlue => morpho::parties(data, morpho_markets)?,
        Role::PendleRouter => pendle::parties(data, roles)?,
        // A market's LP token, a YT and an SY are ERC-20s besides.
        Role::PendleMarket | Role::PendleYieldToken | Role::PendleSy => erc20(data),
        Role::UniversalRouter => match universal_router::parties(data) {
            Some(Ok(parties)) => {
                refuse_untrusted_hooks("UniversalRouter execute swaps", &parties.hooks, roles)?;
                Some(("execute(bytes,bytes[],uint256)", Party::Router(parties)))
            }
            Some(Err(e)) => return Err(format!("UniversalRouter execute: {e}")),
            None => None,
        },
        Role::UniswapV4PositionManager => match v4_positions::parties(data) {
            Some(Ok(parties)) => {
                refuse_untrusted_hooks("PositionManager modifyLiquidities mints", &parties.hooks, roles)?;
                Some(("modifyLiquidities(bytes,uint256)", Party::Positions(parties.recipients)))
            }
            Some(Err(e)) => return Err(format!("PositionManager modifyLiquidities: {e}")),
            None => None,
        },
        Role::V4Hook => None,
        // The depositor here; where it arrives, and as what, is the bridge guard's (it knows the
        // other chains).
        Role::AcrossSpokePool => {
            party::<across::depositV3Call>(data, |c| Party::Wallet("depositor", c.depositor))
        }
    };
    let selector =
        data.get(..4).map_or_else(|| "no selector".to_owned(), |s| format!("0x{}", hex::encode(s)));
    let Some((function, party)) = found else {
        return Err(format!("function {selector} is not in the scope of a {role}"));
    };
    // Ether goes only where a function takes it.
    let payable = matches!(
        role,
        Role::Weth
            | Role::UniswapV3SwapRouter
            | Role::UniswapV2Router
            | Role::UniswapV3PositionManager
            | Role::UniversalRouter
            | Role::UniswapV4PositionManager
            | Role::Recipient
    );
    if !value.is_zero() && !payable {
        return Err(format!("{function} on a {role} is sent {value} wei"));
    }
    match party {
        Party::None => Ok(()),
        Party::Wallet(_, who) if who == wallet => Ok(()),
        Party::Wallet(name, who) => {
            Err(format!("{function} on a {role} names {who} as `{name}`; it must be the wallet {wallet}"))
        }
        Party::Wallets(parties) => match parties.iter().find(|(_, who)| *who != wallet) {
            None => Ok(()),
            Some((name, who)) => {
                Err(format!("{function} on a {role} names {who} as `{name}`; it must be the wallet {wallet}"))
            }
        },
        Party::Allowlisted(_, who) if who == wallet || allowlisted(who) => Ok(()),
        Party::Allowlisted(name, who) => {
            Err(format!("{function} names {who} as `{name}`, which is not allowlisted"))
        }
        Party::Recipient(_, who) if who == wallet || roles(who) == Some(Role::Recipient) => Ok(()),
        Party::Recipient(name, who) => {
            Err(format!("{function} names {who} as `{name}`, which is not allowlisted as a `recipient`"))
        }
        Party::Router(parties) => {
            let v4_manager = |who: Address| roles(who) == Some(Role::UniswapV4PositionManager);
            let refused = (parties.recipients.iter())
                .find(|(_, who)| !universal_router::may_receive(*who, wallet))
                .or_else(|| parties.wallet_only.iter().find(|(_, who)| *who != wallet))
                .or_else(|| {
                    parties.to_v4_manager.iter().find(|(_, who)| *who != wallet && !v4_manager(*who))
                });
            match refused {
                None => Ok(()),
                Some((name, who)) => Err(format!(
                    "{function} on a {role} names {who} as {name}; it must be the wallet {wallet}"
                )),
            }
        }
        Party::Listed(_, who, want) if roles(who) == Some(want) => Ok(()),
        Party::Listed(name, who, want) => Err(format!(
            "{function} on a {role} names {who} as `{name}`, which is not allowlisted as a `{want}`"
        )),
        Party::IntoStaker { from, .. } if from != wallet => Err(format!(
            "{function} on a {role} moves position of {from}; only the wallet {wallet}'s may move"
        )),
        Party::IntoStaker { to, .. } if roles(to) == Some(Role::UniswapV3Staker) => Ok(()),
        Party::IntoStaker { to, .. } => Err(format!(
            "{function} on a {role} moves a position to {to}, which is not allowlisted as a `uniswap-v3-staker`; a position leaves the wallet only as a deposit in a staker the operator lists"
        )),
        Party::Positions(recipients) => {
            match recipients.iter().find(|(_, who)| !v4_positions::may_receive(*who, wallet)) {
                None => Ok(()),
                Some((name, who)) => Err(format!(
                    "{function} on a {role} names {who} as {name}; it must be the wallet {wallet}"
                )),
            }
        }
    }
}

/// A V4 pool with a hook is used for the wallet only if the operator trusts that hook (role
/// `v4-hook`): a hook runs its own code inside every swap and liquidity change of its pool —
/// with return-delta permissions it changes the amounts, and with any permission it can emit
/// what looks like the PoolManager's events — whatever its address says it may do.
fn refuse_untrusted_hooks(
    what: &str,
    hooks: &[Address],
    roles: &dyn Fn(Address) -> Option<Role>,
) -> Result<(), String> {
    let trusted = |h: Address| matches!(roles(h), Some(Role::V4Hook | Role::Unscoped));
    match hooks.iter().find(|h| !h.is_zero() && !trusted(**h)) {
        None => Ok(()),
        Some(hook) => Err(format!(
            "{what} through a V4 pool whose hook {hook} the operator does not trust (its address grants {}{}); \
             list the hook with role `v4-hook` under [safety.allowlist] to use its pools",
            universal_router::permissions(*hook),
            if universal_router::returns_delta(*hook) { ", so it may change the amounts" } else { "" }
        )),
    }
}

/// The V4 hooks the calls of a plan go through (the pool keys in UniversalRouter swaps and
/// PositionManager mints, whatever the contracts' roles): a hooked pool raises the plan's risk.
pub fn v4_hooks(calls: &[bardo_core::tool::PlannedCall]) -> Vec<Address> {
    let mut out: Vec<Address> = calls
        .iter()
        .filter_map(|c| universal_router::parties(&c.data).or_else(|| v4_positions::parties(&c.data))?.ok())
        .flat_map(|p| p.hooks)
        .filter(|h| !h.is_zero())
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{U256, address};

    const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");
    const ROUTER: Address = address!("0x00000000000000000000000000000000000000d1");
    const STRANGER: Address = address!("0x00000000000000000000000000000000000000e1");

    const TREASURY: Address = address!("0x00000000000000000000000000000000000000f1");
    const STAKER: Address = address!("0x00000000000000000000000000000000000000c1");

    fn allowed(a: Address) -> Option<Role> {
        match a {
            ROUTER => Some(Role::UniswapV3SwapRouter),
            TREASURY => Some(Role::Recipient),
            STAKER => Some(Role::UniswapV3Staker),
            _ => None,
        }
    }

    fn in_scope(role: Role, data: Vec<u8>) -> Result<(), String> {
        check(role, &data, U256::ZERO, WALLET, &allowed, &BTreeSet::new())
    }

    fn swap(recipient: Address) -> Vec<u8> {
        exactInputSingleCall {
            params: ExactInputSingleParams {
                tokenIn: ROUTER,
                tokenOut: ROUTER,
                fee: alloy::primitives::aliases::U24::from(500),
                recipient,
                deadline: U256::ZERO,
                amountIn: U256::from(1),
                amountOutMinimum: U256::ZERO,
                sqrtPriceLimitX96: alloy::primitives::aliases::U160::ZERO,
            },
        }
        .abi_encode()
    }

    #[test]
    fn a_swap_pays_only_the_wallet() {
        assert_eq!(in_scope(Role::UniswapV3SwapRouter, swap(WALLET)), Ok(()));
        let e = in_scope(Role::UniswapV3SwapRouter, swap(STRANGER)).expect_err("stranger");
        assert!(e.contains("recipient") && e.contains("must be the wallet"), "{e}");
        assert!(in_scope(Role::Erc20, swap(WALLET)).is_err(), "a token has no swap");
    }

    #[test]
    fn tokens_only_approve_allowlisted_spenders() {
        let approve = |spender| approveCall { spender, amount: U256::from(5) }.abi_encode();
        assert_eq!(in_scope(Role::Erc20, approve(ROUTER)), Ok(()));
        assert!(in_scope(Role::Erc20, approve(STRANGER)).expect_err("stranger").contains("not allowlisted"));
        // increaseAllowance(address,uint256) is not `approve`.
        let mut increase = approve(ROUTER);
        increase[..4].copy_from_slice(&[0x39, 0x50, 0x93, 0x51]);
        assert!(in_scope(Role::Erc20, increase).expect_err("selector").contains("not in the scope"));
        let value = check(Role::Erc20, &approve(ROUTER), U256::from(1), WALLET, &allowed, &BTreeSet::new());
        assert!(value.expect_err("value").contains("wei"));
    }

    #[test]
    fn revocations_go_to_anyone_and_transfers_only_to_recipients() {
        let approve = |spender, amount: u64| approveCall { spender, amount: U256::from(amount) }.abi_encode();
        assert_eq!(in_scope(Role::Erc20, approve(STRANGER, 0)), Ok(()), "a revocation");
        assert!(in_scope(Role::Erc20, approve(STRANGER, 1)).is_err(), "an approval");
        let transfer = |to| transferCall { to, amount: U256::from(7) }.abi_encode();
        assert_eq!(in_scope(Role::Erc20, transfer(TREASURY)), Ok(()));
        assert_eq!(in_scope(Role::Erc20, transfer(WALLET)), Ok(()));
        let e = in_scope(Role::Erc20, transfer(ROUTER)).expect_err("a router is no recipient");
        assert!(e.contains("not allowlisted as a `recipient`"), "{e}");
        assert!(in_scope(Role::Erc20, transfer(STRANGER)).is_err());
        // A recipient takes plain ether, and is never called.
        assert_eq!(check(Role::Recipient, &[], U256::from(5), WALLET, &allowed, &BTreeSet::new()), Ok(()));
        assert!(
            check(Role::Recipient, &transfer(WALLET), U256::ZERO, WALLET, &allowed, &BTreeSet::new())
                .is_err()
        );
    }

    #[test]
    fn a_hooked_pool_trades_only_when_its_hook_is_trusted() {
        use universal_router::tests::{execute, v4_swap_hooked};
        let swap =
            |hooks: Address| execute(&[0x10], vec![v4_swap_hooked(universal_router::tests::WALLET, hooks)]);
        let wallet = universal_router::tests::WALLET;
        let skimming = address!("0x00000000000000000000000000000000000000c4");
        let e = check(Role::UniversalRouter, &swap(skimming), U256::ZERO, wallet, &allowed, &BTreeSet::new())
            .expect_err("hook");
        assert!(e.contains("may change the amounts") && e.contains("role `v4-hook`"), "{e}");
        assert!(e.contains("after-swap, after-swap-returns-delta"), "the permission bits are named: {e}");
        let trusted = |a: Address| (a == skimming).then_some(Role::V4Hook);
        assert_eq!(
            check(Role::UniversalRouter, &swap(skimming), U256::ZERO, wallet, &trusted, &BTreeSet::new()),
            Ok(())
        );
        // A hook with no return-delta permission runs code in the swap too: trusted or refused.
        let after_swap_only = address!("0x0000000000000000000000000000000000000040");
        let e = check(
            Role::UniversalRouter,
            &swap(after_swap_only),
            U256::ZERO,
            wallet,
            &allowed,
            &BTreeSet::new(),
        )
        .expect_err("an untrusted hook");
        assert!(e.contains("grants after-swap)") && !e.contains("may change the amounts"), "{e}");
        // Allowlisted for some other role is not trusted as a hook.
        let as_token = |a: Address| (a == after_swap_only).then_some(Role::Erc20);
        assert!(
            check(
                Role::UniversalRouter,
                &swap(after_swap_only),
                U256::ZERO,
                wallet,
                &as_token,
                &BTreeSet::new()
            )
            .is_err()
        );
        assert_eq!(
            check(
                Role::UniversalRouter,
                &swap(Address::ZERO),
                U256::ZERO,
                wallet,
                &allowed,
                &BTreeSet::new()
            ),
            Ok(()),
            "no hook"
        );
    }

    #[test]
    fn hooked_pools_in_swaps_and_mints_are_found_for_the_risk_tier() {
        use universal_router::tests::{WALLET as W, execute, v4_swap_hooked};
        let call = |data: Vec<u8>| bardo_core::tool::PlannedCall {
            chain_id: 1,
            to: ROUTER,
            data: data.into(),
            value: U256::ZERO,
            description: String::new(),
        };
        let hook = address!("0x00000000000000000000000000000000000000c0");
        let hooked = execute(&[0x10], vec![v4_swap_hooked(W, hook)]);
        let plain = execute(&[0x10], vec![v4_swap_hooked(W, Address::ZERO)]);
        assert_eq!(v4_hooks(&[call(plain.clone()), call(hooked)]), [hook]);
        assert!(v4_hooks(&[call(plain)]).is_empty());
        assert_eq!(v4_hooks(&[call(v4_positions::tests::mint(W, hook))]), [hook]);
        assert!(v4_hooks(&[call(vec![1, 2, 3, 4])]).is_empty(), "not a V4 call");
        let mint = v4_positions::tests::mint(W, address!("0x0000000000000000000000000000000000000044"));
        let e = check(Role::UniswapV4PositionManager, &mint, U256::ZERO, W, &allowed, &BTreeSet::new())
            .expect_err("hook");
        assert!(e.contains("does not trust") && e.contains("may change the amounts"), "{e}");
    }

    #[test]
    fn positions_and_aave_stay_with_the_wallet() {
        let collect = |recipient| {
            collectCall {
                params: CollectParams { tokenId: U256::from(1), recipient, amount0Max: 1, amount1Max: 1 },
            }
            .abi_encode()
        };
        assert_eq!(in_scope(Role::UniswapV3PositionManager, collect(WALLET)), Ok(()));
        assert!(in_scope(Role::UniswapV3PositionManager, collect(STRANGER)).is_err());
        // A batch is each of its calls: one collect to a stranger refuses all of it.
        let batch = |calls: Vec<Vec<u8>>| {
            multicallCall { data: calls.into_iter().map(Into::into).collect() }.abi_encode()
        };
        let burn = burnCall { tokenId: U256::from(1) }.abi_encode();
        assert_eq!(
            in_scope(Role::UniswapV3PositionManager, batch(vec![collect(WALLET), burn.clone()])),
            Ok(())
        );
        let e = in_scope(Role::UniswapV3PositionManager, batch(vec![burn.clone(), collect(STRANGER)]))
            .expect_err("stranger");
        assert!(e.starts_with("multicall call 2 of 2") && e.contains("recipient"), "{e}");
        let nested = batch(vec![batch(vec![collect(WALLET)])]);
        assert!(
            in_scope(Role::UniswapV3PositionManager, nested)
                .expect_err("nested")
                .contains("another multicall")
        );
        let sweep = [&[0xdf, 0x2a, 0xb5, 0xbb][..], &[0u8; 96]].concat(); // sweepToken(address,uint256,address)
        assert!(in_scope(Role::UniswapV3PositionManager, batch(vec![sweep])).is_err());
        assert!(in_scope(Role::UniswapV3PositionManager, batch(Vec::new())).is_err());
        let withdraw = |to| withdraw_1Call { asset: ROUTER, amount: U256::from(1), to }.abi_encode();
        assert_eq!(in_scope(Role::AaveV3Pool, withdraw(WALLET)), Ok(()));
        assert!(in_scope(Role::AaveV3Pool, withdraw(STRANGER)).is_err());
        let grant = permit2::approveCall {
            token: ROUTER,
            spender: STRANGER,
            amount: alloy::primitives::aliases::U160::from(1),
            expiration: alloy::primitives::aliases::U48::from(1),
        };
        assert!(
            in_scope(Role::Permit2, grant.abi_encode()).expect_err("spender").contains("not allowlisted")
        );
        assert_eq!(in_scope(Role::Unscoped, vec![1, 2, 3]), Ok(()));
    }

    #[test]
    fn a_position_leaves_only_into_a_listed_staker_and_comes_back_only_to_the_wallet() {
        let one = U256::from(1);
        let deposit =
            |from, to| safeTransferFromCall { from, to, tokenId: one, data: Default::default() }.abi_encode();
        assert_eq!(in_scope(Role::UniswapV3PositionManager, deposit(WALLET, STAKER)), Ok(()));
        let e = in_scope(Role::UniswapV3PositionManager, deposit(WALLET, STRANGER)).expect_err("stranger");
        assert!(e.contains("not allowlisted as a `uniswap-v3-staker`"), "{e}");
        // Allowlisted for another role is no staker.
        assert!(in_scope(Role::UniswapV3PositionManager, deposit(WALLET, ROUTER)).is_err());
        assert!(in_scope(Role::UniswapV3PositionManager, deposit(STRANGER, STAKER)).is_err());
        let key = staker::IncentiveKey {
            rewardToken: ROUTER,
            pool: ROUTER,
            startTime: one,
            endTime: one,
            refundee: STRANGER,
        };
        let unstake = staker::unstakeTokenCall { key: key.clone(), tokenId: one }.abi_encode();
        let stake = staker::stakeTokenCall { key, tokenId: one }.abi_encode();
        let claim = |to| {
            staker::claimRewardCall { rewardToken: ROUTER, to, amountRequested: U256::ZERO }.abi_encode()
        };
        let withdraw =
            |to| staker::withdrawTokenCall { tokenId: one, to, data: Default::default() }.abi_encode();
        let batch = |calls: Vec<Vec<u8>>| {
            multicallCall { data: calls.into_iter().map(Into::into).collect() }.abi_encode()
        };
        let exit = batch(vec![unstake.clone(), claim(WALLET), withdraw(WALLET)]);
        assert_eq!(in_scope(Role::UniswapV3Staker, exit), Ok(()));
        assert_eq!(
            in_scope(Role::UniswapV3Staker, batch(vec![unstake.clone(), claim(WALLET), stake])),
            Ok(())
        );
        let e = in_scope(Role::UniswapV3Staker, batch(vec![unstake.clone(), claim(STRANGER)]))
            .expect_err("claim");
        assert!(e.starts_with("multicall call 2 of 2") && e.contains("`to`"), "{e}");
        assert!(in_scope(Role::UniswapV3Staker, withdraw(STRANGER)).is_err());
        // transferDeposit(uint256,address): the deposit to another owner, never.
        let transfer = [&[0x26, 0xbf, 0xee, 0x04][..], &[0u8; 64]].concat();
        assert!(
            in_scope(Role::UniswapV3Staker, transfer).expect_err("transfer").contains("not in the scope")
        );
    }

    #[test]
    fn a_vault_deposits_for_and_pays_out_only_to_the_wallet() {
        let one = U256::from(1);
        let deposit = |receiver| erc4626::depositCall { assets: one, receiver }.abi_encode();
        assert_eq!(in_scope(Role::Erc4626Vault, deposit(WALLET)), Ok(()));
        let e = in_scope(Role::Erc4626Vault, deposit(STRANGER)).expect_err("for a stranger");
        assert!(e.contains("`receiver`") && e.contains("must be the wallet"), "{e}");
        let mint = |receiver| erc4626::mintCall { shares: one, receiver }.abi_encode();
        assert_eq!(in_scope(Role::Erc4626Vault, mint(WALLET)), Ok(()));
        assert!(in_scope(Role::Erc4626Vault, mint(STRANGER)).is_err());
        let redeem = |receiver, owner| erc4626::redeemCall { shares: one, receiver, owner }.abi_encode();
        assert_eq!(in_scope(Role::Erc4626Vault, redeem(WALLET, WALLET)), Ok(()));
        let e = in_scope(Role::Erc4626Vault, redeem(STRANGER, WALLET)).expect_err("paid to a stranger");
        assert!(e.contains("`receiver`"), "{e}");
        // Redeeming someone else's shares (spending their allowance) is not the wallet's business.
        let e = in_scope(Role::Erc4626Vault, redeem(WALLET, STRANGER)).expect_err("another owner");
        assert!(e.contains("`owner`"), "{e}");
        let withdraw = |receiver, owner| erc4626::withdrawCall { assets: one, receiver, owner }.abi_encode();
        assert_eq!(in_scope(Role::Erc4626Vault, withdraw(WALLET, WALLET)), Ok(()));
        assert!(in_scope(Role::Erc4626Vault, withdraw(WALLET, STRANGER)).is_err());
        // The share token: approvals to allowlisted spenders only, no ether.
        let approve = approveCall { spender: STRANGER, amount: one }.abi_encode();
        assert!(in_scope(Role::Erc4626Vault, approve).is_err());
        assert!(
            check(Role::Erc4626Vault, &deposit(WALLET), one, WALLET, &allowed, &BTreeSet::new()).is_err(),
            "no ether"
        );
        assert!(in_scope(Role::Erc20, deposit(WALLET)).is_err(), "a token is no vault");
    }
}
