// Compiles the devnet's own contracts (contracts/*.sol) with the pinned solc-js, resolving
// imports from node_modules, and writes one artifact per contract ({"contractName", "abi",
// "bytecode"}, hardhat's shape) into node_modules/.bardo-build/. Run by the devnet deployer.
// Usage: node compile.js Name.sol [...]
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const here = __dirname;
const out = path.join(here, "node_modules", ".bardo-build");
const sources = {};
for (const file of process.argv.slice(2)) {
  sources[file] = { content: fs.readFileSync(path.join(here, "contracts", file), "utf8") };
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
const findImports = (name) => {
  try {
    return { contents: fs.readFileSync(path.join(here, "node_modules", name), "utf8") };
  } catch (e) {
    return { error: `${name}: ${e.message}` };
  }
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
