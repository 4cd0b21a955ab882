#!/usr/bin/env bash
# The long fuzzing campaign: every fuzz target of build-asan (preset asan) for RUNS executions
# (default 10 million) or FUZZ_MAX_SECONDS seconds (default 0: no limit), whichever comes first, at most
# JOBS targets at a time (default 2), each single-process (-jobs=1 is libFuzzer's default) at the lowest
# priority (nice -n 19: the machine stays usable). Logs go to build-asan/fuzz/long/<target>.log; a crash
# leaves its input as build-asan/fuzz/long/<target>-{crash,timeout,oom,leak}-* (commit it to
# fuzz/regressions/<target>/ with the fix). Prints one line per target: executions, seconds, executions per
# second, crashes.
# Usage: [FUZZ_MAX_SECONDS=1500] scripts/fuzz-long.sh [RUNS] [JOBS] [TARGET...]
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
  local t0=$SECONDS regressions=()
  [ -d fuzz/regressions/"$t" ] && regressions=(fuzz/regressions/"$t")
  set +e
  nice -n 19 build-asan/fuzz/fuzz_"$t" -runs="$RUNS" -max_total_time="${FUZZ_MAX_SECONDS:-0}" \
    -max_len="${len:-65536}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/$t-" \
    build-asan/fuzz/corpus/"$t" "${regressions[@]}" > "$out/$t.log" 2>&1
  local rc=$?
  set -e
  local execs crashes secs=$((SECONDS - t0))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
  crashes=$(ls "$out"/"$t"-* 2>/dev/null | wc -l)
  echo "$t: ${execs:-?} executions in $secs s ($(( ${execs:-0} / (secs > 0 ? secs : 1) )) exec/s), exit $rc," \
       "crash/timeout/oom inputs: $crashes"
}
export -f one
export RUNS out
printf '%s\n' "${targets[@]}" | xargs -P "$JOBS" -I{} bash -c 'one {}'
