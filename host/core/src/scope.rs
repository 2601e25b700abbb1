//! What an allowlisted contract is, and so which of its functions a write plan may call: the
//! allowlist names each contract with a role (Zodiac-Roles style), and the host checks every
//! planned call against its role's scope before simulating. An address listed without a role is
//! an ERC-20: only `approve`, to an allowlisted spender.

use serde::{Deserialize, Serialize};

/// The role of an allowlisted contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// A token: `approve` to an allowlisted spender.
    #[default]
    Erc20,
    /// Wrapped ether: an ERC-20 plus `deposit` and `withdraw`.
    Weth,
    /// Uniswap V3 `SwapRouter`: swaps whose recipient is the wallet.
    UniswapV3SwapRouter,
    /// Uniswap V2 `Router02`: swaps and liquidity whose `to` is the wallet.
    UniswapV2Router,
    /// Uniswap V3 `NonfungiblePositionManager`: mint to the wallet, increase, decrease, collect
    /// to the wallet, burn; a position moves only from the wallet into an allowlisted
    /// `uniswap-v3-staker` (a deposit) — never to anyone else, never approved.
    UniswapV3PositionManager,
    /// Uniswap's V3 Staker: stake and unstake the wallet's deposits, claim rewards and withdraw
    /// a deposit, each to the wallet — never a deposit moved to another owner, never an
    /// incentive created or ended.
    UniswapV3Staker,
    /// Uniswap V4 `PositionManager`: `modifyLiquidities` that mint to the wallet, increase,
    /// decrease or burn, settle from the wallet and take or sweep to it — never a transfer of a
    /// position, a swap or a subscription.
    UniswapV4PositionManager,
    /// Aave V3 `Pool`: supply, borrow and repay on behalf of the wallet, withdraw to it, collateral
    /// switches — never credit delegation.
    AaveV3Pool,
    /// An ERC-4626 vault: deposit and mint for the wallet, withdraw and redeem the wallet's own
    /// shares to the wallet; its share token as an ERC-20.
    Erc4626Vault,
    /// Permit2: `approve` to an allowlisted spender.
    Permit2,
    /// An ERC-8004 Identity Registry: register an agent (minted to the caller, the wallet),
    /// update its agentURI and metadata, move its verified wallet only to the wallet itself —
    /// never transfer or approve an agent.
    Erc8004IdentityRegistry,
    /// An ERC-8004 Reputation Registry: give and revoke feedback, append responses.
    Erc8004ReputationRegistry,
    /// An ERC-8004 Validation Registry: request a validation, answer one.
    Erc8004ValidationRegistry,
    /// Morpho Blue: supply, withdraw, borrow, repay, supply and withdraw collateral — each for
    /// the wallet and paying it, without a callback, and only in a market the operator trusts
    /// (`[safety.morpho_markets]`: by id, the hash of its tokens, oracle, IRM and LLTV; anyone
    /// can create a market with a lying oracle). Never an authorization, a flash loan, a market
    /// created or a liquidation.
    MorphoBlue,
    /// Uniswap's UniversalRouter: `execute` of V2 / V3 / V4 swaps, wraps, unwraps and sweeps whose
    /// every recipient is the wallet (or the router itself between steps).
    UniversalRouter,
    /// A Uniswap V4 hook the operator trusts: swaps and deposits may go through its pools (a hook
    /// runs its own code inside each; with return-delta permissions it changes what they pay or
    /// deliver). A pool whose hook is not listed is refused; the hook is never called.
    V4Hook,
    /// Pendle's `PendleRouterV4`: buy and sell PT and YT, add and remove liquidity, mint and
    /// redeem PT+YT, claim interest and rewards — every `receiver` (and the claimer) the wallet,
    /// only in markets and yield tokens the operator lists (`pendle-market`,
    /// `pendle-yield-token`), with no aggregator swap and no limit-order fill.
    PendleRouter,
    /// A Pendle market the operator trusts (anyone can create one, over an SY of their own):
    /// the router may trade in it; its LP token is an ERC-20.
    PendleMarket,
    /// The yield token (YT) of a trusted Pendle market: the router may mint, redeem and claim
    /// with it; an ERC-20.
    PendleYieldToken,
    /// The SY of a trusted Pendle market: the router may claim its rewards; an ERC-20.
    PendleSy,
    /// Across V3's SpokePool: `depositV3` by the wallet, for the listed counterpart of its input
    /// to arrive at the wallet (or a listed recipient) on another configured chain — no
    /// exclusive relayer the operator does not list, no message; valued by what arrives
    /// (`hooks::bridge_guard`).
    AcrossSpokePool,
    /// An account the wallet may pay (a treasury, the operator's cold wallet): plain ether
    /// transfers to it and ERC-20 `transfer`s naming it; it is never called.
    Recipient,
    /// Any function: the operator trusts this contract with the wallet entirely.
    Unscoped,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            Self::Erc20 => "erc20",
            Self::Weth => "weth",
            Self::UniswapV3SwapRouter => "uniswap-v3-swap-router",
            Self::UniswapV2Router => "uniswap-v2-router",
            Self::UniswapV3PositionManager => "uniswap-v3-position-manager",
            Self::UniswapV4PositionManager => "uniswap-v4-position-manager",
            Self::UniswapV3Staker => "uniswap-v3-staker",
            Self::AaveV3Pool => "aave-v3-pool",
            Self::Erc4626Vault => "erc4626-vault",
            Self::Permit2 => "permit2",
            Self::Erc8004IdentityRegistry => "erc8004-identity-registry",
            Self::Erc8004ReputationRegistry => "erc8004-reputation-registry",
            Self::Erc8004ValidationRegistry => "erc8004-validation-registry",
            Self::MorphoBlue => "morpho-blue",
            Self::UniversalRouter => "universal-router",
            Self::PendleRouter => "pendle-router",
            Self::PendleMarket => "pendle-market",
            Self::PendleYieldToken => "pendle-yield-token",
            Self::PendleSy => "pendle-sy",
            Self::V4Hook => "v4-hook",
            Self::AcrossSpokePool => "across-spoke-pool",
            Self::Recipient => "recipient",
            Self::Unscoped => "unscoped",
        };
        f.write_str(name)
    }
}
