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
  note "LibTorch not found at build time: the workers print their ranks instead of an allreduce"
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
for _ in $(seq 1 240); do
  [ "$(ls "$test_tmp"/started.* 2>/dev/null | wc -l)" = 4 ] && break
  sleep 0.5
done
[ "$(ls "$test_tmp"/started.* 2>/dev/null | wc -l)" = 4 ] || { scancel "$id"; fail "workers never started: $(cat "$test_tmp/cancel.out")"; }
scancel "$id"
assert_eq CANCELLED "$(wait_job "$id" 120)" "state of the scancel-ed job"
for _ in $(seq 1 40); do pgrep -f "$mark" >/dev/null || break; sleep 0.25; done
left=$(pgrep -af "$mark" || true)
[ -z "$left" ] || fail "processes of the cancelled job left: $left"
