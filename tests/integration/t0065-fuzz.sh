#!/usr/bin/env bash
# Every libFuzzer target (fuzz/, docs/fuzzing.md) is built with clang, ASan and UBSan and run from its committed
# inputs for a number of executions (HPCLAUNCH_FUZZ_RUNS, default 2000 new inputs each): no crash, hang, leak or
# failed check. libFuzzer first runs every committed input once (fuzz/corpus/TARGET/: the seeds and the corpora long
# runs grew, minimized; none is longer than the default -max_len it takes from them), so a crash found once stays
# fixed; the run's line says how many it read, and the test checks that count. Bounded by count, not by time, so a
# busy machine makes it slower, never weaker or red; 600 s is a cap no quiet run nears. The build is the prepare
# step (HPCLAUNCH_PREPARE, lib.sh). The longer run is `scripts/fuzz.sh 600` (docs/fuzzing.md).
source "$(dirname "$0")/lib.sh"

runs=${HPCLAUNCH_FUZZ_RUNS:-2000}
for t in "$HPCLAUNCH_SOURCE_DIR"/fuzz/*.cc; do
  name=$(basename "$t" .cc)
  [ -n "$(ls -A "$HPCLAUNCH_SOURCE_DIR/fuzz/corpus/$name" 2>/dev/null)" ] || fail "fuzz/$name.cc has no seeds in fuzz/corpus/$name/"
done
fuzz=(env HPCLAUNCH_FUZZ_BUILD_DIR="$HPCLAUNCH_BUILD_DIR/fuzz" HPCLAUNCH_FUZZ_OUT="$test_tmp/runs"
  "$HPCLAUNCH_SOURCE_DIR/scripts/fuzz.sh")
if [ "${HPCLAUNCH_PREPARE:-0}" = 1 ]; then
  out=$(HPCLAUNCH_FUZZ_BUILD_ONLY=1 "${fuzz[@]}" 2>&1) || fail "the fuzz build failed: $out"
  prepared
fi
out=$(HPCLAUNCH_FUZZ_RUNS=$runs "${fuzz[@]}" 600 2>&1) || fail "a fuzz target failed: $out"
note "$out"
for t in "$HPCLAUNCH_SOURCE_DIR"/fuzz/*.cc; do
  name=$(basename "$t" .cc)
  committed=$(find "$HPCLAUNCH_SOURCE_DIR/fuzz/corpus/$name" -type f | wc -l)
  assert_contains "$(grep "^$name " <<<"$out")" ", ran the $committed committed first" "fuzz_$name's committed inputs"
done
echo "ok"
