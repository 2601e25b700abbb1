//! The valuer prices tokens only from sources the operator trusts, read from the devnet: each
//! token's Chainlink-style feed and the Aave oracle (agreeing), a canonical pool's time-weighted
//! price, dollar tokens at $1, Aave's tokens as their underlying (debt counted against the
//! wallet). A pool anyone creates prices nothing; sources that disagree refuse the valuation; a
//! token or chain nothing trusted prices is refused, never zero.

use alloy::network::TransactionBuilder;
use alloy::primitives::aliases::{I24, U24, U160};
use alloy::primitives::{Address, Bytes, I256, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_evm::Evm;
use bardo_evm::chain::{ChainConfig, Chains};
use bardo_runtime::Services;
use bardo_safety::valuation::{CanonicalPool, MicroUsd, Valuer};
use bardo_test_support::writes::pricing;
use bardo_test_support::{devnet, root, runtime, send};
use std::collections::BTreeMap;
use std::sync::Arc;

sol! {
    function createPool(address tokenA, address tokenB, uint24 fee) external returns (address pool);
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address pool);
    function initialize(uint160 sqrtPriceX96) external;
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
    function liquidity() external view returns (uint128);
    struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper;
        uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min;
        address recipient; uint256 deadline; }
    function mint(MintParams params) external payable returns (uint256 tokenId, uint128 liquidity,
        uint256 amount0, uint256 amount1);
    function getReserveTokensAddresses(address asset) external view returns (address aTokenAddress,
        address stableDebtTokenAddress, address variableDebtTokenAddress);
    function setAssetSources(address[] assets, address[] sources) external;
    function getAssetPrice(address asset) external view returns (uint256);
    function updateAnswer(int256 answer) external;
    function updateRoundData(uint80 roundId, int256 answer, uint256 timestamp, uint256 startedAt) external;
}

struct Env {
    _node: Anvil,
    d: Deployments,
    services: Arc<Services>,
    provider: DynProvider,
    rt: tokio::runtime::Runtime,
}

fn env() -> Env {
    let (node, d) = devnet();
    // anvil mines a block per transaction: every read must see the newest head.
    let config = ChainConfig { head_ttl_ms: 0, ..ChainConfig::new(node.url()) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), crate::host_runtime()).expect("chains");
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    Env { _node: node, d, services: Arc::new(Services::new(Evm::new(chains, None))), provider, rt: runtime() }
}

fn e18() -> U256 {
    U256::from(10u64).pow(U256::from(18u64))
}

/// `value` is within 1% of `usd` dollars.
fn assert_near(value: MicroUsd, usd: f64, what: &str) {
    let expected = usd * 1e6;
    assert!(
        (value as f64 - expected).abs() <= expected / 100.0,
        "{what}: {value} micro-USD, expected about ${usd}"
    );
}

impl Env {
    fn valuer(&self) -> Valuer {
        Valuer::new(&self.services, pricing(&self.d))
    }

    fn token(&self, symbol: &str) -> Address {
        self.d.tokens[symbol].address
    }

    fn one_weth(&self, v: &Valuer) -> Result<MicroUsd, String> {
        v.usd(CHAIN_ID, self.token("WETH"), e18())
    }

    fn read<C: SolCall>(&self, to: Address, call: C) -> C::Return {
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = self.rt.block_on(self.provider.call(tx).into_future()).expect("eth_call");
        C::abi_decode_returns(&out).expect("decode")
    }

    /// Send from the deployer (an unlocked anvil account holding every token, approvals given).
    fn send(&self, to: Address, data: Vec<u8>) {
        let tx = TransactionRequest::default().from(self.d.deployer).to(to).with_input(data);
        let receipt = self.rt.block_on(send(&self.provider, tx));
        assert!(receipt.status(), "transaction to {to} reverted");
    }

    /// WETH's Aave reserve tokens: (aWETH, stable debt, variable debt).
    fn weth_reserve(&self) -> (Address, Address, Address) {
        let call = getReserveTokensAddressesCall { asset: self.token("WETH") };
        let r = self.read(self.d.aave_v3["protocol_data_provider"], call);
        (r.aTokenAddress, r.stableDebtTokenAddress, r.variableDebtTokenAddress)
    }

    /// Point the Aave oracle's `symbol` price at a new MockAggregator answering `usd` (it has
    /// no setter).
    fn set_oracle_price(&self, symbol: &str, usd: u64) {
        let path = root().join(
            "devnet/node_modules/@aave/core-v3/artifacts/contracts/mocks/oracle/CLAggregators/MockAggregator.sol/MockAggregator.json",
        );
        let artifact: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).expect("artifact")).expect("json");
        let mut code = alloy::hex::decode(artifact["bytecode"].as_str().expect("bytecode")).expect("hex");
        code.extend(I256::try_from(usd * 100_000_000).expect("price").abi_encode());
        let tx = TransactionRequest::default().from(self.d.deployer).with_deploy_code(Bytes::from(code));
        let aggregator = self.rt.block_on(send(&self.provider, tx)).contract_address.expect("deployed");
        let call = setAssetSourcesCall { assets: vec![self.token(symbol)], sources: vec![aggregator] };
        self.send(self.d.aave_v3["oracle"], call.abi_encode());
        let price = self.read(self.d.aave_v3["oracle"], getAssetPriceCall { asset: self.token(symbol) });
        assert_eq!(price, U256::from(usd * 100_000_000));
    }
}

#[test]
fn tokens_are_valued_from_their_feeds_and_the_oracle() {
    let e = env();
    let v = e.valuer();
    assert_near(e.one_weth(&v).expect("WETH has a price"), e.d.tokens["WETH"].usd, "1 WETH");
    // A dollar token is exactly $1: 1,234 USDC.
    assert_eq!(v.usd(CHAIN_ID, e.token("USDC"), U256::from(1_234_000_000u64)), Ok(1_234_000_000));
    // WBTC by its feed and the WBTC/WETH pool's time-weighted price (the Aave market does not
    // list it), which agree.
    let one_wbtc = U256::from(100_000_000u64);
    assert_near(v.usd(CHAIN_ID, e.token("WBTC"), one_wbtc).expect("WBTC"), e.d.tokens["WBTC"].usd, "1 WBTC");
    // Spending 1 WETH is worth minus its price.
    let spent = v.signed_usd(CHAIN_ID, e.token("WETH"), -I256::from_raw(e18())).expect("signed");
    assert_near(spent.unsigned_abs(), e.d.tokens["WETH"].usd, "-1 WETH");
    assert!(spent < 0, "{spent}");
    // The feed moves the price (a new block, so the per-block price is read again): the pool
    // does not follow, and two sources that disagree value nothing.
    e.send(
        e.d.feeds["WBTC"],
        updateAnswerCall { answer: I256::try_from(55_000i64 * 100_000_000).expect("answer") }.abi_encode(),
    );
    let err = v.usd(CHAIN_ID, e.token("WBTC"), one_wbtc).expect_err("the feed left the pool");
    assert!(err.contains("disagree"), "{err}");
    // With the feed alone (and a cap above the amount) the price is the feed's.
    let mut feed_alone = pricing(&e.d);
    feed_alone.values_mut().for_each(|c| {
        c.canonical_pools.clear();
        c.single_source_max_usd = Some(100_000);
    });
    assert_near(
        Valuer::new(&e.services, feed_alone).usd(CHAIN_ID, e.token("WBTC"), one_wbtc).expect("WBTC"),
        55_000.0,
        "1 WBTC after the update",
    );
    // WETH with no feed listed stands on the oracle; WBTC with none is unpriced.
    // (One source each now: a cap above these amounts.)
    let mut fewer = pricing(&e.d);
    fewer.values_mut().for_each(|c| {
        c.feeds.clear();
        c.canonical_pools.clear();
        c.single_source_max_usd = Some(100_000);
    });
    let oracle_only = Valuer::new(&e.services, fewer);
    assert_near(
        e.one_weth(&oracle_only).expect("the oracle"),
        e.d.tokens["WETH"].usd,
        "1 WETH by the oracle",
    );
    let err = oracle_only.usd(CHAIN_ID, e.token("WBTC"), one_wbtc).expect_err("no feed, no oracle");
    assert!(err.contains("is unpriced") && err.contains("[safety.pricing.31337]"), "{err}");
}

#[test]
fn aave_tokens_are_their_underlying_and_debt_counts_against_the_wallet() {
    let e = env();
    let (a_weth, stable_debt, variable_debt) = e.weth_reserve();
    let weth_usd = e.d.tokens["WETH"].usd;
    let one = I256::from_raw(e18());
    // With the oracle configured, the Aave market says which token is which; without it, the
    // debt tokens are told apart by `borrowAllowance`.
    // (Without the oracle WETH stands on its feed alone: a cap above these amounts.)
    let mut no_oracle = pricing(&e.d);
    no_oracle.values_mut().for_each(|c| {
        c.aave_oracle = None;
        c.single_source_max_usd = Some(100_000);
    });
    for v in [e.valuer(), Valuer::new(&e.services, no_oracle)] {
        assert_near(v.usd(CHAIN_ID, a_weth, e18()).expect("aWETH"), weth_usd, "1 aWETH");
        let supplied = v.signed_usd(CHAIN_ID, a_weth, one).expect("aWETH gained");
        assert!(supplied > 0, "{supplied}");
        assert_near(supplied.unsigned_abs(), weth_usd, "+1 aWETH");
        let borrowed = v.signed_usd(CHAIN_ID, variable_debt, one).expect("debt gained");
        assert!(borrowed < 0, "more debt is worth less: {borrowed}");
        assert_near(borrowed.unsigned_abs(), weth_usd, "+1 variable debt WETH");
        let repaid = v.signed_usd(CHAIN_ID, stable_debt, -one).expect("debt repaid");
        assert!(repaid > 0, "less debt is worth more: {repaid}");
    }
}

#[test]
fn a_token_or_chain_nothing_prices_is_refused_never_zero() {
    let e = env();
    let v = e.valuer();
    let unknown = Address::repeat_byte(0x42);
    let err = v.usd(CHAIN_ID, unknown, e18()).expect_err("no feed, no oracle");
    assert!(err.contains("is unpriced"), "{err}");
    // Nothing is worth nothing, priced or not (revoking an approval stays possible).
    assert_eq!(v.usd(CHAIN_ID, unknown, U256::ZERO), Ok(0));
    let bare = Valuer::new(&e.services, BTreeMap::new());
    let err = e.one_weth(&bare).expect_err("no pricing config for the chain");
    assert!(err.contains("pricing_file") && err.contains("[safety.pricing"), "{err}");
}

#[test]
fn a_pool_anyone_creates_prices_nothing_and_a_canonical_one_only_over_its_window() {
    let e = env();
    let v = e.valuer();
    let before = e.one_weth(&v).expect("priced");
    let (weth, usdc, wbtc) = (e.token("WETH"), e.token("USDC"), e.token("WBTC"));
    let factory = e.d.uniswap_v3["factory"];
    // A new WETH/USDC pool at the unused 1% tier, WETH 100x cheaper than in the deep 0.05% pool.
    let fee = U24::from(10_000u32);
    e.send(factory, createPoolCall { tokenA: weth, tokenB: usdc, fee }.abi_encode());
    let thin = e.read(factory, getPoolCall { tokenA: weth, tokenB: usdc, fee });
    assert_ne!(thin, Address::ZERO);
    let deep = e.read(factory, getPoolCall { tokenA: weth, tokenB: usdc, fee: U24::from(500u32) });
    let deep_sqrt = e.read(deep, slot0Call {}).sqrtPriceX96;
    let weth_is_0 = weth < usdc;
    // Price is sqrt², so 10x on the sqrt price is 100x, in WETH's direction by token order.
    let ten = U160::from(10u8);
    let sqrt = if weth_is_0 { deep_sqrt / ten } else { deep_sqrt * ten };
    e.send(thin, initializeCall { sqrtPriceX96: sqrt }.abi_encode());
    // A little full-range liquidity: about $20 a side at the thin price.
    let (token0, token1) = if weth_is_0 { (weth, usdc) } else { (usdc, weth) };
    let twenty_usdc = U256::from(20_000_000u64);
    let (amount0, amount1) = if weth_is_0 { (e18(), twenty_usdc) } else { (twenty_usdc, e18()) };
    let params = MintParams {
        token0,
        token1,
        fee,
        tickLower: I24::try_from(-887_200i32).expect("tick"),
        tickUpper: I24::try_from(887_200i32).expect("tick"),
        amount0Desired: amount0,
        amount1Desired: amount1,
        amount0Min: U256::ZERO,
        amount1Min: U256::ZERO,
        recipient: e.d.deployer,
        deadline: U256::MAX,
    };
    e.send(e.d.uniswap_v3["position_manager"], mintCall { params }.abi_encode());
    assert!(e.read(thin, liquidityCall {}) > 0, "the thin pool has liquidity in range");
    // The host never searches pools: 1 WETH is worth what it was.
    assert_eq!(e.one_weth(&v).expect("still priced"), before);

    // A canonical pool prices by its time-weighted price: WBTC with no feed, by the WBTC/WETH
    // 0.3 % pool over a minute (its last observation is older than that once time passes).
    let wbtc_weth = e.read(factory, getPoolCall { tokenA: wbtc, tokenB: weth, fee: U24::from(3_000u32) });
    let canonical = |window: u32, min: u128, pool: Address| {
        let mut pricing = pricing(&e.d);
        for c in pricing.values_mut() {
            c.feeds.remove(&wbtc);
            c.canonical_pools.insert(wbtc, CanonicalPool { pool, window_secs: window, min_liquidity: min });
            // The pool alone: a cap above the amounts valued here.
            c.single_source_max_usd = Some(100_000);
        }
        Valuer::new(&e.services, pricing)
    };
    e.rt.block_on(e.provider.raw_request::<_, serde_json::Value>("evm_increaseTime".into(), (120,)))
        .expect("time passes");
    e.rt.block_on(e.provider.raw_request::<_, serde_json::Value>("evm_mine".into(), ())).expect("mine");
    let one_wbtc = U256::from(100_000_000u64);
    let twap = canonical(60, 0, wbtc_weth).usd(CHAIN_ID, wbtc, one_wbtc).expect("the pool's TWAP");
    assert_near(twap, e.d.tokens["WBTC"].usd, "1 WBTC by its canonical pool");
    let liquidity = e.read(wbtc_weth, liquidityCall {});
    let err = canonical(60, liquidity + 1, wbtc_weth).usd(CHAIN_ID, wbtc, one_wbtc).expect_err("too thin");
    assert!(err.contains("under its min_liquidity"), "{err}");
    let err = canonical(1_000_000, 0, wbtc_weth)
        .usd(CHAIN_ID, wbtc, one_wbtc)
        .expect_err("no observation that old");
    assert!(err.contains("observations 1000000 s old"), "{err}");
    // The thin pool named canonical for WETH disagrees with WETH's feed and oracle: refused.
    let mut trusting_thin = pricing(&e.d);
    for c in trusting_thin.values_mut() {
        c.canonical_pools.insert(weth, CanonicalPool { pool: thin, window_secs: 60, min_liquidity: 0 });
    }
    e.rt.block_on(e.provider.raw_request::<_, serde_json::Value>("evm_increaseTime".into(), (120,)))
        .expect("time passes");
    e.rt.block_on(e.provider.raw_request::<_, serde_json::Value>("evm_mine".into(), ())).expect("mine");
    let err = e.one_weth(&Valuer::new(&e.services, trusting_thin)).expect_err("disagree");
    assert!(err.contains("disagree") && err.contains(&format!("canonical pool {thin}")), "{err}");
}

#[test]
fn an_oracle_far_from_the_feed_refuses_the_valuation() {
    let e = env();
    let v = e.valuer();
    let before = e.one_weth(&v).expect("the feed and the oracle agree");
    let (a_weth, _, _) = e.weth_reserve();
    // WETH's oracle source moves to a new aggregator at half the feed's price.
    e.set_oracle_price("WETH", 1_000);
    let err = e.one_weth(&v).expect_err("50% apart");
    assert!(err.contains("disagree") && err.contains("$1000.000000"), "{err}");
    let err = v.usd(CHAIN_ID, a_weth, e18()).expect_err("aWETH is priced as WETH");
    assert!(err.contains("disagree"), "{err}");
    // Dollar tokens are unaffected.
    assert_eq!(v.usd(CHAIN_ID, e.token("USDC"), U256::from(1_000_000u64)), Ok(1_000_000));
    // Within max_divergence_bps (2.5% < 5%) the feed's price stands.
    e.set_oracle_price("WETH", 1_950);
    assert_near(e.one_weth(&v).expect("close enough"), before as f64 / 1e6, "1 WETH, oracle at $1,950");
}

/// The valuer as `bardo` builds it from the shipped bardo.toml's `[safety]` and the pricing file
/// `bardo devnet up` writes beside it.
fn shipped(e: &Env) -> (Valuer, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = dir.path().join(".bardo/settings");
    std::fs::create_dir_all(&settings).expect("settings");
    std::fs::write(settings.join("pricing.json"), e.d.pricing_json().to_string()).expect("pricing.json");
    let text = std::fs::read_to_string(root().join("bardo.toml")).expect("the shipped bardo.toml");
    let config = bardo_runtime::Config::parse(&text, &dir.path().join("bardo.toml")).expect("config");
    let safety: bardo_safety::SafetyConfig = config.section().expect("[safety]");
    let pricing = safety.pricing(&config).expect("pricing");
    assert_eq!(pricing[&CHAIN_ID].max_feed_age_secs, Some(3_600), "fresh prices by default");
    (Valuer::new(&e.services, pricing), dir)
}

#[test]
fn stale_zero_and_negative_feeds_are_refused_with_the_shipped_config() {
    let e = env();
    let (v, _dir) = shipped(&e);
    assert_near(
        e.one_weth(&v).expect("fresh: the devnet re-stamps its feeds"),
        e.d.tokens["WETH"].usd,
        "1 WETH",
    );
    // An hour and a second with no update.
    e.rt.block_on(e.provider.raw_request::<_, serde_json::Value>("evm_increaseTime".into(), (3_601,)))
        .expect("time passes");
    e.rt.block_on(e.provider.raw_request::<_, serde_json::Value>("evm_mine".into(), ())).expect("mine");
    let stale = e.one_weth(&v).expect_err("stale");
    let feed = e.d.feeds["WETH"].to_string();
    assert!(stale.contains(&format!("feed {feed} last answered")), "names the feed: {stale}");
    assert!(stale.contains("s ago, older than max_feed_age_secs = 3600"), "its age and the setting: {stale}");
    // The devnet's heartbeat re-stamps what grew old.
    let stamped =
        e.rt.block_on(bardo_devnet::feeds::restamp(&e._node.url(), &e.d.feeds, 1_800)).expect("restamp");
    assert_eq!(stamped, e.d.feeds.len());
    assert_near(e.one_weth(&v).expect("fresh again"), e.d.tokens["WETH"].usd, "1 WETH");
    // A zero, a negative, and a 1970 answer.
    let wbtc = (e.token("WBTC"), e.d.feeds["WBTC"]);
    let one_wbtc = U256::from(100_000_000u64);
    for answer in [0i64, -1] {
        e.send(wbtc.1, updateAnswerCall { answer: I256::try_from(answer).expect("answer") }.abi_encode());
        let err = v.usd(CHAIN_ID, wbtc.0, one_wbtc).expect_err("no price");
        assert!(err.contains(&format!("answers {answer}")) && err.contains("cannot value"), "{err}");
    }
    let price = I256::try_from(60_000i64 * 100_000_000).expect("answer");
    let call = updateRoundDataCall {
        roundId: alloy::primitives::aliases::U80::from(99u64),
        answer: price,
        timestamp: U256::from(1),
        startedAt: U256::from(1),
    };
    e.send(wbtc.1, call.abi_encode());
    let err = v.usd(CHAIN_ID, wbtc.0, one_wbtc).expect_err("1970");
    assert!(err.contains("older than max_feed_age_secs"), "{err}");
}

#[test]
fn a_volatile_token_one_source_prices_is_valued_only_up_to_a_cap() {
    let e = env();
    let (wbtc, one_wbtc) = (e.token("WBTC"), U256::from(100_000_000u64));
    // WBTC without its canonical pool: its feed alone.
    let mut alone = pricing(&e.d);
    alone.values_mut().for_each(|c| c.canonical_pools.clear());
    let v = Valuer::new(&e.services, alone);
    assert_near(
        v.usd(CHAIN_ID, wbtc, one_wbtc / U256::from(100u8)).expect("$600 is under the cap"),
        600.0,
        "0.01 WBTC",
    );
    let err = v.usd(CHAIN_ID, wbtc, one_wbtc).expect_err("$60,000 on one source");
    let feed = e.d.feeds["WBTC"].to_string();
    assert!(err.contains(&format!("priced by one source alone (feed {feed})")), "{err}");
    assert!(
        err.contains("single_source_max_usd = 1000") && err.contains("canonical_pools"),
        "says what to add: {err}"
    );
    // Dollar tokens are $1 by the operator's word, whatever the amount.
    assert_eq!(v.usd(CHAIN_ID, e.token("USDC"), U256::from(10u64.pow(12))), Ok(10u128.pow(12)));
    // With the devnet's canonical pool, a second source: any amount, and a lying feed at three
    // times the pool's price is caught.
    assert_near(e.valuer().usd(CHAIN_ID, wbtc, one_wbtc).expect("two sources"), 60_000.0, "1 WBTC");
    e.send(
        e.d.feeds["WBTC"],
        updateAnswerCall { answer: I256::try_from(180_000i64 * 100_000_000).expect("answer") }.abi_encode(),
    );
    let err = e.valuer().usd(CHAIN_ID, wbtc, one_wbtc).expect_err("a lying feed");
    assert!(err.contains("disagree"), "{err}");
    // The Aave oracle reading the feed itself is no second source: WETH then stands on one.
    let weth = e.token("WETH");
    let call = setAssetSourcesCall { assets: vec![weth], sources: vec![e.d.feeds["WETH"]] };
    e.send(e.d.aave_v3["oracle"], call.abi_encode());
    let err = e.one_weth(&e.valuer()).expect_err("one aggregator counted once");
    assert!(err.contains("priced by one source alone"), "{err}");
}
