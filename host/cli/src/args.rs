//! The command line: `bardo`'s subcommands and their arguments, as clap reads them.

use crate::{archetypes_cli, devnet_cli, fleet_cli, identity_cli, plugin_cli, policy_cli, tools_cli};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "bardo",
    version = concat!(env!("CARGO_PKG_VERSION"), env!("BARDO_BUILD_COMMIT")),
    about = "Runs DeFi tool plugins (WebAssembly components) under uniform limits"
)]
pub(crate) struct Cli {
    /// Configuration file.
    #[arg(long, global = true, default_value = "bardo.toml")]
    pub(crate) config: PathBuf,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The tools a command runs with: a profile's, or an archetype's (its profile's, and its
/// delegations).
#[derive(clap::Args)]
pub(crate) struct Scope {
    /// Profile, or a composition such as `trader,vault` (default: the configuration's; for a
    /// permit, the one it was previewed under, and another is refused).
    #[arg(long)]
    pub(crate) profile: Option<String>,
    /// An archetype instead of a profile: its profile's tools, its delegations (see
    /// `bardo archetypes list`).
    #[arg(long, conflicts_with = "profile")]
    pub(crate) archetype: Option<String>,
}

/// One tool run by name (`call`, `plan`).
#[derive(clap::Args)]
pub(crate) struct ToolArgs {
    /// Tool name.
    pub(crate) tool: String,
    /// Params as a JSON object.
    #[arg(long, default_value = "{}")]
    pub(crate) params: String,
    #[command(flatten)]
    pub(crate) scope: Scope,
    /// Print JSON (the default when stdout is not a terminal).
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Subcommand)]
pub(crate) enum AuditLogAction {
    /// Print the records, one line each.
    Show {
        /// The log (default: `[safety] audit_log`).
        file: Option<PathBuf>,
        /// Print the records as stored: one JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Check every record's link to the one before and the checkpoint of the last one (its MAC
    /// too when the host key is present), and that every transaction the log says was sent has
    /// its outcome (the host's own log: resolved from the chain first, as every start does);
    /// exit 1 at a broken link (TAMPERED) or a send left unresolved (UNRESOLVED).
    Verify {
        /// The log (default: `[safety] audit_log`).
        file: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
pub(crate) enum ToolsAction {
    /// One tool: its params (types, required, defaults), action kinds, tier, risk, budget, the
    /// profiles that run it, and a command that calls it.
    Describe {
        /// Tool name (as `bardo tools` lists it).
        tool: String,
        /// Profile, or a composition such as `trader,vault` (default: the configuration's).
        #[arg(long)]
        profile: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// The action and outcome records of writes (from the audit log): executed, partially
    /// executed (each transaction shown), sent (no outcome yet), blocked, deferred, with gas and
    /// P&L in USD and expected against actual outcomes.
    Records {
        /// Only this permit's.
        #[arg(long)]
        permit: Option<String>,
        /// Only `executed`, `partially-executed`, `sent`, `blocked` or `deferred` ones.
        #[arg(long)]
        status: Option<String>,
        /// Print JSON (every field, outcomes included).
        #[arg(long)]
        json: bool,
        /// The log (default: `[safety] audit_log`).
        #[arg(long)]
        file: Option<PathBuf>,
    },
    /// List the tools a profile loads.
    #[command(
        after_help = "Examples:\n  bardo tools --profile trader\n  bardo tools describe uniswap_get_quote\n  bardo tools --profiles"
    )]
    Tools {
        #[command(subcommand)]
        action: Option<ToolsAction>,
        #[command(flatten)]
        scope: Scope,
        /// Print JSON (every ToolDef field).
        #[arg(long)]
        json: bool,
        /// Print the profile table instead: each profile's categories and writes.
        #[arg(long)]
        profiles: bool,
    },
    /// Run a read tool and print its result and what the call cost.
    #[command(
        after_help = "Examples:\n  bardo call uniswap_get_quote --params '{\"chain_id\":31337,\"token_in\":\"USDC\",\"token_out\":\"WETH\",\"amount\":\"1000\"}'\n  bardo call wallet_get_balances --profile active --params '{\"chain_id\":31337}'"
    )]
    Call(ToolArgs),
    /// Ask a write tool for its plan (calls + expected outcome); nothing is signed or sent.
    Plan(ToolArgs),
    /// Preview an action (`swap`, `add-liquidity`, …): plan, safety hooks, simulation → a permit.
    #[command(
        after_help = "Examples:\n  bardo preview swap --profile trader --params '{\"chain_id\":31337,\"token_in\":\"USDC\",\"token_out\":\"WETH\",\"amount\":\"1000\"}' > permit.json\n  bardo commit - < permit.json\n(`bardo tools describe TOOL` lists a tool's params and kinds.)"
    )]
    Preview {
        /// The action kind; it routes to the write tool that declares it.
        kind: String,
        /// Params of that tool, as a JSON object.
        #[arg(long)]
        params: String,
        #[command(flatten)]
        scope: Scope,
        /// Print JSON (the default when stdout is not a terminal).
        #[arg(long)]
        json: bool,
    },
    /// Execute a permit once: re-simulate, sign, broadcast, wait for receipts, verify.
    #[command(
        after_help = "Examples:\n  bardo commit permit-3f1c…   (the id `bardo preview` printed)\n  bardo commit - < permit.json"
    )]
    Commit {
        /// The permit id `bardo preview` printed, or `-`: read from its JSON on stdin
        /// (`bardo commit - < permit.json`).
        permit_id: String,
        #[command(flatten)]
        scope: Scope,
        /// Print JSON (the default when stdout is not a terminal).
        #[arg(long)]
        json: bool,
    },
    /// Cancel an open permit.
    Cancel {
        /// The permit id, or `-`: read from a preview's JSON on stdin.
        permit_id: String,
        /// Profile (default: the one the permit was previewed under; another is refused).
        #[arg(long)]
        profile: Option<String>,
        /// Print JSON (the default when stdout is not a terminal).
        #[arg(long)]
        json: bool,
    },
    /// Confirm, as the operator, an open permit `[safety] confirm` holds for a person: any
    /// commit of it (an agent's over MCP or A2A, `bardo commit`) may then proceed.
    Confirm {
        /// The permit id, or `-`: read from a preview's JSON on stdin (none with `--open`).
        #[arg(required_unless_present = "open")]
        permit_id: Option<String>,
        /// Instead, print a one-time link (2 minutes) to the approval page of the `bardo serve`
        /// at `--url`, and open it in a browser where one is at hand.
        #[arg(long, requires = "url")]
        open: bool,
        /// The `bardo serve` the link is for (`http://127.0.0.1:8765`).
        #[arg(long)]
        url: Option<String>,
        /// Profile (default: the one the permit was previewed under; another is refused).
        #[arg(long, conflicts_with = "open")]
        profile: Option<String>,
        /// Print JSON (the default when stdout is not a terminal).
        #[arg(long)]
        json: bool,
    },
    /// Lift an emergency halt (the agent's `emergency_halt`, kept in `[safety] permits` for every
    /// process): previews and commits work again; revoked permits stay revoked.
    Resume,
    /// The fleet (`[cluster]`).
    Fleet {
        #[command(subcommand)]
        action: fleet_cli::FleetAction,
    },
    /// Write a commented `bardo.toml` here (or at `--config`) for a profile; an existing one is
    /// left as it is. A profile that writes gets an encrypted keystore (Web3 Secret Storage,
    /// scrypt) instead of a plain key in the environment.
    Init {
        /// The profile (`bardo tools --profiles` lists them).
        #[arg(long, default_value = "data")]
        profile: String,
        /// The keystore to create (default for a profile that writes: .bardo/keystore.json).
        #[arg(long)]
        keystore: Option<PathBuf>,
        /// Create no keystore (the wallet comes from BARDO_PRIVATE_KEY or BARDO_KEYSTORE).
        #[arg(long, conflicts_with = "keystore")]
        no_keystore: bool,
        /// Encrypt the hex key in this environment variable (e.g. BARDO_PRIVATE_KEY on a
        /// devnet) instead of a new random key.
        #[arg(long)]
        import_key_env: Option<String>,
        /// The keystore's password, from this file (recorded as `[signer] password_file`);
        /// else $BARDO_KEYSTORE_PASSWORD, else asked twice on a terminal.
        #[arg(long)]
        password_file: Option<PathBuf>,
    },
    /// Print a shell completion script (`bardo completions bash > ~/.local/share/bash-completion/completions/bardo`).
    /// In bash it also completes the configuration's tool names (`call`, `plan`, `stream`,
    /// `tools describe`), action kinds (`preview`) and profiles (`--profile`).
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// The names a shell completes, one per line: the tools and action kinds of the plugins the
    /// configuration loads, or the profiles (what `bardo completions bash` asks for).
    #[command(hide = true)]
    CompleteValues {
        /// `tools`, `kinds` or `profiles`.
        #[arg(value_enum)]
        what: tools_cli::Completed,
    },
    /// The hash-linked audit log.
    AuditLog {
        #[command(subcommand)]
        action: AuditLogAction,
    },
    /// Print a component's capability surface, or what grew between two versions (exit 1 if it grew).
    Audit {
        /// The component.
        file: PathBuf,
        /// A newer version to compare with.
        new: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Beside the surface, the on-chain PolicyCage guarding this Safe: what the chain
        /// enforces on every plan of the component's tools, and what only the host checks.
        #[arg(long)]
        safe: Option<alloy::primitives::Address>,
        /// The Safe's chain.
        #[arg(long, default_value_t = 31337)]
        chain_id: u64,
    },
    /// Re-pin every configured plugin in the lock file to its current sha256.
    Lock,
    /// Subscribe to a stream tool and print its events as JSON lines until Ctrl-C (also
    /// journaled for `bardo events`).
    Stream {
        /// The stream tool, e.g. `stream_pool_events`.
        tool: String,
        /// Params as a JSON object.
        #[arg(long, default_value = "{}")]
        params: String,
        #[command(flatten)]
        scope: Scope,
    },
    /// Print the journaled events from `--resume-from N` on (none: only new ones) and follow
    /// them until Ctrl-C; with `--no-follow` alone, all the journal holds.
    Events {
        /// First sequence number to print.
        #[arg(long)]
        resume_from: Option<u64>,
        /// Print what the journal holds and exit.
        #[arg(long)]
        no_follow: bool,
    },
    /// The terminal dashboard: pools, positions, prices, tool activity, permits (`c` commits
    /// after a y/n, `x` cancels), events and alerts. Live on the subscriptions `[tui] follow`
    /// names, else following the events journal (`?` lists the keys, `q` quits).
    Tui {
        #[command(flatten)]
        scope: Scope,
        /// Replay the journal from this sequence number first (none: only new events).
        #[arg(long)]
        resume_from: Option<u64>,
    },
    /// Serve tool calls, one JSON request per stdin line (`{"id":1,"profile":"data","tool":"…",
    /// "params":{…}}`), one JSON answer per stdout line; reloads plugins when bardo.toml or
    /// bardo.lock changes, calls in flight finishing on the old version.
    Run {
        /// Profiles to serve (repeatable; default: the configuration's); a request picks one.
        #[arg(long)]
        profile: Vec<String>,
        /// An archetype instead of a profile: its profile's tools, its delegations (see
        /// `bardo archetypes list`).
        #[arg(long, conflicts_with = "profile")]
        archetype: Option<String>,
        /// How often to check the configuration and lock for changes, milliseconds.
        #[arg(long, default_value_t = 250)]
        watch_ms: u64,
    },
    /// Serve the profile to MCP clients: stdio by default, streamable HTTP with `--http`. Clients
    /// see the agent-facing tools (preview/commit through the safety chain), stream tools as
    /// resources, and `tools/list_changed` when bardo.toml or bardo.lock changes.
    Mcp {
        #[command(flatten)]
        scope: Scope,
        /// Serve streamable HTTP at `http://ADDR/mcp` instead of stdio. Clients need a bearer
        /// token: on loopback the host's own (`.bardo/http.token`, made on first start), off
        /// loopback one of `[mcp] tokens_env` or `token_file`.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Serve `--http` on loopback without a token: only for profiles without write tools, and
        /// then only the tools that change nothing (no halt, no directive changes).
        #[arg(long, requires = "http")]
        no_auth: bool,
        /// `concrete`: list the profile's read tools too (write tools are only ever reached
        /// through preview_action/commit_action).
        #[arg(long, value_enum, default_value_t = Expose::Agent)]
        expose: Expose,
        /// How often to check bardo.toml and bardo.lock for changes, milliseconds (0: never).
        #[arg(long, default_value_t = 250)]
        watch_ms: u64,
    },
    /// Serve the profile over HTTP to external agents: A2A (JSON-RPC at `/a2a`, the agent card at
    /// `/.well-known/agent-card.json` and `/.well-known/agent.json`) and MCP (`/mcp`) on one
    /// listener. Without `--a2a` or `--mcp`, both.
    Serve {
        #[command(flatten)]
        scope: Scope,
        /// The address to listen on. Clients need a bearer token: on loopback the host's own
        /// (`.bardo/http.token`, made on first start), off loopback one of `[mcp] tokens_env` or
        /// `token_file`.
        #[arg(long, value_name = "ADDR")]
        listen: std::net::SocketAddr,
        /// Serve loopback without a token: only for profiles without write tools, and then only
        /// the tools that change nothing (no halt, no directive changes).
        #[arg(long)]
        no_auth: bool,
        /// Serve A2A.
        #[arg(long)]
        a2a: bool,
        /// Serve MCP's streamable HTTP.
        #[arg(long)]
        mcp: bool,
        /// `concrete`: MCP lists the profile's read tools too.
        #[arg(long, value_enum, default_value_t = Expose::Agent)]
        expose: Expose,
        /// How often to check bardo.toml and bardo.lock for changes, milliseconds (0: never).
        #[arg(long, default_value_t = 250)]
        watch_ms: u64,
    },
    /// Publish, pull, approve and list plugin components in OCI registries.
    Plugin {
        #[command(subcommand)]
        action: plugin_cli::PluginAction,
    },
    /// This host's ERC-8004 identity: register it with a registration file naming its A2A card.
    Identity {
        #[command(subcommand)]
        action: identity_cli::IdentityAction,
    },
    /// The on-chain PolicyCage guarding the Safe: its rules (`show`), a change for the owners
    /// to sign (`propose`; executed only with the operator's own key).
    Policy {
        #[command(subcommand)]
        action: policy_cli::PolicyAction,
    },
    /// The local devnet (anvil from the pinned npm package).
    Devnet {
        #[command(subcommand)]
        action: devnet_cli::DevnetAction,
    },
    /// The archetypes and their delegation graph: check, list, the built-in defaults.
    Archetypes {
        #[command(subcommand)]
        action: archetypes_cli::ArchetypesAction,
    },
}

/// Which tools `bardo mcp` lists.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum Expose {
    /// The agent-facing tools.
    Agent,
    /// The agent-facing tools and the profile's concrete read tools.
    Concrete,
}
