#!/usr/bin/env bash
# Installs Pendle V2's published build (@pendle/core-v2 6.11.0: compiled artifacts and sources)
# into node_modules/@pendle/core-v2. Not through package.json: the package's dependencies name
# a LayerZero version the registry never had (@layerzerolabs/oft-evm-upgradeable 4.0.2), so npm
# cannot resolve it; the devnet needs none of them (it deploys the artifacts). The tarball comes
# from the npm registry (`npm pack`) and must match the integrity pinned here. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version=6.11.0
integrity="sha512-Q7h2KaYzYl8kZKNPe5qWKHYtdToVEL9FqCH0/5ab9/H34JBdutQoqo8hcggfaPYlziOOQ79dgbWfvyzMDJNQCw=="
dest="$here/node_modules/@pendle/core-v2"
stamp="$dest/.bardo-installed-$version"
[ -f "$stamp" ] && exit 0
echo "setup: installing Pendle V2's artifacts (@pendle/core-v2 $version) into devnet/node_modules"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "@pendle/core-v2@$version" --silent --loglevel=error >/dev/null)
tarball="$tmp/pendle-core-v2-$version.tgz"
got="sha512-$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tarball")"
if [ "$got" != "$integrity" ]; then
    echo "setup: @pendle/core-v2 $version from the registry does not match the pinned integrity ($got)" >&2
    exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"
tar xzf "$tarball" --strip-components=1 -C "$dest"
touch "$stamp"
