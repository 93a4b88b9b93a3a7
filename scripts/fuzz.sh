#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with ASan + UBSan) and runs each for SECONDS (default 60) from its
# committed seeds (fuzz/corpus/TARGET/). docs/fuzzing.md says what each target feeds and checks.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 5, scripts/fuzz.sh 600 hostlist
#
# One line per target: executions, corpus size. A crash, a hang (-timeout), a leak or a failed check stops with
# the target, the input libFuzzer saved and the command that replays it; exit 1. New inputs go to a scratch
# corpus under the output directory, never into fuzz/corpus/ (add an input there by hand when it is worth keeping).
# Environment: HPCLAUNCH_FUZZ_BUILD_DIR (default build-fuzz), HPCLAUNCH_FUZZ_OUT (default BUILD/fuzz-runs),
# HPCLAUNCH_FUZZ_RUNS=N (stop a target after N executions past its committed inputs, or SECONDS, whichever comes
# first),
# HPCLAUNCH_FUZZ_BUILD_ONLY=1 (build the targets and stop: t0065's prepare step),
# HPCLAUNCH_FUZZ_MERGE=1 (after a clean run, add to fuzz/corpus/TARGET/ the new inputs that reach coverage the
# committed ones do not: libFuzzer's -merge=1, so the committed corpus stays minimal).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
case $seconds in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;; esac
build=${HPCLAUNCH_FUZZ_BUILD_DIR:-$root/build-fuzz}
out=${HPCLAUNCH_FUZZ_OUT:-$build/fuzz-runs}

targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$root"/fuzz/*.cc; do targets+=("$(basename "$f" .cc)"); done
fi
for t in "${targets[@]}"; do
  [ -f "$root/fuzz/$t.cc" ] || { echo "fuzz.sh: no target '$t' (fuzz/$t.cc)" >&2; exit 2; }
done

source "$root/scripts/lib-build.sh"
configure_fuzz_build "$root" "$build" || exit 2
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}" >"$build/fuzz-build.log" 2>&1 ||
  { tail -n 40 "$build/fuzz-build.log" >&2; echo "fuzz.sh: the build failed ($build/fuzz-build.log)" >&2; exit 1; }
[ "${HPCLAUNCH_FUZZ_BUILD_ONLY:-0}" = 0 ] || exit 0

mkdir -p "$out"
: >"$out/summary.txt"
failed=0
for t in "${targets[@]}"; do
  work=$out/$t
  rm -rf "$work"
  mkdir -p "$work/corpus"
  rc=0
  runs=()
  # libFuzzer's -runs counts the committed inputs it reads first too: N new executions after them.
  [ -z "${HPCLAUNCH_FUZZ_RUNS:-}" ] ||
    runs=(-runs="$((HPCLAUNCH_FUZZ_RUNS + $(find "$root/fuzz/corpus/$t" -type f | wc -l)))")
  # -timeout: one input may take 10 s at most (a hang); -rss_limit_mb: libFuzzer's own default, said aloud.
  "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "${runs[@]}" -artifact_prefix="$work/" "$work/corpus" "$root/fuzz/corpus/$t" >"$work/log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
  corpus=$(find "$work/corpus" "$root/fuzz/corpus/$t" -type f | wc -l)
  # The coverage of the last status line: "#N DONE cov: EDGES ft: FEATURES corp: ...".
  cov=$(grep -E '^#[0-9]+.*cov: ' "$work/log" | tail -n 1 | sed -n 's/.* cov: \([0-9]*\) .*/\1/p')
  took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/log")
  # The inputs libFuzzer read before fuzzing ("INFO: seed corpus: files: N", the scratch corpus being empty) and
  # ran, each once, before its "#N INITED" line.
  seeds=$(sed -n 's/^INFO: seed corpus: files: \([0-9]*\) .*/\1/p' "$work/log")
  grep -qE '^#[0-9]+[[:space:]]+INITED' "$work/log" || seeds=0
  line=$(printf '%-16s %12s executions in %s s, corpus %s inputs, %s edges, ran the %s committed first' "$t" \
    "${execs:-?}" "${took:-$seconds}" "$corpus" "${cov:-?}" "${seeds:-0}")
  if [ $rc -eq 0 ] && [ "${HPCLAUNCH_FUZZ_MERGE:-0}" = 1 ]; then
    before=$(find "$root/fuzz/corpus/$t" -type f | wc -l)
    "$build/fuzz/fuzz_$t" -merge=1 -timeout=10 -rss_limit_mb=2048 "$root/fuzz/corpus/$t" "$work/corpus" \
      >"$work/merge.log" 2>&1 || { failed=1; echo "fuzz.sh: $t: the merge failed ($work/merge.log)" >&2; }
    line="$line; merged $(( $(find "$root/fuzz/corpus/$t" -type f | wc -l) - before )) into fuzz/corpus/$t"
  fi
  if [ $rc -ne 0 ]; then
    failed=1
    artifact=$(find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'leak-*' \
      -o -name 'oom-*' \) | head -n 1)
    line="$line: FAILED (exit $rc)"
    grep -m 3 -E 'ERROR:|runtime error:|fuzz check failed|deadly signal' "$work/log" >&2 || tail -n 20 "$work/log" >&2
    echo "fuzz.sh: $t: input saved as ${artifact:-(none)}; replay: $build/fuzz/fuzz_$t ${artifact:-INPUT}; log: $work/log" >&2
  fi
  echo "$line" | tee -a "$out/summary.txt"
done
exit $failed
