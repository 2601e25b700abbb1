"""Time `tools/call` from the official MCP Python SDK over stdio, for `host/cli/benches/mcp.rs`.

    mcp_bench.py TOOL ARGS_JSON -- <server command...>

Starts the server, makes one call (printing "ready" when it succeeded), then for each line N
on stdin makes N calls one after another and prints the nanoseconds they took.
"""

import json
import sys
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main():
    tool, args = sys.argv[1], json.loads(sys.argv[2])
    server = sys.argv[sys.argv.index("--") + 1 :]
    async with Client(StdioServerParameters(command=server[0], args=server[1:])) as c:
        first = await c.call_tool(tool, args)
        if first.is_error:
            raise SystemExit(f"the first call failed: {first}")
        print("ready", flush=True)
        stdin = anyio.wrap_file(sys.stdin)
        async for line in stdin:
            n = int(line)
            start = time.perf_counter_ns()
            for _ in range(n):
                await c.call_tool(tool, args)
            print(time.perf_counter_ns() - start, flush=True)


anyio.run(main)
