#!/usr/bin/env bash
# Every libFuzzer target (fuzz/, docs/fuzzing.md) is built with clang, ASan and UBSan and run from its committed
# seeds for a number of executions (HPCLAUNCH_FUZZ_RUNS, default 2000 new inputs each, after the corpus is read):
# no crash, hang, leak or failed check; then every committed input (fuzz/corpus/TARGET/: the seeds and the
# corpora long runs grew, minimized) is replayed once, so a crash found once stays fixed. Bounded by count, not by
# time, so a busy machine makes it slower, never weaker or red (issue 33); 600 s is a cap no quiet run nears. The
# build is the prepare step (HPCLAUNCH_PREPARE, lib.sh). The longer run is `scripts/fuzz.sh 600` (docs/fuzzing.md).
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
  # Inputs named on the command line: libFuzzer runs each once and stops at the first finding.
  find "$HPCLAUNCH_SOURCE_DIR/fuzz/corpus/$name" -type f -print0 |
    xargs -0 "$HPCLAUNCH_BUILD_DIR/fuzz/fuzz/fuzz_$name" -timeout=10 -rss_limit_mb=2048 >"$test_tmp/replay.$name" 2>&1 ||
    fail "fuzz_$name failed on a committed input, $(grep 'Running:' "$test_tmp/replay.$name" | tail -n 1): $(grep -m 3 -E 'ERROR:|runtime error:|fuzz check failed' "$test_tmp/replay.$name")"
  note "$name: replayed $(find "$HPCLAUNCH_SOURCE_DIR/fuzz/corpus/$name" -type f | wc -l) committed inputs"
done
echo "ok"
