//! Morpho Blue on the devnet: `Morpho.sol` from the published `@morpho-org/morpho-blue` 1.0.0
//! sources, compiled with the solc it pins (0.8.19, an npm alias beside the devnet's 0.8.24) and
//! the IR pipeline its own build uses; the package's `IrmMock` as the interest-rate model (no
//! published package carries Morpho's adaptive curve IRM: x % utilization is x % APR); one
//! oracle per market over the devnet's USD feeds (`devnet/contracts/MorphoFeedOracle.sol`).
//! Markets lend USDC against WETH and against WBTC at an LLTV of 86 %, each seeded with
//! 1,000,000 USDC of supply by the deployer.

use super::deployer::{DeployError, Deployer, Token};
use alloy::primitives::{Address, B256, Bytes, U256, keccak256};
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

sol! {
    struct MarketParams { address loanToken; address collateralToken; address oracle; address irm; uint256 lltv; }
    function enableIrm(address irm) external;
    function enableLltv(uint256 lltv) external;
    function createMarket(MarketParams marketParams) external;
    function supply(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, bytes data)
        external returns (uint256, uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function mint(address account, uint256 value) external returns (bool);
}

/// Morpho Blue's sources as the package publishes them (relative to `node_modules`).
pub(crate) const SOURCES: &[&str] =
    &["@morpho-org/morpho-blue/src/Morpho.sol", "@morpho-org/morpho-blue/src/mocks/IrmMock.sol"];

/// The LLTV of the devnet's markets: 86 % (WAD).
const LLTV: u128 = 860_000_000_000_000_000;

/// USDC each market is seeded with.
const SEED_USDC: u64 = 1_000_000;

/// Morpho Blue and its markets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Morpho {
    /// The singleton.
    pub morpho: Address,
    /// The interest-rate model every market uses (`IrmMock`), enabled by the owner.
    pub irm: Address,
    /// Markets by `COLLATERAL/LOAN` (`WETH/USDC`).
    pub markets: BTreeMap<String, MorphoMarket>,
}

/// One market: its id and the parameters the id hashes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MorphoMarket {
    /// `keccak256(abi.encode(marketParams))`.
    pub id: B256,
    /// What is lent and borrowed.
    pub loan_token: Address,
    /// What secures a borrow.
    pub collateral_token: Address,
    /// The collateral's price in the loan token (`MorphoFeedOracle`).
    pub oracle: Address,
    /// The interest-rate model.
    pub irm: Address,
    /// Liquidation loan-to-value (WAD).
    pub lltv: U256,
}

impl MorphoMarket {
    /// The market's parameters as Morpho takes them.
    fn params(&self) -> MarketParams {
        MarketParams {
            loanToken: self.loan_token,
            collateralToken: self.collateral_token,
            oracle: self.oracle,
            irm: self.irm,
            lltv: self.lltv,
        }
    }
}

/// Deploy Morpho, its IRM and LLTV, a market per collateral with an oracle on `feeds`, and seed
/// each (the sources compiled by [`super::vaults::compile`]).
pub(super) async fn deploy_morpho(
    d: &Deployer,
    tokens: &BTreeMap<String, Token>,
    feeds: &BTreeMap<String, Address>,
) -> Result<Morpho, DeployError> {
    let none = BTreeMap::new();
    let morpho = d.deploy(".bardo-build/Morpho.json", d.from.abi_encode(), &none).await?;
    let irm = d.deploy(".bardo-build/IrmMock.json", Vec::new(), &none).await?;
    d.call("enable the IRM", morpho, enableIrmCall { irm }.abi_encode(), U256::ZERO).await?;
    let lltv = U256::from(LLTV);
    d.call("enable LLTV 86 %", morpho, enableLltvCall { lltv }.abi_encode(), U256::ZERO).await?;
    let usdc = &tokens["USDC"];
    let seed = U256::from(SEED_USDC) * U256::from(10u64).pow(U256::from(usdc.decimals));
    let mut markets = BTreeMap::new();
    for collateral in ["WETH", "WBTC"] {
        let token = &tokens[collateral];
        let args = (feeds[collateral], feeds["USDC"], U256::from(token.decimals), U256::from(usdc.decimals))
            .abi_encode_params();
        let oracle = d.deploy(".bardo-build/MorphoFeedOracle.json", args, &none).await?;
        let mut market = MorphoMarket {
            id: B256::ZERO,
            loan_token: usdc.address,
            collateral_token: token.address,
            oracle,
            irm,
            lltv,
        };
        market.id = keccak256(market.params().abi_encode());
        let name = format!("{collateral}/USDC");
        let create = createMarketCall { marketParams: market.params() }.abi_encode();
        d.call(&format!("create the {name} market"), morpho, create, U256::ZERO).await?;
        // Seeded from newly minted USDC, whatever the deployer's balance after the pools.
        let mint = mintCall { account: d.from, value: seed }.abi_encode();
        d.call(&format!("mint USDC for {name}"), usdc.address, mint, U256::ZERO).await?;
        let approve = approveCall { spender: morpho, amount: seed }.abi_encode();
        d.call(&format!("approve USDC to Morpho for {name}"), usdc.address, approve, U256::ZERO).await?;
        let supply = supplyCall {
            marketParams: market.params(),
            assets: seed,
            shares: U256::ZERO,
            onBehalf: d.from,
            data: Bytes::new(),
        };
        d.call(&format!("seed {name}"), morpho, supply.abi_encode(), U256::ZERO).await?;
        markets.insert(name, market);
    }
    Ok(Morpho { morpho, irm, markets })
}
