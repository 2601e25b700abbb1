//! `bootstrap_check_setup`: what the host lacks to act on a chain, and what fixes each gap.

use crate::targets::{self, DEFAULT_GAS_FLOOR, Targets};
use alloy_primitives::Address;
use bardo_sdk::abi::ether_balance;
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::units::{Amount, format_units};
use bardo_sdk::{Category, ChainId, Error, ReadTool, ToolDef, chain, described, events, signer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params naming a chain.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChainParams {
    /// Chain id.
    pub chain_id: ChainId,
}

/// One gap, and what closes it.
#[derive(Serialize)]
struct Missing {
    /// `chain`, `wallet`, `settings` or `funds`.
    item: &'static str,
    /// True when nothing can be committed until it is fixed.
    blocking: bool,
    detail: String,
    fix: String,
}

#[derive(Serialize)]
struct ChainState {
    chain_id: ChainId,
    reachable: bool,
    block_number: Option<u64>,
}

#[derive(Serialize)]
struct WalletState {
    configured: bool,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "bardo_sdk::abi::some_checksummed")]
    address: Option<Address>,
}

#[derive(Serialize)]
struct SettingsState {
    /// Whether `[settings] bootstrap` has targets for this chain.
    configured: bool,
    /// The gas floor in ETH (the default when not configured).
    gas_floor: String,
}

#[derive(Serialize)]
struct Holding {
    /// The token; none for ether.
    token: Option<Token>,
    #[serde(flatten)]
    balance: Amount,
    /// What the wallet should hold: the gas floor for ether, the funding target for a token.
    target: Amount,
    enough: bool,
}

#[derive(Serialize)]
pub struct Setup {
    /// True when nothing blocking is missing: the host can preview and commit on this chain.
    ready: bool,
    chain: ChainState,
    wallet: WalletState,
    settings: SettingsState,
    /// The wallet's ether and targeted tokens; empty without a chain or a wallet.
    funds: Vec<Holding>,
    missing: Vec<Missing>,
}

pub struct CheckSetup;

impl ReadTool for CheckSetup {
    const NAME: &'static str = "bootstrap_check_setup";
    type Params = ChainParams;
    type Output = Setup;

    fn def() -> ToolDef {
        described::<ChainParams>(
            Self::NAME,
            "Report what this host still lacks to act on a chain: a reachable chain, a wallet, this \
             plugin's funding targets, ether for gas and the target balances; each gap says what fixes it \
             and whether it blocks commits. Call it first on a new setup. Reads only.",
            Category::Bootstrap,
            &["chain", "wallet and settings", "funds"],
        )
    }

    fn run(p: ChainParams) -> Result<Setup, Error> {
        let id = p.chain_id;
        let mut missing = Vec::new();
        let block_number = match chain::block_number(id) {
            Ok(n) => Some(n),
            Err(e) => {
                missing.push(Missing {
                    item: "chain",
                    blocking: true,
                    detail: e.message,
                    fix: format!(
                        "give chain {id} an `rpc` under [chains] in bardo.toml, or start a local one with \
                         `bardo devnet up --detach`"
                    ),
                });
                None
            }
        };
        events::progress(0);
        let configured = targets::load(id)?;
        if configured.is_none() {
            missing.push(Missing {
                item: "settings",
                blocking: false,
                detail: format!(
                    "no targets for chain {id} in `[settings] bootstrap`: the gas floor is {DEFAULT_GAS_FLOOR} ETH \
                     and no token balance is checked"
                ),
                fix: "on a devnet `bardo devnet up` writes .bardo/settings/bootstrap.json; elsewhere set \
                      `[settings] bootstrap` (chains.<id>: tokens, gas_floor, fund)"
                    .into(),
            });
        }
        let has_targets = configured.is_some();
        let t = configured.unwrap_or_default();
        let wallet = wallet(id);
        if wallet.is_none() {
            missing.push(Missing {
                item: "wallet",
                blocking: true,
                detail: format!("no signing key is configured for chain {id}"),
                fix: "`bardo init --profile <profile>` creates an encrypted keystore and names it in [signer]; \
                      or set BARDO_KEYSTORE (with BARDO_KEYSTORE_PASSWORD) or BARDO_PRIVATE_KEY"
                    .into(),
            });
        }
        events::progress(1);
        let mut funds = Vec::new();
        if let (Some(_), Some(who)) = (block_number, wallet) {
            funds = holdings(id, who, &t, &mut missing)?;
        }
        Ok(Setup {
            ready: !missing.iter().any(|m| m.blocking),
            chain: ChainState { chain_id: id, reachable: block_number.is_some(), block_number },
            wallet: WalletState { configured: wallet.is_some(), address: wallet },
            settings: SettingsState {
                configured: has_targets,
                gas_floor: t.gas_floor.clone().unwrap_or_else(|| DEFAULT_GAS_FLOOR.into()),
            },
            funds,
            missing,
        })
    }
}

/// The wallet's address, if the host has one (a malformed answer counts as none).
fn wallet(chain_id: ChainId) -> Option<Address> {
    signer::wallet_address(chain_id).and_then(|a| a.parse().ok())
}

/// Ether against the gas floor (blocking) and each token against its target (not blocking: the
/// host can still commit what the wallet can pay for).
fn holdings(
    id: ChainId,
    who: Address,
    t: &Targets,
    missing: &mut Vec<Missing>,
) -> Result<Vec<Holding>, Error> {
    let fund_hint = "on a devnet `bootstrap_fund_wallet` tops the wallet up to the targets";
    let floor = t.gas_floor()?;
    let eth = ether_balance(id, who, None)?;
    if eth < floor {
        missing.push(Missing {
            item: "funds",
            blocking: true,
            detail: format!(
                "the wallet holds {} ETH, under the gas floor of {} ETH",
                format_units(eth, 18),
                format_units(floor, 18)
            ),
            fix: format!(
                "{fund_hint}; elsewhere send at least {} ETH to {}",
                format_units(floor - eth, 18),
                who.to_checksum(None)
            ),
        });
    }
    let mut out = vec![Holding {
        token: None,
        enough: eth >= floor,
        balance: Amount::of(eth, 18),
        target: Amount::of(floor, 18),
    }];
    let targeted = match t.tokens(id) {
        Ok(targeted) => targeted,
        Err(e) => {
            missing.push(Missing {
                item: "settings",
                blocking: false,
                detail: e.message,
                fix: "correct `fund` or `tokens` in `[settings] bootstrap`".into(),
            });
            Vec::new()
        }
    };
    for (token, target) in targeted {
        let balance = erc20::balance_of(id, token.address, who)?;
        if balance < target {
            missing.push(Missing {
                item: "funds",
                blocking: false,
                detail: format!(
                    "the wallet holds {} {}, under its target of {}",
                    format_units(balance, token.decimals),
                    token.symbol,
                    format_units(target, token.decimals)
                ),
                fix: format!("{fund_hint}; elsewhere send {} to {}", token.symbol, who.to_checksum(None)),
            });
        }
        out.push(Holding {
            enough: balance >= target,
            balance: Amount::of(balance, token.decimals),
            target: Amount::of(target, token.decimals),
            token: Some(token),
        });
    }
    Ok(out)
}
