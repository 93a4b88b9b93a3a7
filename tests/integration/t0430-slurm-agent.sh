#!/usr/bin/env bash
# `srun hpclaunch agent -- CMD` in a real 2-node Slurm job on the test cluster, no flags but `--`: nodes, node
# rank, rendezvous host (first node, n1) and port (the job id's), run id and GPUs per node come from the
# allocation. The workers (2 per node, one per allocated GPU) form one LibTorch gloo group and allreduce; then a
# second job is scancel-ed while its workers run: it ends CANCELLED and no process of it is left.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
tool=${HPCLAUNCH_ALLREDUCE_CHECK:-$HPCLAUNCH_BUILD_DIR/tests/allreduce_check}

if [ -x "$tool" ]; then
  worker=(sh -c 'ALLREDUCE_CHECK_HOST=$SLURMD_NODENAME exec "$0"' "$tool")
else
  skip_part "LibTorch not found at build time: the workers print their ranks instead of an allreduce"
  worker=(sh -c 'echo "allreduce rank=$RANK local_rank=$LOCAL_RANK world=$WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT ok"')
fi
cat >"$test_tmp/job.sh" <<JOB
#!/bin/bash
unset MASTER_ADDR MASTER_PORT HPCLAUNCH_MASTER_PORT
export HPCLAUNCH_RDZV_SECRET=\$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
echo "job \$SLURM_JOB_ID"
srun --ntasks-per-node=1 --kill-on-bad-exit=1 "$HPCLAUNCH" agent -- $(printf '%q ' "${worker[@]}")
echo "agents exited \$?"
JOB
SBATCH_TIMEOUT=240 sbatch_wait "$test_tmp/job.out" -N 2 --ntasks-per-node=1 --gpus-per-node=2 "$test_tmp/job.sh"
out=$(cat "$test_tmp/job.out")
assert_contains "$out" "agents exited 0"
for r in 0 1 2 3; do
  n=$((r / 2 + 1))
  grep -q "^\[n$n:$r\] allreduce rank=$r local_rank=$((r % 2)) world=4 master=n1:[0-9]* .*ok" "$test_tmp/job.out" \
    || fail "no allreduce line of rank $r from node n$n; job output: $out"
done
grep -q ':29500 ' "$test_tmp/job.out" && fail "MASTER_PORT is torch's fixed 29500: $out"

# scancel while the workers run: the agents forward SIGTERM, the job ends, nothing is left.
mark="t0430-$$-$RANDOM"
cat >"$test_tmp/cancel.sh" <<JOB
#!/bin/bash
export HPCLAUNCH_RDZV_SECRET=\$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
srun --ntasks-per-node=1 "$HPCLAUNCH" agent --grace 5 -- bash -c 'touch "$test_tmp/started.\$RANK"; exec sleep 120 # $mark'
JOB
id=$(sbatch --parsable -o "$test_tmp/cancel.out" -e "$test_tmp/cancel.out" -N 2 --ntasks-per-node=1 \
     --gpus-per-node=2 "$test_tmp/cancel.sh")
wait_until --every 0.5 --on-timeout "scancel $id" 120 "the job's 4 workers to start" \
  'cat "$test_tmp/cancel.out"; [ "$(ls "$test_tmp"/started.* 2>/dev/null | wc -l)" = 4 ]'
scancel "$id"
assert_eq CANCELLED "$(wait_job "$id" 120)" "state of the scancel-ed job"
wait_until --every 0.25 10 "the cancelled job's processes to end" '! pgrep -af "$mark"'
