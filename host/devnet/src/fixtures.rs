//! What the devnet adds for the host's own checks, after everything a user deploys against: the
//! attack fixtures its tests use (a V4 hook that forges the PoolManager's events, a contract
//! posing as a V2 pair), and the observation history that lets the WBTC/WETH V3 pool price WBTC
//! by its time-weighted price — the second source WBTC needs (see `Deployments::pricing_json`).

use super::deployer::{DeployError, Deployer, Token};
use alloy::primitives::{Address, U256, address};
use alloy::providers::Provider;
use alloy::sol_types::{SolCall, SolValue};
use std::collections::BTreeMap;

alloy::sol! {
    function increaseObservationCardinalityNext(uint16 observationCardinalityNext) external;
}

/// Where the forging hook lives: its address's low 14 bits grant afterSwap alone (0x40), no
/// return delta — a hook the host used to let any swap through.
pub const FORGING_HOOK: Address = address!("0xbad0000000000000000000000000000000000040");

/// The window of the WBTC/WETH pool's time-weighted price the devnet prices WBTC by, seconds.
pub const CANONICAL_WINDOW_SECS: u32 = 60;

/// Deploy the fixtures, and give the WBTC/WETH pool its history; the fixtures' addresses by name
/// (`forging_hook`, `fake_pair`).
pub(super) async fn deploy(
    d: &Deployer,
    tokens: &BTreeMap<String, Token>,
    wbtc_weth: Option<Address>,
) -> Result<BTreeMap<String, Address>, DeployError> {
    if let Some(pool) = wbtc_weth {
        canonical_history(d, pool).await?;
    }
    let none = BTreeMap::new();
    let tx = |step: &str, e: String| DeployError::Tx { step: step.to_owned(), message: e };
    (d.progress)("placing the attack fixtures: a forging V4 hook, a fake V2 pair");
    let deployed = d.deploy(".bardo-build/ForgingHook.json", Vec::new(), &none).await?;
    let code = d
        .provider
        .get_code_at(deployed)
        .await
        .map_err(|e| tx("read the forging hook's code", e.to_string()))?;
    d.provider
        .raw_request::<_, ()>("anvil_setCode".into(), (FORGING_HOOK, code))
        .await
        .map_err(|e| tx("anvil_setCode forging hook", e.to_string()))?;
    let pair_args = (tokens["WETH"].address, tokens["USDC"].address).abi_encode_params();
    let fake_pair = d.deploy(".bardo-build/FakePair.json", pair_args, &none).await?;
    Ok(BTreeMap::from([("forging_hook".to_owned(), FORGING_HOOK), ("fake_pair".to_owned(), fake_pair)]))
}

/// Give the WBTC/WETH pool room for observations, and let the canonical window pass, so its
/// time-weighted price answers from the first block a devnet mines.
async fn canonical_history(d: &Deployer, pool: Address) -> Result<(), DeployError> {
    let tx = |step: &str, e: String| DeployError::Tx { step: step.to_owned(), message: e };
    let grow = increaseObservationCardinalityNextCall { observationCardinalityNext: 64 }.abi_encode();
    d.call("grow the WBTC/WETH pool's observations", pool, grow, U256::ZERO).await?;
    let window = U256::from(CANONICAL_WINDOW_SECS + 1);
    d.provider
        .raw_request::<_, serde_json::Value>("evm_increaseTime".into(), (window,))
        .await
        .map_err(|e| tx("evm_increaseTime", e.to_string()))?;
    d.provider
        .raw_request::<_, serde_json::Value>("evm_mine".into(), ())
        .await
        .map_err(|e| tx("evm_mine", e.to_string()))?;
    Ok(())
}
