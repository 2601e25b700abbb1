// Drive `bardo mcp` over stdio with the official MCP TypeScript SDK (a second ecosystem):
//   node mcp_client.mjs --tool NAME --args JSON -- <server command...>
// Prints one JSON object: the server's name, the tools listed, and the call's outcome.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const opts = argv.slice(0, split);
const [command, ...args] = argv.slice(split + 1);
const opt = (name, fallback) => {
  const i = opts.indexOf(name);
  return i >= 0 ? opts[i + 1] : fallback;
};

const client = new Client({ name: "bardo-test-ts", version: "0.1.0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
const tools = await client.listTools();
const result = await client.callTool({ name: opt("--tool"), arguments: JSON.parse(opt("--args", "{}")) });
const text = (result.content ?? []).find((c) => c.type === "text")?.text ?? null;
console.log(
  JSON.stringify({
    server: client.getServerVersion()?.name ?? null,
    protocol: client.getNegotiatedProtocolVersion?.() ?? null,
    tools: tools.tools.map((t) => t.name),
    call: { isError: Boolean(result.isError), text },
  }),
);
await client.close();
