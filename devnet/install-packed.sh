#!/usr/bin/env bash
# Installs the published builds npm cannot install as dependencies into devnet/node_modules:
#   - Pendle V2 (@pendle/core-v2): its dependencies name a LayerZero version the registry never
#     had (@layerzerolabs/oft-evm-upgradeable 4.0.2), so npm cannot resolve it;
#   - Across (@across-protocol/contracts): its dependencies pull Solana's SDKs and ethers, none of
#     which the devnet needs;
#   - Uniswap's V3 Staker (@uniswap/v3-staker): it pins @uniswap/v3-core 1.0.0 and OpenZeppelin
#     3.4, beside the devnet's 1.0.1 and 4.9 — a second copy of each for one compiled artifact.
# The devnet deploys their compiled artifacts only. Each tarball comes from the npm registry
# (`npm pack`) and must match the integrity pinned here. Idempotent: quick when installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

install() {
    local name="$1" version="$2" integrity="$3"
    local dest="$here/node_modules/$name"
    local stamp="$dest/.bardo-installed-$version"
    [ -f "$stamp" ] && return 0
    echo "setup: installing $name $version's artifacts into devnet/node_modules"
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack "$name@$version" --silent --loglevel=error >/dev/null)
    local tarball
    tarball="$(ls "$tmp"/*.tgz)"
    local got
    got="sha512-$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tarball")"
    if [ "$got" != "$integrity" ]; then
        echo "setup: $name $version from the registry does not match the pinned integrity ($got)" >&2
        rm -rf "$tmp"
        exit 1
    fi
    rm -rf "$dest"
    mkdir -p "$dest"
    tar xzf "$tarball" --strip-components=1 -C "$dest"
    rm -rf "$tmp"
    touch "$stamp"
}

install @pendle/core-v2 6.11.0 "sha512-Q7h2KaYzYl8kZKNPe5qWKHYtdToVEL9FqCH0/5ab9/H34JBdutQoqo8hcggfaPYlziOOQ79dgbWfvyzMDJNQCw=="
install @across-protocol/contracts 5.0.27 "sha512-zp6BEBTDzRGEp7sNvvdRH4jBF2EuTI4RqFWVvhfkO28630Ow2hbCYeYiyTOjEOzAdqt+dn/sba9D9WirfwabWQ=="
install @uniswap/v3-staker 1.0.2 "sha512-+swIh/yhY9GQGyQxT4Gz54aXYLK+uc3qsmIvaAX+FjvhcL9TGOvS9tXbQsCZM4AJW63vj6TLsmHIjGMIePL1BQ=="
