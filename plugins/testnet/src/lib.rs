//! Devnet tools for Bardo: fund an account with ETH or a token, mine blocks, move time,
//! snapshot and revert — anvil's cheat codes through `bardo:host/testnet`, which the host grants
//! only to the `dev` profile and runs only on chains marked `devnet = true`. The tools are in
//! the `dev` category, so no other profile lists them either.
//!
//! `[settings] testnet`: `{"chains": {"31337": {"tokens": [{"symbol", "address"}]}}}`, for
//! naming tokens by symbol.

use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{ether_balance, wire};
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::invalid_params;
use bardo_sdk::tokens::{Listed, parse_address, resolve};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{Category, ChainId, Error, ReadTool, RiskTier, ToolDef, chain, described, settings, testnet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Book {
    #[serde(default)]
    tokens: Vec<Listed>,
}

fn token(chain_id: ChainId, input: &str) -> Result<Token, Error> {
    let list = settings::of_chain::<Book>(chain_id)?.map(|b| b.tokens).unwrap_or_default();
    resolve(chain_id, "token", input, &list)
}

fn def<P: JsonSchema>(name: &str, description: &str) -> ToolDef {
    ToolDef {
        // It changes a chain's state, though only a devnet's: never "none".
        risk_tier: RiskTier::Low,
        ..described::<P>(name, description, Category::Testnet, &[])
    }
}

/// Params of `testnet_fund_eth`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FundEthParams {
    /// A devnet's chain id.
    chain_id: ChainId,
    /// The account to fund (a reader plugin does not see the wallet: name it).
    account: String,
    /// The ether balance to set, in ETH (`"100"`).
    balance: String,
}

#[derive(Serialize)]
struct Funded {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    account: Address,
    /// The token; none for ether.
    token: Option<Token>,
    /// The balance read back after the change, token units and base units.
    balance: String,
    balance_base: String,
}

struct FundEth;

impl ReadTool for FundEth {
    const NAME: &'static str = "testnet_fund_eth";
    type Params = FundEthParams;
    type Output = Funded;

    fn def() -> ToolDef {
        def::<FundEthParams>(
            Self::NAME,
            "Set an account's ether balance on a devnet (anvil_setBalance). \
             Dev profile only; refused on any chain not marked `devnet = true`.",
        )
    }

    fn run(p: FundEthParams) -> Result<Funded, Error> {
        let who = parse_address("account", &p.account)?;
        let wei = parse_units("balance", &p.balance, 18)?;
        testnet::set_balance(p.chain_id, &wire(&who), &wei.to_string())?;
        let now = ether_balance(p.chain_id, who, None)?;
        Ok(Funded {
            account: who,
            token: None,
            balance: format_units(now, 18),
            balance_base: now.to_string(),
        })
    }
}

/// Params of `testnet_fund_token`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FundTokenParams {
    /// A devnet's chain id.
    chain_id: ChainId,
    /// The token: a listed symbol or an address.
    token: String,
    /// The account to fund (a reader plugin does not see the wallet: name it).
    account: String,
    /// The token balance to set, in token units (`"5000"`).
    balance: String,
}

struct FundToken;

impl ReadTool for FundToken {
    const NAME: &'static str = "testnet_fund_token";
    type Params = FundTokenParams;
    type Output = Funded;

    fn def() -> ToolDef {
        def::<FundTokenParams>(
            Self::NAME,
            "Set an account's balance of an ERC-20 on a devnet by writing the token's balance mapping \
             (total supply unchanged). Dev profile only.",
        )
    }

    fn run(p: FundTokenParams) -> Result<Funded, Error> {
        let who = parse_address("account", &p.account)?;
        let t = token(p.chain_id, &p.token)?;
        let amount = parse_units("balance", &p.balance, t.decimals)?;
        testnet::deal(p.chain_id, &wire(&t.address), &wire(&who), &amount.to_string())?;
        let now = erc20::balance_of(p.chain_id, t.address, who)?;
        Ok(Funded {
            account: who,
            balance: format_units(now, t.decimals),
            balance_base: now.to_string(),
            token: Some(t),
        })
    }
}

/// Params of `testnet_mine`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MineParams {
    /// A devnet's chain id.
    chain_id: ChainId,
    /// Blocks to mine, 1 to 10,000 (default 1).
    #[serde(default)]
    blocks: Option<u64>,
}

#[derive(Serialize)]
struct Head {
    block_number: u64,
    timestamp: u64,
}

fn head(chain_id: ChainId) -> Result<Head, Error> {
    let block_number = chain::block_number(chain_id)?;
    Ok(Head { block_number, timestamp: chain::block_timestamp(chain_id, Some(block_number))? })
}

struct Mine;

impl ReadTool for Mine {
    const NAME: &'static str = "testnet_mine";
    type Params = MineParams;
    type Output = Head;

    fn def() -> ToolDef {
        def::<MineParams>(
            Self::NAME,
            "Mine empty blocks on a devnet; returns the new head. Dev profile only.",
        )
    }

    fn run(p: MineParams) -> Result<Head, Error> {
        testnet::mine(p.chain_id, p.blocks.unwrap_or(1))?;
        head(p.chain_id)
    }
}

/// Params of `testnet_increase_time`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TimeParams {
    /// A devnet's chain id.
    chain_id: ChainId,
    /// Seconds to move the clock forward, 1 to 10 years.
    seconds: u64,
}

struct IncreaseTime;

impl ReadTool for IncreaseTime {
    const NAME: &'static str = "testnet_increase_time";
    type Params = TimeParams;
    type Output = Head;

    fn def() -> ToolDef {
        def::<TimeParams>(
            Self::NAME,
            "Move a devnet's clock forward and mine a block stamped with it (interest accrues, deadlines \
             pass); returns the new head. Dev profile only.",
        )
    }

    fn run(p: TimeParams) -> Result<Head, Error> {
        if !(1..=315_360_000).contains(&p.seconds) {
            return Err(invalid_params("`seconds` must be 1 to 315,360,000 (10 years)"));
        }
        testnet::increase_time(p.chain_id, p.seconds)?;
        head(p.chain_id)
    }
}

/// Params naming a devnet.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ChainParams {
    /// A devnet's chain id.
    chain_id: ChainId,
}

#[derive(Serialize)]
struct Snapshot {
    /// Pass to testnet_revert.
    snapshot_id: String,
    block_number: u64,
}

struct TakeSnapshot;

impl ReadTool for TakeSnapshot {
    const NAME: &'static str = "testnet_snapshot";
    type Params = ChainParams;
    type Output = Snapshot;

    fn def() -> ToolDef {
        def::<ChainParams>(
            Self::NAME,
            "Snapshot a devnet's whole state; testnet_revert returns to it (once). Dev profile only.",
        )
    }

    fn run(p: ChainParams) -> Result<Snapshot, Error> {
        let snapshot_id = testnet::snapshot(p.chain_id)?;
        Ok(Snapshot { snapshot_id, block_number: chain::block_number(p.chain_id)? })
    }
}

/// Params of `testnet_revert`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RevertParams {
    /// A devnet's chain id.
    chain_id: ChainId,
    /// The id testnet_snapshot returned.
    snapshot_id: String,
}

#[derive(Serialize)]
struct Reverted {
    reverted: bool,
    block_number: u64,
}

struct Revert;

impl ReadTool for Revert {
    const NAME: &'static str = "testnet_revert";
    type Params = RevertParams;
    type Output = Reverted;

    fn def() -> ToolDef {
        def::<RevertParams>(
            Self::NAME,
            "Return a devnet to a snapshot (which is used up); `reverted` is false for an unknown id. \
             Dev profile only.",
        )
    }

    fn run(p: RevertParams) -> Result<Reverted, Error> {
        if p.snapshot_id.parse::<U256>().is_err() {
            return Err(invalid_params(format!("`snapshot_id` {:?} is not a snapshot id", p.snapshot_id)));
        }
        let reverted = testnet::revert(p.chain_id, &p.snapshot_id)?;
        Ok(Reverted { reverted, block_number: chain::block_number(p.chain_id)? })
    }
}

bardo_sdk::plugin! {
    name: "testnet",
    read: [FundEth, FundToken, Mine, IncreaseTime, TakeSnapshot, Revert],
}
