#!/usr/bin/env bash
# Installs what building and testing need. Idempotent; quick when everything is there.
set -euo pipefail

if ! rustup target list --installed | grep -qx wasm32-wasip2; then
    echo "setup: installing the wasm32-wasip2 Rust target"
    rustup target add wasm32-wasip2
fi
