//! Stream tools for Bardo. Each tool names its sources — logs for what contracts announce
//! (swaps, mints, burns, transfers), a timer for what they do not (pool state, health factors) —
//! and decodes what the host delivers into typed events; the host owns the connections, the
//! timers and the subscription bookkeeping. Per-subscription state (a position's in-range
//! flag, the last price) travels through the host between steps.

mod config;
mod health;
mod jar;
mod pools;
mod positions;
mod tokens;
mod trades;
mod v4;

use health::HealthFactorAlerts;
use jar::TokenJar;
use pools::{PoolEvents, PoolState, PriceFeed};
use positions::PositionAlerts;
use trades::Trades;

bardo_sdk::plugin! {
    name: "streaming",
    read: [],
    stream: [PoolEvents, PoolState, PositionAlerts, PriceFeed, TokenJar, Trades, HealthFactorAlerts],
}
