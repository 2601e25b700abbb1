//! First-run tools for Bardo (category `bootstrap`): what the host still lacks to act on a chain
//! — the chain itself, a wallet, this plugin's settings, gas and the operator's funding targets —
//! each with the step that fixes it; and funding the wallet up to those targets on a devnet.
//!
//! A writer-world plugin without write tools: it imports `signer` only to read the wallet's
//! address. Funding uses `bardo:host/testnet`, which the host grants to a plugin whose tools are
//! all `bootstrap` tools when the profile selects that category, and which answers `denied` on
//! any chain not marked `devnet = true`.
//!
//! `[settings] bootstrap`: `{"chains": {"31337": {"tokens": [{"symbol", "address"}],
//! "gas_floor": "0.01", "fund": {"ETH": "10", "USDC": "10000"}}}}` — the least ether the wallet
//! needs for gas, and the balances funding tops it up to (token amounts in token units).

mod check;
mod fund;
mod targets;

bardo_sdk::plugin! {
    name: "bootstrap",
    read: [check::CheckSetup, fund::FundWallet],
    write: [],
}
