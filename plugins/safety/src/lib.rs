//! Safety tools for Bardo: simulate any calls as the wallet on the host's fork, check a token
//! (taxes and honeypots by a simulated round trip; owner powers and proxies from its code and
//! storage), the wallet's risky approvals, and a contract. They read and simulate only: revoke
//! an approval they find with `wallet_revoke_approval`. The plugin is a writer (no write tools)
//! because simulation and the wallet's address are writer imports.
//!
//! `[settings] safety`: the operator book of `bardo_sdk::operator` (tokens, weth, v2_router,
//! allowlist).

mod code;
mod round_trip;
mod tools;

use tools::{CheckApprovals, CheckContract, CheckToken, SimulateTransaction};

bardo_sdk::plugin! {
    name: "safety",
    read: [SimulateTransaction, CheckToken, CheckApprovals, CheckContract],
    write: [],
}
