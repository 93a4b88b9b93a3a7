#!/usr/bin/env bash
# t0505: a kill during a save never corrupts the latest checkpoint. (1) Deterministic: the test hook
# HPCLAUNCH_TRAIN_FAULT=partial-save dies half-way through writing; latest.pt is still the previous one, the next
# start sweeps the temporary and resumes. (2) SIGKILL at arbitrary moments of a run that saves every step:
# whatever is on disk afterwards reads back.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
common=(--synthetic --synthetic-samples 4096 --batch-size 32 --threads 1 --no-validation --checkpoint-dir "$work/ck")

"$HPCLAUNCH_TRAIN" "${common[@]}" --steps 3 >/dev/null || fail "first run"
set +e
HPCLAUNCH_TRAIN_FAULT=partial-save "$HPCLAUNCH_TRAIN" "${common[@]}" --resume --steps 6 --checkpoint-every 1 \
  >"$work/fault.log" 2>&1
code=$?
set -e
[ "$code" = 86 ] || { cat "$work/fault.log"; fail "fault hook: exit $code, want 86"; }
ls -a "$work/ck"
ls -a "$work/ck" | grep -q '^\.latest\.pt\.tmp\.' || fail "no half-written temporary left (the hook did not fire?)"
"$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt" | grep -q '"global_step":3,' || fail "latest.pt is not the step-3 one"
"$HPCLAUNCH_TRAIN" "${common[@]}" --resume --steps 6 >"$work/after.log" 2>&1 || { cat "$work/after.log"; fail "resume"; }
grep -q 'resumed from .*latest.pt at epoch 1, step 3' "$work/after.log" || fail "did not resume at step 3"
! ls -a "$work/ck" | grep -q '^\.latest\.pt\.tmp\.' || fail "stale temporary not swept"
"$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt" | grep -q '"global_step":6,' || fail "not at step 6"

# A bigger model (ResNet-18 with Adam: ~130 MB checkpoints, a second or more to write and sync) saving after
# every step. Each round waits for a step's metrics line (written just before that step's save starts), then
# kills at a different moment of the save; latest.pt must read back every time.
rm -rf "$work/ck"
big=(--model resnet --resnet-depth 18 --synthetic --synthetic-samples 512 --image-size 32 --num-classes 10
     --batch-size 4 --threads 1 --no-validation --checkpoint-dir "$work/ck" --checkpoint-every 1 --resume)
"$HPCLAUNCH_TRAIN" "${big[@]}" --steps 1 >/dev/null || fail "first ResNet run"
for delay in 0.2 0.8 1.5; do
  rm -f "$work/m.jsonl"
  "$HPCLAUNCH_TRAIN" "${big[@]}" --metrics "$work/m.jsonl" >/dev/null 2>&1 &
  pid=$!
  wait_until --every 0.2 --on-timeout 'kill -9 "$pid"' 120 "the first step" 'grep "\"type\":\"step\"" "$work/m.jsonl"'
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
  # Informational: a temporary left behind shows the kill hit the write itself, not the serialization before it.
  ls -a "$work/ck" | grep -q '^\.latest\.pt\.tmp\.' && echo "kill at ${delay}s interrupted a write"
  "$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt" || fail "latest.pt unreadable after a kill ${delay}s into a save"
done
echo PASS
