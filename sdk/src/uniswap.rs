//! Uniswap V3 pieces shared by the plugins that read it (the `uniswap` tools, the `streaming`
//! tools): where its contracts are per chain, the pool / factory / position-manager views and
//! pool events, and exact prices from `sqrtPriceX96`.

pub mod math;
pub mod pools;
pub mod tick_math;
pub mod v4;

use crate::tokens::{self, Listed};
use alloy_primitives::{Address, U256, U512, address};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// V3 fee tiers, in hundredths of a bip.
pub const FEE_TIERS: [u32; 4] = [100, 500, 3000, 10000];

alloy_sol_types::sol! {
    // V3 factory and pool
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address pool);
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
    function liquidity() external view returns (uint128);
    function tickSpacing() external view returns (int24);
    function fee() external view returns (uint24);
    function token0() external view returns (address);
    function token1() external view returns (address);
    function feeGrowthGlobal0X128() external view returns (uint256);
    function feeGrowthGlobal1X128() external view returns (uint256);
    function ticks(int24 tick) external view returns (uint128 liquidityGross, int128 liquidityNet,
        uint256 feeGrowthOutside0X128, uint256 feeGrowthOutside1X128, int56 tickCumulativeOutside,
        uint160 secondsPerLiquidityOutsideX128, uint32 secondsOutside, bool initialized);
    event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1,
        uint160 sqrtPriceX96, uint128 liquidity, int24 tick);
    event Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper,
        uint128 amount, uint256 amount0, uint256 amount1);
    event Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount,
        uint256 amount0, uint256 amount1);

    // V3 NonfungiblePositionManager
    function positions(uint256 tokenId) external view returns (uint96 nonce, address operator, address token0,
        address token1, uint24 fee, int24 tickLower, int24 tickUpper, uint128 liquidity,
        uint256 feeGrowthInside0LastX128, uint256 feeGrowthInside1LastX128, uint128 tokensOwed0, uint128 tokensOwed1);
    function ownerOf(uint256 tokenId) external view returns (address owner);
}

/// Uniswap V2 pair events (their names clash with V3's).
pub mod v2 {
    alloy_sol_types::sol! {
        event Swap(address indexed sender, uint amount0In, uint amount1In, uint amount0Out, uint amount1Out,
            address indexed to);
        function getPair(address tokenA, address tokenB) external view returns (address pair);
        function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast);
    }
}

/// A Uniswap protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    /// Pairs from the V2 factory, traded through the UniversalRouter.
    V2,
    /// Pools from the V3 factory, traded through the UniversalRouter.
    V3,
    /// Pools inside the PoolManager, traded through the UniversalRouter.
    V4,
}

impl Version {
    /// How it is written in descriptions.
    pub fn name(self) -> &'static str {
        match self {
            Self::V2 => "V2",
            Self::V3 => "V3",
            Self::V4 => "V4",
        }
    }
}

/// Uniswap's contracts and the token list on one chain (operator settings or built in).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Book {
    /// The V3 factory (`getPool`).
    pub v3_factory: Address,
    /// The V3 QuoterV2.
    pub quoter_v2: Address,
    /// The V3 SwapRouter.
    pub swap_router: Address,
    /// The V3 NonfungiblePositionManager.
    pub position_manager: Address,
    /// Uniswap's V3 Staker (liquidity mining incentives), where the operator uses one.
    #[serde(default)]
    pub v3_staker: Option<Address>,
    /// The V2 factory, where V2 is deployed.
    pub v2_factory: Option<Address>,
    /// The V2 Router02, where V2 is deployed.
    pub v2_router: Option<Address>,
    /// V4's StateView (pool state by id), where V4 is deployed.
    #[serde(default)]
    pub v4_state_view: Option<Address>,
    /// V4's Quoter.
    #[serde(default)]
    pub v4_quoter: Option<Address>,
    /// V4's PoolManager (where every V4 pool lives).
    #[serde(default)]
    pub v4_pool_manager: Option<Address>,
    /// The UniversalRouter (every swap).
    #[serde(default)]
    pub universal_router: Option<Address>,
    /// V4's PositionManager (V4 liquidity positions).
    #[serde(default)]
    pub v4_position_manager: Option<Address>,
    /// Wrapped ether (what native ETH trades as); default: `WETH` in the token list.
    #[serde(default)]
    pub weth: Option<Address>,
    /// The token list symbols resolve through.
    #[serde(default)]
    pub tokens: Vec<Listed>,
    /// Symbol prices are quoted in (`data_get_token_price`, USD values).
    #[serde(default = "default_quote")]
    pub quote_token: String,
    /// The operator's USD prices (positions valued at trusted prices, never a pool's).
    #[serde(default)]
    pub prices: crate::operator::Prices,
}

fn default_quote() -> String {
    "USDC".into()
}

impl Book {
    /// Resolve a token param (address or listed symbol) on this book's chain.
    pub fn token(
        &self,
        chain_id: crate::ChainId,
        field: &str,
        input: &str,
    ) -> Result<crate::erc20::Token, crate::Error> {
        tokens::resolve(chain_id, field, input, &self.tokens)
    }

    /// Wrapped ether on this chain: `weth`, else the token list's `WETH`.
    pub fn weth(&self) -> Option<Address> {
        self.weth
            .or_else(|| self.tokens.iter().find(|t| t.symbol.eq_ignore_ascii_case("WETH")).map(|t| t.address))
    }
}

/// This plugin's settings when they are a Uniswap book per chain:
/// `{"chains": {"31337": {"v3_factory": "0x…", …, "tokens": [...]}}}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Books {
    #[serde(default)]
    chains: std::collections::BTreeMap<String, Book>,
}

/// The Uniswap book of `chain_id` from this plugin's settings (`[settings] <plugin>` shaped as
/// `{"chains": {"<id>": Book}}`), else the built-in one (Ethereum mainnet).
pub fn book(chain_id: crate::ChainId) -> Result<Book, crate::Error> {
    let books: Books = crate::settings::load()?;
    if let Some(book) = books.chains.get(&chain_id.to_string()) {
        return Ok(book.clone());
    }
    match chain_id {
        1 => Ok(mainnet()),
        _ => Err(crate::errors::chain_not_supported(format!(
            "no Uniswap contract addresses for chain {chain_id} in this plugin's settings; add them under \
             `[settings]` (chains.{chain_id}: v3_factory, quoter_v2, swap_router, position_manager, tokens)"
        ))),
    }
}

/// Ethereum mainnet's Uniswap deployment.
pub fn mainnet() -> Book {
    Book {
        v3_factory: address!("0x1F98431c8aD98523631AE4a59f267346ea31F984"),
        quoter_v2: address!("0x61fFE014bA17989E743c5F6cB21bF9697530B21e"),
        swap_router: address!("0xE592427A0AEce86092D3D1B4ec1a1c4A61F05E45"),
        position_manager: address!("0xC36442b4a4522E871399CD717aBDD847Ab11FE88"),
        // No staker by default: incentives are the operator's choice (`v3_staker` in settings).
        v3_staker: None,
        v2_factory: Some(address!("0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f")),
        v2_router: Some(address!("0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D")),
        // docs.uniswap.org/contracts/v4/deployments, Ethereum: 1.
        v4_state_view: Some(address!("0x7ffe42c4a5deea5b0fec41c94c136cf115597227")),
        v4_quoter: Some(address!("0x52f0e24d1c21c8a0cb1e5a5dd6198556bd9e1203")),
        v4_pool_manager: Some(address!("0x000000000004444c5dc75cb358380d2e3de08a90")),
        universal_router: Some(address!("0x66a9893cc07d91d95644aedd05d03f95e1dba8af")),
        v4_position_manager: Some(address!("0xbd216513d74c8cf14cf4747e6aaa6420ff64ee9e")),
        weth: Some(address!("0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2")),
        tokens: tokens::mainnet(),
        quote_token: default_quote(),
        prices: crate::operator::Prices::default(),
    }
}

/// Digits after the point in human prices.
const PRICE_DECIMALS: u32 = 18;

fn pow10(n: u32) -> U512 {
    U512::from(10u8).pow(U512::from(n))
}

/// `num / den` as a decimal string with up to 18 fractional digits.
pub fn ratio(num: U512, den: U512) -> String {
    if den.is_zero() {
        return "0".into();
    }
    let scaled = num * pow10(PRICE_DECIMALS) / den;
    let s = format!("{scaled:0>width$}", width = PRICE_DECIMALS as usize + 1);
    let (whole, frac) = s.split_at(s.len() - PRICE_DECIMALS as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() { whole.to_owned() } else { format!("{whole}.{frac}") }
}

/// Human prices of a V3 pool at `sqrt_price_x96`: (token1 per token0, token0 per token1).
pub fn v3_prices(sqrt_price_x96: U256, decimals0: u8, decimals1: u8) -> (String, String) {
    let p2 = U512::from(sqrt_price_x96) * U512::from(sqrt_price_x96);
    let q192 = U512::from(1u8) << 192;
    let (d0, d1) = (pow10(decimals0.into()), pow10(decimals1.into()));
    (ratio(p2 * d0, q192 * d1), ratio(q192 * d1, p2 * d0))
}

/// Human prices of a V2 pair from its reserves: (token1 per token0, token0 per token1).
pub fn v2_prices(reserve0: U256, reserve1: U256, decimals0: u8, decimals1: u8) -> (String, String) {
    let (r0, r1) = (U512::from(reserve0), U512::from(reserve1));
    let (d0, d1) = (pow10(decimals0.into()), pow10(decimals1.into()));
    (ratio(r1 * d0, r0 * d1), ratio(r0 * d1, r1 * d0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_exact_decimals() {
        // A WETH(18)/USDC(6) pair at 2,000 USDC per WETH.
        let (p, inv) = v2_prices(U256::from(10u64.pow(18)), U256::from(2_000_000_000u64), 18, 6);
        assert_eq!(p, "2000");
        assert_eq!(inv, "0.0005");
        // Price 1 in base units: one base unit of a 6-decimal token0 buys one base unit of an
        // 18-decimal token1, i.e. 1e-12 token1 per token0.
        let sqrt = U256::from(1u8) << 96;
        let (p, inv) = v3_prices(sqrt, 6, 18);
        assert_eq!(p, "0.000000000001");
        assert_eq!(inv, "1000000000000");
    }
}
