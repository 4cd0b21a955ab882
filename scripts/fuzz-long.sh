#!/usr/bin/env bash
# The long fuzzing campaign: every fuzz target of build-asan (preset asan) for RUNS executions
# (default 10 million), at most JOBS targets at a time (default 2), each single-process (-jobs=1 is
# libFuzzer's default). Logs go to build-asan/fuzz/long/<target>.log; a crash leaves its input as
# build-asan/fuzz/long/crash-<target>-*. Prints one line per target: executions, seconds, crashes.
# Usage: scripts/fuzz-long.sh [RUNS] [JOBS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-10000000}"
JOBS="${2:-2}"
shift $(( $# > 2 ? 2 : $# ))
out=build-asan/fuzz/long
mkdir -p "$out"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in build-asan/fuzz/fuzz_*; do [ -x "$f" ] && targets+=("$(basename "$f" | sed 's/^fuzz_//')"); done
fi
one() {
  local t="$1" len
  len=$(ctest --test-dir build-asan -N -V -R "^fuzz\.$t\$" | sed -n 's/.*-max_len=\([0-9]*\).*/\1/p' | head -1)
  local t0=$SECONDS
  set +e
  build-asan/fuzz/fuzz_"$t" -runs="$RUNS" -max_len="${len:-65536}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/crash-$t-" build-asan/fuzz/corpus/"$t" fuzz/regressions/"$t" \
    > "$out/$t.log" 2>&1
  local rc=$?
  set -e
  local execs crashes
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
  crashes=$(ls "$out"/crash-"$t"-* 2>/dev/null | wc -l)
  echo "$t: ${execs:-?} executions in $((SECONDS - t0)) s, exit $rc, crash inputs: $crashes"
}
export -f one
export RUNS out
printf '%s\n' "${targets[@]}" | xargs -P "$JOBS" -I{} bash -c 'one {}'
