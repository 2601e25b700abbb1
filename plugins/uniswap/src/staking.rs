//! Liquidity mining on Uniswap's V3 Staker: the incentives of a pool, a V3 position staked in one
//! (deposited from the wallet in one `safeTransferFrom`), its rewards claimed, and the position
//! unstaked and withdrawn back to the wallet — each one transaction. The staker keeps a deposited
//! position as the wallet's (`deposits(id).owner`); the host lets a position leave the wallet
//! only into a staker the operator allowlists, and everything it pays only to the wallet.
//!
//! Incentives are found from the staker's own `IncentiveCreated` events (an incentive is named
//! by the hash of its key; the key itself is only in the event), over at most
//! `bardo_sdk::logs::MAX_SCAN` blocks back unless `from_block` says where to start.

use crate::abi::multicallCall;
use crate::book::Book;
use crate::read::Position;
use alloy_primitives::{Address, B256, U256};
use alloy_sol_types::{SolCall, SolEvent, SolValue};
use bardo_sdk::abi::{eth_call, revert_reason, tx_call, wire};
use bardo_sdk::errors::{error, internal, invalid_params, not_found};
use bardo_sdk::{ChainId, Error, ErrorCode, LogFilter, TxCall, logs};

mod claim;
mod incentives;
mod stake;
mod unstake;

pub use claim::ClaimStakingRewards;
pub use incentives::GetIncentives;
pub use stake::StakePosition;
pub use unstake::UnstakePosition;

alloy_sol_types::sol! {
    #[derive(Debug, PartialEq, Eq)]
    struct IncentiveKey { address rewardToken; address pool; uint256 startTime; uint256 endTime; address refundee; }
    event IncentiveCreated(address indexed rewardToken, address indexed pool, uint256 startTime, uint256 endTime,
        address refundee, uint256 reward);
    event DepositTransferred(uint256 indexed tokenId, address indexed oldOwner, address indexed newOwner);
    event TokenStaked(uint256 indexed tokenId, bytes32 indexed incentiveId, uint128 liquidity);
    event TokenUnstaked(uint256 indexed tokenId, bytes32 indexed incentiveId);
    event Transfer(address indexed from, address indexed to, uint256 value);
    function incentives(bytes32 incentiveId) external view returns (uint256 totalRewardUnclaimed,
        uint160 totalSecondsClaimedX128, uint96 numberOfStakes);
    function deposits(uint256 tokenId) external view returns (address owner, uint48 numberOfStakes, int24 tickLower,
        int24 tickUpper);
    function stakes(uint256 tokenId, bytes32 incentiveId) external view returns (
        uint160 secondsPerLiquidityInsideInitialX128, uint128 liquidity);
    function rewards(address rewardToken, address owner) external view returns (uint256);
    function getRewardInfo(IncentiveKey key, uint256 tokenId) external returns (uint256 reward,
        uint160 secondsInsideX128);
    function stakeToken(IncentiveKey key, uint256 tokenId) external;
    function unstakeToken(IncentiveKey key, uint256 tokenId) external;
    function claimReward(address rewardToken, address to, uint256 amountRequested) external returns (uint256 reward);
    function withdrawToken(uint256 tokenId, address to, bytes data) external;
    function safeTransferFrom(address from, address to, uint256 tokenId, bytes data) external;
}

/// An incentive as its creation event tells it.
#[derive(Debug, Clone)]
pub struct Incentive {
    /// `keccak256(abi.encode(key))`.
    pub id: B256,
    pub key: IncentiveKey,
    /// The reward it started with, base units.
    pub reward: U256,
}

impl Incentive {
    /// Whether it pays at block time `now`.
    pub fn active(&self, now: u64) -> bool {
        self.key.startTime <= U256::from(now) && U256::from(now) < self.key.endTime
    }
}

/// The staker of this chain's settings.
pub fn staker(chain_id: ChainId, book: &Book) -> Result<Address, Error> {
    book.v3_staker.ok_or_else(|| {
        bardo_sdk::errors::chain_not_supported(format!(
            "no Uniswap V3 Staker for chain {chain_id} in this plugin's settings; add `v3_staker` under \
             `[settings]` (chains.{chain_id}.v3_staker)"
        ))
    })
}

/// Parse an incentive id param (`0x` and 64 hex digits).
pub fn incentive_id(text: &str) -> Result<B256, Error> {
    text.trim().parse::<B256>().map_err(|_| {
        invalid_params(format!(
            "`incentive_id` {text:?} is not an incentive id; give the 0x-prefixed 32-byte id \
             `uniswap_get_incentives` lists"
        ))
    })
}

/// The incentives the staker created (for `pool` only, when given) from `from_block`.
pub fn created(
    chain_id: ChainId,
    staker: Address,
    pool: Option<Address>,
    from_block: Option<u64>,
) -> Result<Vec<Incentive>, Error> {
    let (from, to) = logs::range(chain_id, from_block, logs::MAX_SCAN)?;
    let filter = LogFilter {
        chain_id,
        addresses: vec![wire(&staker)],
        topics: vec![
            vec![IncentiveCreated::SIGNATURE_HASH.to_string()],
            vec![],
            pool.map(|p| vec![B256::left_padding_from(p.as_slice()).to_string()]).unwrap_or_default(),
        ],
        from_block: None,
        to_block: None,
    };
    let mut out: Vec<Incentive> = Vec::new();
    for log in logs::scan(filter, from, to)? {
        let Some(e) = bardo_sdk::abi::decode_log::<IncentiveCreated>(&log) else { continue };
        let key = IncentiveKey {
            rewardToken: e.rewardToken,
            pool: e.pool,
            startTime: e.startTime,
            endTime: e.endTime,
            refundee: e.refundee,
        };
        let id = alloy_primitives::keccak256(key.abi_encode());
        // The same key funded twice is one incentive with both rewards.
        match out.iter_mut().find(|i| i.id == id) {
            Some(known) => known.reward += e.reward,
            None => out.push(Incentive { id, key, reward: e.reward }),
        }
    }
    Ok(out)
}

/// The incentive `id` of `pool`, or why not.
pub fn find(
    chain_id: ChainId,
    staker: Address,
    pool: Address,
    id: B256,
    from_block: Option<u64>,
) -> Result<Incentive, Error> {
    created(chain_id, staker, Some(pool), from_block)?.into_iter().find(|i| i.id == id).ok_or_else(|| {
        not_found(format!(
            "incentive {id} is not an incentive of pool {pool} on the staker {staker} (searched from block {}); \
             list them with `uniswap_get_incentives`, or give `from_block` for an older one",
            from_block.map_or_else(|| format!("{} blocks back", logs::MAX_SCAN), |b| b.to_string())
        ))
    })
}

/// The V3 pool of a position.
pub fn pool_of(chain_id: ChainId, book: &Book, pos: &Position) -> Result<Address, Error> {
    let call = crate::abi::getPoolCall {
        tokenA: pos.token0.address,
        tokenB: pos.token1.address,
        fee: alloy_primitives::aliases::U24::from(pos.fee),
    };
    eth_call(chain_id, book.v3_factory, &call)
}

/// Who a position deposited in the staker belongs to (the zero address: not deposited).
pub fn depositor(chain_id: ChainId, staker: Address, id: U256) -> Result<Address, Error> {
    Ok(eth_call(chain_id, staker, &depositsCall { tokenId: id })?.owner)
}

/// The incentives (of `candidates`) position `id` is staked in, and how many stakes the staker
/// counts for it — more than found means an incentive older than the scan.
pub fn staked_in(
    chain_id: ChainId,
    staker: Address,
    id: U256,
    candidates: Vec<Incentive>,
) -> Result<Vec<Incentive>, Error> {
    let count = eth_call(chain_id, staker, &depositsCall { tokenId: id })?.numberOfStakes;
    let mut found = Vec::new();
    for i in candidates {
        if eth_call(chain_id, staker, &stakesCall { tokenId: id, incentiveId: i.id })?.liquidity > 0 {
            found.push(i);
        }
    }
    if found.len() < usize::try_from(count).unwrap_or(usize::MAX) {
        return Err(invalid_params(format!(
            "position {id} is staked in {count} incentives and only {} were found in the scanned blocks; \
             give `from_block` at or before the oldest incentive's creation",
            found.len()
        )));
    }
    Ok(found)
}

/// A position owned by the wallet or deposited in the staker for it; `true` when deposited.
pub fn held(chain_id: ChainId, staker: Address, pos: &Position, wallet: Address) -> Result<bool, Error> {
    if pos.owner == wallet {
        return Ok(false);
    }
    if pos.owner == staker && depositor(chain_id, staker, pos.id)? == wallet {
        return Ok(true);
    }
    Err(error(
        ErrorCode::Denied,
        format!(
            "position {} belongs to {}, not to this wallet ({wallet}) or its staker deposit",
            pos.id, pos.owner
        ),
    ))
}

/// One call of the staker: several in its `multicall`, one alone.
pub fn staker_call(chain_id: ChainId, staker: Address, calls: Vec<Vec<u8>>) -> TxCall {
    match <[Vec<u8>; 1]>::try_from(calls) {
        Ok([one]) => TxCall { chain_id, to: wire(&staker), data: one, value: "0".into() },
        Err(calls) => {
            tx_call(chain_id, staker, &multicallCall { data: calls.into_iter().map(Into::into).collect() })
        }
    }
}

/// What each call of a staker call returns, simulated as the wallet (a revert says which).
pub fn simulate(
    chain_id: ChainId,
    wallet: Address,
    call: &TxCall,
    count: usize,
) -> Result<Vec<Vec<u8>>, Error> {
    let sim = bardo_sdk::simulate::run(chain_id, &wire(&wallet), std::slice::from_ref(call))?;
    let out = sim.outcomes.first().ok_or_else(|| internal("the simulation ran no call"))?;
    if !out.success {
        return Err(error(
            ErrorCode::Reverted,
            format!("the staker reverts in simulation: {}", revert_reason(&out.output)),
        ));
    }
    if count == 1 {
        return Ok(vec![out.output.clone()]);
    }
    multicallCall::abi_decode_returns(&out.output)
        .map(|r| r.into_iter().map(|b| b.to_vec()).collect())
        .map_err(|e| internal(format!("the staker's multicall returned data that does not decode: {e}")))
}

/// The rewards `claimReward` pays, decoded from its return data.
pub fn claimed(output: &[u8]) -> Result<U256, Error> {
    claimRewardCall::abi_decode_returns(output).map_err(|e| internal(format!("claimReward's return: {e}")))
}

/// The position leaving the wallet for the staker's custody.
pub fn into_custody(npm: Address, id: U256) -> bardo_sdk::erc20::NftChange {
    bardo_sdk::erc20::NftChange { collection: npm, id: Some(id.to_string()), gained: false }
}

/// The position back in the wallet from the staker.
pub fn back(npm: Address, id: U256) -> bardo_sdk::erc20::NftChange {
    bardo_sdk::erc20::NftChange { collection: npm, id: Some(id.to_string()), gained: true }
}

/// What follows the unstakes and claims of an [`exit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// The deposit back to the wallet (`uniswap_unstake_position`).
    Withdraw,
    /// The stakes in incentives still running staked again (`uniswap_claim_staking_rewards`).
    Restake,
}

/// One staker transaction for a deposited position: every stake undone (crediting its reward),
/// each reward token claimed to the wallet, then [`Then`].
#[derive(Debug)]
pub struct Exit {
    pub call: TxCall,
    /// Each reward token and what the claim pays, simulated now.
    pub rewards: Vec<(Address, U256)>,
    /// The incentives unstaked.
    pub unstaked: Vec<Incentive>,
    /// The incentives staked again.
    pub restaked: Vec<B256>,
}

/// Plan an [`Exit`] of position `pos` (deposited for `wallet`).
pub fn exit(
    chain_id: ChainId,
    staker: Address,
    wallet: Address,
    pool: Address,
    pos: &Position,
    from_block: Option<u64>,
    then: Then,
) -> Result<Exit, Error> {
    let id = pos.id;
    let stakes = staked_in(chain_id, staker, id, created(chain_id, staker, Some(pool), from_block)?)?;
    if then == Then::Restake && stakes.is_empty() {
        return Err(invalid_params(format!(
            "position {id} is staked in no incentive, so it accrues no reward; stake it with `uniswap_stake_position`"
        )));
    }
    let mut calls: Vec<Vec<u8>> =
        stakes.iter().map(|i| unstakeTokenCall { key: i.key.clone(), tokenId: id }.abi_encode()).collect();
    let tokens = reward_tokens(&stakes);
    let first_claim = calls.len();
    calls.extend(
        tokens.iter().map(|t| {
            claimRewardCall { rewardToken: *t, to: wallet, amountRequested: U256::ZERO }.abi_encode()
        }),
    );
    let now = bardo_sdk::chain::block_timestamp(chain_id, None)?;
    let mut restaked = Vec::new();
    match then {
        Then::Withdraw => {
            calls.push(withdrawTokenCall { tokenId: id, to: wallet, data: Default::default() }.abi_encode())
        }
        Then::Restake => {
            for i in stakes.iter().filter(|i| i.active(now + 60)) {
                calls.push(stakeTokenCall { key: i.key.clone(), tokenId: id }.abi_encode());
                restaked.push(i.id);
            }
        }
    }
    let count = calls.len();
    let call = staker_call(chain_id, staker, calls);
    let results = simulate(chain_id, wallet, &call, count)?;
    let rewards = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| Ok((*t, claimed(&results[first_claim + i])?)))
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Exit { call, rewards, unstaked: stakes, restaked })
}

/// The distinct reward tokens of `incentives`, in address order (one claim each).
pub fn reward_tokens<'a>(incentives: impl IntoIterator<Item = &'a Incentive>) -> Vec<Address> {
    let mut tokens: Vec<Address> = incentives.into_iter().map(|i| i.key.rewardToken).collect();
    tokens.sort();
    tokens.dedup();
    tokens
}

/// A position deposited in the staker for the wallet, with what an exit of it needs.
pub struct Deposited {
    pub owner: Address,
    pub staker: Address,
    pub pos: Position,
    pub pool: Address,
}

/// Position `position_id`, which must be deposited in the staker for the wallet (`in_wallet`:
/// what to say when the wallet holds it itself). Progress steps 0 to 2.
pub fn deposited(
    chain_id: ChainId,
    book: &Book,
    position_id: &str,
    in_wallet: &str,
) -> Result<Deposited, Error> {
    let owner = bardo_sdk::abi::wallet(chain_id)?;
    let staker = staker(chain_id, book)?;
    let id = crate::read::position_id(position_id)?;
    bardo_sdk::events::progress(0);
    let pos = crate::read::position(chain_id, book, id)?;
    if !held(chain_id, staker, &pos, owner)? {
        return Err(invalid_params(format!(
            "position {id} is in the wallet, not in the staker: {in_wallet}"
        )));
    }
    bardo_sdk::events::progress(1);
    let pool = pool_of(chain_id, book, &pos)?;
    bardo_sdk::events::progress(2);
    Ok(Deposited { owner, staker, pos, pool })
}

/// The incentives an exit left, and what each reward token paid the wallet.
pub type Settled = (Vec<B256>, Vec<(Address, U256)>);

/// What an exit's receipts show for position `id`: the incentives it left, and what each of
/// their reward tokens paid the wallet.
pub fn settled(
    chain_id: ChainId,
    receipts: &[bardo_sdk::Receipt],
    (staker, owner, pool): (Address, Address, Address),
    id: U256,
    from_block: Option<u64>,
) -> Result<Settled, Error> {
    let unstaked: Vec<B256> = bardo_sdk::abi::events::<TokenUnstaked>(receipts, staker)
        .iter()
        .filter(|e| e.tokenId == id)
        .map(|e| e.incentiveId)
        .collect();
    let left = created(chain_id, staker, Some(pool), from_block)?;
    let tokens = reward_tokens(left.iter().filter(|i| unstaked.contains(&i.id)));
    let paid = |token: Address| {
        bardo_sdk::abi::events::<Transfer>(receipts, token)
            .iter()
            .filter(|t| t.from == staker && t.to == owner)
            .fold(U256::ZERO, |sum, t| sum + t.value)
    };
    Ok((unstaked, tokens.iter().map(|t| (*t, paid(*t))).collect()))
}
