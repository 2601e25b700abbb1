//! What the devnet's record tells the host and each plugin: the contracts a write may call
//! (the safety allowlist), each plugin's `[settings]`, and the files `[safety]` reads (pricing,
//! approved assets, Morpho markets) — all derived from [`Deployments`], never stored twice.

use super::deploy::{Deployments, wbtc_weth};
use alloy::primitives::Address;
use bardo_core::scope::Role;
use std::collections::BTreeMap;

/// The devnet's dollar tokens: each worth one dollar to the host's pricing and the portfolio.
const DOLLAR_TOKENS: [&str; 2] = ["USDC", "DAI"];

impl Deployments {
    /// The contracts a write on this devnet may call or approve, each with its role (which
    /// functions a plan may call on it): the tokens, the Uniswap routers and position manager,
    /// Permit2, the UniversalRouter, V4's PositionManager and the Aave pool (a safety allowlist).
    pub fn write_targets(&self) -> BTreeMap<Address, Role> {
        let mut roles: BTreeMap<Address, Role> = self
            .tokens
            .iter()
            .map(|(symbol, t)| (t.address, if symbol == "WETH" { Role::Weth } else { Role::Erc20 }))
            .collect();
        let mut add = |map: &BTreeMap<String, Address>, key: &str, role: Role| {
            if let Some(a) = map.get(key) {
                roles.insert(*a, role);
            }
        };
        add(&self.uniswap_v2, "router02", Role::UniswapV2Router);
        add(&self.uniswap_v3, "swap_router", Role::UniswapV3SwapRouter);
        add(&self.uniswap_v3, "position_manager", Role::UniswapV3PositionManager);
        add(&self.uniswap_v3, "staker", Role::UniswapV3Staker);
        add(&self.uniswap_v4, "permit2", Role::Permit2);
        add(&self.uniswap_v4, "universal_router", Role::UniversalRouter);
        add(&self.uniswap_v4, "position_manager", Role::UniswapV4PositionManager);
        add(&self.aave_v3, "pool", Role::AaveV3Pool);
        roles.insert(self.erc8004.identity, Role::Erc8004IdentityRegistry);
        roles.insert(self.erc8004.reputation, Role::Erc8004ReputationRegistry);
        roles.insert(self.erc8004.validation, Role::Erc8004ValidationRegistry);
        for v in self.vaults.values() {
            roles.insert(v.address, Role::Erc4626Vault);
        }
        roles.insert(self.morpho.morpho, Role::MorphoBlue);
        if let Some(router) = self.pendle.contracts.get("router") {
            roles.insert(*router, Role::PendleRouter);
        }
        for m in self.pendle.markets.values() {
            roles.insert(m.market, Role::PendleMarket);
            roles.insert(m.yt, Role::PendleYieldToken);
            roles.insert(m.sy, Role::PendleSy);
            roles.insert(m.pt, Role::Erc20);
        }
        if let Some(treasury) = self.treasury() {
            roles.insert(treasury, Role::Recipient);
        }
        if !self.across.spoke_pool.is_zero() {
            roles.insert(self.across.spoke_pool, Role::AcrossSpokePool);
        }
        roles
    }

    /// The Morpho markets a write may use on this devnet (`[safety] morpho_markets_file`, by
    /// chain id: name → tokens, oracle, IRM, LLTV and id): both of the devnet's.
    pub fn morpho_markets_json(&self) -> serde_json::Value {
        serde_json::json!({ self.chain_id.to_string(): self.morpho.markets })
    }

    /// The morpho plugin's settings for this devnet (`[settings] morpho`): the singleton and its
    /// markets by name.
    pub fn morpho_settings(&self) -> serde_json::Value {
        serde_json::json!({"chains": {self.chain_id.to_string(): {
            "morpho": self.morpho.morpho,
            "markets": self.morpho.markets,
        }}})
    }

    /// A token by symbol: the devnet's tokens, and PENDLE (Pendle's reward token).
    fn token_address(&self, symbol: &str) -> Option<Address> {
        match self.tokens.get(symbol) {
            Some(t) => Some(t.address),
            None if symbol == "PENDLE" => self.pendle.contracts.get("pendle").copied(),
            None => None,
        }
    }

    /// The pendle plugin's settings for this devnet (`[settings] pendle`): the router, its static
    /// quoter, the PT/YT/LP oracle and the markets by name (market, SY, PT, YT, maturity, the
    /// vault it wraps and that vault's asset).
    pub fn pendle_settings(&self) -> serde_json::Value {
        let c = &self.pendle.contracts;
        serde_json::json!({"chains": {self.chain_id.to_string(): {
            "router": c.get("router"),
            "router_static": c.get("router_static"),
            "py_lp_oracle": c.get("py_lp_oracle"),
            "twap_secs": super::pendle::TWAP_SECS,
            "markets": self.pendle.markets,
        }}})
    }

    /// The account the devnet's allowlist names as the wallet's one `recipient` (anvil's last
    /// dev account): where `wallet_transfer` may send.
    pub fn treasury(&self) -> Option<Address> {
        self.accounts.last().copied().filter(|_| self.accounts.len() > 2)
    }

    /// The wallet and safety plugins' settings for this devnet (`[settings] wallet`, `safety`):
    /// the token list, WETH, the V2 router, the host's allowlist (to label spenders and
    /// recipients) and the USD feeds (the portfolio's prices).
    pub fn wallet_settings(&self) -> serde_json::Value {
        let allowlist: BTreeMap<String, String> =
            self.write_targets().into_iter().map(|(a, r)| (a.to_string(), r.to_string())).collect();
        serde_json::json!({"chains": {self.chain_id.to_string(): {
            "tokens": self.token_list(),
            "weth": self.tokens.get("WETH").map(|t| t.address),
            "v2_router": self.uniswap_v2.get("router02"),
            "allowlist": allowlist,
            "prices": self.plugin_prices(),
        }}})
    }

    /// The feeds the host's pricing trusts (pricing_json) and the dollar tokens, as plugins read
    /// them for USD values (`bardo_sdk::operator::Prices`).
    fn plugin_prices(&self) -> serde_json::Value {
        let dollars = DOLLAR_TOKENS;
        let feeds: BTreeMap<&String, &Address> =
            self.feeds.iter().filter(|(symbol, _)| !dollars.contains(&symbol.as_str())).collect();
        serde_json::json!({
            "feeds": feeds,
            "usd_tokens": dollars,
            "max_feed_age_secs": crate::feeds::MAX_FEED_AGE_SECS,
        })
    }

    /// The vault plugin's settings for this devnet (`[settings] vault`): the vaults, the token
    /// list and the allowlist (only allowlisted vaults take deposits).
    pub fn vault_settings(&self) -> serde_json::Value {
        let mut settings = self.wallet_settings();
        let vaults: Vec<serde_json::Value> = self
            .vaults
            .values()
            .map(|v| serde_json::json!({"symbol": v.symbol, "address": v.address}))
            .collect();
        settings["chains"][self.chain_id.to_string()]["vaults"] = vaults.into();
        settings
    }

    /// The testnet plugin's settings for this devnet (`[settings] testnet`): the token list.
    pub fn testnet_settings(&self) -> serde_json::Value {
        serde_json::json!({"chains": {self.chain_id.to_string(): {"tokens": self.token_list()}}})
    }

    /// The bootstrap plugin's settings for this devnet (`[settings] bootstrap`): the token list,
    /// a gas floor, and what `bootstrap_fund_wallet` tops a wallet up to: ether, and the dollar
    /// tokens and WBTC at demo-sized amounts (not WETH: minted WETH would have no ether behind
    /// it, so unwrapping it would fail — fund ether and wrap it).
    pub fn bootstrap_settings(&self) -> serde_json::Value {
        let mut fund = serde_json::Map::from_iter([("ETH".to_owned(), "10".into())]);
        for (symbol, amount) in [("USDC", "10000"), ("DAI", "10000"), ("WBTC", "0.5")] {
            if self.tokens.contains_key(symbol) {
                fund.insert(symbol.to_owned(), amount.into());
            }
        }
        serde_json::json!({"chains": {self.chain_id.to_string(): {
            "tokens": self.token_list(),
            "gas_floor": "0.01",
            "fund": fund,
        }}})
    }

    /// The identity plugin's settings for this devnet (`[settings] identity`): the ERC-8004
    /// registries.
    pub fn identity_settings(&self) -> serde_json::Value {
        let r = &self.erc8004;
        serde_json::json!({"chains": {self.chain_id.to_string(): {
            "identity": r.identity,
            "reputation": r.reputation,
            "validation": r.validation,
        }}})
    }

    /// Where the host reads token prices on this devnet (`[safety] pricing_file`, the shape of
    /// bardo-runtime's `PricingConfig` by chain id): USDC and DAI are the dollar tokens, WETH the
    /// second quote, Uniswap V3's factory the pools, Aave's oracle the cross-check, and the
    /// vaults' shares are their asset, the Pendle markets' tokens theirs at the oracle's TWAP.
    pub fn pricing_json(&self) -> serde_json::Value {
        let dollars = DOLLAR_TOKENS;
        let usd_tokens: Vec<Address> =
            dollars.iter().filter_map(|s| self.tokens.get(*s)).map(|t| t.address).collect();
        // Every other token by its Chainlink-style feed (and WETH, USDC, DAI by the Aave oracle).
        let feeds: BTreeMap<Address, Address> = self
            .feeds
            .iter()
            .filter(|(symbol, _)| !dollars.contains(&symbol.as_str()))
            .filter_map(|(symbol, feed)| self.token_address(symbol).map(|t| (t, *feed)))
            .collect();
        // WBTC (no Aave reserve) has the WBTC/WETH pool as its second source, as one alone caps.
        let canonical: BTreeMap<Address, serde_json::Value> = (self.tokens.get("WBTC"))
            .zip(wbtc_weth(&self.uniswap_v3_pools))
            .map(|(wbtc, pool)| {
                let window = crate::fixtures::CANONICAL_WINDOW_SECS;
                (wbtc.address, serde_json::json!({"pool": pool.address, "window_secs": window}))
            })
            .into_iter()
            .collect();
        serde_json::json!({ self.chain_id.to_string(): {
            "usd_tokens": usd_tokens,
            "feeds": feeds,
            "max_feed_age_secs": crate::feeds::MAX_FEED_AGE_SECS,
            "canonical_pools": canonical,
            "weth": self.tokens.get("WETH").map(|t| t.address),
            "aave_oracle": self.aave_v3.get("oracle"),
            "vaults": self.vaults.values().map(|v| v.address).collect::<Vec<_>>(),
            "pendle": self.pendle.contracts.get("py_lp_oracle").map(|oracle| serde_json::json!({
                "oracle": oracle,
                "twap_secs": super::pendle::TWAP_SECS,
                "markets": self.pendle.markets.values().map(|m| m.market).collect::<Vec<_>>(),
            })),
            // The Uniswap deployments whose pools' events the host believes.
            "uniswap": {
                "v2_factory": self.uniswap_v2.get("factory"),
                "v3_factory": self.uniswap_v3.get("factory"),
                "v4_pool_manager": self.uniswap_v4.get("pool_manager"),
            },
        }})
    }

    /// What a write on this devnet may acquire (`[safety] approved_assets_file`, by chain id):
    /// the test tokens, the vaults' shares, the V2 pairs' LP tokens, each Aave reserve's aToken
    /// and variable debt token, and the Pendle markets' PT, YT, LP and SY. A token anyone
    /// deploys is not on it.
    pub fn approved_assets_json(&self) -> serde_json::Value {
        let aave = self
            .aave_v3
            .iter()
            .filter(|(name, _)| name.starts_with("a_token_") || name.starts_with("variable_debt_"))
            .map(|(_, a)| *a);
        let assets: std::collections::BTreeSet<Address> = self
            .tokens
            .values()
            .map(|t| t.address)
            .chain(self.vaults.values().map(|v| v.address))
            .chain(self.uniswap_v2_pairs.iter().map(|p| p.address))
            .chain(aave)
            .chain(self.pendle.markets.values().flat_map(|m| [m.pt, m.yt, m.market, m.sy]))
            .collect();
        serde_json::json!({ self.chain_id.to_string(): assets })
    }

    /// Settings for the repo's `uniswap` plugin on this devnet (`[settings] uniswap`): its
    /// contract addresses and the token list.
    pub fn uniswap_settings(&self) -> serde_json::Value {
        let tokens = self.token_list();
        serde_json::json!({"chains": {self.chain_id.to_string(): {
            "v3_factory": self.uniswap_v3["factory"],
            "quoter_v2": self.uniswap_v3["quoter_v2"],
            "swap_router": self.uniswap_v3["swap_router"],
            "position_manager": self.uniswap_v3["position_manager"],
            "v3_staker": self.uniswap_v3.get("staker"),
            "v2_factory": self.uniswap_v2["factory"],
            "v2_router": self.uniswap_v2["router02"],
            "v4_state_view": self.uniswap_v4.get("state_view"),
            "v4_quoter": self.uniswap_v4.get("v4_quoter"),
            "v4_pool_manager": self.uniswap_v4.get("pool_manager"),
            "universal_router": self.uniswap_v4.get("universal_router"),
            "v4_position_manager": self.uniswap_v4.get("position_manager"),
            "weth": self.tokens.get("WETH").map(|t| t.address),
            "tokens": tokens,
            "quote_token": "USDC",
            "prices": self.plugin_prices(),
        }}})
    }

    /// The streaming plugin's settings for this devnet (`[settings] streaming`).
    pub fn streaming_settings(&self) -> serde_json::Value {
        let uniswap = self.uniswap_settings()["chains"][self.chain_id.to_string()].clone();
        serde_json::json!({"chains": {self.chain_id.to_string(): {
            "uniswap": uniswap,
            "aave_pool_addresses_provider": self.aave_v3["pool_addresses_provider"],
        }}})
    }

    /// The test tokens as a plugin token list (`[{"symbol", "address"}]`).
    fn token_list(&self) -> Vec<serde_json::Value> {
        self.tokens.values().map(|t| serde_json::json!({"symbol": t.symbol, "address": t.address})).collect()
    }

    /// The Aave plugin's settings for this devnet (`[settings] aave`).
    pub fn aave_settings(&self) -> serde_json::Value {
        let tokens = self.token_list();
        serde_json::json!({"chains": {self.chain_id.to_string(): {
            "pool_addresses_provider": self.aave_v3["pool_addresses_provider"],
            "tokens": tokens,
        }}})
    }
}

impl Deployments {
    /// Where each of this chain's tokens arrives on the devnet's other `chains`: the token of the
    /// same symbol there (symbol → destination chain id → address).
    fn routes(&self, chains: &[&Deployments]) -> BTreeMap<&str, BTreeMap<String, Address>> {
        let mut routes: BTreeMap<&str, BTreeMap<String, Address>> = BTreeMap::new();
        for other in chains.iter().filter(|o| o.chain_id != self.chain_id && !o.across.spoke_pool.is_zero()) {
            for symbol in self.tokens.keys() {
                if let Some(there) = other.tokens.get(symbol) {
                    routes.entry(symbol).or_default().insert(other.chain_id.to_string(), there.address);
                }
            }
        }
        routes
    }

    /// The bridge plugin's settings for this chain (`[settings] bridge`): Across's SpokePool, the
    /// devnet relayer's published fee, a fill deadline an hour out, the tokens, and the routes to
    /// the devnet's other `chains`.
    pub fn bridge_settings(&self, chains: &[&Deployments]) -> serde_json::Value {
        serde_json::json!({"chains": {self.chain_id.to_string(): {
            "spoke_pool": self.across.spoke_pool,
            "relayer_fee_bps": self.across.relayer_fee_bps,
            "fill_deadline_secs": 3_600,
            "tokens": self.token_list(),
            "routes": self.routes(chains),
        }}})
    }

    /// The bridge routes the host holds deposits to (`[safety] bridge_routes_file`): by this
    /// chain, each token's address → destination chain id → its counterpart there.
    pub fn bridge_routes_json(&self, chains: &[&Deployments]) -> serde_json::Value {
        let by_address: BTreeMap<Address, BTreeMap<String, Address>> = self
            .routes(chains)
            .into_iter()
            .filter_map(|(symbol, to)| self.tokens.get(symbol).map(|t| (t.address, to)))
            .collect();
        serde_json::json!({ self.chain_id.to_string(): by_address })
    }
}

/// Every file `bardo devnet up` writes under `.bardo/settings/` for the devnet's `chains`, by
/// name: each plugin's settings (Pendle's only where it is deployed) and the host's allowlist,
/// pricing, approved assets and Morpho markets — each keyed by chain id, the chains side by side.
pub fn files(chains: &[&Deployments]) -> BTreeMap<&'static str, serde_json::Value> {
    let mut files = BTreeMap::new();
    for d in chains {
        let mut of_chain = vec![
            ("uniswap", d.uniswap_settings()),
            ("aave", d.aave_settings()),
            ("streaming", d.streaming_settings()),
            ("wallet", d.wallet_settings()),
            ("safety", d.wallet_settings()),
            ("testnet", d.testnet_settings()),
            ("intelligence", d.uniswap_settings()),
            ("vault", d.vault_settings()),
            ("bootstrap", d.bootstrap_settings()),
            ("identity", d.identity_settings()),
            ("morpho", d.morpho_settings()),
            ("allowlist", serde_json::json!({ d.chain_id.to_string(): d.write_targets() })),
            ("pricing", d.pricing_json()),
            ("approved_assets", d.approved_assets_json()),
            ("morpho_markets", d.morpho_markets_json()),
        ];
        if !d.pendle.markets.is_empty() {
            of_chain.push(("pendle", d.pendle_settings()));
        }
        of_chain.push(("bridge", d.bridge_settings(chains)));
        of_chain.push(("bridge_routes", d.bridge_routes_json(chains)));
        for (name, value) in of_chain {
            merge(files.entry(name).or_insert_with(|| serde_json::json!({})), value);
        }
    }
    files
}

/// `more` into `into`: objects key by key (the chains side by side), anything else replaced.
fn merge(into: &mut serde_json::Value, more: serde_json::Value) {
    match (into, more) {
        (serde_json::Value::Object(into), serde_json::Value::Object(more)) => {
            for (key, value) in more {
                merge(into.entry(key).or_insert(serde_json::Value::Null), value);
            }
        }
        (into, more) => *into = more,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn chains_are_merged_side_by_side_and_nothing_else_is_combined() {
        let mut into = json!({"chains": {"1": {"tokens": [1], "weth": "a"}}});
        super::merge(&mut into, json!({"chains": {"8453": {"tokens": [2]}}}));
        super::merge(&mut into, json!({"chains": {"1": {"weth": "b"}}}));
        assert_eq!(into, json!({"chains": {"1": {"tokens": [1], "weth": "b"}, "8453": {"tokens": [2]}}}));
    }
}
