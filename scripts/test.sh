#!/usr/bin/env bash
# `make test`: the whole suite, as CI runs it.
#  1. The test build, linted as it is built (clippy-driver as the workspace's rustc, `-D warnings`),
#     while the packages the tests run (npm, Python clients, NATS, the model) install beside it:
#     the build needs none of them.
#  2. Every test binary, TEST_JOBS at a time (default 2), longest first: most of the suite waits on
#     anvil, NATS and client processes, so one binary alone leaves a core idle. Each binary runs as
#     `cargo test` runs it (from its package's directory); its output is printed whole when it
#     ends, and a failure names the binary and the command that reruns it (each failed binary's
#     panics are printed again at the very end, where CI's shortened log shows them). Then the
#     doc tests and `cargo package -p bardo-sdk`.
#  3. The short fuzzing pass: every target 30 s, coverage-guided, two at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO="${CARGO:-cargo}"
jobs="${TEST_JOBS:-2}"
# The lints of `make lint`, in the build itself (so no separate check build of every dependency);
# tests/artifacts' nested guest build inherits them.
RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS

scripts/setup.sh build
"$CARGO" fmt --all --check
out=target/test-run
rm -rf "$out" && mkdir -p "$out/logs"
scripts/setup.sh packages >"$out/setup.log" 2>&1 &
setup=$!
built=0
# Bench binaries are not built here (each links the whole host; `make lint` checks them and
# `make bench` builds them).
"$CARGO" test --locked --lib --bins --tests --examples --no-run --message-format=json-render-diagnostics \
  >"$out/artifacts.json" || built=$?
installed=0
wait "$setup" || installed=$?
cat "$out/setup.log"
[ "$installed" -eq 0 ] || { echo "test: setup failed (its output is above)" >&2; exit "$installed"; }
[ "$built" -eq 0 ] || exit "$built"

# Each test executable, with its package's directory and a name, longest first: the integration
# tests of the packages in `long`, in its order (measured on a clean clone: the CLI's end-to-end
# sessions ~2 min, the fleet's fault injection ~1.5 min, the runtime's ~35 s), then the other
# integration tests, then the unit tests (a second or less each).
long='["bardo-cli", "bardo-safety", "bardo-runtime"]'
jq -r --argjson long "$long" 'select(.reason == "compiler-artifact" and .profile.test and .executable != null)
       | (.package_id | if test("#[^@]+@") then capture("#(?<p>[^@]+)@").p else split("#")[0] | split("/")[-1] end) as $pkg
       | [(if .target.kind != ["test"] then 200 else ($long | index($pkg)) // 100 end), .executable,
          (.manifest_path | sub("/Cargo.toml$"; "")), $pkg, "\(.target.kind | join(",")) \(.target.name)"] | @tsv' \
  "$out/artifacts.json" |
  sort -s -t$'\t' -k1,1n | cut -f2- >"$out/binaries.tsv"

run_binary() {
  local exe="$1" dir="$2" pkg="$3" what="$4"
  local log="$out/logs/$(basename "$exe").log" status=0 start=$SECONDS
  # Bounded: a binary that hangs fails here with its name and log (libtest names each test
  # running over 60 s) instead of holding CI to its limit; the longest takes ~4 min.
  (cd "$dir" && CARGO_MANIFEST_DIR="$dir" CARGO_PKG_NAME="$pkg" timeout 1200 "$exe") >"$log" 2>&1 || status=$?
  {
    flock 9
    echo "     Running $what of $pkg ($exe), $((SECONDS - start)) s"
    cat "$log"
    if [ "$status" -ne 0 ]; then
      echo "test: FAILED: $what of $pkg (exit $status); rerun it alone: (cd $dir && $exe)"
      echo "$pkg $what" >>"$out/failed"
      echo "$log" >>"$out/failed-logs"
    fi
  } 9>"$out/print.lock"
}
export -f run_binary
export out
echo "test: $(wc -l <"$out/binaries.tsv") test binaries, $jobs at a time"
tr '\t' '\n' <"$out/binaries.tsv" | xargs -d '\n' -n 4 -P "$jobs" bash -c 'run_binary "$@"' _
"$CARGO" test --locked --doc || echo "doc tests (exit $?)" >>"$out/failed"
# The SDK packages alone (its WIT and tick math inside), as a plugin author outside this
# repository would take it from a registry; the package is built to verify it (~1 min cold).
"$CARGO" package --locked --allow-dirty -p bardo-sdk --quiet || echo "cargo package -p bardo-sdk (exit $?)" >>"$out/failed"
if [ -s "$out/failed" ]; then
  # Why each failed binary failed, last, where a reader of a long log's tail sees it: libtest's
  # `failures:` section (each failed test's panic and output), at most 150 lines a binary — its
  # first 50 and last 100, since a panic's message ends with what went wrong. (awk reads it all:
  # `head` would end the pipe early, and pipefail turn that SIGPIPE into the script's status.)
  while read -r log; do
    echo "test: the failures in $log:" >&2
    sed -n '/^failures:$/,/^test result:/p' "$log" | awk '
      { line[NR] = $0 }
      END {
        for (i = 1; i <= NR; i++) {
          if (NR > 150 && i == 51) { printf "[… %d lines …]\n", NR - 150; i = NR - 100; continue }
          print line[i]
        }
      }' >&2
  done < <(cat "$out/failed-logs" 2>/dev/null)
  echo "test: $(wc -l <"$out/failed") failed:" >&2
  cat "$out/failed" >&2
  exit 1
fi

env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS FUZZ_SECONDS=30 FUZZ_JOBS=2 scripts/fuzz.sh
