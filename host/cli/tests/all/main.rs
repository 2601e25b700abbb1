//! Integration tests of the `bardo` command and its front ends (MCP, A2A, the dashboard), with
//! the official MCP and A2A clients, tmux, a real OCI registry and real NATS; and the devnet.

mod a2a;
mod approval_page;
mod cli;
mod cli_audit;
mod cli_errors;
mod cluster;
mod devnet;
mod devnet_cli;
mod docs;
mod erc8004;
mod first_hour;
mod interrupt;
mod keystore;
mod mcp;
mod mcp_confirm;
mod mcp_edges;
mod memory;
mod registry;
mod safe;
mod scaffold;
mod secrets;
mod tui;
mod two_chains;

pub use bardo_test_support::{engine, host, host_runtime, host_with, no_services};

/// A port nothing listens on now (the system's pick, let go at once for a child to bind).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port()
}
