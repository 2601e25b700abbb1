//! Deploys the devnet's contracts from the published npm artifacts with alloy, from anvil's
//! first (unlocked) dev account, and seeds liquidity. Addresses go to a deployments JSON.

use super::DEV_ACCOUNT;
pub use super::across::Across;
use super::artifacts::{Artifact, ArtifactError};
use super::deployer::Deployer;
pub use super::deployer::{DeployError, Token};
pub use super::deployments::{Cage, Deployments, Pool, V4Pool};
pub use super::erc8004::Erc8004;
pub use super::morpho::{Morpho, MorphoMarket};
pub use super::pendle::{Pendle, PendleMarket};
pub use super::safe::Safe;
pub use super::vaults::Vault;
use alloy::network::TransactionBuilder;
use alloy::primitives::{
    Address, Bytes, U256,
    aliases::{I24, U24, U160},
};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use std::collections::BTreeMap;
use std::path::Path;

sol! {
    function mint(address account, uint256 value) external returns (bool);
    function approve(address spender, uint256 amount) external returns (bool);
    function deposit() external payable;
    function createPair(address tokenA, address tokenB) external returns (address pair);
    function getPair(address tokenA, address tokenB) external view returns (address pair);
    function addLiquidity(address tokenA, address tokenB, uint256 amountADesired, uint256 amountBDesired,
        uint256 amountAMin, uint256 amountBMin, address to, uint256 deadline) external returns (uint256, uint256, uint256);
    function createAndInitializePoolIfNecessary(address token0, address token1, uint24 fee, uint160 sqrtPriceX96)
        external payable returns (address pool);
    struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper;
        uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; address recipient; uint256 deadline; }
    function mint(MintParams params) external payable returns (uint256 tokenId, uint128 liquidity, uint256 amount0, uint256 amount1);
    struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }
    struct ModifyLiquidityParams { int24 tickLower; int24 tickUpper; int256 liquidityDelta; bytes32 salt; }
    function initialize(PoolKey key, uint160 sqrtPriceX96) external returns (int24 tick);
    function modifyLiquidity(PoolKey key, ModifyLiquidityParams params, bytes hookData) external payable returns (int256 delta);
    struct RouterParameters { address permit2; address weth9; address v2Factory; address v3Factory; bytes32 pairInitCodeHash;
        bytes32 poolInitCodeHash; address v4PoolManager; address v3NFTPositionManager; address v4PositionManager; address spokePool; }
}

/// Where the devnet's fee-taking hook lives: the low 14 bits grant afterAddLiquidity,
/// afterRemoveLiquidity, afterSwap and their return deltas (0x547), as `Hooks.sol` requires.
pub const FEE_TAKING_HOOK: Address =
    alloy::primitives::address!("0xfee0000000000000000000000000000000000547");

/// Permit2's canonical address (its runtime code is placed there with `anvil_setCode`).
pub const PERMIT2: Address = alloy::primitives::address!("0x000000000022D473030F116dDEE9F6B43aC78BA3");

const V3_FULL_RANGE: i32 = 887_272;

/// The nonce the deployer starts from on a chain other than [`super::CHAIN_ID`].
const OTHER_CHAIN_NONCE: u64 = 1_000;

/// sqrt(price) as Q64.96, price = raw token1 per raw token0.
fn sqrt_price_x96(price: f64) -> U160 {
    let scaled = (price.sqrt() * 2f64.powi(48)) as u128;
    U160::from(scaled) << 48
}

fn aligned(tick: i32, spacing: i32) -> i32 {
    tick.div_euclid(spacing) * spacing
}

/// Deploy everything on the node at `rpc`; `progress` hears each step.
pub async fn deploy_all(
    rpc: &str,
    node_modules: &Path,
    progress: impl Fn(&str) + 'static,
) -> Result<Deployments, DeployError> {
    let url = rpc.parse().map_err(|e| DeployError::Tx { step: "connect".into(), message: format!("{e}") })?;
    let provider = ProviderBuilder::new().connect_http(url).erased();
    let chain_id = provider
        .get_chain_id()
        .await
        .map_err(|e| DeployError::Tx { step: "connect".into(), message: e.to_string() })?;
    let from: Address = DEV_ACCOUNT
        .parse()
        .map_err(|_| DeployError::Tx { step: "account".into(), message: "bad dev account".into() })?;
    let d = Deployer { provider, from, modules: node_modules.to_owned(), progress: Box::new(progress) };
    let none = BTreeMap::new();

    // The node's funded test accounts; the deployer is the first.
    let accounts = d
        .provider
        .get_accounts()
        .await
        .map_err(|e| DeployError::Tx { step: "eth_accounts".into(), message: e.to_string() })?;
    if accounts.first() != Some(&from) {
        return Err(DeployError::Tx {
            step: "eth_accounts".into(),
            message: format!("the node's first account is not {from}; is it anvil?"),
        });
    }
    // Another chain's contracts get addresses of their own, as a real L2's tokens and routers do
    // (only Permit2 and the flagged hook are placed at one address everywhere): its deployer
    // starts from a later nonce.
    if chain_id != super::CHAIN_ID {
        d.provider
            .raw_request::<_, ()>("anvil_setNonce".into(), (from, U256::from(OTHER_CHAIN_NONCE)))
            .await
            .map_err(|e| DeployError::Tx { step: "anvil_setNonce".into(), message: e.to_string() })?;
    }

    // Tokens with realistic decimals; WETH is the real WETH9.
    let mut tokens = BTreeMap::new();
    let weth = d.deploy("@uniswap/v2-periphery/build/WETH9.json", vec![], &none).await?;
    d.call(
        "wrap ETH",
        weth,
        depositCall {}.abi_encode(),
        U256::from(8_000u64) * U256::from(10u64).pow(U256::from(18)),
    )
    .await?;
    tokens.insert(
        "WETH".to_owned(),
        Token { address: weth, symbol: "WETH".into(), decimals: 18, usd: 2_000.0 },
    );
    for (symbol, name, decimals, usd) in [
        ("USDC", "USD Coin", 6u8, 1.0),
        ("DAI", "Dai Stablecoin", 18, 1.0),
        ("WBTC", "Wrapped BTC", 8, 60_000.0),
    ] {
        let args = (name.to_owned(), symbol.to_owned(), U256::from(decimals)).abi_encode_params();
        let address = d
            .deploy(
                "@aave/core-v3/artifacts/contracts/mocks/tokens/MintableERC20.sol/MintableERC20.json",
                args,
                &none,
            )
            .await?;
        // Ten million dollars' worth for the deployer, one million for every other test account.
        for (i, account) in accounts.iter().enumerate() {
            let usd_worth = if i == 0 { 10_000_000.0 } else { 1_000_000.0 };
            let value = U256::from((usd_worth / usd) as u128) * U256::from(10u64).pow(U256::from(decimals));
            d.call(
                &format!("mint {symbol}"),
                address,
                mint_0Call { account: *account, value }.abi_encode(),
                U256::ZERO,
            )
            .await?;
        }
        tokens.insert(symbol.to_owned(), Token { address, symbol: symbol.into(), decimals, usd });
    }
    let units =
        |t: &Token, usd: f64| U256::from((usd / t.usd * 10f64.powi(i32::from(t.decimals).min(18))) as u128);

    // Uniswap V2.
    let v2_factory =
        d.deploy("@uniswap/v2-core/build/UniswapV2Factory.json", from.abi_encode(), &none).await?;
    let v2_router = d
        .deploy(
            "@uniswap/v2-periphery/build/UniswapV2Router02.json",
            (v2_factory, weth).abi_encode_params(),
            &none,
        )
        .await?;
    for t in tokens.values() {
        d.call(
            &format!("approve {} to V2 router", t.symbol),
            t.address,
            approveCall { spender: v2_router, amount: U256::MAX }.abi_encode(),
            U256::ZERO,
        )
        .await?;
    }
    let mut v2_pairs = Vec::new();
    for (a, b) in [("WETH", "USDC"), ("WETH", "DAI"), ("WBTC", "WETH")] {
        let (ta, tb) = (&tokens[a], &tokens[b]);
        (d.progress)(&format!("seeding V2 {a}/{b}"));
        let liquidity_usd = 1_000_000.0;
        let call = addLiquidityCall {
            tokenA: ta.address,
            tokenB: tb.address,
            amountADesired: units(ta, liquidity_usd),
            amountBDesired: units(tb, liquidity_usd),
            amountAMin: U256::ZERO,
            amountBMin: U256::ZERO,
            to: from,
            deadline: U256::MAX,
        };
        d.call(&format!("add V2 liquidity {a}/{b}"), v2_router, call.abi_encode(), U256::ZERO).await?;
        let pair = d
            .provider
            .call(
                TransactionRequest::default()
                    .to(v2_factory)
                    .with_input(getPairCall { tokenA: ta.address, tokenB: tb.address }.abi_encode()),
            )
            .await
            .map_err(|e| DeployError::Tx { step: "getPair".into(), message: e.to_string() })?;
        let pair = Address::abi_decode(&pair)
            .map_err(|e| DeployError::Tx { step: "getPair".into(), message: e.to_string() })?;
        let (t0, t1) = if ta.address < tb.address { (a, b) } else { (b, a) };
        v2_pairs.push(Pool { address: pair, token0: t0.into(), token1: t1.into(), fee: 3000 });
    }

    // Uniswap V3.
    let v3_factory = d
        .deploy(
            "@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json",
            vec![],
            &none,
        )
        .await?;
    let nft_descriptor_lib = d
        .deploy(
            "@uniswap/v3-periphery/artifacts/contracts/libraries/NFTDescriptor.sol/NFTDescriptor.json",
            vec![],
            &none,
        )
        .await?;
    let libs = BTreeMap::from([("NFTDescriptor".to_owned(), nft_descriptor_lib)]);
    let label = alloy::primitives::B256::right_padding_from(b"ETH");
    let descriptor = d
        .deploy("@uniswap/v3-periphery/artifacts/contracts/NonfungibleTokenPositionDescriptor.sol/NonfungibleTokenPositionDescriptor.json", (weth, label).abi_encode_params(), &libs)
        .await?;
    let npm = d
        .deploy("@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json", (v3_factory, weth, descriptor).abi_encode_params(), &none)
        .await?;
    let swap_router = d
        .deploy(
            "@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json",
            (v3_factory, weth).abi_encode_params(),
            &none,
        )
        .await?;
    let quoter = d
        .deploy(
            "@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json",
            (v3_factory, weth).abi_encode_params(),
            &none,
        )
        .await?;
    for t in tokens.values() {
        d.call(
            &format!("approve {} to position manager", t.symbol),
            t.address,
            approveCall { spender: npm, amount: U256::MAX }.abi_encode(),
            U256::ZERO,
        )
        .await?;
    }
    let mut v3_pools = Vec::new();
    // (token a, token b, fee, tick spacing, concentrated ± ticks or full range)
    for (a, b, fee, spacing, width) in [
        ("WETH", "USDC", 3000u32, 60i32, None),
        ("WETH", "USDC", 500, 10, Some(2_000i32)),
        ("WETH", "DAI", 3000, 60, None),
        ("WBTC", "WETH", 3000, 60, Some(6_000)),
    ] {
        (d.progress)(&format!("seeding V3 {a}/{b} {fee}"));
        let (ta, tb) = (&tokens[a], &tokens[b]);
        let (t0, t1) = if ta.address < tb.address { (ta, tb) } else { (tb, ta) };
        // Raw token1 per raw token0 at the USD prices.
        let price = (t0.usd / t1.usd) * 10f64.powi(i32::from(t1.decimals) - i32::from(t0.decimals));
        let create = createAndInitializePoolIfNecessaryCall {
            token0: t0.address,
            token1: t1.address,
            fee: U24::from(fee),
            sqrtPriceX96: sqrt_price_x96(price),
        };
        let receipt = d
            .send("create V3 pool", TransactionRequest::default().to(npm).with_input(create.abi_encode()))
            .await?;
        let pool = receipt
            .inner
            .logs()
            .iter()
            .find(|l| l.address() == v3_factory)
            .and_then(|l| l.data().data.get(44..64))
            .map(Address::from_slice);
        let tick = (price.ln() / 1.0001f64.ln()).floor() as i32;
        let (lower, upper) = match width {
            None => (aligned(-V3_FULL_RANGE, spacing) + spacing, aligned(V3_FULL_RANGE, spacing)),
            Some(w) => (aligned(tick - w, spacing), aligned(tick + w, spacing)),
        };
        let liquidity_usd = 1_000_000.0;
        let params = MintParams {
            token0: t0.address,
            token1: t1.address,
            fee: U24::from(fee),
            tickLower: I24::try_from(lower).unwrap_or_default(),
            tickUpper: I24::try_from(upper).unwrap_or_default(),
            amount0Desired: units(t0, liquidity_usd),
            amount1Desired: units(t1, liquidity_usd),
            amount0Min: U256::ZERO,
            amount1Min: U256::ZERO,
            recipient: from,
            deadline: U256::MAX,
        };
        d.call("mint V3 position", npm, mint_1Call { params }.abi_encode(), U256::ZERO).await?;
        v3_pools.push(Pool {
            address: pool.unwrap_or_default(),
            token0: t0.symbol.clone(),
            token1: t1.symbol.clone(),
            fee,
        });
    }

    let aave_v3 = super::aave::deploy_aave(&d, &tokens).await?;
    super::vaults::compile(&d)?;
    let vaults = super::vaults::deploy_vaults(&d, &tokens).await?;
    let mut feeds = super::feeds::deploy_feeds(&d, &tokens).await?;
    let erc8004 = super::erc8004::deploy_registries(&d).await?;
    let safe = super::safe::deploy_safe(&d).await?;
    let (uniswap_v4, uniswap_v4_pools) = deploy_v4(&d, &tokens, weth, v2_factory, v3_factory, npm).await?;
    // Then: every earlier contract keeps the address it had before Morpho came.
    let morpho = super::morpho::deploy_morpho(&d, &tokens, &feeds).await?;
    let fixtures = super::fixtures::deploy(&d, &tokens, wbtc_weth(&v3_pools).map(|p| p.address)).await?;
    // Pendle on the first chain only: its chain matrix (`bardo_sdk::chains::PENDLE`) has no Base.
    let pendle = if chain_id == super::CHAIN_ID {
        super::pendle::compile(&d)?;
        let pendle = super::pendle::deploy_pendle(&d, &tokens, &vaults).await?;
        // The reward Pendle's gauges pay, priced like every other token (claims are valued).
        feeds.insert("PENDLE".into(), super::feeds::deploy_feed(&d, super::pendle::PENDLE_USD).await?);
        pendle
    } else {
        Pendle::default()
    };

    let across = super::across::deploy_across(&d, weth, &accounts).await?;

    let mut deployments = Deployments {
        across,
        cage: Cage::default(),
        chain_id,
        uniswap_v4,
        uniswap_v4_pools,
        aave_v3,
        vaults,
        feeds,
        erc8004,
        safe,
        morpho,
        pendle,
        fixtures,
        deployer: from,
        accounts,
        tokens,
        uniswap_v2: named([("factory", v2_factory), ("router02", v2_router)]),
        uniswap_v2_pairs: v2_pairs,
        uniswap_v3: named([
            ("factory", v3_factory),
            ("nft_descriptor_library", nft_descriptor_lib),
            ("position_descriptor", descriptor),
            ("position_manager", npm),
            ("swap_router", swap_router),
            ("quoter_v2", quoter),
        ]),
        uniswap_v3_pools: v3_pools,
        uniswap_v3_incentives: Vec::new(),
    };
    // Last, so every earlier contract keeps its address: the caged Safe needs them all.
    deployments.cage = super::cage::deploy(&d, &deployments).await?;
    // After the cage, so it keeps its address; a caged Safe does not stake (`cage::caged_targets`).
    let pool = deployments
        .uniswap_v3_pools
        .iter()
        .find(|p| p.fee == 3000 && [p.token0.as_str(), p.token1.as_str()].contains(&"USDC"))
        .and_then(|p| [p.token0.as_str(), p.token1.as_str()].contains(&"WETH").then(|| p.clone()))
        .ok_or_else(|| DeployError::Tx {
            step: "the staker's pool".into(),
            message: "no WETH/USDC 0.3 % pool".into(),
        })?;
    let (staker, incentive) =
        super::staker::deploy_staker(&d, &deployments.tokens, v3_factory, npm, &pool).await?;
    deployments.uniswap_v3.insert("staker".into(), staker);
    deployments.uniswap_v3_incentives.push(incentive);
    Ok(deployments)
}

/// The WBTC/WETH V3 pool: WBTC's second price source.
pub(super) fn wbtc_weth(pools: &[Pool]) -> Option<&Pool> {
    pools
        .iter()
        .find(|p| matches!([p.token0.as_str(), p.token1.as_str()], ["WBTC", "WETH"] | ["WETH", "WBTC"]))
}

fn named<const N: usize>(items: [(&str, Address); N]) -> BTreeMap<String, Address> {
    items.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Creation bytecode hash of an artifact (the CREATE2 init code hash of V2 pairs / V3 pools).
fn init_code_hash(d: &Deployer, rel: &str) -> Result<alloy::primitives::B256, DeployError> {
    Ok(alloy::primitives::keccak256(Artifact::load(&d.modules, rel)?.link(&BTreeMap::new())?))
}

/// Permit2's runtime code, from the hex literal in v4-periphery's DeployPermit2.sol.
fn permit2_runtime(d: &Deployer) -> Result<Vec<u8>, DeployError> {
    let rel = "@uniswap/v4-periphery/lib/permit2/test/utils/DeployPermit2.sol";
    let text = std::fs::read_to_string(d.modules.join(rel))
        .map_err(|e| ArtifactError::Read { path: rel.into(), message: e.to_string() })?;
    let invalid = |message: &str| ArtifactError::Invalid { path: rel.into(), message: message.into() };
    let start = text.find("hex\"").ok_or_else(|| invalid("no hex literal"))? + 4;
    let end = text[start..].find('"').ok_or_else(|| invalid("unterminated hex literal"))? + start;
    Ok(alloy::hex::decode(&text[start..end]).map_err(|_| invalid("the literal is not hex"))?)
}

async fn deploy_v4(
    d: &Deployer,
    tokens: &BTreeMap<String, Token>,
    weth: Address,
    v2_factory: Address,
    v3_factory: Address,
    v3_npm: Address,
) -> Result<(BTreeMap<String, Address>, Vec<V4Pool>), DeployError> {
    let none = BTreeMap::new();
    (d.progress)("placing Permit2 at its canonical address");
    let code = Bytes::from(permit2_runtime(d)?);
    d.provider
        .raw_request::<_, ()>("anvil_setCode".into(), (PERMIT2, code))
        .await
        .map_err(|e| DeployError::Tx { step: "anvil_setCode Permit2".into(), message: e.to_string() })?;
    let manager =
        d.deploy("@uniswap/v4-core/out/PoolManager.sol/PoolManager.json", d.from.abi_encode(), &none).await?;
    let positions = d
        .deploy(
            "@uniswap/v4-periphery/foundry-out/PositionManager.sol/PositionManager.json",
            (manager, PERMIT2, U256::from(300_000u64), Address::ZERO, weth).abi_encode_params(),
            &none,
        )
        .await?;
    let quoter = d
        .deploy("@uniswap/v4-periphery/foundry-out/V4Quoter.sol/V4Quoter.json", manager.abi_encode(), &none)
        .await?;
    let state_view = d
        .deploy("@uniswap/v4-periphery/foundry-out/StateView.sol/StateView.json", manager.abi_encode(), &none)
        .await?;
    let params = RouterParameters {
        permit2: PERMIT2,
        weth9: weth,
        v2Factory: v2_factory,
        v3Factory: v3_factory,
        pairInitCodeHash: init_code_hash(d, "@uniswap/v2-core/build/UniswapV2Pair.json")?,
        poolInitCodeHash: init_code_hash(
            d,
            "@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json",
        )?,
        v4PoolManager: manager,
        v3NFTPositionManager: v3_npm,
        v4PositionManager: positions,
        spokePool: Address::ZERO,
    };
    let router = d
        .deploy(
            "@uniswap/universal-router/artifacts/contracts/UniversalRouter.sol/UniversalRouter.json",
            params.abi_encode(),
            &none,
        )
        .await?;
    let liquidity_router = d
        .deploy(
            "@uniswap/v4-core/out/PoolModifyLiquidityTest.sol/PoolModifyLiquidityTest.json",
            manager.abi_encode(),
            &none,
        )
        .await?;
    for t in tokens.values() {
        let approve = approveCall { spender: liquidity_router, amount: U256::MAX }.abi_encode();
        d.call(&format!("approve {} to the V4 liquidity router", t.symbol), t.address, approve, U256::ZERO)
            .await?;
    }
    // v4-core's FeeTakingHook (it skims 1.23 % of every swap's output through afterSwap's
    // return delta): its code placed at an address whose low bits grant exactly its permissions.
    (d.progress)("placing the fee-taking hook at its flagged address");
    let deployed = d
        .deploy("@uniswap/v4-core/out/FeeTakingHook.sol/FeeTakingHook.json", manager.abi_encode(), &none)
        .await?;
    let hook_code = d
        .provider
        .get_code_at(deployed)
        .await
        .map_err(|e| DeployError::Tx { step: "read the hook's code".into(), message: e.to_string() })?;
    d.provider.raw_request::<_, ()>("anvil_setCode".into(), (FEE_TAKING_HOOK, hook_code)).await.map_err(
        |e| DeployError::Tx { step: "anvil_setCode fee-taking hook".into(), message: e.to_string() },
    )?;
    let mut pools = Vec::new();
    // WETH/DAI at 0.05 %: cheaper than any V3 or V2 pool of that pair, so V4 quotes best there.
    // The hooked WETH/USDC pool shares the plain one's fee and spacing; only its hook differs.
    // ETH/USDC at 0.05 %: native ether as currency0 (the zero address), no WETH involved.
    let eth = Token { address: Address::ZERO, symbol: "ETH".into(), decimals: 18, usd: tokens["WETH"].usd };
    for (a, b, fee, spacing, hooks) in [
        ("WETH", "USDC", 3000u32, 60i32, Address::ZERO),
        ("WETH", "DAI", 500, 10, Address::ZERO),
        ("WETH", "USDC", 3000, 60, FEE_TAKING_HOOK),
        ("ETH", "USDC", 500, 10, Address::ZERO),
    ] {
        (d.progress)(&format!("seeding V4 {a}/{b} {fee}"));
        let (ta, tb) = (if a == "ETH" { &eth } else { &tokens[a] }, &tokens[b]);
        let (t0, t1) = if ta.address < tb.address { (ta, tb) } else { (tb, ta) };
        let price = (t0.usd / t1.usd) * 10f64.powi(i32::from(t1.decimals) - i32::from(t0.decimals));
        let key = PoolKey {
            currency0: t0.address,
            currency1: t1.address,
            fee: U24::from(fee),
            tickSpacing: I24::try_from(spacing).unwrap_or_default(),
            hooks,
        };
        let init = initializeCall { key: key.clone(), sqrtPriceX96: sqrt_price_x96(price) };
        d.call("initialize V4 pool", manager, init.abi_encode(), U256::ZERO).await?;
        // Full range, about $1M a side: L = sqrt(raw0 * raw1).
        let raw0 = 1_000_000.0 / t0.usd * 10f64.powi(i32::from(t0.decimals));
        let raw1 = 1_000_000.0 / t1.usd * 10f64.powi(i32::from(t1.decimals));
        let liquidity = ((raw0 * raw1).sqrt() * 0.9) as i128;
        let modify = modifyLiquidityCall {
            key: key.clone(),
            params: ModifyLiquidityParams {
                tickLower: I24::try_from(aligned(-V3_FULL_RANGE, spacing) + spacing).unwrap_or_default(),
                tickUpper: I24::try_from(aligned(V3_FULL_RANGE, spacing)).unwrap_or_default(),
                liquidityDelta: alloy::primitives::I256::try_from(liquidity).unwrap_or_default(),
                salt: alloy::primitives::B256::ZERO,
            },
            hookData: Bytes::new(),
        };
        // Native ether is paid with the call (the test router settles it from what it was
        // sent; a little more than the pool takes stays there).
        let value = if t0.address.is_zero() { U256::from((raw0 * 1.01) as u128) } else { U256::ZERO };
        d.call("add V4 liquidity", liquidity_router, modify.abi_encode(), value).await?;
        let id = alloy::primitives::keccak256(key.abi_encode());
        pools.push(V4Pool {
            id,
            token0: t0.symbol.clone(),
            token1: t1.symbol.clone(),
            fee,
            tick_spacing: spacing,
            hooks,
        });
    }
    let addresses = named([
        ("pool_manager", manager),
        ("position_manager", positions),
        ("v4_quoter", quoter),
        ("state_view", state_view),
        ("permit2", PERMIT2),
        ("universal_router", router),
        ("modify_liquidity_router", liquidity_router),
        ("fee_taking_hook", FEE_TAKING_HOOK),
    ]);
    Ok((addresses, pools))
}
