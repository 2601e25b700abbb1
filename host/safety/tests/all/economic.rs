//! Economic attacks: value the write path would once have let go because every call was in scope
//! and every balance declared. An attacker (anvil's second account) makes a token worth nothing
//! and pools it with USDC at a price of its choosing, and initialises a V3 pool at an unused fee
//! tier and a hookless V4 pool at ten times the market; the honest `uniswap` plugin is then led
//! into each. Prices now come only from the operator's trusted sources (the devnet's feeds and
//! the Aave oracle), so every one is refused by the hook that says why, and no balance moves.

use alloy::network::TransactionBuilder;
use alloy::primitives::aliases::{I24, U24, U160};
use alloy::primitives::{Address, Bytes, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use bardo_core::ErrorCode;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::plugin::Host;
use bardo_safety::WritePath;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::{devnet, devnet_host, root, runtime, send};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

sol! {
    function balanceOf(address account) external view returns (uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function mint(address account, uint256 value) external returns (bool);
    function createPool(address tokenA, address tokenB, uint24 fee) external returns (address pool);
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address pool);
    function initialize(uint160 sqrtPriceX96) external;
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
    struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper;
        uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min;
        address recipient; uint256 deadline; }
    function mint(MintParams params) external payable returns (uint256 tokenId, uint128 liquidity,
        uint256 amount0, uint256 amount1);
}

mod v4 {
    alloy::sol! {
        struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }
        function initialize(PoolKey key, uint160 sqrtPriceX96) external returns (int24 tick);
    }
}

struct Env {
    _node: Anvil,
    d: Deployments,
    host: Arc<Host>,
    provider: DynProvider,
    rt: tokio::runtime::Runtime,
    attacker: Address,
    _dir: tempfile::TempDir,
}

fn env() -> Env {
    let (node, d) = devnet();
    let host = Arc::new(devnet_host(&node.url(), d.uniswap_settings(), true, &[UNISWAP]));
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let attacker = d.accounts[1];
    Env {
        _node: node,
        d,
        host,
        provider,
        rt: runtime(),
        attacker,
        _dir: tempfile::tempdir().expect("tempdir"),
    }
}

impl Env {
    /// A write path with the devnet's allowlist and guards; `approved` restricts what a plan may
    /// acquire (none: anything).
    fn path(&self, name: &str, approved: Option<BTreeSet<Address>>) -> WritePath {
        let cage = PolicyCage {
            approved_assets: approved.map(|a| BTreeMap::from([(CHAIN_ID, a)])).unwrap_or_default(),
            ..PolicyCage::default()
        };
        let hooks: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(cage),
            Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, self.d.write_targets())]))),
            Box::new(ApprovalGuard),
        ];
        let log = AuditLog::open(&self._dir.path().join(format!("{name}.jsonl")), HostKey::ephemeral())
            .expect("audit log");
        WritePath::new(self.host.clone(), self.host.services().clone(), hooks, log)
            .with_after_simulation(bardo_test_support::writes::guards(&self.host, &self.d))
    }

    fn token(&self, symbol: &str) -> Address {
        self.d.tokens[symbol].address
    }

    fn read<C: SolCall>(&self, to: Address, call: C) -> C::Return {
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = self.rt.block_on(self.provider.call(tx).into_future()).expect("eth_call");
        C::abi_decode_returns(&out).expect("decode")
    }

    /// Send as `from` (an unlocked anvil account).
    fn send_as(&self, from: Address, to: Address, data: Vec<u8>) {
        let tx = TransactionRequest::default().from(from).to(to).with_input(data);
        let receipt = self.rt.block_on(send(&self.provider, tx));
        assert!(receipt.status(), "transaction to {to} reverted");
    }

    /// The attacker's token: a mintable ERC-20 (the devnet's own test-token contract), a
    /// million of it minted to the attacker.
    fn attacker_token(&self) -> Address {
        let path = root().join(
            "devnet/node_modules/@aave/core-v3/artifacts/contracts/mocks/tokens/MintableERC20.sol/MintableERC20.json",
        );
        let artifact: Value = serde_json::from_slice(&std::fs::read(path).expect("artifact")).expect("json");
        let mut code = alloy::hex::decode(artifact["bytecode"].as_str().expect("bytecode")).expect("hex");
        code.extend(("Worthless".to_owned(), "WRTH".to_owned(), U256::from(18u8)).abi_encode_params());
        let tx = TransactionRequest::default().from(self.attacker).with_deploy_code(Bytes::from(code));
        let token = self.rt.block_on(send(&self.provider, tx)).contract_address.expect("deployed");
        let million = U256::from(1_000_000u64) * U256::from(10u64).pow(U256::from(18u8));
        self.send_as(
            self.attacker,
            token,
            mint_0Call { account: self.attacker, value: million }.abi_encode(),
        );
        token
    }

    /// What the wallet and the attacker hold of `tokens`.
    fn holdings(&self, tokens: &[Address]) -> Vec<U256> {
        let owners = [self.d.deployer, self.attacker];
        owners
            .iter()
            .flat_map(|o| tokens.iter().map(move |t| (*o, *t)))
            .map(|(account, token)| self.read(token, balanceOfCall { account }))
            .collect()
    }
}

/// sqrt(`raw_price`) × 2⁹⁶ for a raw token1-per-token0 price given as `num / den`.
fn sqrt_price(num: u128, den: u128) -> U160 {
    let ratio: U256 = (U256::from(num) << 192usize) / U256::from(den);
    U160::saturating_from(ratio.root(2))
}

fn refused(path: &WritePath, kind: &str, params: &Value, hook: &str, hints: &[&str]) {
    let e = path.preview(kind, params).expect_err(&format!("{kind} {params} must be refused"));
    assert_eq!(e.code, ErrorCode::Denied, "{e}");
    assert!(e.message.starts_with(&format!("{hook}: ")), "{kind} should be refused by {hook}: {e}");
    for hint in hints {
        assert!(e.message.contains(hint), "{kind}: {:?} should mention {hint:?}", e.message);
    }
}

#[test]
fn a_token_pooled_at_a_price_nobody_trusts_is_not_bought() {
    let e = env();
    let usdc = e.token("USDC");
    let worthless = e.attacker_token();
    // Its only pool: WRTH/USDC at 0.3 %, "worth" $1, with 10,000 of each in full range.
    let (factory, npm) = (e.d.uniswap_v3["factory"], e.d.uniswap_v3["position_manager"]);
    let fee = U24::from(3_000u32);
    e.send_as(e.attacker, factory, createPoolCall { tokenA: worthless, tokenB: usdc, fee }.abi_encode());
    let pool = e.read(factory, getPoolCall { tokenA: worthless, tokenB: usdc, fee });
    let worthless_is_0 = worthless < usdc;
    // Raw USDC (6 decimals) per raw WRTH (18) is 10⁻¹², or the inverse.
    let sqrt =
        if worthless_is_0 { sqrt_price(1, 1_000_000_000_000) } else { sqrt_price(1_000_000_000_000, 1) };
    e.send_as(e.attacker, pool, initializeCall { sqrtPriceX96: sqrt }.abi_encode());
    let ten_thousand = |decimals: u8| U256::from(10_000u64) * U256::from(10u64).pow(U256::from(decimals));
    for token in [worthless, usdc] {
        e.send_as(e.attacker, token, approveCall { spender: npm, amount: U256::MAX }.abi_encode());
    }
    let (token0, token1) = if worthless_is_0 { (worthless, usdc) } else { (usdc, worthless) };
    let (amount0, amount1) = if worthless_is_0 {
        (ten_thousand(18), ten_thousand(6))
    } else {
        (ten_thousand(6), ten_thousand(18))
    };
    let params = MintParams {
        token0,
        token1,
        fee,
        tickLower: I24::try_from(-887_220i32).expect("tick"),
        tickUpper: I24::try_from(887_220i32).expect("tick"),
        amount0Desired: amount0,
        amount1Desired: amount1,
        amount0Min: U256::ZERO,
        amount1Min: U256::ZERO,
        recipient: e.attacker,
        deadline: U256::MAX,
    };
    e.send_as(e.attacker, npm, mint_1Call { params }.abi_encode());
    let before = e.holdings(&[usdc, worthless]);

    // The honest plugin plans the swap the agent asked for: 1,000 USDC into WRTH.
    let swap = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": worthless.to_checksum(None),
        "amount": "1000", "version": "v3"});
    let unpriced = [&format!("{worthless} is unpriced") as &str, "no trusted price"];
    refused(&e.path("open", None), "swap", &swap, "price-guard", &unpriced);
    // An operator who approved the asset by mistake still gets no price for it.
    let all: BTreeSet<Address> = e.d.tokens.values().map(|t| t.address).chain([worthless]).collect();
    refused(&e.path("approved", Some(all)), "swap", &swap, "price-guard", &unpriced);
    // With the devnet's approved list, it is not even an asset the wallet may acquire.
    let listed: BTreeSet<Address> = e.d.tokens.values().map(|t| t.address).collect();
    refused(&e.path("listed", Some(listed)), "swap", &swap, "policy-cage", &["not an approved asset"]);
    // An honest swap between trusted tokens still goes through.
    let fine = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000"});
    e.path("open2", None).preview("swap", &fine).expect("an honest swap");
    assert_eq!(e.holdings(&[usdc, worthless]), before, "the wallet and the attacker hold what they held");
}

#[test]
fn liquidity_is_not_deposited_into_a_pool_ten_times_off_the_market() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let weth_is_0 = weth < usdc;
    // WETH at $20,000: raw USDC per raw WETH 2·10⁻⁸ (10 × the market's 2·10⁻⁹), or the inverse.
    let tenfold = if weth_is_0 { sqrt_price(2, 100_000_000) } else { sqrt_price(100_000_000, 2) };
    // V3: the unused 1 % tier, created and initialised by the attacker.
    let factory = e.d.uniswap_v3["factory"];
    let fee = U24::from(10_000u32);
    e.send_as(e.attacker, factory, createPoolCall { tokenA: weth, tokenB: usdc, fee }.abi_encode());
    let pool = e.read(factory, getPoolCall { tokenA: weth, tokenB: usdc, fee });
    e.send_as(e.attacker, pool, initializeCall { sqrtPriceX96: tenfold }.abi_encode());
    // V4: a hookless WETH/USDC pool at 1 % (spacing 200), the same price.
    let key = v4::PoolKey {
        currency0: weth.min(usdc),
        currency1: weth.max(usdc),
        fee,
        tickSpacing: I24::try_from(200).expect("spacing"),
        hooks: Address::ZERO,
    };
    let manager = e.d.uniswap_v4["pool_manager"];
    e.send_as(e.attacker, manager, v4::initializeCall { key, sqrtPriceX96: tenfold }.abi_encode());
    let before = e.holdings(&[weth, usdc]);

    let path = e.path("lp", None);
    let deposit = |version: &str, extra: Value| {
        let mut p = json!({"chain_id": CHAIN_ID, "version": version, "token_a": "WETH", "token_b": "USDC",
            "fee": 10000, "amount_a": "0.5", "amount_b": "10000", "full_range": true});
        p.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        p
    };
    let off = ["bps away", "max_price_deviation_bps 200", "where trusted sources say $2000.000000"];
    refused(
        &path,
        "add_liquidity",
        &deposit("v3", json!({})),
        "price-guard",
        &[&format!("V3 pool {pool}"), off[0], off[1]],
    );
    refused(
        &path,
        "add_liquidity",
        &deposit("v4", json!({"tick_spacing": 200})),
        "price-guard",
        &["V4 pool 0x", off[0], off[2]],
    );
    assert_eq!(e.holdings(&[weth, usdc]), before, "nothing deposited");
    // The devnet's own pools stand at the reference: a deposit there passes every check.
    let honest = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "0.5", "amount_b": "1000", "full_range": true});
    path.preview("add_liquidity", &honest).expect("a deposit at the market price");
}
