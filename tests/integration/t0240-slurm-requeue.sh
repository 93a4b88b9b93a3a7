#!/usr/bin/env bash
# Preemption, time limits and requeue on the real test cluster, with hpclaunch-train on 2 nodes:
# 1. a one-minute time limit with an early warning signal: the script passes SIGUSR1 on, the trainer saves and
#    the job requeues itself until the training is done; the metrics hold every step exactly once;
# 2. `scancel --signal=USR1 --batch`: the same path, on demand; a second warning is not passed on (2b);
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
  local metrics=$1 want=$2 n
  wait_until --every 0.5 120 "the trainer to reach step $want ($metrics)" \
    'n=$(grep -c "\"type\":\"step\"" "$metrics" || true); echo "${n:-no} steps"; [ "${n:-0}" -ge "$want" ]'
}

# 1. Time limit: a one-minute limit with a warning signal, and more training than one run holds (the test hook
#    paces steps to at most 5 a second, so that is so on a fast machine too). slurmctld checks limits every 30 s
#    and sends the warning once the time left is within 30 s of the time asked for (sbatch(1): "up to 60
#    seconds earlier than specified"): asked for 15 s before the end, it comes 15-45 s into each run (a warning
#    asked for 30 s or more before the end of a one-minute job would come at its start). Each run saves and
#    requeues; a later run finishes. Every step is in the metrics once, and every run trained more than a step.
steps=200
d=$test_tmp/limit
id=$(submit "$d" --nodes 2 --gpus-per-node 1 --launcher srun --time 1 --requeue --signal USR1@15 \
  --max-requeues 10 --env HPCLAUNCH_TRAIN_STEP_SLEEP_MS=200 -- $(train "$d" $steps))
state=$(wait_job "$id" 900)
out=$(cat "$d/slurm-$id.out")
assert_eq COMPLETED "$state" "state of the time-limited job (output: $out)"
assert_contains "$out" "hpclaunch: requeueing job $id (requeue 1 of 10)"
assert_not_contains "$out" "DUE TO TIME LIMIT" "output of the time-limited job"
[ "$(restarts "$id")" -ge 1 ] || fail "job $id was never requeued (Restarts=$(restarts "$id"))"
check_steps "$d/metrics.jsonl" $steps
resumed=$(echo "$out" | sed -n 's/.*resumed from .* at epoch [0-9]*, step \([0-9]*\)$/\1/p' | xargs)
prev=0
for r in $resumed $steps; do
  [ "$r" -gt $((prev + 1)) ] || fail "a run trained from step $prev to $r only (resumed at: $resumed; output: $out)"
  prev=$r
done
assert_contains "$(cat "$d/job.sh")" "#SBATCH --signal=B:USR1@15"

# 2. scancel --signal=USR1 --batch: the warning by hand; one requeue, then the rest of the steps.
steps=200
d=$test_tmp/batch
id=$(submit "$d" --nodes 2 --gpus-per-node 1 --launcher srun --time 10 --requeue -- $(train "$d" $steps))
wait_step "$d/metrics.jsonl" 20
scancel --signal=USR1 --batch "$id"
state=$(wait_job "$id" 300)
out=$(cat "$d/slurm-$id.out")
assert_eq COMPLETED "$state" "state after scancel --signal=USR1 --batch (output: $out)"
assert_contains "$out" "exit 99 (requeue)"
assert_eq 1 "$(restarts "$id")" "requeues after one warning"
check_steps "$d/metrics.jsonl" $steps

# 2b. Warned twice (Slurm's warning, then a preemption or a user's scancel): the script passes on only the first;
#     a second SIGUSR1 would tell hpclaunch-train to die at once, mid-save. The task counts what reaches it.
d=$test_tmp/twice
id=$(submit "$d" --nodes 1 --gpus-per-node 1 --launcher srun --time 10 --signal USR1@60 -- \
  bash -c 'n=0; trap "n=\$((n + 1))" USR1; echo started; for _ in $(seq 40); do sleep 0.25; done; echo "warnings: $n"')
wait_until --every 0.5 --on-timeout "scancel $id" 60 "the task to start" 'grep "0: started" "$d/slurm-$id.out"'
scancel --signal=USR1 --batch "$id"
sleep 1
scancel --signal=USR1 --batch "$id"
assert_eq COMPLETED "$(wait_job "$id" 120)" "state of the job warned twice"
out=$(cat "$d/slurm-$id.out")
assert_contains "$out" "hpclaunch: SIGUSR1 again: the job was warned already; ignored"
assert_contains "$out" "0: warnings: 1" "what reached the task"

# 3. A plain scancel ends the job: no requeue, and nothing of it left running on n1 or n2.
d=$test_tmp/cancel
id=$(submit "$d" --nodes 2 --gpus-per-node 1 --launcher srun --time 10 --requeue -- $(train "$d" 100000))
wait_step "$d/metrics.jsonl" 10
scancel "$id"
assert_eq CANCELLED "$(wait_job "$id" 120)" "state after scancel"
wait_until --every 0.5 20 "the cancelled job's processes to end" '! pgrep -af -- "--checkpoint-dir $d/ckpt"'
assert_eq 0 "$(restarts "$id")" "requeues after a plain scancel"
