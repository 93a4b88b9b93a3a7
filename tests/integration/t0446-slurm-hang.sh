#!/usr/bin/env bash
# A hang on the real test cluster: a 2-node agent job of hpclaunch-train (checkpoints every 5 steps) with
# --hang-timeout 3 and one restart (PET_MAX_RESTARTS=1). At step 10 or later the worker on node 1 is stopped
# (SIGSTOP: it never exits, every other rank waits in its allreduce). The agents find it, record every rank's
# stacks (eu-stack) into the job directory, kill the group and restart it from the checkpoint; the job ends
# COMPLETED with weights bit-identical to an unfaulted run of the same job, and `hpclaunch status` names the hang.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
[ -x "${HPCLAUNCH_TRAIN:-}" ] || skip "hpclaunch-train was not built (no LibTorch)"
cd "$test_tmp"
job() {  # NAME FLAG...: submits the training with checkpoints in $test_tmp/NAME; prints the job id
  local name=$1
  shift
  submit_test_site test-perlmutter "$test_tmp/$name.job" --account m1234_g --nodes 2 --gpus-per-node 1 \
    --launcher agent --env HPCLAUNCH_TRAIN_STEP_SLEEP_MS=100 "$@" -- "$HPCLAUNCH_TRAIN" --model autoencoder \
    --synthetic --synthetic-samples 2048 --global-batch-size 64 --epochs 1000 --steps 40 --threads 1 --log-every 1 \
    --no-validation --checkpoint-dir "$test_tmp/$name" --checkpoint-every 5 --resume --metrics "$test_tmp/$name/metrics.jsonl"
}
step_of() { { grep -o '"type":"step".*"step":[0-9]*' "$1" 2>/dev/null || true; } | sed 's/.*"step"://' | tail -n 1 | grep . || echo 0; }

ref=$(job ref)
hung=$(job hung --hang-timeout 3 --env PET_MAX_RESTARTS=1)
wait_until 180 "step 10 of the job to hang" '[ "$(step_of "$test_tmp/hung/metrics.jsonl")" -ge 10 ]'
worker=""
for p in $(pgrep -x hpclaunch-train); do
  env=$(tr '\0' '\n' 2>/dev/null <"/proc/$p/environ") || continue
  grep -qx "SLURM_JOB_ID=$hung" <<<"$env" && grep -qx "SLURM_NODEID=1" <<<"$env" && worker=$p
done
[ -n "$worker" ] || fail "no worker of node 1 in job $hung"
kill -STOP "$worker"
assert_eq COMPLETED "$(wait_job "$ref" 300)" "the unfaulted job"
state=$(wait_job "$hung" 300)
out=$(cat "$test_tmp/hung.job/slurm-$hung.out")
assert_eq COMPLETED "$state" "the job that hung once (output: $out)"
assert_contains "$out" "hang: rank 1 (local rank 0) on n2 made no progress for " "the hang's line"
ls "$test_tmp/hung.job/stacks/attempt_0/rank_1.txt" >/dev/null || fail "no stacks of rank 1 in the job directory"
assert_contains "$("$HPCLAUNCH" status "$test_tmp/hung.job")" "hang: attempt 0: rank 1 (local rank 0) on n2" "status"
assert_contains "$("$HPCLAUNCH_TRAIN" compare "$test_tmp/ref/latest.pt" "$test_tmp/hung/latest.pt" --tolerance 0)" \
  ": same" "the weights after the hang against the unfaulted run's"
