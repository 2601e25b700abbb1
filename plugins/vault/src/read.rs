//! The read tools: the configured vaults, one vault's state and caps, previews, positions.

use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{account_or_wallet, wallet};
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::erc4626::{self, Flow, Vault};
use bardo_sdk::errors::invalid_params;
use bardo_sdk::operator::{Book, book};
use bardo_sdk::tokens::lookup;
use bardo_sdk::units::{Amount, parse_units};
use bardo_sdk::{Category, ChainId, ChainParams, Error, ReadTool, ToolDef, described};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) fn def<P: JsonSchema>(name: &str, description: &str) -> ToolDef {
    described::<P>(name, description, Category::Vault, &[])
}

/// A vault param: a symbol from the operator's `vaults` list, or an address.
pub(crate) fn resolve(chain_id: ChainId, b: &Book, input: &str) -> Result<Vault, Error> {
    erc4626::vault(chain_id, lookup(chain_id, "vault", input, ("vault", &b.vaults))?)
}

/// `text` in the units of `token`: a positive decimal, or `max` when `max` is given.
pub(crate) fn amount(text: &str, token: &Token, max: Option<U256>) -> Result<U256, Error> {
    if let Some(max) = max
        && text.trim().eq_ignore_ascii_case("max")
    {
        return Ok(max);
    }
    let v = parse_units("amount", text, token.decimals)?;
    if v.is_zero() {
        return Err(invalid_params("`amount` must be more than 0"));
    }
    Ok(v)
}

/// A vault's state: what the chain says now.
#[derive(Serialize)]
pub struct VaultState {
    /// The vault and its share token.
    vault: Token,
    /// The asset it holds.
    asset: Token,
    /// Assets under management (`totalAssets()`).
    total_assets: Amount,
    /// Shares outstanding.
    total_supply: Amount,
    /// One whole share in the asset (`convertToAssets`).
    share_price: Amount,
    /// Whether the operator allowlisted it for writes (role `erc4626-vault`).
    allowlisted: bool,
}

fn state(chain_id: ChainId, b: &Book, v: &Vault) -> Result<VaultState, Error> {
    Ok(VaultState {
        total_assets: Amount::of(v.total_assets(chain_id)?, v.asset.decimals),
        total_supply: Amount::of(erc20::total_supply(chain_id, v.shares.address)?, v.shares.decimals),
        share_price: Amount::of(v.share_price(chain_id)?, v.asset.decimals),
        allowlisted: b.role(v.shares.address) == Some("erc4626-vault"),
        vault: v.shares.clone(),
        asset: v.asset.clone(),
    })
}

pub struct ListVaults;

impl ReadTool for ListVaults {
    const NAME: &'static str = "vault_list";
    type Params = ChainParams;
    type Output = Vec<VaultState>;

    fn def() -> ToolDef {
        def::<ChainParams>(
            Self::NAME,
            "The operator's ERC-4626 vaults on a chain: each one's asset, total assets, shares \
             outstanding, share price, and whether writes to it are allowlisted.",
        )
    }

    fn run(p: ChainParams) -> Result<Vec<VaultState>, Error> {
        let b = book(p.chain_id)?;
        b.vaults.iter().map(|l| state(p.chain_id, &b, &erc4626::vault(p.chain_id, l.address)?)).collect()
    }
}

/// Params naming a vault and, optionally, an account.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InfoParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The vault: a symbol from the operator's list (`bvUSDC`) or an address.
    pub vault: String,
    /// Whose caps to read; default: the host's wallet.
    #[serde(default)]
    pub account: Option<String>,
}

/// The most each flow takes for one account now (`max*`).
#[derive(Serialize)]
pub struct Caps {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    account: Address,
    /// Assets it may deposit.
    max_deposit: Amount,
    /// Shares it may mint.
    max_mint: Amount,
    /// Assets it may withdraw.
    max_withdraw: Amount,
    /// Shares it may redeem.
    max_redeem: Amount,
}

#[derive(Serialize)]
pub struct Info {
    #[serde(flatten)]
    state: VaultState,
    /// The vault's caps for the account.
    caps: Caps,
}

pub struct GetInfo;

impl ReadTool for GetInfo {
    const NAME: &'static str = "vault_get_info";
    type Params = InfoParams;
    type Output = Info;

    fn def() -> ToolDef {
        def::<InfoParams>(
            Self::NAME,
            "One ERC-4626 vault: its asset, total assets, shares outstanding, share price, and its \
             caps (maxDeposit, maxMint, maxWithdraw, maxRedeem) for the wallet or `account`.",
        )
    }

    fn run(p: InfoParams) -> Result<Info, Error> {
        let b = book(p.chain_id)?;
        let v = resolve(p.chain_id, &b, &p.vault)?;
        let account = account_or_wallet(p.chain_id, p.account.as_deref(), "account")?;
        let cap = |flow: Flow| {
            let (unit, _) = v.sides(flow);
            Ok::<_, Error>(Amount::of(v.max(p.chain_id, flow, account)?, unit.decimals))
        };
        let caps = Caps {
            account,
            max_deposit: cap(Flow::Deposit)?,
            max_mint: cap(Flow::Mint)?,
            max_withdraw: cap(Flow::Withdraw)?,
            max_redeem: cap(Flow::Redeem)?,
        };
        Ok(Info { state: state(p.chain_id, &b, &v)?, caps })
    }
}

/// Params of the previews.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The vault: a symbol from the operator's list (`bvUSDC`) or an address.
    pub vault: String,
    /// Units of the asset (deposit, withdraw) or of shares (mint, redeem), decimal.
    pub amount: String,
}

/// What a flow of an amount would give or cost in this block.
#[derive(Serialize)]
pub struct Preview {
    /// The flow.
    flow: Flow,
    /// The vault.
    vault: Token,
    /// The amount previewed, in `amount_token`.
    amount: Amount,
    /// What the amount counts: the asset or the share.
    amount_token: Token,
    /// What the flow gives (deposit: shares; redeem: assets) or costs (mint: assets; withdraw:
    /// shares burned), in `result_token`.
    result: Amount,
    /// The asset or the share.
    result_token: Token,
    /// The flow's cap for the host's wallet, in `amount_token`; none without a wallet.
    wallet_max: Option<Amount>,
}

pub(crate) fn preview(p: &PreviewParams, flow: Flow) -> Result<Preview, Error> {
    let b = book(p.chain_id)?;
    let v = resolve(p.chain_id, &b, &p.vault)?;
    let (unit, result) = v.sides(flow);
    let amount = amount(&p.amount, unit, None)?;
    let out = v.preview(p.chain_id, flow, amount)?;
    let wallet_max = match wallet(p.chain_id) {
        Ok(w) => Some(Amount::of(v.max(p.chain_id, flow, w)?, unit.decimals)),
        Err(_) => None,
    };
    Ok(Preview {
        flow,
        vault: v.shares.clone(),
        amount: Amount::of(amount, unit.decimals),
        amount_token: unit.clone(),
        result: Amount::of(out, result.decimals),
        result_token: result.clone(),
        wallet_max,
    })
}

macro_rules! preview_tool {
    ($tool:ident, $name:literal, $flow:ident, $what:literal) => {
        pub struct $tool;

        impl ReadTool for $tool {
            const NAME: &'static str = $name;
            type Params = PreviewParams;
            type Output = Preview;

            fn def() -> ToolDef {
                def::<PreviewParams>(Self::NAME, $what)
            }

            fn run(p: PreviewParams) -> Result<Preview, Error> {
                preview(&p, Flow::$flow)
            }
        }
    };
}

preview_tool!(
    PreviewDeposit,
    "vault_preview_deposit",
    Deposit,
    "The shares a deposit of `amount` assets into an ERC-4626 vault would mint in this block \
     (previewDeposit), and the wallet's deposit cap."
);
preview_tool!(
    PreviewMint,
    "vault_preview_mint",
    Mint,
    "The assets minting `amount` shares of an ERC-4626 vault would cost in this block \
     (previewMint, rounded up), and the wallet's mint cap."
);
preview_tool!(
    PreviewWithdraw,
    "vault_preview_withdraw",
    Withdraw,
    "The shares withdrawing `amount` assets from an ERC-4626 vault would burn in this block \
     (previewWithdraw, rounded up), and the wallet's withdrawal cap."
);
preview_tool!(
    PreviewRedeem,
    "vault_preview_redeem",
    Redeem,
    "The assets redeeming `amount` shares of an ERC-4626 vault would pay in this block \
     (previewRedeem), and the wallet's redemption cap."
);

/// Params of `vault_get_position`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// One vault (symbol or address); default: every vault on the operator's list.
    #[serde(default)]
    pub vault: Option<String>,
    /// Whose position; default: the host's wallet.
    #[serde(default)]
    pub account: Option<String>,
}

/// One account's holding of one vault.
#[derive(Serialize)]
pub struct Position {
    vault: Token,
    asset: Token,
    /// Shares held.
    shares: Amount,
    /// What they are worth in the asset at the vault's rate (`convertToAssets`).
    value: Amount,
    /// What the account could withdraw now (`maxWithdraw`, limited by the vault's liquidity).
    withdrawable: Amount,
    /// The holding's share of all shares, in basis points.
    share_of_supply_bps: u64,
}

#[derive(Serialize)]
pub struct Positions {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    account: Address,
    positions: Vec<Position>,
}

pub struct GetPosition;

impl ReadTool for GetPosition {
    const NAME: &'static str = "vault_get_position";
    type Params = PositionParams;
    type Output = Positions;

    fn def() -> ToolDef {
        def::<PositionParams>(
            Self::NAME,
            "The wallet's (or `account`'s) holdings of one ERC-4626 vault or of every listed vault: \
             shares, their value in the asset, what it could withdraw now, and its share of supply.",
        )
    }

    fn run(p: PositionParams) -> Result<Positions, Error> {
        let b = book(p.chain_id)?;
        let account = account_or_wallet(p.chain_id, p.account.as_deref(), "account")?;
        let vaults = match &p.vault {
            Some(v) => vec![resolve(p.chain_id, &b, v)?],
            None => {
                b.vaults.iter().map(|l| erc4626::vault(p.chain_id, l.address)).collect::<Result<_, _>>()?
            }
        };
        let positions = vaults
            .iter()
            .map(|v| {
                let shares = erc20::balance_of(p.chain_id, v.shares.address, account)?;
                let supply = erc20::total_supply(p.chain_id, v.shares.address)?;
                let bps = if supply.is_zero() { U256::ZERO } else { shares * U256::from(10_000u64) / supply };
                Ok(Position {
                    shares: Amount::of(shares, v.shares.decimals),
                    value: Amount::of(v.to_assets(p.chain_id, shares)?, v.asset.decimals),
                    withdrawable: Amount::of(v.max(p.chain_id, Flow::Withdraw, account)?, v.asset.decimals),
                    share_of_supply_bps: bps.to::<u64>(),
                    vault: v.shares.clone(),
                    asset: v.asset.clone(),
                })
            })
            .collect::<Result<_, Error>>()?;
        Ok(Positions { account, positions })
    }
}
