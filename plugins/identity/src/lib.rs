//! ERC-8004 identity tools for Bardo (category `identity`): an agent (owner, agentURI, verified
//! wallet, on-chain metadata) and its registration file, its reputation and validations, a
//! search over the registry's agents, and whether an agent's registration names a given A2A
//! card — the chain identity → agentURI → registration file → services → card; and write plans to
//! register the wallet as an agent, update its registration file, give feedback, and request and
//! answer validations.
//!
//! A registration file is read when the agentURI holds it (`data:application/json;base64,…`,
//! as the ERC recommends for an on-chain file); a plugin has no network, so an `https://` or
//! `ipfs://` file is named, not fetched.
//!
//! `[settings] identity`: `{"chains": {"31337": {"identity": "0x…", "reputation": "0x…",
//! "validation": "0x…"}}}` — the registries (`bardo devnet up` writes the devnet's).

mod agents;
mod registration;
mod registries;
mod reputation;
mod write;

bardo_sdk::plugin! {
    name: "identity",
    read: [
        agents::GetAgent,
        agents::SearchAgents,
        agents::VerifyAgent,
        reputation::GetReputation,
        reputation::GetValidations,
    ],
    write: [
        write::Register,
        write::SetUri,
        write::GiveFeedback,
        write::RequestValidation,
        write::RespondValidation,
    ],
}
