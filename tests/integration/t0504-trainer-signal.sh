#!/usr/bin/env bash
# t0504: Slurm's signals. SIGUSR1 to one rank only: every rank finishes the step, rank 0 saves, all exit 99
# (requeue); --resume then continues from that step. SIGUSR2 saves a checkpoint and training goes on; SIGTERM
# stops like SIGUSR1. A warning that comes while the process group forms (Slurm may send it up to a minute early,
# so right at the start of a requeued run) stops the run after its first step, and a second SIGTERM kills; the
# same SIGTERM passed on twice in a moment (slurmstepd and an agent both pass on scancel's) is one stop.
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
# start_rank R N PORT LOG ARGS...: rank R of N in the background, its output in LOG.R, its pid added to `pids`.
start_rank() {
  local r=$1 n=$2 port=$3 log=$4
  shift 4
  WORLD_SIZE=$n RANK=$r LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port HPCLAUNCH_TRAIN_TIMEOUT_S=120 \
    "$HPCLAUNCH_TRAIN" "$@" >"$log.$r" 2>&1 &
  pids+=($!)
}
# start_ranks N LOG ARGS...: N ranks in the background, their pids in `pids`.
start_ranks() {
  local n=$1 log=$2 port r
  shift 2
  port=$(free_port)
  pids=()
  for ((r = 0; r < n; r++)); do start_rank "$r" "$n" "$port" "$log" "$@"; done
}
# wait_ranks: waits for every pid in `pids`; their exit codes in `codes`, in order.
wait_ranks() {
  codes=()
  for p in "${pids[@]}"; do
    set +e
    wait "$p"
    codes+=($?)
    set -e
  done
  pids=()
}
# wait_for WHAT CMD...: until CMD succeeds (bounded: 120 s), else fail naming WHAT.
wait_for() {
  local what=$1 cmd
  shift
  printf -v cmd '%q ' "$@"
  wait_until --every 0.2 120 "$what" "$cmd"
}
steps_in() { if [ -f "$1" ]; then grep -c '"type":"step"' "$1" || true; else echo 0; fi; }
more_steps_than() { [ "$(steps_in "$1")" -gt "$2" ]; }
common=(--synthetic --synthetic-samples 100000 --global-batch-size 64 --threads 1 --no-validation
        --checkpoint-dir "$work/ck")

# 1. SIGUSR1 to rank 1 alone: both ranks stop at the same step with exit 99.
start_ranks 2 "$work/run1.log" "${common[@]}" --metrics "$work/m1.jsonl"
wait_for "training to start" more_steps_than "$work/m1.jsonl" 2
kill -USR1 "${pids[1]}"
wait_ranks
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
wait_for "training to start" more_steps_than "$work/m3.jsonl" 1
kill -USR2 "${pids[0]}"
wait_for "the checkpoint SIGUSR2 asks for" test -f "$work/ck/latest.pt"
at_save=$(steps_in "$work/m3.jsonl")
wait_for "training to go on after SIGUSR2" more_steps_than "$work/m3.jsonl" $((at_save + 2))
kill -TERM "${pids[0]}"
wait_ranks
[ "${codes[*]}" = 99 ] || fail "SIGTERM: exit ${codes[*]}, want 99"

# The stop signals are blocked from the start of main() and taken by a sigwait thread: /proc shows them in the
# main thread's blocked set (SIGUSR1 = bit 9, SIGUSR2 = bit 11, SIGTERM = bit 14: 0x4a00).
signals_blocked() {
  local mask
  mask=$(sed -n 's/^SigBlk:\s*//p' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$mask" ] && [ $((0x$mask & 0x4a00)) = $((0x4a00)) ]
}

# 4. SIGUSR1 while rank 1 is still waiting for rank 0 (not started yet): rank 1 goes on connecting, and once rank 0
#    is there both train one step, save and exit 99.
rm -rf "$work/ck"
port=$(free_port)
pids=()
start_rank 1 2 "$port" "$work/run4.log" "${common[@]}" --metrics "$work/m4.jsonl"
wait_for "hpclaunch-train to block its stop signals" signals_blocked "${pids[0]}"
sleep 1  # into the connect loop
kill -USR1 "${pids[0]}"
sleep 1
kill -0 "${pids[0]}" || fail "rank 1 died of a SIGUSR1 while connecting"
start_rank 0 2 "$port" "$work/run4.log" "${common[@]}" --metrics "$work/m4.jsonl"
wait_ranks
[ "${codes[*]}" = "99 99" ] || fail "warned while connecting: exit codes ${codes[*]} (rank 1, rank 0), want 99 99"
grep -q 'stopped by signal at step 1; checkpoint' "$work/run4.log.0" || fail "warned while connecting: no stop at step 1"
"$HPCLAUNCH_TRAIN" inspect "$work/ck/latest.pt" | grep -q '"global_step":1,' || fail "no checkpoint at step 1"

# 5. A second SIGTERM kills at once (a stuck rank can still be stopped): 128 + 15.
pids=()
start_rank 1 2 "$(free_port)" "$work/run5.log" "${common[@]}"
wait_for "hpclaunch-train to block its stop signals" signals_blocked "${pids[0]}"
kill -TERM "${pids[0]}"
# Again until it is gone (or a zombie, not yet waited for): two SIGTERMs that are pending together merge into one.
wait_until --every 0.5 10 "hpclaunch-train to die of a second SIGTERM" \
  '! kill -TERM "${pids[0]}" || ps -o stat= -p "${pids[0]}" | grep "^Z"'
wait_ranks
[ "${codes[*]}" = 143 ] || fail "second SIGTERM: exit ${codes[*]}, want 143"

# 6. One SIGTERM delivered twice, 0.05 s apart (a Slurm step's processes get scancel's SIGTERM from slurmstepd, and
# again from an agent that passes it on): one stop, so the run saves and exits 99 instead of dying of the second.
# Steps of 8192 samples (~0.2 s here) keep the run in its step when the second one comes.
rm -rf "$work/ck"
pids=()
WORLD_SIZE=1 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) "$HPCLAUNCH_TRAIN" --synthetic \
  --synthetic-samples 1000000 --global-batch-size 8192 --threads 1 --no-validation --checkpoint-dir "$work/ck" \
  --metrics "$work/m6.jsonl" >"$work/run6.log.0" 2>&1 &
pids+=($!)
wait_for "training to start" more_steps_than "$work/m6.jsonl" 2
kill -TERM "${pids[0]}"
sleep 0.05
kill -TERM "${pids[0]}" 2>/dev/null || true
wait_ranks
[ "${codes[*]}" = 99 ] || fail "one SIGTERM passed on twice: exit ${codes[*]}, want 99 (saved, requeue)"
[ -f "$work/ck/latest.pt" ] || fail "one SIGTERM passed on twice: no checkpoint"
echo PASS
