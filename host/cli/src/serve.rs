//! `bardo serve`: A2A and MCP's streamable HTTP on one listener, over one write path.

use anyhow::Result;
use bardo_core::Runtime;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// Which protocols to serve.
pub(crate) struct Protocols {
    pub a2a: bool,
    pub mcp: bool,
}

/// Where and to whom: the listener, how callers are admitted, the protocols.
pub(crate) struct Door {
    pub listen: std::net::SocketAddr,
    pub auth: bardo_mcp::http::Auth,
    pub protocols: Protocols,
}

/// Serve until Ctrl-C.
pub(crate) fn run(
    config_path: &Path,
    profile: Option<&str>,
    door: Door,
    exposure: bardo_mcp::Exposure,
    watch_ms: u64,
    rt: &Runtime,
) -> Result<ExitCode> {
    let Door { listen, auth, protocols } = door;
    let config = crate::load_config(config_path, config_path != Path::new("bardo.toml"))?;
    // Refuse an unsafe setup before opening anything.
    let access = bardo_mcp::http::Access::from_config(&config, listen, auth)?;
    let watch = (watch_ms > 0).then(|| std::time::Duration::from_millis(watch_ms.max(10)));
    // One profile, one write path: MCP and A2A call through the same adapter, and one fabric
    // carries the write path's steps and A2A's task events to the journal (for `bardo tui`).
    let (fabric, journaling) =
        crate::journaling::journaled_fabric(&config, crate::fleet_chain(&config)?, rt)?;
    let served = bardo_mcp::open(config_path, profile, exposure, watch, Some(fabric.clone()), rt)?;
    if auth == bardo_mcp::http::Auth::None {
        served.reads_only()?;
    }
    let identity = config.optional::<bardo_a2a::IdentityConfig>()?;
    if let (true, Some(identity)) = (protocols.a2a, &identity) {
        claim(identity, &served.adapter().host(), &access, listen)?;
    }
    let server = bardo_mcp::session_runtime()?;
    server.block_on(async {
        let mut router = axum::Router::new();
        // The approval page, on every `bardo serve` with tokens: the operator's alone.
        if auth == bardo_mcp::http::Auth::Token {
            let safety: bardo_safety::SafetyConfig = config.section()?;
            let key = bardo_safety::host_key::HostKey::load_or_create(&config.resolve(&safety.host_key))
                .map_err(anyhow::Error::msg)?;
            let source = served.clone();
            let path: crate::approval_page::PathSource = Arc::new(move || source.adapter().write_path().clone());
            router = router.merge(crate::approval_page::router(path, key, access.clone()));
        }
        if protocols.mcp {
            router = router.merge(bardo_mcp::http::router(served.clone(), access.clone()));
        }
        if protocols.a2a {
            let source = served.clone();
            let adapter: bardo_a2a::AdapterSource = Arc::new(move || source.adapter());
            let a2a = bardo_a2a::A2a::open(
                &config.resolve(&config.section::<bardo_agent::AgentConfig>()?.a2a_tasks),
                fabric.clone(),
                adapter,
                served.profile(),
                (access.requires_token(), card_hosts(&access, listen)),
                identity,
            )?;
            let (card, endpoint) = a2a.routers();
            router = router.merge(card).merge(bardo_mcp::http::guard(endpoint, access.clone()));
        }
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
        let bound = listener.local_addr()?;
        if protocols.a2a {
            eprintln!(
                "bardo serve: A2A at http://{bound}{} (card: http://{bound}/.well-known/agent-card.json)",
                bardo_a2a::PATH
            );
        }
        if protocols.mcp {
            eprintln!("bardo serve: MCP at http://{bound}{}", bardo_mcp::http::PATH);
        }
        if auth == bardo_mcp::http::Auth::Token {
            eprintln!(
                "bardo serve: the approval page at http://{bound}/operator (open it with `bardo confirm --open --url http://{bound}`)"
            );
        }
        eprintln!("bardo serve: {}", access.how_to_connect());
        axum::serve(bardo_mcp::http::no_delay(listener), router)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok::<_, anyhow::Error>(())
    })?;
    journaling.finish(rt, &fabric);
    Ok(ExitCode::SUCCESS)
}

/// The hosts the public agent card may name: those the door admits, else the listen address
/// (loopback for an unspecified one).
fn card_hosts(access: &bardo_mcp::http::Access, listen: std::net::SocketAddr) -> bardo_a2a::CardHosts {
    let access = access.clone();
    let fallback = if listen.ip().is_unspecified() {
        std::net::SocketAddr::from(([127, 0, 0, 1], listen.port())).to_string()
    } else {
        listen.to_string()
    };
    bardo_a2a::CardHosts { admits: Arc::new(move |host| access.admits_host(host)), fallback }
}

alloy::sol! {
    function tokenURI(uint256 tokenId) external view returns (string);
}

/// Refuse to start a card that names `identity` unless the identity's on-chain registration names
/// this host's card: a card is no evidence of an identity by itself — anyone can configure one.
fn claim(
    identity: &bardo_a2a::IdentityConfig,
    host: &bardo_runtime::plugin::Host,
    access: &bardo_mcp::http::Access,
    listen: std::net::SocketAddr,
) -> Result<()> {
    use alloy::sol_types::SolCall;
    let (chain, registry) = identity.registry().map_err(anyhow::Error::msg)?;
    let registry: alloy::primitives::Address =
        registry.parse().map_err(|e| anyhow::anyhow!("[identity] agent_registry's address: {e}"))?;
    let chains = &host.services().evm.chains;
    let client = chains.get(chain).map_err(|e| anyhow::anyhow!("[identity] is on chain {chain}: {e}"))?;
    let call = tokenURICall { tokenId: alloy::primitives::U256::from(identity.agent_id) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let raw = chains
        .block_on(client.call(
            registry,
            call.abi_encode().into(),
            alloy::primitives::U256::ZERO,
            None,
            deadline,
        ))
        .map_err(|e| {
            anyhow::anyhow!("[identity]: reading agent {}'s agentURI from {registry}: {e}", identity.agent_id)
        })?;
    let uri = tokenURICall::abi_decode_returns(&raw).map_err(|e| anyhow::anyhow!("tokenURI: {e}"))?;
    identity.check_registration(&uri, &|h| access.admits_host(h), listen.port()).map_err(anyhow::Error::msg)
}
