//! `[safety]`: the write path's policy (allowlist, pricing, limits, phase) and where its state
//! lives (audit log, permits, spending ledger, host key).

use crate::scope::AllowedContracts;
use alloy::primitives::Address;
use bardo_core::config::{ConfigError, Section};
use bardo_runtime::Config;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// One chain's allowlist: addresses (each an ERC-20) or addresses with their roles.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum AllowEntries {
    /// Tokens: a plan may only `approve` them to allowlisted spenders.
    Tokens(Vec<Address>),
    /// Contracts and their roles.
    Roles(BTreeMap<Address, bardo_core::scope::Role>),
}

impl AllowEntries {
    fn into_roles(self) -> BTreeMap<Address, bardo_core::scope::Role> {
        match self {
            Self::Tokens(list) => list.into_iter().map(|a| (a, bardo_core::scope::Role::Erc20)).collect(),
            Self::Roles(map) => map,
        }
    }
}

/// `[safety]`: the write path's policy and state files.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SafetyConfig {
    /// How long a permit stays valid, seconds.
    pub ttl_secs: u64,
    /// The agent's phase; writes are gated by it.
    pub phase: bardo_core::tool::Phase,
    /// The phase a write whose receipts diverge from its declaration moves the host to
    /// (default `cautious`; it never raises the phase).
    pub mismatch_phase: bardo_core::tool::Phase,
    /// The hash-linked audit log.
    pub audit_log: PathBuf,
    /// The emergency halt, shared by every `bardo` process; each permit (open or settled within
    /// a day) is a file in `<permits>.d/` beside it.
    pub permits: PathBuf,
    /// Contracts writes may call, approve or pay, per chain id: a list of token addresses, or a
    /// table of address → role (`uniswap-v3-swap-router`, `aave-v3-pool`, …; see
    /// `bardo_core::scope::Role`) — the role says which functions a plan may call.
    pub allowlist: BTreeMap<String, AllowEntries>,
    /// More allowlist entries from a JSON file of the same shape (the devnet writes one).
    pub allowlist_file: Option<PathBuf>,
    /// Where the host reads token prices and which Uniswap deployments it believes, per chain id
    /// (`[safety.pricing.31337] usd_tokens, feeds, weth, aave_oracle, canonical_pools,
    /// max_divergence_bps, max_feed_age_secs, single_source_max_usd, uniswap`); every value check
    /// needs the chains it values tokens on.
    pub pricing: BTreeMap<String, crate::valuation::PricingConfig>,
    /// More pricing entries from a JSON file of the same shape (the devnet writes one); a chain
    /// also in `[safety.pricing]` takes bardo.toml's entry.
    pub pricing_file: Option<PathBuf>,
    /// USD spending limits (`[safety.spending] per_tx_usd, per_day_usd`); none = no limit.
    pub spending: Option<crate::hooks::spending_limiter::SpendingLimits>,
    /// Most write previews per minute; none = no limit.
    pub previews_per_minute: Option<usize>,
    /// Tokens a write may acquire, per chain id; a chain not listed is not restricted.
    pub approved_assets: BTreeMap<String, Vec<Address>>,
    /// More approved assets from a JSON file of the same shape (`bardo devnet up` writes one).
    pub approved_assets_file: Option<PathBuf>,
    /// Morpho Blue markets a write may use, per chain id: name → its tokens, oracle, IRM and
    /// LLTV (the id is derived from them). A market not listed is refused by scope.
    pub morpho_markets: BTreeMap<String, BTreeMap<String, crate::morpho::MorphoMarket>>,
    /// More Morpho markets from a JSON file of the same shape (`bardo devnet up` writes one).
    pub morpho_markets_file: Option<PathBuf>,
    /// The bridge routes a deposit may take, per origin chain id: input token → destination chain
    /// id → the token it must arrive as there (its bridged counterpart). A deposit off them is
    /// refused: an output token is whatever the depositor writes, a worthless one included.
    pub bridge_routes: BTreeMap<String, crate::hooks::bridge_guard::Routes>,
    /// More bridge routes from a JSON file of the same shape (`bardo devnet up` writes one).
    pub bridge_routes_file: Option<PathBuf>,
    /// How long a commit waits for a bridge deposit's fill on its destination before it reports
    /// it `pending`, seconds (default 60).
    pub bridge_fill_wait_secs: u64,
    /// The most a single token holding may be worth after a write, whole USD; none = no cap.
    pub max_position_usd: Option<u64>,
    /// The most a write may lose in value, basis points of what it gives (fees and price
    /// impact; default 300). More is refused, whatever the plan declares.
    pub max_value_loss_bps: u32,
    /// The most a Uniswap pool a plan swaps with or deposits into may be priced away from the
    /// trusted prices, and a swap's effective price from them, basis points (default 200).
    pub max_price_deviation_bps: u32,
    /// How far below its simulated outcome a plan's on-chain bounds may let it go, basis points
    /// (default 100): every swap's minimum out (or maximum in), every deposit's minimum amounts
    /// or maximum payments, every withdrawal's minimum amounts. A bound of 0 or looser is
    /// refused at preview: a sandwich would take the rest (see `hooks::on_chain_bounds`).
    pub max_slippage_bps: u32,
    /// The oldest a price feed's answer may be, seconds (default 3600), for every chain whose
    /// pricing config does not set its own `max_feed_age_secs`.
    pub max_feed_age_secs: u64,
    /// The most, whole USD, one valuation of a volatile token priced by a single source may
    /// reach (default 1000), for every chain whose pricing config does not set its own.
    pub single_source_max_usd: u64,
    /// An approval the plan leaves worth more than this, whole USD at trusted prices (the lesser
    /// of the amount and what the wallet holds), makes the permit High risk (default 1000).
    pub approval_high_risk_usd: u64,
    /// The lowest health factor a plan may leave the wallet's account at a lending pool it
    /// touches (default 1.5); a plan that raises a lower one is still allowed.
    pub min_health_factor: f64,
    /// The spending ledger every `bardo` process shares (reservations and spend).
    pub spending_ledger: PathBuf,
    /// The host's secret MAC key (created 0600 on first use): it authenticates the audit log's
    /// checkpoint and seals permits, so a permit written into `permits` by anyone else is
    /// refused. Keep it out of the repository, beside the signer's secrets.
    pub host_key: PathBuf,
    /// Which commits wait for a human (`"never"`, `"always"`, `"above_usd = N"`), for every
    /// profile or per profile (see [`crate::confirm`]); default never.
    pub confirm: crate::confirm::ConfirmSetting,
    /// Feedback and validation from the wallet: how many a day, whether each waits for a
    /// person (see [`crate::hooks::reputation_guard`]).
    pub reputation: crate::hooks::ReputationLimits,
}

impl Default for SafetyConfig {
    fn default() -> Self {
        Self {
            ttl_secs: 60,
            phase: bardo_core::tool::Phase::Thriving,
            mismatch_phase: bardo_core::tool::Phase::Cautious,
            audit_log: PathBuf::from(".bardo/audit.jsonl"),
            permits: PathBuf::from(".bardo/permits.json"),
            allowlist: BTreeMap::new(),
            allowlist_file: None,
            pricing: BTreeMap::new(),
            pricing_file: None,
            spending: None,
            previews_per_minute: None,
            approved_assets: BTreeMap::new(),
            approved_assets_file: None,
            morpho_markets: BTreeMap::new(),
            morpho_markets_file: None,
            bridge_routes: BTreeMap::new(),
            bridge_routes_file: None,
            bridge_fill_wait_secs: crate::hooks::bridge_guard::DEFAULT_FILL_WAIT.as_secs(),
            max_position_usd: None,
            max_value_loss_bps: crate::hooks::value_guard::DEFAULT_MAX_LOSS_BPS,
            min_health_factor: crate::hooks::health_floor::DEFAULT_MIN_HEALTH_FACTOR,
            max_price_deviation_bps: crate::hooks::price_guard::DEFAULT_MAX_PRICE_DEVIATION_BPS,
            max_slippage_bps: crate::hooks::on_chain_bounds::DEFAULT_MAX_SLIPPAGE_BPS,
            max_feed_age_secs: crate::valuation::DEFAULT_MAX_FEED_AGE_SECS,
            single_source_max_usd: crate::valuation::DEFAULT_SINGLE_SOURCE_MAX_USD,
            approval_high_risk_usd: crate::hooks::approval_exposure::DEFAULT_HIGH_RISK_USD,
            spending_ledger: PathBuf::from(".bardo/spending.json"),
            host_key: PathBuf::from(".bardo/host.key"),
            confirm: crate::confirm::ConfirmSetting::default(),
            reputation: crate::hooks::ReputationLimits::default(),
        }
    }
}

impl Section for SafetyConfig {
    const NAME: &'static str = "safety";
}

impl SafetyConfig {
    /// The write allowlist per chain, with roles: `[safety] allowlist` plus `allowlist_file`.
    pub fn allowlist(&self, config: &Config) -> Result<BTreeMap<u64, AllowedContracts>, ConfigError> {
        let inline =
            self.allowlist.iter().map(|(chain, e)| (chain.clone(), e.clone().into_roles())).collect();
        by_chain(config, "allowlist", inline, &self.allowlist_file, AllowEntries::into_roles)
    }

    /// Where the valuer reads prices, by chain id: `pricing_file`'s entries, each replaced by a
    /// `[safety.pricing.<chain id>]` table for the same chain.
    pub fn pricing(
        &self,
        config: &Config,
    ) -> Result<BTreeMap<u64, crate::valuation::PricingConfig>, ConfigError> {
        use crate::valuation::PricingConfig;
        let mut pricing = BTreeMap::new();
        if let Some(file) = &self.pricing_file {
            let path = config.resolve(file);
            let invalid = |message: String| ConfigError::Parse { path: path.clone(), message };
            let text = std::fs::read(&path).map_err(|error| ConfigError::Io { path: path.clone(), error })?;
            let value: serde_json::Value =
                serde_json::from_slice(&text).map_err(|e| invalid(e.to_string()))?;
            pricing = PricingConfig::from_json(value).map_err(invalid)?;
        }
        let inline = PricingConfig::by_chain(self.pricing.clone()).map_err(|e| ConfigError::Parse {
            path: config.file(),
            message: format!("[safety.pricing]: {e}"),
        })?;
        pricing.extend(inline);
        // What a chain does not say for itself, `[safety]` says for every chain.
        for config in pricing.values_mut() {
            config.max_feed_age_secs.get_or_insert(self.max_feed_age_secs);
            config.single_source_max_usd.get_or_insert(self.single_source_max_usd);
        }
        Ok(pricing)
    }

    /// `[safety.approved_assets]` plus `approved_assets_file`, by chain id.
    pub fn approved_assets(&self, config: &Config) -> Result<BTreeMap<u64, BTreeSet<Address>>, ConfigError> {
        let inline = self.approved_assets.clone();
        let entries = by_chain(config, "approved_assets", inline, &self.approved_assets_file, |v| v)?;
        Ok(entries.into_iter().map(|(chain, list)| (chain, list.into_iter().collect())).collect())
    }

    /// `[safety.morpho_markets]` plus `morpho_markets_file`: the trusted markets by chain id,
    /// by id. A stated id that is not the hash of its market is an error.
    pub fn morpho_markets(&self, config: &Config) -> Result<crate::morpho::TrustedMarkets, ConfigError> {
        let inline = self.morpho_markets.clone();
        let entries = by_chain(config, "morpho_markets", inline, &self.morpho_markets_file, |v| v)?;
        entries
            .into_iter()
            .map(|(chain, named)| {
                let markets = crate::morpho::by_id(named)
                    .map_err(|message| ConfigError::Parse { path: config.file(), message })?;
                Ok((chain, markets))
            })
            .collect()
    }
}

impl SafetyConfig {
    /// `[safety.bridge_routes]` plus `bridge_routes_file`: by origin chain, input token, and
    /// destination chain, the token it arrives as.
    pub fn bridge_routes(&self, config: &Config) -> Result<crate::hooks::bridge_guard::ByChain, ConfigError> {
        let inline = self.bridge_routes.clone();
        let entries = by_chain(config, "bridge_routes", inline, &self.bridge_routes_file, |v| v)?;
        entries
            .into_iter()
            .map(|(origin, routes)| {
                let parsed =
                    crate::hooks::bridge_guard::parse(routes).map_err(|message| ConfigError::Parse {
                        path: config.file(),
                        message: format!("[safety.bridge_routes.{origin}]: {message}"),
                    })?;
                Ok((origin, parsed))
            })
            .collect()
    }
}

/// `[safety.<key>]` entries (`inline`) by chain id, with those of `file` (a JSON object of
/// chain id → `F`, made a `V` by `into`) added to each chain's.
fn by_chain<F, V>(
    config: &Config,
    key: &str,
    inline: BTreeMap<String, V>,
    file: &Option<PathBuf>,
    into: impl Fn(F) -> V,
) -> Result<BTreeMap<u64, V>, ConfigError>
where
    F: serde::de::DeserializeOwned,
    V: Default + Extend<<V as IntoIterator>::Item> + IntoIterator,
{
    let mut entries = inline;
    if let Some(file) = file {
        let path = config.resolve(file);
        let text = std::fs::read(&path).map_err(|error| ConfigError::Io { path: path.clone(), error })?;
        let more: BTreeMap<String, F> = serde_json::from_slice(&text)
            .map_err(|e| ConfigError::Parse { path: path.clone(), message: e.to_string() })?;
        for (chain, list) in more {
            entries.entry(chain).or_default().extend(into(list));
        }
    }
    entries
        .into_iter()
        .map(|(chain, list)| {
            let id = chain.parse::<u64>().map_err(|_| ConfigError::Parse {
                path: config.file(),
                message: format!("[safety.{key}] key {chain:?} must be a chain id"),
            })?;
            Ok((id, list))
        })
        .collect()
}
