#!/usr/bin/env bash
# Preemption, time limits and requeue on the real test cluster, with hpclaunch-train on 2 nodes:
# 1. a one-minute time limit with an early warning signal: the script passes SIGUSR1 on, the trainer saves and
#    the job requeues itself until its requeue budget is spent; the metrics hold every step exactly once;
# 2. `scancel --signal=USR1 --batch`: the same path, on demand;
# 3. a plain `scancel`: the job ends and no process of it is left on either emulated node.
source "$(dirname "$0")/lib.sh"
[ -x "${HPCLAUNCH_TRAIN:-}" ] || skip "hpclaunch-train was not built (no LibTorch)"
need_hpclaunch
need_cluster
export PATH=$(dirname "$HPCLAUNCH_TRAIN"):$(dirname "$HPCLAUNCH"):$PATH
submit() { submit_test_site test-perlmutter "$1" --account m1234_g "${@:2}"; }  # JOBDIR ARG...: prints the id
cd "$test_tmp"

train() {  # JOBDIR STEPS: the trainer's command line, checkpointing into and resuming from JOBDIR
  echo hpclaunch-train --model autoencoder --synthetic --synthetic-samples 8192 --global-batch-size 256 \
    --epochs 100000 --steps "$2" --threads 1 --log-every 100 --no-validation --checkpoint-dir "$1/ckpt" \
    --resume --metrics "$1/metrics.jsonl"
}

# Every step 1..N once in a metrics file, in order.
check_steps() {  # METRICS N
  local steps
  steps=$(grep '"type":"step"' "$1" | sed 's/.*"step":\([0-9]*\).*/\1/')
  assert_eq "$2" "$(echo "$steps" | wc -l)" "step records in $1"
  assert_eq "$(seq 1 "$2" | xargs)" "$(echo "$steps" | xargs)" "steps in $1 (each once, in order)"
}

restarts() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p'; }

# wait_step METRICS N: until the trainer has logged step N (bounded).
wait_step() {
  for _ in $(seq 1 240); do
    [ -f "$1" ] && [ "$(grep -c '"type":"step"' "$1")" -ge "$2" ] && return 0
    sleep 0.5
  done
  fail "the trainer did not reach step $2 in 120 s ($1)"
}

# 1. Time limit, endless training: a one-minute limit with the warning asked for 45 s before it. Slurm sends the
#    warning "up to 60 seconds earlier than specified" (sbatch(1)), so anywhere from the start of a run (even
#    before the trainer is up) to 45 s into it; whenever it comes, the run saves and requeues, until the job has
#    used its 2 requeues. The checkpoint and the metrics then agree: every step once, none lost.
d=$test_tmp/limit
id=$(submit "$d" --nodes 2 --gpus-per-node 1 --launcher srun --time 1 --requeue --signal USR1@45 \
  --max-requeues 2 -- $(train "$d" 1000000))
state=$(wait_job "$id" 400)
out=$(cat "$d/slurm-$id.out")
assert_eq FAILED "$state" "state of the time-limited job after its requeues (output: $out)"
assert_contains "$out" "hpclaunch: requeueing job $id (requeue 1 of 2)"
assert_contains "$out" "hpclaunch: requeueing job $id (requeue 2 of 2)"
assert_contains "$out" "hpclaunch: job $id used its 2 requeue(s); not requeueing"
assert_eq 2 "$(restarts "$id")" "requeues of the time-limited job"
assert_not_contains "$out" "DUE TO TIME LIMIT" "output of the time-limited job"
steps=$(hpclaunch-train inspect "$d/ckpt/latest.pt" | sed 's/.*"global_step":\([0-9]*\).*/\1/')
[ "$steps" -ge 1 ] || fail "no step was saved in 3 runs (output: $out)"
check_steps "$d/metrics.jsonl" "$steps"
assert_contains "$(cat "$d/job.sh")" "#SBATCH --signal=B:USR1@45"

# 2. scancel --signal=USR1 --batch: the warning by hand; one requeue, then the rest of the steps.
steps=200
d=$test_tmp/batch
id=$(submit "$d" --nodes 2 --gpus-per-node 1 --launcher srun --time 10 --requeue -- $(train "$d" $steps))
wait_step "$d/metrics.jsonl" 20
scancel --signal=USR1 --batch "$id"
state=$(wait_job "$id" 300)
out=$(cat "$d/slurm-$id.out")
assert_eq COMPLETED "$state" "state after scancel --signal=USR1 --batch (output: $out)"
assert_eq 1 "$(restarts "$id")" "requeues after one warning"
check_steps "$d/metrics.jsonl" $steps

# 3. A plain scancel ends the job: no requeue, and nothing of it left running on n1 or n2.
d=$test_tmp/cancel
id=$(submit "$d" --nodes 2 --gpus-per-node 1 --launcher srun --time 10 --requeue -- $(train "$d" 100000))
wait_step "$d/metrics.jsonl" 10
scancel "$id"
assert_eq CANCELLED "$(wait_job "$id" 120)" "state after scancel"
for _ in $(seq 1 40); do
  pgrep -f -- "--checkpoint-dir $d/ckpt" >/dev/null || break
  sleep 0.5
done
left=$(pgrep -af -- "--checkpoint-dir $d/ckpt" || true)
[ -z "$left" ] || fail "processes of the cancelled job are still running: $left"
assert_eq 0 "$(restarts "$id")" "requeues after a plain scancel"
