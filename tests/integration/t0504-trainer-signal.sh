#!/usr/bin/env bash
# t0504: Slurm's signals. SIGUSR1 to one rank only: every rank finishes the step, rank 0 saves, all exit 99
# (requeue); --resume then continues from that step. SIGUSR2 saves a checkpoint and training goes on; SIGTERM
# stops like SIGUSR1.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.log.*; do echo "== $f"; cat "$f"; done; exit 1; }
# start_ranks N LOG ARGS...: N ranks in the background, their pids in `pids`.
start_ranks() {
  local n=$1 log=$2 port r
  shift 2
  port=$(free_port)
  pids=()
  for ((r = 0; r < n; r++)); do
    WORLD_SIZE=$n RANK=$r LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port HPCLAUNCH_TRAIN_TIMEOUT_S=120 \
      "$HPCLAUNCH_TRAIN" "$@" >"$log.$r" 2>&1 &
    pids+=($!)
  done
}
# wait_for CMD...: polls up to 120 s (a bound against hangs, not a timing assertion).
wait_for() {
  for _ in $(seq 600); do
    "$@" && return 0
    sleep 0.2
  done
  return 1
}
steps_in() { if [ -f "$1" ]; then grep -c '"type":"step"' "$1" || true; else echo 0; fi; }
more_steps_than() { [ "$(steps_in "$1")" -gt "$2" ]; }
common=(--synthetic --synthetic-samples 100000 --global-batch-size 64 --threads 1 --no-validation
        --checkpoint-dir "$work/ck")

# 1. SIGUSR1 to rank 1 alone: both ranks stop at the same step with exit 99.
start_ranks 2 "$work/run1.log" "${common[@]}" --metrics "$work/m1.jsonl"
wait_for more_steps_than "$work/m1.jsonl" 2 || fail "training did not start"
kill -USR1 "${pids[1]}"
codes=()
for p in "${pids[@]}"; do
  set +e
  wait "$p"
  codes+=($?)
  set -e
done
pids=()
[ "${codes[*]}" = "99 99" ] || fail "exit codes ${codes[*]}, want 99 99"
cat "$work/run1.log.0"
grep -q 'stopped by signal at step [0-9]*; checkpoint .*latest.pt; exit 99 (requeue)' "$work/run1.log.0" || fail "no stop line"
step=$("$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt" | sed 's/.*"global_step":\([0-9]*\).*/\1/')
[ "$step" = "$(steps_in "$work/m1.jsonl")" ] || fail "checkpoint at step $step, metrics say $(steps_in "$work/m1.jsonl")"

# 2. Requeued: --resume continues from that step to step+3 and exits 0.
start_ranks 2 "$work/run2.log" "${common[@]}" --resume --steps $((step + 3))
for p in "${pids[@]}"; do wait "$p" || fail "resume exited $?"; done
pids=()
grep -q "resumed from .*latest.pt at epoch 1, step $step" "$work/run2.log.0" || fail "did not resume at $step"
"$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt" | grep -q "\"global_step\":$((step + 3))," || fail "not at step+3"

# 3. One rank: SIGUSR2 writes a checkpoint and training goes on; SIGTERM then stops it with 99.
rm -rf "$work/ck"
start_ranks 1 "$work/run3.log" "${common[@]}" --metrics "$work/m3.jsonl"
wait_for more_steps_than "$work/m3.jsonl" 1 || fail "training did not start"
kill -USR2 "${pids[0]}"
wait_for test -f "$work/ck/latest.pt" || fail "SIGUSR2 wrote no checkpoint"
at_save=$(steps_in "$work/m3.jsonl")
wait_for more_steps_than "$work/m3.jsonl" $((at_save + 2)) || fail "training stopped after SIGUSR2"
kill -TERM "${pids[0]}"
set +e
wait "${pids[0]}"
code=$?
set -e
pids=()
[ "$code" = 99 ] || fail "SIGTERM: exit $code, want 99"
echo PASS
