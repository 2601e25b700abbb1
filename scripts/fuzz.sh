#!/usr/bin/env bash
# `make fuzz`: build the libFuzzer harnesses (fuzz/src/bin, the workspace's crates instrumented
# by scripts/fuzz-rustc) and run each target for FUZZ_SECONDS, FUZZ_JOBS at a time, from the
# kept corpus (fuzz/corpus/<target>, read only) into target/fuzz/corpus/<target>, crashes into
# target/fuzz/crashes/<target>/. Prints executions per second, edges covered and crashes per
# target, appends them to target/fuzz/runs.tsv (the campaign's log), and fails if any target
# crashed: turn each crash into a corpus file with its fix (see README, "Fuzzing").
#   scripts/fuzz.sh [target ...]     (all targets by default)
#   FUZZ_SECONDS=3600 FUZZ_JOBS=2 scripts/fuzz.sh recipients
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
jobs="${FUZZ_JOBS:-1}"
all=(calldata recipients plan params mcp a2a audit_log permit_journal fleet_seal component)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

echo "fuzz: building the harnesses (the workspace crates instrumented; dependencies as built for make test, where their features agree)" >&2
RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/fuzz-rustc" cargo build --locked -p bardo-fuzz --features libfuzzer --bins

out=target/fuzz
mkdir -p "$out"
run_one() {
  local t="$1"
  local work="$out/corpus/$t" crashes="$out/crashes/$t" log="$out/logs/$t.log"
  mkdir -p "$work" "$crashes" "$out/logs" "fuzz/corpus/$t"
  local max_len=4096
  [ "$t" = component ] && max_len=65536
  local status=0
  target/debug/"$t" "$work" "fuzz/corpus/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
    -max_len="$max_len" -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  local execs rate cov
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  local found
  found=$(find "$crashes" -type f | wc -l)
  printf '%s\t%s\t%ss\t%s execs\t%s exec/s\t%s edges\t%s crashes\texit %s\n' \
    "$(date -u +%FT%TZ)" "$t" "$seconds" "${execs:-0}" "${rate:-0}" "${cov:-?}" "$found" "$status" | tee -a "$out/runs.tsv"
  [ "$status" -eq 0 ] && [ "$found" -eq 0 ]
}
export -f run_one
export out seconds
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}' || {
  echo "fuzz: a target crashed or failed; the inputs are in $out/crashes/, the logs in $out/logs/" >&2
  exit 1
}
