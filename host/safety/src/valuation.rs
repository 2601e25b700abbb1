//! Token amounts in US dollars, priced only from sources the operator trusts — never from a
//! plugin, and never from a pool the host found by searching (anyone can create a pool, at any
//! price, for any token).
//!
//! Each chain needs a [`PricingConfig`] (`[safety] pricing_file` or `[safety.pricing.<chain id>]`).
//! A dollar token (`usd_tokens`) is $1. Any other token is priced by every trusted source that
//! has it: its Chainlink-style feed (`feeds`: `latestRoundData`, `decimals`), the Aave oracle
//! (`aave_oracle`), and the time-weighted price of the pool the operator names canonical for it
//! (`canonical_pools`: `observe` over `window_secs`, with at least `min_liquidity` in range),
//! against a token that is itself trusted. Two sources that both answer must agree within
//! `max_divergence_bps`. A token no trusted source prices is *unpriced*: every valuation of it
//! is refused, never zero. An Aave aToken or debt token is its underlying, 1:1 (a debt counts
//! against the wallet in [`Valuer::signed_usd`]); a share of an ERC-4626 vault the operator
//! lists (`vaults`) is its asset at the vault's own `convertToAssets`; a listed Pendle market's
//! PT, YT, LP and SY are their asset at the PT/YT/LP oracle's TWAP or the SY's exchange rate
//! ([`PendlePricing`]). Integer math throughout:
//! prices are USD with 18 decimals, values micro-dollars. Reads go through the chain client,
//! whose `eth_call` cache is per block; prices are kept per block.

use alloy::primitives::{Address, I256, U256, U512};
use alloy::sol_types::SolCall;
use bardo_core::sync::lock;
use bardo_runtime::Services;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

mod pendle;
mod sources;
mod venues;

pub use pendle::PendlePricing;

pub use sources::{DEFAULT_MAX_FEED_AGE_SECS, DEFAULT_SINGLE_SOURCE_MAX_USD};
pub use venues::UniswapContracts;
pub(crate) use venues::Venue;

use sources::Sources;

alloy::sol! {
    function decimals() external view returns (uint8);
    function symbol() external view returns (string);
    function balanceOf(address owner) external view returns (uint256);
    function UNDERLYING_ASSET_ADDRESS() external view returns (address);
    function borrowAllowance(address fromUser, address toUser) external view returns (uint256);
    function token0() external view returns (address);
    function ownerOf(uint256 id) external view returns (address);
    function deposits(uint256 tokenId) external view returns (address owner, uint48 numberOfStakes, int24 tickLower, int24 tickUpper);
    function asset() external view returns (address);
    function convertToAssets(uint256 shares) external view returns (uint256);
    function ADDRESSES_PROVIDER() external view returns (address);
    function getPoolDataProvider() external view returns (address);
    function getReserveTokensAddresses(address asset) external view returns (address aTokenAddress,
        address stableDebtTokenAddress, address variableDebtTokenAddress);
}

/// Micro-dollars (1e-6 USD): integer money, no floats.
pub type MicroUsd = u128;

/// Where the host reads prices on one chain: `[safety.pricing.<chain id>]` in bardo.toml, or the
/// chain's entry in `[safety] pricing_file` (`bardo devnet up` writes one for the devnet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PricingConfig {
    /// Stablecoins valued at exactly $1.
    pub usd_tokens: Vec<Address>,
    /// Chainlink-style USD feeds by token (`latestRoundData` and `decimals`).
    #[serde(default)]
    pub feeds: BTreeMap<Address, Address>,
    /// The oldest a feed's answer may be, seconds, by the later of this machine's clock and the
    /// chain's head; none: `[safety] max_feed_age_secs` (default 3600). A stale, zero or negative
    /// answer is refused, never used.
    #[serde(default)]
    pub max_feed_age_secs: Option<u64>,
    /// The most, whole USD, one valuation of a volatile token may reach when a single source
    /// prices it (no second source could catch that one lying); none: `[safety]
    /// single_source_max_usd` (default 1000). Dollar tokens are $1 by the operator's word.
    #[serde(default)]
    pub single_source_max_usd: Option<u64>,
    /// The Uniswap deployments whose pools the host believes (see [`UniswapContracts`]): a
    /// pool's event is evidence only from them.
    #[serde(default)]
    pub uniswap: UniswapContracts,
    /// Uniswap V3 pools the operator trusts to price a token by their time-weighted price, by
    /// the token they price (the pool's other token must itself have a trusted price).
    #[serde(default)]
    pub canonical_pools: BTreeMap<Address, CanonicalPool>,
    /// Wrapped ether: the native coin is valued as it.
    #[serde(default)]
    pub weth: Option<Address>,
    /// Aave V3's `AaveOracle`: a trusted source for the tokens it prices, and the market that
    /// says which tokens are aTokens and debt tokens.
    #[serde(default)]
    pub aave_oracle: Option<Address>,
    /// The most two trusted sources may differ, basis points (default 500).
    #[serde(default = "default_max_divergence_bps")]
    pub max_divergence_bps: u32,
    /// ERC-4626 vaults whose shares are valued as their asset at the vault's `convertToAssets`
    /// (a vault reports its own share price, so only vaults the operator trusts are listed).
    #[serde(default)]
    pub vaults: Vec<Address>,
    /// Pendle V2 markets whose PT, YT, LP and SY are valued, and the oracle that prices them.
    #[serde(default)]
    pub pendle: Option<PendlePricing>,
}

/// A pool the operator trusts to price a token: its time-weighted price over a window, when it
/// holds enough liquidity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CanonicalPool {
    /// The Uniswap V3 pool.
    pub pool: Address,
    /// The averaging window, seconds (default 1800); the pool must have observations that old.
    #[serde(default = "default_window_secs")]
    pub window_secs: u32,
    /// The least in-range liquidity (the pool's `liquidity()`) it may have now (default 0).
    #[serde(default)]
    pub min_liquidity: u128,
}

fn default_window_secs() -> u32 {
    1_800
}

fn default_max_divergence_bps() -> u32 {
    500
}

impl PricingConfig {
    /// A JSON object `{ "<chain id>": { "usd_tokens": [...], "feeds": {...}, ... } }` (the
    /// shape of `pricing_file`, and of `Deployments::pricing_json`) as configs by chain id.
    pub fn from_json(value: serde_json::Value) -> Result<BTreeMap<u64, PricingConfig>, String> {
        let by_key: BTreeMap<String, PricingConfig> =
            serde_json::from_value(value).map_err(|e| format!("invalid pricing config: {e}"))?;
        Self::by_chain(by_key)
    }

    /// Configs keyed by chain id text (as TOML and JSON keys are) keyed by chain id.
    pub fn by_chain(by_key: BTreeMap<String, PricingConfig>) -> Result<BTreeMap<u64, PricingConfig>, String> {
        by_key
            .into_iter()
            .map(|(key, config)| {
                let id = key
                    .parse::<u64>()
                    .map_err(|_| format!("pricing key {key:?} must be a chain id such as 31337"))?;
                Ok((id, config))
            })
            .collect()
    }
}

/// What a token is to the valuer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Priced by its own pools (or $1, a dollar token).
    Plain,
    /// An Aave aToken: redeemable 1:1 for the underlying.
    Deposit(Address),
    /// An Aave debt token: 1:1 of the underlying owed.
    Debt(Address),
    /// A listed ERC-4626 vault's share: its asset at `convertToAssets`.
    Shares(Address),
    /// A listed Pendle market's PT, YT, LP or SY: its asset at the oracle's TWAP (SY: its rate).
    Pendle { market: Address, part: pendle::Part, asset: Address },
}

impl Kind {
    /// The token whose price this one has.
    fn priced_as(self, token: Address) -> Address {
        match self {
            Kind::Plain => token,
            Kind::Deposit(underlying) | Kind::Debt(underlying) | Kind::Shares(underlying) => underlying,
            Kind::Pendle { asset, .. } => asset,
        }
    }
}

/// Values tokens from the sources the operator trusts, per [`PricingConfig`].
#[derive(Debug, Clone)]
pub struct Valuer {
    services: Arc<Services>,
    pricing: Arc<BTreeMap<u64, PricingConfig>>,
    /// (chain, token) → (block, price, kind, decimals), shared by the valuer's clones.
    quotes: Arc<std::sync::Mutex<Quotes>>,
    /// (chain, token) → what it is to the wallet's exposure: a token's kind does not change, so
    /// the class of every write need not read it again.
    assets: Arc<std::sync::Mutex<std::collections::HashMap<(u64, Address), bardo_core::action_class::Asset>>>,
    /// (chain, V3 pool) → its two tokens.
    pool_tokens: Arc<std::sync::Mutex<PoolTokens>>,
    /// (chain, PoolManager, V4 pool id) → its `Initialize` log: a pool's key never changes.
    v4_pools: Arc<std::sync::Mutex<V4Pools>>,
    /// (chain, contract) → the trusted Uniswap pool it was found to be.
    venues: Arc<std::sync::Mutex<std::collections::HashMap<(u64, Address), Venue>>>,
    /// (chain, listed Pendle market) → its SY, PT, YT and the SY's asset.
    pendle: Arc<std::sync::Mutex<std::collections::HashMap<(u64, Address), pendle::Tokens>>>,
}

/// A token's price as read at a block: (block, price, kind, decimals, what vouches for it).
type Quote = (u64, U512, Kind, u8, Sources);
type Quotes = std::collections::HashMap<(u64, Address), Quote>;
type PoolTokens = std::collections::HashMap<(u64, Address), (Address, Address)>;
type V4Pools = std::collections::HashMap<(u64, Address, alloy::primitives::B256), alloy::primitives::Log>;

impl Valuer {
    /// A valuer reading `services`' chains, with each chain's `pricing`.
    pub fn new(services: &Arc<Services>, pricing: BTreeMap<u64, PricingConfig>) -> Self {
        Self {
            services: services.clone(),
            pricing: Arc::new(pricing),
            quotes: Arc::default(),
            assets: Arc::default(),
            pool_tokens: Arc::default(),
            v4_pools: Arc::default(),
            venues: Arc::default(),
            pendle: Arc::default(),
        }
    }

    fn config(&self, chain: u64) -> Result<&PricingConfig, String> {
        self.pricing.get(&chain).ok_or_else(|| {
            format!(
                "the host cannot value tokens on chain {chain}: it has no pricing config; add \
                 `[safety] pricing_file` or `[safety.pricing.{chain}]` (usd_tokens, feeds, \
                 aave_oracle, canonical_pools, weth) to bardo.toml"
            )
        })
    }

    /// One `eth_call` to `to`, decoded.
    pub(crate) fn read<C: SolCall>(&self, chain: u64, to: Address, call: C) -> Result<C::Return, String> {
        let chains = &self.services.evm.chains;
        let client = chains.get(chain).map_err(|e| e.to_string())?;
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let raw = chains
            .block_on(client.call(to, call.abi_encode().into(), U256::ZERO, None, deadline))
            .map_err(|e| format!("reading {} of {to}: {e}", C::SIGNATURE))?;
        C::abi_decode_returns(&raw).map_err(|e| format!("{} of {to}: {e}", C::SIGNATURE))
    }

    /// `owner`'s balance of `token`.
    pub fn balance(&self, chain: u64, token: Address, owner: Address) -> Result<U256, String> {
        self.read(chain, token, balanceOfCall { owner })
    }

    /// `amount` base units of `token` in USD; a token that cannot be valued is an error, never
    /// zero. A debt token's amount is valued like its underlying's (see [`Self::signed_usd`]).
    pub fn usd(&self, chain: u64, token: Address, amount: U256) -> Result<MicroUsd, String> {
        self.appraise(chain, token, amount).map(|(value, _)| value)
    }

    /// A balance change of `token` in USD, signed: what the wallet gains is positive, what it
    /// loses negative — and an Aave debt token counts the other way (more debt is worth less).
    pub fn signed_usd(&self, chain: u64, token: Address, delta: I256) -> Result<i128, String> {
        let (value, kind) = self.appraise(chain, token, delta.unsigned_abs())?;
        let value = i128::try_from(value).unwrap_or(i128::MAX);
        let owed = matches!(kind, Kind::Debt(_));
        Ok(if delta.is_negative() != owed { -value } else { value })
    }

    /// A change of the native coin in USD, signed, valued as the chain's WETH.
    pub fn signed_native_usd(&self, chain: u64, delta: I256) -> Result<i128, String> {
        let weth = self.config(chain)?.weth.ok_or_else(|| {
            format!(
                "the host cannot value the native coin on chain {chain}: its pricing config names no `weth`"
            )
        })?;
        self.signed_usd(chain, weth, delta)
    }

    /// The owner of NFT `id` of `collection` now; none when it does not exist (reverts).
    pub fn owner_of(&self, chain: u64, collection: Address, id: U256) -> Result<Option<Address>, String> {
        let chains = &self.services.evm.chains;
        let client = chains.get(chain).map_err(|e| e.to_string())?;
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let data = ownerOfCall { id }.abi_encode().into();
        match chains.block_on(client.call(collection, data, U256::ZERO, None, deadline)) {
            Ok(raw) => ownerOfCall::abi_decode_returns(&raw)
                .map(Some)
                .map_err(|e| format!("ownerOf of {collection}: {e}")),
            Err(bardo_evm::ChainError::Reverted { .. }) => Ok(None),
            Err(e) => Err(format!("reading ownerOf({id}) of {collection}: {e}")),
        }
    }

    /// Whose deposit position `id` is in the V3 Staker `staker` (`deposits(id).owner`).
    pub fn staker_deposit_owner(&self, chain: u64, staker: Address, id: U256) -> Result<Address, String> {
        let chains = &self.services.evm.chains;
        let client = chains.get(chain).map_err(|e| e.to_string())?;
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let raw = chains
            .block_on(client.call(
                staker,
                depositsCall { tokenId: id }.abi_encode().into(),
                U256::ZERO,
                None,
                deadline,
            ))
            .map_err(|e| format!("reading deposits({id}) of the staker {staker}: {e}"))?;
        depositsCall::abi_decode_returns(&raw)
            .map(|d| d.owner)
            .map_err(|e| format!("deposits({id}) of the staker {staker}: {e}"))
    }

    /// The chain's wrapped ether, from its pricing config.
    pub fn weth(&self, chain: u64) -> Option<Address> {
        self.pricing.get(&chain).and_then(|c| c.weth)
    }

    /// The asset `holder` keeps for its depositors, when it is one the host can tell: a vault
    /// the operator lists (its `asset()`), or an aToken the Aave market behind the configured
    /// oracle lists (its underlying). None for anything else, and for a contract that only
    /// claims to be an aToken.
    pub fn redeemable_for(&self, chain: u64, holder: Address) -> Option<Address> {
        let config = self.config(chain).ok()?;
        match self.kind(chain, config, holder).ok()? {
            Kind::Shares(asset) => Some(asset),
            Kind::Deposit(underlying) if config.aave_oracle.is_some() => Some(underlying),
            _ => None,
        }
    }

    /// USD per whole `token` (18 decimals) at trusted prices, and its decimals; the zero
    /// address (a V4 pool's native coin) is valued as the chain's WETH, 18 decimals.
    pub(crate) fn unit_price(&self, chain: u64, token: Address) -> Result<(U512, u8), String> {
        let config = self.config(chain)?;
        if token.is_zero() {
            let weth = config.weth.ok_or_else(|| {
                format!("the host cannot value the native coin on chain {chain}: its pricing config names no `weth`")
            })?;
            return Ok((self.price(chain, config, weth)?, 18));
        }
        // Priced once per block with everything else the valuer prices.
        let (_, price, kind, decimals, _) = self.quote(chain, token)?;
        if !matches!(kind, Kind::Plain) {
            return Err(format!("{token} is a deposit or debt token; pools of it are not priced"));
        }
        Ok((price, decimals))
    }

    /// What `token` is to the wallet's exposure, for phase gating: a dollar token, a share (an
    /// aToken, a listed vault's share, an LP token that answers `token0`), a debt token, or any
    /// other token. A token the host cannot type is `Liquid` (the value guard refuses what it
    /// cannot value).
    pub fn asset(&self, chain: u64, token: Address) -> bardo_core::action_class::Asset {
        use bardo_core::action_class::Asset;
        let Ok(config) = self.config(chain) else { return Asset::Liquid };
        if config.usd_tokens.contains(&token) {
            return Asset::Cash;
        }
        let assets = || lock(&self.assets);
        if let Some(known) = assets().get(&(chain, token)) {
            return *known;
        }
        let asset = match self.kind(chain, config, token) {
            Ok(Kind::Deposit(_) | Kind::Shares(_) | Kind::Pendle { .. }) => Asset::Share,
            Ok(Kind::Debt(_)) => Asset::Debt,
            // Unknown this time (an Aave-looking token the market does not list): not kept.
            Err(_) => return Asset::Liquid,
            Ok(Kind::Plain) if self.read(chain, token, token0Call {}).is_ok() => Asset::Share,
            Ok(Kind::Plain) => Asset::Liquid,
        };
        assets().insert((chain, token), asset);
        asset
    }

    /// `amount` of `token` in micro-dollars, and what kind of token it is.
    fn appraise(&self, chain: u64, token: Address, amount: U256) -> Result<(MicroUsd, Kind), String> {
        // Nothing is worth nothing: revoking an approval of an unpriced token stays possible.
        if amount.is_zero() {
            return Ok((0, Kind::Plain));
        }
        let (_, price, kind, decimals, sources) = self.quote(chain, token)?;
        let value = micro_usd(amount, price, decimals);
        if let Sources::One(source) = sources {
            let config = self.config(chain)?;
            let cap = config.single_source_max_usd.unwrap_or(DEFAULT_SINGLE_SOURCE_MAX_USD);
            if value > MicroUsd::from(cap) * 1_000_000 {
                return Err(format!(
                    "{token} is priced by one source alone ({source}) and this values {} of it, over single_source_max_usd = {cap} ([safety] or [safety.pricing.{chain}]): nothing could catch that source lying. Add a second source for {} under [safety.pricing.{chain}] — a canonical pool (`canonical_pools`) or an Aave oracle on another aggregator — or value less of it",
                    usd(value),
                    kind.priced_as(token)
                ));
            }
        }
        Ok((value, kind))
    }

    /// `token`'s price, kind, decimals and sources: read once per block (the chain's cached
    /// head), since every one of its reads is at that block; read afresh when the chain has no
    /// head cache.
    fn quote(&self, chain: u64, token: Address) -> Result<Quote, String> {
        let chains = &self.services.evm.chains;
        let client = chains.get(chain).map_err(|e| e.to_string())?;
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let block = chains.block_on(client.latest(deadline)).map_err(|e| e.to_string())?;
        if let Some(block) = block
            && let Some(quote) = lock(&self.quotes).get(&(chain, token)).filter(|q| q.0 == block)
        {
            return Ok(quote.clone());
        }
        let config = self.config(chain)?;
        let kind = self.kind(chain, config, token)?;
        let (price, decimals, sources) = match kind {
            Kind::Shares(asset) => {
                let decimals = self.decimals(chain, token)?;
                let (price, sources) = self.share_price(chain, config, token, decimals, asset)?;
                (price, decimals, sources)
            }
            Kind::Pendle { market, part, asset } => {
                let decimals = self.decimals(chain, token)?;
                let (price, sources) = self.pendle_price(chain, config, (market, part, asset), decimals)?;
                (price, decimals, sources)
            }
            // The price first: a token nothing prices is refused as such, whatever else it lacks.
            _ => {
                let (price, sources) = self.priced(chain, config, kind.priced_as(token), 0)?;
                (price, self.decimals(chain, token)?, sources)
            }
        };
        let quote = (block.unwrap_or_default(), price, kind, decimals, sources);
        if block.is_some() {
            let mut quotes = lock(&self.quotes);
            if quotes.len() >= 1_024 {
                quotes.clear();
            }
            quotes.insert((chain, token), quote.clone());
        }
        Ok(quote)
    }

    /// `token`'s `decimals()`, at most 36 (beyond that the integer math would overflow).
    /// How a person reads an amount of `token`: its symbol (the token's own, so only letters,
    /// digits and a few marks, at most 12, else none — a symbol is chain data anyone writes)
    /// and its decimals; the native coin is `ETH`, 18. None for what cannot be read.
    pub(crate) fn label(&self, chain: u64, token: Option<Address>) -> (Option<String>, Option<u8>) {
        let Some(token) = token else { return (Some("ETH".into()), Some(18)) };
        let decimals = self.quote(chain, token).map(|q| q.3).or_else(|_| self.decimals(chain, token)).ok();
        let symbol = self.read(chain, token, symbolCall {}).ok().filter(|s| {
            (1..=12).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c))
        });
        (symbol, decimals)
    }

    fn decimals(&self, chain: u64, token: Address) -> Result<u8, String> {
        let decimals = self.read(chain, token, decimalsCall {})?;
        if decimals > 36 {
            return Err(format!("{token} reports {decimals} decimals; the valuer handles at most 36"));
        }
        Ok(decimals)
    }

    /// Whether `token` is an Aave aToken or debt token (and of what), or a plain token.
    fn kind(&self, chain: u64, config: &PricingConfig, token: Address) -> Result<Kind, String> {
        if config.usd_tokens.contains(&token) {
            return Ok(Kind::Plain);
        }
        if config.vaults.contains(&token) {
            return Ok(Kind::Shares(self.read(chain, token, assetCall {})?));
        }
        if let Some(kind) = self.pendle_kind(chain, config, token)? {
            return Ok(kind);
        }
        // Only Aave's tokens answer this (a plain token reverts or returns nothing).
        let Ok(underlying) = self.read(chain, token, UNDERLYING_ASSET_ADDRESSCall {}) else {
            return Ok(Kind::Plain);
        };
        match config.aave_oracle {
            Some(oracle) => self.listed_kind(chain, oracle, token, underlying),
            None => {
                // Without the market to ask: an aToken has no borrowAllowance; both debt tokens do.
                let probe = borrowAllowanceCall { fromUser: Address::ZERO, toUser: Address::ZERO };
                Ok(if self.read(chain, token, probe).is_ok() {
                    Kind::Debt(underlying)
                } else {
                    Kind::Deposit(underlying)
                })
            }
        }
    }

    /// Which of its tokens `token` is, by the Aave market behind `oracle` itself, so a contract
    /// merely claiming to be an aToken or debt token is not valued as one.
    fn listed_kind(
        &self,
        chain: u64,
        oracle: Address,
        token: Address,
        underlying: Address,
    ) -> Result<Kind, String> {
        let provider = self.read(chain, oracle, ADDRESSES_PROVIDERCall {})?;
        let data_provider = self.read(chain, provider, getPoolDataProviderCall {})?;
        let listed = self.read(chain, data_provider, getReserveTokensAddressesCall { asset: underlying })?;
        if token == listed.aTokenAddress {
            Ok(Kind::Deposit(underlying))
        } else if token == listed.variableDebtTokenAddress || token == listed.stableDebtTokenAddress {
            Ok(Kind::Debt(underlying))
        } else {
            Err(format!(
                "{token} claims to be an Aave token of {underlying}, but the Aave market of oracle \
                 {oracle} does not list it; it cannot be valued, so the write is refused"
            ))
        }
    }

    /// USD per whole share of `vault`, 18 decimals: what one whole share converts to in `asset`,
    /// at the asset's price (and the sources of that price).
    fn share_price(
        &self,
        chain: u64,
        config: &PricingConfig,
        vault: Address,
        decimals: u8,
        asset: Address,
    ) -> Result<(U512, Sources), String> {
        let one_share = U256::from(10u64).pow(U256::from(decimals));
        let assets = self.read(chain, vault, convertToAssetsCall { shares: one_share })?;
        let asset_decimals = self.decimals(chain, asset)?;
        let (asset_price, sources) = self.priced(chain, config, asset, 0)?;
        Ok((asset_price * U512::from(assets) / pow10(asset_decimals), sources))
    }
}

/// 10^`n` (n ≤ 36 by the callers' checks; 10^77 would still fit).
pub(crate) fn pow10(n: u8) -> U512 {
    U512::from(10u8).pow(U512::from(n))
}

/// USD per whole token (18 decimals) from a V3 pool's `sqrtPriceX96` (raw token1 per raw token0
/// is sqrtPriceX96² / 2¹⁹²), both tokens' decimals and the quote's USD price per whole token.
/// None on overflow (only at absurd prices).
pub(crate) fn price_from_sqrt(
    sqrt_price_x96: U512,
    token_is_0: bool,
    token_decimals: u8,
    quote_decimals: u8,
    quote_usd: U512,
) -> Option<U512> {
    let squared = sqrt_price_x96.checked_mul(sqrt_price_x96)?;
    let q192 = U512::from(1u8) << 192;
    let (num, den) = if token_is_0 { (squared, q192) } else { (q192, squared) };
    let scale = pow10(token_decimals).checked_mul(quote_usd)?;
    num.checked_mul(scale)?.checked_div(den.checked_mul(pow10(quote_decimals))?)
}

/// `amount` base units of a token with `decimals`, at `price` (USD per whole token, 18
/// decimals), in micro-dollars; saturating, so an absurd amount is never cheap.
fn micro_usd(amount: U256, price: U512, decimals: u8) -> MicroUsd {
    let value =
        U512::from(amount).checked_mul(price).map_or(U512::MAX, |v| v / (pow10(decimals) * pow10(12)));
    u128::try_from(value).unwrap_or(u128::MAX)
}

/// An 18-decimal USD price as `$1999.123456`.
pub(crate) fn price_text(price: U512) -> String {
    let micro = u128::try_from(price / pow10(12)).unwrap_or(u128::MAX);
    format!("${}.{:06}", micro / 1_000_000, micro % 1_000_000)
}

/// `$1234.56`.
pub fn usd(m: MicroUsd) -> String {
    format!("${}.{:02}", m / 1_000_000, (m % 1_000_000) / 10_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_prices_become_usd_per_whole_token() {
        // WETH (18) as token0 at 2,500 USDC (6): raw price 2500e6 / 1e18 = 1 / 20_000², so
        // sqrtPriceX96 = 2^96 / 20_000.
        let sqrt = (U512::from(1u8) << 96) / U512::from(20_000u32);
        let price = price_from_sqrt(sqrt, true, 18, 6, pow10(18)).expect("price");
        let thousandths = price / pow10(15);
        assert!((U512::from(2_499_990u64)..=U512::from(2_500_010u64)).contains(&thousandths), "{price}");
        // The same pool seen from USDC (its token1): $1 per USDC, from the inverse.
        let usdc = price_from_sqrt(sqrt, false, 6, 18, price).expect("price");
        let bps = |b: u32| pow10(18) * U512::from(b) / U512::from(10_000u32);
        assert!((bps(9_999)..=bps(10_001)).contains(&usdc), "{usdc}");
        let one_weth = U256::from(10u64).pow(U256::from(18u64));
        assert_eq!(micro_usd(one_weth, pow10(18) * U512::from(2_000u32), 18), 2_000_000_000);
        assert_eq!(micro_usd(U256::MAX, U512::MAX, 0), u128::MAX);
    }

    #[test]
    fn pricing_configs_parse_from_json_with_defaults() {
        let json = serde_json::json!({"31337": {
            "usd_tokens": ["0x0000000000000000000000000000000000000001"],
            "feeds": {"0x0000000000000000000000000000000000000003": "0x0000000000000000000000000000000000000004"},
            "canonical_pools": {"0x0000000000000000000000000000000000000005": {"pool": "0x0000000000000000000000000000000000000006"}},
        }});
        let parsed = PricingConfig::from_json(json).expect("parses");
        assert_eq!(parsed[&31337].max_divergence_bps, 500);
        assert_eq!(parsed[&31337].feeds.len(), 1);
        let canonical = parsed[&31337].canonical_pools.values().next().expect("one");
        assert_eq!((canonical.window_secs, canonical.min_liquidity), (1_800, 0));
        assert!(parsed[&31337].weth.is_none() && parsed[&31337].max_feed_age_secs.is_none());
        let bad = serde_json::json!({"mainnet": {"usd_tokens": []}});
        assert!(PricingConfig::from_json(bad).expect_err("not a chain id").contains("chain id"));
        // A pool to search is not a price source any more: the old key is refused by name.
        let old = serde_json::json!({"1": {"usd_tokens": [], "v3_factory": Address::ZERO}});
        assert!(PricingConfig::from_json(old).expect_err("unknown").contains("v3_factory"));
    }
}
