'use strict';
// Bardo's Uniswap sidecar: Uniswap's own TypeScript SDKs, answering the host over JSON-RPC 2.0 on
// a Unix socket (one JSON message per line). The host starts it (`node server.cjs <socket>`),
// waits for the `listening` line on stdout, says `hello`, pings it, and restarts it when it dies
// or hangs. Nothing here touches a chain or a key: every input is state the host read itself.
//
// CommonJS on purpose: the SDKs' ESM builds import directories, which Node's ESM loader refuses.

const fs = require('fs');
const net = require('net');
const path = require('path');
const { codes, RpcError, invalid } = require('./lib/params.cjs');
const math = require('./lib/math.cjs');
const { route } = require('./lib/route.cjs');
const { morpho_position } = require('./lib/morpho.cjs');

/** The protocol the host and this program agree on at `hello`; bumped on any breaking change. */
const PROTOCOL = 1;
const PACKAGES = [
  '@uniswap/sdk-core', '@uniswap/v2-sdk', '@uniswap/v3-sdk', '@uniswap/v4-sdk', '@uniswap/router-sdk',
  '@uniswap/universal-router-sdk', '@uniswap/permit2-sdk', '@morpho-org/blue-sdk',
];
const { PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, SDK_ERROR, NO_HELLO } = codes;

const methods = { ping: () => ({}), ...math, route, morpho_position };

function versions() {
  const out = {};
  for (const name of PACKAGES) {
    // Read from the tree: the packages' `exports` do not list their package.json.
    out[name] = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', name, 'package.json'), 'utf8')).version;
  }
  return out;
}

/** The answer to one request line, or null for a notification. */
async function answer(line, session) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (e) {
    return { jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: `not JSON: ${e.message}` } };
  }
  const id = request && (typeof request.id === 'number' || typeof request.id === 'string') ? request.id : null;
  const reply = (body) => (request && request.id === undefined ? null : { jsonrpc: '2.0', id, ...body });
  try {
    if (!request || request.jsonrpc !== '2.0' || typeof request.method !== 'string') {
      throw new RpcError(INVALID_REQUEST, 'a JSON-RPC 2.0 request needs `jsonrpc: "2.0"` and a `method`');
    }
    const params = request.params === undefined ? {} : request.params;
    if (typeof params !== 'object' || params === null || Array.isArray(params)) {
      throw invalid('`params` must be an object');
    }
    if (request.method === 'hello') {
      if (params.protocol !== PROTOCOL) {
        throw invalid(`this sidecar speaks protocol ${PROTOCOL}, the host asked for ${params.protocol}`);
      }
      const result = { protocol: PROTOCOL, node: process.version, packages: versions() };
      session.greeted = true;
      return reply({ result });
    }
    if (!session.greeted) throw new RpcError(NO_HELLO, 'say `hello` with the protocol version first');
    const method = Object.prototype.hasOwnProperty.call(methods, request.method) && methods[request.method];
    if (!method) throw new RpcError(METHOD_NOT_FOUND, `no method \`${request.method}\``);
    return reply({ result: await method(params) });
  } catch (e) {
    // The SDK's own checks (invariants, overflows) are its answer about these inputs.
    const code = e instanceof RpcError ? e.code : SDK_ERROR;
    const error = { code, message: e.message || String(e) };
    if (e instanceof RpcError && e.data !== undefined) error.data = e.data;
    return reply({ error });
  }
}

function serve(socketPath) {
  // Created 0600: only the host's user may talk to it.
  process.umask(0o177);
  try {
    fs.unlinkSync(socketPath);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  const server = net.createServer((conn) => {
    const session = { greeted: false };
    let buffered = '';
    let queue = Promise.resolve();
    conn.setEncoding('utf8');
    conn.on('data', (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() === '') continue;
        // Answered one at a time, in the order asked.
        queue = queue.then(() => answer(line, session)).then((reply) => {
          if (reply) conn.write(JSON.stringify(reply) + '\n');
        });
      }
      if (buffered.length > 1 << 20) {
        conn.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'line over 1 MiB' } }) + '\n');
      }
    });
    conn.on('error', () => {});
  });
  server.listen(socketPath, () => {
    process.stdout.write(JSON.stringify({ listening: socketPath, protocol: PROTOCOL }) + '\n');
  });
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The host owns this process: when it goes (its end of stdin closes), so do we.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

const socketPath = process.argv[2];
if (!socketPath) {
  process.stderr.write(`usage: node ${path.basename(__filename)} <socket path>\n`);
  process.exit(2);
}
serve(socketPath);
