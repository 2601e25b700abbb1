//! The vault plugin on the devnet's ERC-4626 vaults (OpenZeppelin 4.9.6's `ERC4626`, seeded,
//! with 5 % earned): every read equals the vault's own views and the test's computation of
//! OpenZeppelin's rounding; deposit / mint / withdraw / redeem go through preview → commit and
//! move exactly what they declare, leave no allowance behind and are valued by the host as the
//! asset; the host, not the plugin, decides which vaults a write may touch; bad inputs are typed.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::ErrorCode;
use bardo_devnet::CHAIN_ID;
use bardo_devnet::deploy::Deployments;
use bardo_test_artifacts::VAULT;
use bardo_test_support::writes::{self as plugin_env, Env, u256};
use serde_json::{Value, json};
use std::collections::BTreeMap;

sol! {
    function deposit() external payable;
    function allowance(address owner, address spender) external view returns (uint256);
    function totalSupply() external view returns (uint256);
    function totalAssets() external view returns (uint256);
    function convertToAssets(uint256 shares) external view returns (uint256);
    function maxDeposit(address receiver) external view returns (uint256);
    function maxMint(address receiver) external view returns (uint256);
    function maxWithdraw(address owner) external view returns (uint256);
    function maxRedeem(address owner) external view returns (uint256);
}

/// The devnet with the vault plugin; the host's allowlist is the devnet's minus `unlisted`
/// (the plugin's settings still name everything).
fn env_without(unlisted: &'static [&'static str]) -> Env {
    let settings = |d: &Deployments| BTreeMap::from([("vault".to_owned(), d.vault_settings())]);
    let allowed = |d: &Deployments| {
        let mut allowed = d.write_targets();
        for symbol in unlisted {
            allowed.remove(&d.vaults[*symbol].address);
        }
        allowed
    };
    plugin_env::env(&[VAULT], settings, allowed)
}

fn env() -> Env {
    env_without(&[])
}

fn pow10(n: u8) -> U256 {
    U256::from(10u64).pow(U256::from(n))
}

/// What the vault tests read of their environment.
trait Vaults {
    fn vault(&self, symbol: &str) -> Address;
    fn asset(&self, symbol: &str) -> Address;
    fn totals(&self, vault: Address) -> (U256, U256);
}

impl Vaults for Env {
    fn vault(&self, symbol: &str) -> Address {
        self.d.vaults[symbol].address
    }

    fn asset(&self, symbol: &str) -> Address {
        self.d.tokens[&self.d.vaults[symbol].asset].address
    }

    /// The vault's totals, for the test's own preview arithmetic.
    fn totals(&self, vault: Address) -> (U256, U256) {
        (self.read(vault, totalAssetsCall {}), self.read(vault, totalSupplyCall {}))
    }
}

/// OpenZeppelin 4.9.6's ERC-4626 arithmetic (no decimals offset: one virtual share and one
/// virtual asset), computed here independently of the vault.
fn to_shares(assets: U256, (total_assets, supply): (U256, U256), up: bool) -> U256 {
    mul_div(assets, supply + U256::from(1), total_assets + U256::from(1), up)
}

fn to_assets(shares: U256, (total_assets, supply): (U256, U256), up: bool) -> U256 {
    mul_div(shares, total_assets + U256::from(1), supply + U256::from(1), up)
}

fn mul_div(a: U256, b: U256, d: U256, up: bool) -> U256 {
    let (q, r) = (a * b).div_rem(d);
    if up && !r.is_zero() { q + U256::from(1) } else { q }
}

#[test]
fn reads_equal_the_vaults_own_views_and_openzeppelins_arithmetic() {
    let e = env();
    let list = e.tool("vault_list", json!({"chain_id": CHAIN_ID}));
    let list = list.as_array().expect("list");
    assert_eq!(list.len(), e.d.vaults.len());
    for v in list {
        let symbol = v["vault"]["symbol"].as_str().expect("symbol");
        let vault = e.vault(symbol);
        let (assets, supply) = e.totals(vault);
        assert_eq!(u256(&v["total_assets"]["base"]), assets, "{symbol}");
        assert_eq!(u256(&v["total_supply"]["base"]), supply, "{symbol}");
        let decimals = v["vault"]["decimals"].as_u64().expect("decimals") as u8;
        let price = u256(&v["share_price"]["base"]);
        assert_eq!(price, e.read(vault, convertToAssetsCall { shares: pow10(decimals) }));
        assert_eq!(price, to_assets(pow10(decimals), (assets, supply), false));
        // Seeded, then earned 5 %: a share is worth 1.05 asset units (less the virtual share's
        // rounding).
        assert!(price > pow10(decimals) * U256::from(104) / U256::from(100), "{symbol} {price}");
        assert_eq!(v["asset"]["address"], e.asset(symbol).to_checksum(None));
        assert_eq!(v["allowlisted"], true);
    }

    let info = e.tool("vault_get_info", json!({"chain_id": CHAIN_ID, "vault": "bvUSDC"}));
    let vault = e.vault("bvUSDC");
    let caps = &info["caps"];
    assert_eq!(caps["account"], e.user.to_checksum(None));
    assert_eq!(u256(&caps["max_deposit"]["base"]), e.read(vault, maxDepositCall { receiver: e.user }));
    assert_eq!(u256(&caps["max_mint"]["base"]), e.read(vault, maxMintCall { receiver: e.user }));
    assert_eq!(u256(&caps["max_withdraw"]["base"]), U256::ZERO, "the user holds no shares yet");
    let deployer = e.d.deployer.to_string();
    let theirs = e.tool(
        "vault_get_info",
        json!({"chain_id": CHAIN_ID, "vault": vault.to_string(), "account": deployer}),
    );
    let max_redeem = e.read(vault, maxRedeemCall { owner: e.d.deployer });
    assert_eq!(u256(&theirs["caps"]["max_redeem"]["base"]), max_redeem);
    assert_eq!(
        u256(&theirs["caps"]["max_withdraw"]["base"]),
        e.read(vault, maxWithdrawCall { owner: e.d.deployer })
    );
    assert_eq!(max_redeem, e.balance_of(vault, e.d.deployer));

    // Previews: OpenZeppelin rounds against the caller (down for what it gives, up for what it takes).
    let totals = e.totals(vault);
    let usdc = U256::from(1_234_567_890u64); // 1234.56789 USDC
    let shares = U256::from(777_000_001u64);
    for (tool, amount, expected) in [
        ("vault_preview_deposit", usdc, to_shares(usdc, totals, false)),
        ("vault_preview_mint", shares, to_assets(shares, totals, true)),
        ("vault_preview_withdraw", usdc, to_shares(usdc, totals, true)),
        ("vault_preview_redeem", shares, to_assets(shares, totals, false)),
    ] {
        let text = bardo_sdk_units(amount);
        let p = e.tool(tool, json!({"chain_id": CHAIN_ID, "vault": "bvusdc", "amount": text}));
        assert_eq!(u256(&p["amount"]["base"]), amount, "{tool}");
        assert_eq!(u256(&p["result"]["base"]), expected, "{tool}");
    }

    let held = e.tool("vault_get_position", json!({"chain_id": CHAIN_ID, "account": deployer}));
    let positions = held["positions"].as_array().expect("positions");
    assert_eq!(positions.len(), e.d.vaults.len());
    for p in positions {
        let vault: Address = p["vault"]["address"].as_str().expect("address").parse().expect("address");
        let shares = e.balance_of(vault, e.d.deployer);
        assert_eq!(u256(&p["shares"]["base"]), shares);
        assert_eq!(u256(&p["value"]["base"]), e.read(vault, convertToAssetsCall { shares }));
        let (_, supply) = e.totals(vault);
        assert_eq!(p["share_of_supply_bps"], (shares * U256::from(10_000u64) / supply).to::<u64>());
    }
}

/// Base units of a 6-decimal amount as the decimal text a param takes.
fn bardo_sdk_units(base: U256) -> String {
    let s = format!("{base:0>7}");
    let (whole, frac) = s.split_at(s.len() - 6);
    format!("{whole}.{frac}")
}

#[test]
fn deposit_mint_withdraw_redeem_move_exactly_what_they_declare() {
    let e = env();
    let (vault, usdc) = (e.vault("bvUSDC"), e.asset("bvUSDC"));
    let params = |amount: &str| json!({"chain_id": CHAIN_ID, "vault": "bvUSDC", "amount": amount});

    // Deposit 1000 USDC: exactly that leaves, exactly the previewed shares arrive.
    let (usdc0, shares0) = (e.balance_of(usdc, e.user), e.balance_of(vault, e.user));
    let expected = to_shares(U256::from(1_000_000_000u64), e.totals(vault), false);
    let out = e.write("vault_deposit", params("1000")).actual;
    assert_eq!(e.balance_of(usdc, e.user), usdc0 - U256::from(1_000_000_000u64));
    assert_eq!(e.balance_of(vault, e.user), shares0 + expected);
    assert_eq!(u256(&out["shares"]["base"]), expected, "verify reads the Deposit event");
    assert_eq!(u256(&out["shares_held"]["base"]), expected);
    assert_eq!(e.read(usdc, allowanceCall { owner: e.user, spender: vault }), U256::ZERO, "exact approval");

    // Mint 500 shares: exactly those arrive; the previewed assets (rounded up) leave.
    let (usdc1, shares1) = (e.balance_of(usdc, e.user), e.balance_of(vault, e.user));
    let cost = to_assets(U256::from(500_000_000u64), e.totals(vault), true);
    let out = e.write("vault_mint", params("500")).actual;
    assert_eq!(e.balance_of(vault, e.user), shares1 + U256::from(500_000_000u64));
    assert_eq!(e.balance_of(usdc, e.user), usdc1 - cost);
    assert_eq!(u256(&out["assets"]["base"]), cost);
    assert_eq!(e.read(usdc, allowanceCall { owner: e.user, spender: vault }), U256::ZERO);

    // Withdraw 300 USDC: exactly that arrives; the previewed shares (rounded up) burn.
    let (usdc2, shares2) = (e.balance_of(usdc, e.user), e.balance_of(vault, e.user));
    let burned = to_shares(U256::from(300_000_000u64), e.totals(vault), true);
    e.write("vault_withdraw", params("300"));
    assert_eq!(e.balance_of(usdc, e.user), usdc2 + U256::from(300_000_000u64));
    assert_eq!(e.balance_of(vault, e.user), shares2 - burned);

    // Redeem everything: no shares left, the previewed assets arrive.
    let (usdc3, shares3) = (e.balance_of(usdc, e.user), e.balance_of(vault, e.user));
    let paid = to_assets(shares3, e.totals(vault), false);
    let out = e.write("vault_redeem", params("max")).actual;
    assert_eq!(e.balance_of(vault, e.user), U256::ZERO);
    assert_eq!(e.balance_of(usdc, e.user), usdc3 + paid);
    assert_eq!(u256(&out["shares"]["base"]), shares3);
    // The round trip cost at most the rounding: a few base units of 1200 USDC.
    let spent = usdc0 - e.balance_of(usdc, e.user);
    assert!(spent <= U256::from(4u64), "{spent}");

    // The WETH vault through the same path (the user wraps an ether first); the position read
    // matches.
    let wrap = TransactionRequest::default()
        .from(e.user)
        .to(e.asset("bvWETH"))
        .with_input(depositCall {}.abi_encode())
        .value(pow10(18));
    assert!(e.rt.block_on(bardo_test_support::send(&e.provider, wrap)).status());
    let weth_vault = e.vault("bvWETH");
    let expected = to_shares(pow10(18) / U256::from(2), e.totals(weth_vault), false);
    e.write("vault_deposit", json!({"chain_id": CHAIN_ID, "vault": "bvWETH", "amount": "0.5"}));
    let held = e.tool("vault_get_position", json!({"chain_id": CHAIN_ID, "vault": "bvWETH"}));
    assert_eq!(u256(&held["positions"][0]["shares"]["base"]), expected);
    assert_eq!(e.balance_of(weth_vault, e.user), expected);
}

#[test]
fn the_host_values_shares_as_their_asset() {
    let e = env();
    let vault = e.vault("bvUSDC");
    let valuer = bardo_test_support::writes::valuer(&e.host, &e.d);
    let one_share = pow10(6);
    // USDC is a dollar token: a share is worth exactly what it converts to, in micro-dollars.
    let assets = e.read(vault, convertToAssetsCall { shares: one_share });
    assert_eq!(valuer.usd(CHAIN_ID, vault, one_share).expect("priced"), assets.to::<u128>());
}

#[test]
fn the_host_decides_which_vaults_a_write_may_touch_and_bad_inputs_are_typed() {
    // The plugin's settings still allowlist bvUSDC; the host's allowlist does not.
    let e = env_without(&["bvUSDC"]);
    let refused = e
        .path
        .preview("vault_deposit", &json!({"chain_id": CHAIN_ID, "vault": "bvUSDC", "amount": "10"}))
        .expect_err("the host's allowlist has no bvUSDC");
    assert_eq!(refused.code, ErrorCode::Denied, "{refused}");
    assert!(refused.message.contains(&e.vault("bvUSDC").to_string()), "{refused}");

    let plan = |tool: &str, params: Value| {
        e.host.plan(tool, &params.to_string()).result.map(|_| ()).expect_err(&format!("{tool} {params}"))
    };
    let usdc = e.asset("bvUSDC").to_string();
    for (tool, params, code, says) in [
        (
            "vault_deposit",
            json!({"chain_id": CHAIN_ID, "vault": "bvDAI", "amount": "1"}),
            ErrorCode::NotFound,
            "no vault",
        ),
        (
            "vault_deposit",
            json!({"chain_id": CHAIN_ID, "vault": usdc, "amount": "1"}),
            ErrorCode::InvalidParams,
            "not a vault",
        ),
        (
            "vault_deposit",
            json!({"chain_id": CHAIN_ID, "vault": "bvUSDC", "amount": "0"}),
            ErrorCode::InvalidParams,
            "more than 0",
        ),
        (
            "vault_deposit",
            json!({"chain_id": CHAIN_ID, "vault": "bvUSDC", "amount": "1.0000001"}),
            ErrorCode::InvalidParams,
            "decimals",
        ),
        (
            "vault_redeem",
            json!({"chain_id": CHAIN_ID, "vault": "bvUSDC", "amount": "1"}),
            ErrorCode::InvalidParams,
            "maxredeem",
        ),
        (
            "vault_withdraw",
            json!({"chain_id": CHAIN_ID, "vault": "bvUSDC", "amount": "max"}),
            ErrorCode::InvalidParams,
            "nothing to withdraw",
        ),
        (
            "vault_deposit",
            json!({"chain_id": CHAIN_ID, "vault": "bvUSDC", "amount": "5000000"}),
            ErrorCode::InvalidParams,
            "holds",
        ),
        (
            "vault_mint",
            json!({"chain_id": CHAIN_ID, "vault": "bvUSDC", "amount": "1", "receiver": "0x0"}),
            ErrorCode::InvalidParams,
            "receiver",
        ),
    ] {
        let err = plan(tool, params.clone());
        assert_eq!(err.code, code, "{tool} {params}: {err}");
        assert!(err.message.to_lowercase().contains(says), "{tool} {params}: {err}");
    }
}
