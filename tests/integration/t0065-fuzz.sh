#!/usr/bin/env bash
# Every libFuzzer target (fuzz/, docs/fuzzing.md) is built with clang, ASan and UBSan and run for a few seconds
# from its committed seeds: no crash, hang, leak or failed check; then every committed input (fuzz/corpus/TARGET/:
# the seeds and the corpora long runs grew, minimized) is replayed once, so a crash found once stays fixed. The
# longer run is `scripts/fuzz.sh 600` (docs/fuzzing.md).
source "$(dirname "$0")/lib.sh"

seconds=${HPCLAUNCH_FUZZ_SECONDS:-3}
for t in "$HPCLAUNCH_SOURCE_DIR"/fuzz/*.cc; do
  name=$(basename "$t" .cc)
  [ -n "$(ls -A "$HPCLAUNCH_SOURCE_DIR/fuzz/corpus/$name" 2>/dev/null)" ] || fail "fuzz/$name.cc has no seeds in fuzz/corpus/$name/"
done
out=$(HPCLAUNCH_FUZZ_BUILD_DIR="$HPCLAUNCH_BUILD_DIR/fuzz" HPCLAUNCH_FUZZ_OUT="$test_tmp/runs" \
  "$HPCLAUNCH_SOURCE_DIR/scripts/fuzz.sh" "$seconds" 2>&1) || fail "a fuzz target failed: $out"
note "$out"
for t in "$HPCLAUNCH_SOURCE_DIR"/fuzz/*.cc; do
  name=$(basename "$t" .cc)
  # Inputs named on the command line: libFuzzer runs each once and stops at the first finding.
  find "$HPCLAUNCH_SOURCE_DIR/fuzz/corpus/$name" -type f -print0 |
    xargs -0 "$HPCLAUNCH_BUILD_DIR/fuzz/fuzz/fuzz_$name" -timeout=10 -rss_limit_mb=2048 >"$test_tmp/replay.$name" 2>&1 ||
    fail "fuzz_$name failed on a committed input, $(grep 'Running:' "$test_tmp/replay.$name" | tail -n 1): $(grep -m 3 -E 'ERROR:|runtime error:|fuzz check failed' "$test_tmp/replay.$name")"
  note "$name: replayed $(find "$HPCLAUNCH_SOURCE_DIR/fuzz/corpus/$name" -type f | wc -l) committed inputs"
done
echo "ok"
