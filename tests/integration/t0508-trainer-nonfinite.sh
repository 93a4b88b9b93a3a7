#!/usr/bin/env bash
# t0508: a loss that goes non-finite. A real divergence (SGD, --lr 1e6) on one rank, and 2 ranks where only rank 1
# goes NaN first (the test hook HPCLAUNCH_TRAIN_NONFINITE=RANK:STEP[:COUNT]): under --on-nonfinite stop every rank
# exits 3 at that step with one line naming the step, the rank and the last finite loss, and latest.pt/best.pt
# keep their bytes; under skip-step the steps are skipped on every rank (counted in the metrics and the last
# line), ranks stay identical, and too many in a row stop the run (exit 3). Metrics stay JSON (null for the
# loss) and `hpclaunch plot` draws them with the non-finite steps marked. About 15 s.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
common=(--synthetic --synthetic-samples 1024 --global-batch-size 64 --threads 1 --val-batches 1 --log-every 100)
# Every line of a metrics file is a JSON object; prints "TYPE:STEP:LOSS" per line (loss null -> None).
records() {
  /usr/bin/python3 -c '
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    r = json.loads(line)  # raises on anything that is not JSON (NaN, -nan, inf)
    assert isinstance(r, dict), "line %d is not an object" % n
    print("%s:%s:%s" % (r["type"], r.get("step"), r.get("loss", "-")))' "$1" || fail "$1 is not JSON lines"
}
hashes() { sha256sum "$1"/*.pt; }

# 1. A real divergence on one rank: step 1 finite, then the loss explodes. Checkpoints saved before stay.
rc=0
"$HPCLAUNCH_TRAIN" "${common[@]}" --epochs 3 --optimizer sgd --lr 1e6 --checkpoint-dir "$work/ck1" --checkpoint-every 1 \
  --metrics "$work/m1.jsonl" >"$work/one.log" 2>&1 || rc=$?
cat "$work/one.log"
[ "$rc" = 3 ] || fail "diverged run exited $rc, not 3"
line=$(grep 'hpclaunch-train: error: step' "$work/one.log") || fail "no error line"
[[ "$line" =~ step\ ([0-9]+):\ non-finite\ loss\ on\ rank\ 0\ of\ 1\ \(last\ finite\ loss\ .*\ at\ step\ ([0-9]+)\) ]] ||
  fail "error line: $line"
bad=${BASH_REMATCH[1]}
[ "${BASH_REMATCH[2]}" = $((bad - 1)) ] || fail "last finite step ${BASH_REMATCH[2]} is not $((bad - 1))"
recs=$(records "$work/m1.jsonl")
echo "$recs" | grep -qx "step:$bad:None" || fail "no null loss at step $bad: $recs"
echo "$recs" | tail -1 | grep -qx "run_end:$((bad - 1)):-" || fail "no run_end last: $recs"
grep -q "\"status\":\"nonfinite\",\"exit_code\":3" "$work/m1.jsonl" || fail "run_end lacks the status"
# latest.pt is from before the divergence (a step whose weights were already not finite is not saved either).
saved=$("$HPCLAUNCH_TRAIN" inspect "$work/ck1/latest.pt" | sed 's/.*"global_step":\([0-9]*\).*/\1/') || fail "latest.pt does not read"
[ "$saved" -ge 1 ] && [ "$saved" -lt "$bad" ] || fail "latest.pt is at step $saved, diverged at $bad"

# 2. Two ranks, rank 1's loss NaN at step 6, --on-nonfinite stop: both exit 3 at step 6; checkpoints untouched.
run_ranks 2 "$work/a" "${common[@]}" --epochs 1 --steps 4 --checkpoint-dir "$work/ck" --metrics "$work/m2.jsonl" ||
  fail "first 4 steps"
before=$(hashes "$work/ck")
[ -f "$work/ck/best.pt" ] || fail "no best.pt after the first run"
rc=0
HPCLAUNCH_TRAIN_NONFINITE=1:6 run_ranks 2 "$work/b" "${common[@]}" --epochs 2 --resume --checkpoint-dir "$work/ck" \
  --checkpoint-every 1 --metrics "$work/m2.jsonl" >"$work/b.out" || rc=$?
cat "$work/b.0"
grep -q "rank 0 exited 3" "$work/b.out" && grep -q "rank 1 exited 3" "$work/b.out" || fail "ranks did not both exit 3: $(cat "$work/b.out")"
[ "$(grep -c 'hpclaunch-train: error:' "$work/b.0")" = 1 ] || fail "rank 0 did not say it once"
grep -q 'hpclaunch-train: error: step 6: non-finite loss on rank 1 of 2 (last finite loss [0-9.e-]* at step 5); stopped without saving, the checkpoints stay the last good ones; exit 3' \
  "$work/b.0" || fail "rank 0's line: $(grep error "$work/b.0")"
! grep -q 'error' "$work/b.1" || fail "rank 1 printed an error too: $(cat "$work/b.1")"
# latest.pt was saved at step 5 (--checkpoint-every 1) and not at 6: compare with the step-5 file by hash.
"$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt" | grep -q '"global_step":5,' || fail "latest.pt is not step 5's"
assert_same() { [ "$(sha256sum <"$1")" = "$2" ] || fail "$1 changed"; }
step5=$(sha256sum <"$work/ck/latest.pt")
best=$(sha256sum <"$work/ck/best.pt")
rc=0
HPCLAUNCH_TRAIN_NONFINITE=0:6 run_ranks 2 "$work/c" "${common[@]}" --epochs 2 --resume --checkpoint-dir "$work/ck" \
  --checkpoint-every 1 --metrics "$work/m2.jsonl" >"$work/c.out" || rc=$?
grep -q 'error: step 6: non-finite loss on rank 0 of 2' "$work/c.0" || fail "rank 0 going NaN: $(cat "$work/c.0")"
assert_same "$work/ck/latest.pt" "$step5"
assert_same "$work/ck/best.pt" "$best"
[ "$before" != "$(hashes "$work/ck")" ] || fail "the resumed run saved nothing at all (step 5 expected)"
recs=$(records "$work/m2.jsonl")
# Resumed twice: each resume dropped the records after the checkpoint's step (5), the null step 6 among them.
[ "$(echo "$recs" | grep -c '^step:6:None$')" = 1 ] || fail "step 6 should be in the file once: $recs"
[ "$(echo "$recs" | grep -c '^step:')" = 6 ] || fail "steps 1-6 once each: $recs"

# 3. skip-step: rank 1 NaN in steps 3-4: skipped on both ranks, counted; training ends normally, ranks identical.
HPCLAUNCH_TRAIN_NONFINITE=1:3:2 run_ranks 2 "$work/d" "${common[@]}" --epochs 1 --on-nonfinite skip-step \
  --checkpoint-dir "$work/ck3" --metrics "$work/m3.jsonl" || fail "skip-step run"
cat "$work/d.0"
grep -q 'step 3: non-finite loss on rank 1: optimizer step skipped (1 in a row, 1 in all)' "$work/d.0" || fail "no skip line"
grep -q 'done: 16 steps .*, 2 step(s) skipped (non-finite loss)' "$work/d.0" || fail "final line lacks the count"
grep -q 'replicas: max parameter deviation between ranks 0 (identical)' "$work/d.0" || fail "ranks differ after skipping"
[ "$(grep -c '"skipped":true' "$work/m3.jsonl")" = 2 ] || fail "skipped steps in the metrics"
grep -q '"type":"run_end","step":16,"status":"done","exit_code":0,"skipped_steps":2' "$work/m3.jsonl" || fail "run_end"
records "$work/m3.jsonl" >/dev/null
# ... and with --max-skipped-steps 3, a NaN that does not go away stops the run at its third step (exit 3).
rc=0
HPCLAUNCH_TRAIN_NONFINITE=0:2:100 run_ranks 2 "$work/e" "${common[@]}" --epochs 1 --on-nonfinite skip-step \
  --max-skipped-steps 3 --checkpoint-dir "$work/ck4" --metrics "$work/m4.jsonl" >/dev/null || rc=$?
grep -q 'error: step 4: non-finite loss for 3 steps in a row (--max-skipped-steps 3) on rank 0 of 2 (last finite loss [0-9.e-]* at step 1);.*exit 3, 3 step(s) skipped' \
  "$work/e.0" || fail "skip limit: $(cat "$work/e.0")"
[ ! -e "$work/ck4/latest.pt" ] || fail "a checkpoint was written by a run that never had a finite step after 1"

# 4. The test hook's value is checked before anything starts.
rc=0
HPCLAUNCH_TRAIN_NONFINITE=one "$HPCLAUNCH_TRAIN" "${common[@]}" >/dev/null 2>"$work/err" || rc=$?
[ "$rc" = 2 ] && grep -q "HPCLAUNCH_TRAIN_NONFINITE: 'one' is not RANK:STEP" "$work/err" || fail "bad hook value: $rc $(cat "$work/err")"

# 5. plot draws the diverged files: the gap and the marks (red), and says where.
if [ -n "${HPCLAUNCH:-}" ]; then
  for m in m1 m3; do
    XDG_STATE_HOME="$work/xdg" XDG_CONFIG_HOME="$work/xdg" "$HPCLAUNCH" plot "$work/$m.jsonl" -o "$work/$m.png" >/dev/null 2>"$work/$m.note" || fail "plot $m: $(cat "$work/$m.note")"
    red=$(/usr/bin/python3 "$HPCLAUNCH_SOURCE_DIR/tests/tools/png_pixels.py" "$work/$m.png" 200 0 0)
    [ "$red" -gt 100 ] || fail "$m.png has $red pixels of the mark colour"
  done
  grep -q "m1.jsonl: non-finite loss at step $bad, marked in red" "$work/m1.note" || fail "plot note: $(cat "$work/m1.note")"
  grep -q "m3.jsonl: step skipped: non-finite loss at step 3 and 1 more step(s), marked in red" "$work/m3.note" ||
    fail "plot note: $(cat "$work/m3.note")"
fi
echo PASS
