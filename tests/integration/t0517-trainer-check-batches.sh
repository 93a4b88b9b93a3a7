#!/usr/bin/env bash
# t0517: --check-batches compares every batch as the loader hands it over with the sampler's batch gathered again
# on the host: it passes over two epochs on two gloo ranks (the shuffle changes per epoch) and after a resume in
# the middle of an epoch; a stale batch from the loader (test hook HPCLAUNCH_TRAIN_STALE_BATCH: step 3 gets step
# 2's samples) still trains without the check, and with it ends the run at step 3 with one line and exit 1. ~30 s.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
common=(--synthetic --synthetic-samples 512 --global-batch-size 64 --threads 1 --no-validation)
run_ranks 2 "$work/two" "${common[@]}" --epochs 2 --check-batches --checkpoint-dir "$work/ck" || fail "two epochs"
"$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt" | grep -q '"global_step":16' ||
  fail "did not train 16 steps: $("$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt")"
run_ranks 2 "$work/part" "${common[@]}" --epochs 2 --steps 5 --checkpoint-dir "$work/resume" || fail "5 steps"
run_ranks 2 "$work/rest" "${common[@]}" --epochs 2 --check-batches --resume --checkpoint-dir "$work/resume" ||
  fail "resumed at step 5 with --check-batches"
grep -q 'resumed from .* step 5' "$work/rest.0" || fail "did not resume at 5: $(cat "$work/rest.0")"

# The stale batch: unseen without the check, caught with it.
HPCLAUNCH_TRAIN_STALE_BATCH=3 timeout 120 "$HPCLAUNCH_TRAIN" "${common[@]}" --steps 5 >"$work/stale" 2>&1 ||
  fail "a stale batch without --check-batches should still train: $(cat "$work/stale")"
code=0
HPCLAUNCH_TRAIN_STALE_BATCH=3 timeout 120 "$HPCLAUNCH_TRAIN" "${common[@]}" --steps 5 --check-batches \
  >"$work/caught.out" 2>"$work/caught.err" || code=$?
[ "$code" = 1 ] || fail "a stale batch under --check-batches exited $code (want 1): $(cat "$work/caught.err")"
[ "$(wc -l <"$work/caught.err")" = 1 ] || fail "want one line on stderr: $(cat "$work/caught.err")"
grep -Eq '^hpclaunch-train: error: --check-batches: step 3 \(epoch 1, batch 3\) on rank 0: the batch on cpu has checksum [0-9]+, the sampler.s batch [0-9]+' \
  "$work/caught.err" || fail "unexpected line: $(cat "$work/caught.err")"
HPCLAUNCH_TRAIN_STALE_BATCH=x timeout 60 "$HPCLAUNCH_TRAIN" "${common[@]}" --steps 1 >"$work/bad" 2>&1 && fail "a bad hook value was accepted"
grep -q 'HPCLAUNCH_TRAIN_STALE_BATCH' "$work/bad" || fail "bad hook value: $(cat "$work/bad")"
echo PASS
