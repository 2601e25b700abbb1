//! Across V3 bridge tools for Bardo: the operator's routes (which token arrives as which on
//! another chain), a quote from the relayer's published fee, a deposit into the origin's
//! SpokePool whose output arrives at the wallet on the destination, and a deposit's status read
//! from the destination SpokePool's `FilledRelay`. Configured by `[settings] bridge` (see
//! `settings`). The host decides what a deposit is worth — what arrives, at the destination's
//! prices — and waits for its fill; the plugin only plans.

mod across;
mod read;
mod settings;
mod write;

bardo_sdk::plugin! {
    name: "bridge",
    read: [read::GetRoutes, read::Quote, read::GetStatus],
    write: [write::Deposit],
}
