//! Pendle V2 on the devnet, from `@pendle/core-v2` 6.11.0's compiled artifacts
//! (`devnet/install-packed.sh`): the yield-contract factory and the market factory (their
//! creation code split in two data contracts, as Pendle deploys them), the gauge controller that
//! pays PENDLE to liquidity providers, `PendleRouterV4` with its action facets, the static
//! router (Pendle's on-chain quoter) and the PT/YT/LP oracle — the upgradeable ones behind
//! OpenZeppelin's ERC1967Proxy (their implementations disable initializers; the devnet never
//! upgrades them). No package ships an SY, so Pendle's own `PendleERC4626SY` is compiled from the
//! sources kept in `devnet/contracts/pendle-sy/`: one SY per ERC-4626 vault (`bvUSDC`,
//! `bvWETH`), a PT/YT pair maturing ~half a year after the deploy and a market seeded at an
//! implied APY near [`SEED_APY`], with the oracle's observations reserved for [`TWAP_SECS`].

use super::deployer::{DeployError, Deployer, Token};
use super::vaults::Vault;
use alloy::network::TransactionBuilder;
use alloy::primitives::aliases::{U80, U96};
use alloy::primitives::{Address, Bytes, I256, U256, keccak256};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolEvent, SolValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

sol! {
    event Deployed(string indexed name, address creationCodeContractA, uint256 creationCodeSizeA,
        address creationCodeContractB, uint256 creationCodeSizeB);
    interface Splitter { function deploy(string name, bytes creationCode) external; }
    interface YieldFactory {
        function initialize(uint96 expiryDivisor, uint128 interestFeeRate, uint128 rewardFeeRate, address treasury,
            address owner) external;
        function createYieldContract(address SY, uint32 expiry, bool doCacheIndexSameBlock)
            external returns (address PT, address YT);
    }
    interface MarketFactory {
        function initialize(address owner, address treasury, uint8 reserveFeePercent) external;
        function createNewMarket(address PT, int256 scalarRoot, int256 initialAnchor, uint80 lnFeeRateRoot)
            external returns (address market);
    }
    interface GaugeController {
        function initialize(address owner) external;
        function whitelistMarkets(address[] markets, bool isWhitelisted) external;
        function setRewardDatas(address[] markets, uint128[] pendlePerSecs, uint128[] incentiveEndsAts) external;
    }
    interface Oracle {
        function initialize(uint16 blockCycleNumerator, address owner) external;
        function getOracleState(address market, uint32 duration) external view
            returns (bool increaseCardinalityRequired, uint16 cardinalityRequired, bool oldestObservationSatisfied);
    }
    interface Router {
        struct SelectorsToFacet { address facet; bytes4[] selectors; }
        function setSelectorToFacets(SelectorsToFacet[] arr) external;
        /// The static router's spelling of the same.
        function setFacetForSelectors(SelectorsToFacet[] arr) external;
        struct ApproxParams { uint256 guessMin; uint256 guessMax; uint256 guessOffchain; uint256 maxIteration; uint256 eps; }
        function setDefaultApproxParams(ApproxParams params) external;
    }
    interface Sy {
        function deposit(address receiver, address tokenIn, uint256 amountTokenToDeposit, uint256 minSharesOut)
            external payable returns (uint256 amountSharesOut);
    }
    interface Yt { function mintPY(address receiverPT, address receiverYT) external returns (uint256 amountPYOut); }
    interface Market {
        function mint(address receiver, uint256 netSyDesired, uint256 netPtDesired)
            external returns (uint256 netLpOut, uint256 netSyUsed, uint256 netPtUsed);
        function increaseObservationsCardinalityNext(uint16 cardinalityNext) external;
    }
    interface Erc20 {
        function mint(address account, uint256 value) external returns (bool);
        function approve(address spender, uint256 amount) external returns (bool);
        function transfer(address to, uint256 amount) external returns (bool);
        function balanceOf(address account) external view returns (uint256);
    }
}

/// Where the package's artifacts are (relative to `node_modules`).
const BUILD: &str = "@pendle/core-v2/build/artifacts/contracts";

/// The SY implementation's source (under `devnet/contracts/`).
pub(crate) const SY_SOURCE: &str = "pendle-sy/core/StandardizedYield/implementations/PendleERC4626SY.sol";

/// The implied APY each market is seeded at (the PT/SY ratio is 1:1 in asset terms, so the
/// market starts at its initial anchor).
pub const SEED_APY: f64 = 0.08;

/// The TWAP the oracle is ready for as soon as the devnet starts: observations reserved for it
/// and the clock moved past it at the end of the deploy.
pub const TWAP_SECS: u32 = 900;

/// Maturities are whole days (the yield factory's expiry divisor), ~half a year out.
const EXPIRY_DIVISOR: u64 = 86_400;
const MATURITY_DAYS: u64 = 182;

/// Market shape: Pendle's rate scalar root and a 0.1 % fee (`ln(1.001)`).
const SCALAR_ROOT: u128 = 12_000_000_000_000_000_000;
const LN_FEE_RATE_ROOT: u128 = 999_500_333_083_533;
/// The share of fees kept by the treasury, in percent.
const RESERVE_FEE_PERCENT: u8 = 80;
/// PENDLE paid to each market's liquidity providers per second until maturity, and what the
/// gauge controller holds to pay it.
/// PENDLE's price on the devnet's feed, USD.
pub const PENDLE_USD: f64 = 3.5;

const PENDLE_PER_SEC: u128 = 10_000_000_000_000_000;
const PENDLE_FUNDED: u128 = 1_000_000;
/// Blocks of one second: the oracle reserves one observation per second of the TWAP.
const BLOCK_CYCLE_NUMERATOR: u16 = 1_000;

/// Pendle V2 and its markets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pendle {
    /// Contracts by role: `router` (PendleRouterV4), `router_static`, `py_lp_oracle`,
    /// `yield_contract_factory`, `market_factory`, `gauge_controller`, `pendle` (the reward token).
    pub contracts: BTreeMap<String, Address>,
    /// Markets by name (`PT-bvUSDC`).
    pub markets: BTreeMap<String, PendleMarket>,
}

/// One market and its yield contracts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendleMarket {
    /// The market (also its LP token).
    pub market: Address,
    /// The standardized-yield token over the vault.
    pub sy: Address,
    /// The principal token.
    pub pt: Address,
    /// The yield token.
    pub yt: Address,
    /// Maturity (unix seconds).
    pub expiry: u64,
    /// The vault's share symbol (`bvUSDC`): the SY's yield token.
    pub yield_token: String,
    /// The vault's asset (`USDC`): what PT redeems for in value, and the SY's asset.
    pub asset: String,
}

/// Deploy Pendle V2 and a seeded market over each vault in `vaults`, once [`compile`]d.
pub(super) async fn deploy_pendle(
    d: &Deployer,
    tokens: &BTreeMap<String, Token>,
    vaults: &BTreeMap<String, Vault>,
) -> Result<Pendle, DeployError> {
    let none = BTreeMap::new();
    let from = d.from;
    let pendle = d
        .deploy(
            "@aave/core-v3/artifacts/contracts/mocks/tokens/MintableERC20.sol/MintableERC20.json",
            ("Pendle".to_owned(), "PENDLE".to_owned(), U256::from(18u8)).abi_encode_params(),
            &none,
        )
        .await?;

    // Creation code too large for one contract is kept in two (Pendle's BaseSplitCodeFactory).
    let splitter = d.deploy(&art("offchain-helpers/BaseSplitCodeFactoryContract"), vec![], &none).await?;
    let yt_code = super::artifacts::Artifact::load(&d.modules, &art("core/YieldContracts/PendleYieldToken"))?
        .link(&none)?;
    let yt_split = split(d, splitter, "PendleYieldToken", yt_code).await?;
    let yield_impl = d
        .deploy(
            &art("core/YieldContracts/PendleYieldContractFactoryUpg"),
            yt_split.abi_encode_params(),
            &none,
        )
        .await?;
    let init = YieldFactory::initializeCall {
        expiryDivisor: U96::from(EXPIRY_DIVISOR),
        interestFeeRate: 30_000_000_000_000_000, // 3 %
        rewardFeeRate: 30_000_000_000_000_000,
        treasury: from,
        owner: from,
    };
    let yield_factory = proxy(d, yield_impl, init.abi_encode()).await?;

    let gauge_impl = d
        .deploy(&art("LiquidityMining/GaugeController/PendleGaugeControllerUpg"), pendle.abi_encode(), &none)
        .await?;
    let gauge = proxy(d, gauge_impl, GaugeController::initializeCall { owner: from }.abi_encode()).await?;

    let oracle_lib = d.deploy(&art("core/Market/OracleLib"), vec![], &none).await?;
    let libs = BTreeMap::from([("OracleLib".to_owned(), oracle_lib)]);
    let market_code =
        super::artifacts::Artifact::load(&d.modules, &art("core/Market/PendleMarketV7"))?.link(&libs)?;
    let (a, size_a, b, size_b) = split(d, splitter, "PendleMarketV7", market_code).await?;
    let market_impl = d
        .deploy(
            &art("core/Market/PendleMarketFactoryV7Upg"),
            (yield_factory, a, size_a, b, size_b, gauge).abi_encode_params(),
            &none,
        )
        .await?;
    let init =
        MarketFactory::initializeCall { owner: from, treasury: from, reserveFeePercent: RESERVE_FEE_PERCENT };
    let market_factory = proxy(d, market_impl, init.abi_encode()).await?;

    let router = diamond(
        d,
        "router/PendleRouterV4",
        ("router/ActionStorageV4", "IPActionStorageV4"),
        &[
            ("router/ActionAddRemoveLiqV3", "IPActionAddRemoveLiqV3"),
            ("router/ActionSwapPTV3", "IPActionSwapPTV3"),
            ("router/ActionSwapYTV3", "IPActionSwapYTV3"),
            ("router/ActionMiscV3", "IPActionMiscV3"),
            ("router/ActionCallbackV3", "IPActionCallbackV3"),
            ("router/ActionSimple", "IPActionSimple"),
        ],
        false,
    )
    .await?;
    let router_static = diamond(
        d,
        "offchain-helpers/router-static/PendleRouterStatic",
        ("offchain-helpers/router-static/base/ActionStorageStatic", "IPActionStorageStatic"),
        &[
            ("offchain-helpers/router-static/base/ActionInfoStatic", "IPActionInfoStatic"),
            ("offchain-helpers/router-static/base/ActionMarketCoreStatic", "IPActionMarketCoreStatic"),
            ("offchain-helpers/router-static/base/ActionMarketAuxStatic", "IPActionMarketAuxStatic"),
            ("offchain-helpers/router-static/base/ActionMintRedeemStatic", "IPActionMintRedeemStatic"),
        ],
        true,
    )
    .await?;
    // The static router's searches (its quotes of exact-input trades): Pendle's default
    // approximation (`createDefaultApproxParams`), stopping within 1e-4 of the input. Tighter
    // than an input's base unit it cannot stop at all: 1e-9 exhausted its 256 steps on trades
    // of a few dollars.
    let approx = Router::ApproxParams {
        guessMin: U256::ZERO,
        guessMax: U256::MAX,
        guessOffchain: U256::ZERO,
        maxIteration: U256::from(256u16),
        eps: U256::from(100_000_000_000_000u64),
    };
    let set = Router::setDefaultApproxParamsCall { params: approx }.abi_encode();
    d.call("the static router's approximation", router_static, set, U256::ZERO).await?;

    let oracle_impl = d.deploy(&art("oracles/PtYtLpOracle/PendlePYLpOracle"), vec![], &none).await?;
    let init = Oracle::initializeCall { blockCycleNumerator: BLOCK_CYCLE_NUMERATOR, owner: from };
    let oracle = proxy(d, oracle_impl, init.abi_encode()).await?;

    let now = head_time(d).await?;
    let expiry = (now + MATURITY_DAYS * 86_400) / EXPIRY_DIVISOR * EXPIRY_DIVISOR;
    let years = (expiry - now) as f64 / (365.0 * 86_400.0);
    let anchor = U256::from(((1.0 + SEED_APY).powf(years) * 1e18) as u128);
    let mut markets = BTreeMap::new();
    for (symbol, seed) in [("bvUSDC", 1_000_000u64), ("bvWETH", 500)] {
        let vault = &vaults[symbol];
        let asset = &tokens[&vault.asset];
        let args = (format!("SY Bardo {} Vault", vault.asset), format!("SY-{symbol}"), vault.address);
        let sy = d.deploy(".bardo-build/PendleERC4626SY.json", args.abi_encode_params(), &none).await?;
        let call = YieldFactory::createYieldContractCall {
            SY: sy,
            expiry: expiry as u32,
            doCacheIndexSameBlock: true,
        };
        let (pt, yt) = {
            let out = d
                .call_returning(&format!("create PT/YT of SY-{symbol}"), yield_factory, call.abi_encode())
                .await?;
            let r = YieldFactory::createYieldContractCall::abi_decode_returns(&out)
                .map_err(|e| tx_err("createYieldContract", e))?;
            (r.PT, r.YT)
        };
        let create = MarketFactory::createNewMarketCall {
            PT: pt,
            scalarRoot: I256::from_raw(U256::from(SCALAR_ROOT)),
            initialAnchor: I256::from_raw(anchor),
            lnFeeRateRoot: U80::from(LN_FEE_RATE_ROOT),
        };
        let out = d
            .call_returning(&format!("create the PT-{symbol} market"), market_factory, create.abi_encode())
            .await?;
        let market = MarketFactory::createNewMarketCall::abi_decode_returns(&out)
            .map_err(|e| tx_err("createNewMarket", e))?;

        // Seed: the asset into SY; half the SY split into PT and YT; PT and the other half of
        // the SY (equal in asset terms) into the market.
        let amount = U256::from(seed) * U256::from(10u64).pow(U256::from(asset.decimals));
        let name = format!("PT-{symbol}");
        d.call(
            &format!("approve {} to SY-{symbol}", asset.symbol),
            asset.address,
            Erc20::approveCall { spender: sy, amount }.abi_encode(),
            U256::ZERO,
        )
        .await?;
        let deposit = Sy::depositCall {
            receiver: from,
            tokenIn: asset.address,
            amountTokenToDeposit: amount,
            minSharesOut: U256::ZERO,
        };
        d.call(&format!("mint SY-{symbol}"), sy, deposit.abi_encode(), U256::ZERO).await?;
        let shares = balance(d, sy, from).await?;
        d.call(
            &format!("SY-{symbol} to its YT"),
            sy,
            Erc20::transferCall { to: yt, amount: shares / U256::from(2u8) }.abi_encode(),
            U256::ZERO,
        )
        .await?;
        d.call(
            &format!("mint PT and YT of SY-{symbol}"),
            yt,
            Yt::mintPYCall { receiverPT: from, receiverYT: from }.abi_encode(),
            U256::ZERO,
        )
        .await?;
        let pts = balance(d, pt, from).await?;
        let sys = balance(d, sy, from).await?;
        d.call(
            &format!("PT to {name}"),
            pt,
            Erc20::transferCall { to: market, amount: pts }.abi_encode(),
            U256::ZERO,
        )
        .await?;
        d.call(
            &format!("SY to {name}"),
            sy,
            Erc20::transferCall { to: market, amount: sys }.abi_encode(),
            U256::ZERO,
        )
        .await?;
        let seed_call = Market::mintCall { receiver: from, netSyDesired: sys, netPtDesired: pts };
        d.call(&format!("seed {name}"), market, seed_call.abi_encode(), U256::ZERO).await?;

        // The oracle's TWAP needs an observation per second of it.
        let state = Oracle::getOracleStateCall { market, duration: TWAP_SECS };
        let out = d.view("getOracleState", oracle, state.abi_encode()).await?;
        let state =
            Oracle::getOracleStateCall::abi_decode_returns(&out).map_err(|e| tx_err("getOracleState", e))?;
        if state.increaseCardinalityRequired {
            let grow = Market::increaseObservationsCardinalityNextCall {
                cardinalityNext: state.cardinalityRequired,
            };
            d.call(&format!("reserve {name}'s observations"), market, grow.abi_encode(), U256::ZERO).await?;
        }
        // PENDLE for its liquidity providers until maturity.
        d.call(
            &format!("whitelist {name} for PENDLE"),
            gauge,
            GaugeController::whitelistMarketsCall { markets: vec![market], isWhitelisted: true }.abi_encode(),
            U256::ZERO,
        )
        .await?;
        let rewards = GaugeController::setRewardDatasCall {
            markets: vec![market],
            pendlePerSecs: vec![PENDLE_PER_SEC],
            incentiveEndsAts: vec![u128::from(expiry as u32)],
        };
        d.call(&format!("PENDLE rewards for {name}"), gauge, rewards.abi_encode(), U256::ZERO).await?;
        markets.insert(
            name,
            PendleMarket {
                market,
                sy,
                pt,
                yt,
                expiry,
                yield_token: symbol.to_owned(),
                asset: vault.asset.clone(),
            },
        );
    }
    let funded = U256::from(PENDLE_FUNDED) * U256::from(10u64).pow(U256::from(18u8));
    d.call(
        "fund the gauge controller with PENDLE",
        pendle,
        Erc20::mintCall { account: gauge, value: funded }.abi_encode(),
        U256::ZERO,
    )
    .await?;

    // The TWAP's window passes, so the oracle answers from the devnet's first block.
    (d.progress)("letting the Pendle oracle's TWAP window pass");
    d.provider
        .raw_request::<_, serde_json::Value>("evm_increaseTime".into(), (u64::from(TWAP_SECS) + 1,))
        .await
        .map_err(|e| tx_err("evm_increaseTime", e))?;
    d.provider
        .raw_request::<_, serde_json::Value>("evm_mine".into(), ())
        .await
        .map_err(|e| tx_err("evm_mine", e))?;

    let contracts = [
        ("router", router),
        ("router_static", router_static),
        ("py_lp_oracle", oracle),
        ("yield_contract_factory", yield_factory),
        ("market_factory", market_factory),
        ("gauge_controller", gauge),
        ("pendle", pendle),
    ];
    Ok(Pendle { contracts: contracts.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(), markets })
}

/// Compile Pendle's ERC-4626 SY with the pinned solc-js.
pub(super) fn compile(d: &Deployer) -> Result<(), DeployError> {
    (d.progress)("compiling Pendle's PendleERC4626SY with solc-js");
    super::vaults::node_compile(d, &[SY_SOURCE])
}

fn art(name: &str) -> String {
    let file = name.rsplit('/').next().unwrap_or(name);
    format!("{BUILD}/{name}.sol/{file}.json")
}

fn tx_err(step: &str, e: impl std::fmt::Display) -> DeployError {
    DeployError::Tx { step: step.to_owned(), message: e.to_string() }
}

async fn head_time(d: &Deployer) -> Result<u64, DeployError> {
    let block = d
        .provider
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await
        .map_err(|e| tx_err("latest block", e))?
        .ok_or_else(|| tx_err("latest block", "none"))?;
    Ok(block.header.timestamp)
}

async fn balance(d: &Deployer, token: Address, of: Address) -> Result<U256, DeployError> {
    let out = d.view("balanceOf", token, Erc20::balanceOfCall { account: of }.abi_encode()).await?;
    Erc20::balanceOfCall::abi_decode_returns(&out).map_err(|e| tx_err("balanceOf", e))
}

/// An ERC1967Proxy over `implementation`, initialized by `init`.
async fn proxy(d: &Deployer, implementation: Address, init: Vec<u8>) -> Result<Address, DeployError> {
    let args = (implementation, Bytes::from(init)).abi_encode_params();
    d.deploy("@openzeppelin/contracts/build/contracts/ERC1967Proxy.json", args, &BTreeMap::new()).await
}

/// Store `code` in two data contracts; their addresses and sizes.
async fn split(
    d: &Deployer,
    splitter: Address,
    name: &str,
    code: Vec<u8>,
) -> Result<(Address, U256, Address, U256), DeployError> {
    let call = Splitter::deployCall { name: name.to_owned(), creationCode: Bytes::from(code) };
    let receipt = d
        .send(
            &format!("split {name}'s creation code"),
            TransactionRequest::default().to(splitter).with_input(Bytes::from(call.abi_encode())),
        )
        .await?;
    let log = receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| Deployed::decode_log_data(l.data()).ok())
        .ok_or_else(|| tx_err(name, "no Deployed event"))?;
    Ok((log.creationCodeContractA, log.creationCodeSizeA, log.creationCodeContractB, log.creationCodeSizeB))
}

/// A diamond-style router: its storage facet, the router, and every facet's selectors (from
/// the facet's interface artifact) routed to it.
async fn diamond(
    d: &Deployer,
    router: &str,
    storage: (&str, &str),
    facets: &[(&str, &str)],
    is_static: bool,
) -> Result<Address, DeployError> {
    let none = BTreeMap::new();
    let storage_facet = d.deploy(&art(storage.0), vec![], &none).await?;
    let address = d.deploy(&art(router), (d.from, storage_facet).abi_encode_params(), &none).await?;
    let mut arr =
        vec![Router::SelectorsToFacet { facet: storage_facet, selectors: selectors(d, storage.1)? }];
    for (facet, interface) in facets {
        let facet_address = d.deploy(&art(facet), vec![], &none).await?;
        arr.push(Router::SelectorsToFacet { facet: facet_address, selectors: selectors(d, interface)? });
    }
    let name = router.rsplit('/').next().unwrap_or(router);
    let route = if is_static {
        Router::setFacetForSelectorsCall { arr }.abi_encode()
    } else {
        Router::setSelectorToFacetsCall { arr }.abi_encode()
    };
    d.call(&format!("route {name}'s selectors"), address, route, U256::ZERO).await?;
    Ok(address)
}

/// The selectors of the functions an interface artifact (`IPActionSwapPTV3`) declares.
fn selectors(d: &Deployer, interface: &str) -> Result<Vec<alloy::primitives::FixedBytes<4>>, DeployError> {
    let rel = art(&format!("interfaces/{interface}"));
    let text = std::fs::read_to_string(d.modules.join(&rel)).map_err(|e| tx_err(&rel, e))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| tx_err(&rel, e))?;
    let functions = json["abi"].as_array().into_iter().flatten().filter(|f| f["type"] == "function");
    Ok(functions
        .map(|f| {
            let inputs: Vec<String> = f["inputs"].as_array().into_iter().flatten().map(canonical).collect();
            let signature = format!("{}({})", f["name"].as_str().unwrap_or_default(), inputs.join(","));
            alloy::primitives::FixedBytes::from_slice(&keccak256(signature.as_bytes())[..4])
        })
        .collect())
}

/// A parameter's canonical ABI type (tuples spelled out).
fn canonical(param: &Value) -> String {
    let ty = param["type"].as_str().unwrap_or_default();
    match ty.strip_prefix("tuple") {
        Some(suffix) => {
            let parts: Vec<String> =
                param["components"].as_array().into_iter().flatten().map(canonical).collect();
            format!("({}){suffix}", parts.join(","))
        }
        None => ty.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn tuples_are_spelled_out_in_a_signature() {
        let param = serde_json::json!({"type": "tuple[]", "components": [
            {"type": "address"}, {"type": "tuple", "components": [{"type": "uint256"}, {"type": "bytes"}]}
        ]});
        assert_eq!(canonical(&param), "(address,(uint256,bytes))[]");
    }
}
