#!/usr/bin/env bash
# Every libFuzzer target (fuzz/, docs/fuzzing.md) is built with clang, ASan and UBSan and run for a few seconds
# from its committed seeds: no crash, hang, leak or failed check. The longer run is `scripts/fuzz.sh 60`.
source "$(dirname "$0")/lib.sh"

seconds=${HPCLAUNCH_FUZZ_SECONDS:-3}
for t in "$HPCLAUNCH_SOURCE_DIR"/fuzz/*.cc; do
  name=$(basename "$t" .cc)
  [ -n "$(ls -A "$HPCLAUNCH_SOURCE_DIR/fuzz/corpus/$name" 2>/dev/null)" ] || fail "fuzz/$name.cc has no seeds in fuzz/corpus/$name/"
done
out=$(HPCLAUNCH_FUZZ_BUILD_DIR="$HPCLAUNCH_BUILD_DIR/fuzz" HPCLAUNCH_FUZZ_OUT="$test_tmp/runs" \
  "$HPCLAUNCH_SOURCE_DIR/scripts/fuzz.sh" "$seconds" 2>&1) || fail "a fuzz target failed: $out"
note "$out"
echo "ok"
