#!/usr/bin/env bash
# t0501: hpclaunch-train alone (no launcher variables: a world of one) on Fashion-MNIST: progress lines, the
# summary, --metrics JSON lines, latest.pt/best.pt that `inspect` reads, and one-line errors with exit 2.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
data=(--synthetic --synthetic-samples 4096)
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] && data=()

"$HPCLAUNCH_TRAIN" "${data[@]}" --steps 20 --log-every 10 --threads 1 --val-batches 4 \
  --checkpoint-dir "$work/ck" --metrics "$work/m.jsonl" >"$work/out" 2>&1 || { cat "$work/out"; fail "exit $?"; }
cat "$work/out"
grep -q '^hpclaunch-train: autoencoder (234640 parameters) on cpu, 1 rank(s)' "$work/out" || fail "no header"
grep -Eq '^epoch 1 step 20/[0-9]+ loss [0-9.]+ lr [0-9.e+-]+ samples/s [0-9.]+$' "$work/out" || fail "no progress line"
grep -Eq '^done: 20 steps in .* samples/s, best val loss [0-9.]+$' "$work/out" || fail "no summary"
[ "$(grep -c '"type":"step"' "$work/m.jsonl")" = 20 ] || fail "want 20 step lines in metrics"
grep -q '"type":"validation"' "$work/m.jsonl" || fail "no validation line in metrics"
for key in loss lr samples_per_s step_time_s allreduce_s data_wait_s cpu_s time; do
  grep -q "\"$key\":" "$work/m.jsonl" || fail "metrics lack $key"
done
# The wait for a batch is part of the step's time.
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "step" and not 0 <= r["data_wait_s"] <= r["step_time_s"]:
        sys.exit("step %(step)s: data_wait_s %(data_wait_s)s outside [0, step_time_s %(step_time_s)s]" % r)
' "$work/m.jsonl" || fail "a data_wait_s outside its step"
# "time" is when the record was written (Unix seconds): within this test's run, and not going back.
now=$(date +%s)
times=$(sed 's/.*"time":\([0-9.]*\).*/\1/' "$work/m.jsonl")
echo "$times" | awk -v now="$now" '{ if ($1 < prev || $1 > now + 1 || $1 < now - 600) bad = 1; prev = $1 }
  END { exit bad }' || fail "metrics times are not this run's, in order: $(echo "$times" | head -3 | xargs)"
# step_time_s runs from a step's start to the next step's (as bench/trainer/ddp_train.py times steps), so what the
# loop does after a step is in it: here the test hook's sleep after every step. A lower bound the sleep itself
# guarantees (sleep_for never returns early), not a speed expectation; before, the sleep fell outside every step.
HPCLAUNCH_TRAIN_STEP_SLEEP_MS=300 "$HPCLAUNCH_TRAIN" --synthetic --synthetic-samples 1024 --steps 4 --threads 1 \
  --no-validation --metrics "$work/slept.jsonl" >"$work/slept" 2>&1 || { cat "$work/slept"; fail "slept run"; }
step_times=$(grep '"type":"step"' "$work/slept.jsonl" | sed 's/.*"step_time_s":\([0-9.e+-]*\).*/\1/')
[ "$(echo "$step_times" | wc -l)" = 4 ] || fail "want 4 step records: $(cat "$work/slept.jsonl")"
echo "$step_times" | awk '$1 < 0.3 { bad = 1 } END { exit bad }' ||
  fail "step_time_s leaves out what follows a step (the 300 ms sleep): $(echo "$step_times" | xargs)"
[ -f "$work/ck/latest.pt" ] && [ -f "$work/ck/best.pt" ] || fail "checkpoints missing"
"$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt" | tee "$work/inspect"
grep -q '"global_step":20' "$work/inspect" || fail "latest.pt is not at step 20"
grep -q '"model":"autoencoder"' "$work/inspect" || fail "inspect lacks the model"

# Bad input: one line on stderr naming the flag, exit 2.
set +e
WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 "$HPCLAUNCH_TRAIN" --global-batch-size 3 --synthetic \
  >/dev/null 2>"$work/err"
code=$?
set -e
cat "$work/err"
[ "$code" = 2 ] || fail "uneven batch: exit $code, want 2"
[ "$(wc -l <"$work/err")" = 1 ] || fail "error is not one line"
grep -q '^hpclaunch-train: error: --global-batch-size: 3 does not split evenly over 2 ranks' "$work/err" ||
  fail "error does not name the flag"
set +e
"$HPCLAUNCH_TRAIN" --data-dir "$work/nowhere" --steps 1 >/dev/null 2>"$work/err"
code=$?
set -e
cat "$work/err"
[ "$code" = 2 ] && grep -q "nowhere/train-images-idx3-ubyte.gz: cannot open" "$work/err" || fail "missing data: exit $code"
echo PASS
