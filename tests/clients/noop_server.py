"""A minimal MCP server doing no work (the official Python SDK's MCPServer, once FastMCP), over
stdio: the baseline `host/cli/benches/mcp.rs` measures `bardo mcp` against."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("noop")


@server.tool()
def bench_summarize(orders: list[dict]) -> dict:
    """Count the orders."""
    return {"count": len(orders)}


server.run()
