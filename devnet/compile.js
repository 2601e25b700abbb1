// Compiles the devnet's own contracts (contracts/*.sol) — or a published package's sources
// (@scope/package/...sol, from node_modules) — with a pinned solc-js, resolving imports from
// node_modules, and writes one artifact per contract ({"contractName", "abi", "bytecode"},
// hardhat's shape) into node_modules/.bardo-build/. Run by the devnet deployer.
// Usage: node compile.js [--solc PACKAGE] [--via-ir] [--evm VERSION] [--runs N] Name.sol|@scope/package/path.sol [...]
//   --solc: the solc-js package to compile with (default `solc`; `solc-0.8.19` for sources
//   pinned to that version, as Morpho Blue's are); --via-ir: the IR pipeline, as a package's own
//   build configures it; --evm: the EVM version (`cancun` for transient storage); --runs: the
//   optimizer's expected runs (200 unless given; high for code every transaction runs).
const fs = require("fs");
const path = require("path");

const here = __dirname;
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args.splice(i, name === "--via-ir" ? 1 : 2)[1] ?? true;
};
const solc = require(option("--solc") || "solc");
const viaIR = option("--via-ir") !== undefined;
const evmVersion = option("--evm");
const runs = Number(option("--runs") ?? 200);
const out = path.join(here, "node_modules", ".bardo-build");
const sources = {};
for (const file of args) {
  const from = file.startsWith("@") ? path.join(here, "node_modules", file) : path.join(here, "contracts", file);
  sources[file] = { content: fs.readFileSync(from, "utf8") };
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs },
    viaIR,
    ...(evmVersion ? { evmVersion } : {}),
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
// A package's import from node_modules; a relative import of a source kept under contracts/
// (Pendle's SY, pendle-sy/) from there.
const findImports = (name) => {
  for (const dir of name.startsWith("@") ? ["node_modules"] : ["contracts", "node_modules"]) {
    try {
      return { contents: fs.readFileSync(path.join(here, dir, name), "utf8") };
    } catch (e) {}
  }
  return { error: `${name}: not in node_modules or contracts` };
};
const result = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errors = (result.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
fs.mkdirSync(out, { recursive: true });
for (const file of Object.keys(sources)) {
  for (const [name, c] of Object.entries(result.contracts[file] || {})) {
    const artifact = { contractName: name, abi: c.abi, bytecode: "0x" + c.evm.bytecode.object };
    fs.writeFileSync(path.join(out, `${name}.json`), JSON.stringify(artifact));
    console.log(`compiled ${name} (${c.evm.bytecode.object.length / 2} bytes) with solc ${solc.version()}`);
  }
}
