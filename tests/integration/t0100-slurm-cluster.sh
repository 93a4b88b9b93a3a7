#!/usr/bin/env bash
# The test cluster itself: a two-node batch job whose srun spreads over n1 and n2, with the fake GPUs scheduled
# (CUDA_VISIBLE_DEVICES set by Slurm) and the node list real.
source "$(dirname "$0")/lib.sh"
need_cluster

# A job of the test before may still be completing: give the nodes a moment to turn idle.
wait_until --every 0.5 30 "both nodes idle in sinfo" \
  'nodes=$(sinfo -h -N -p debug -o "%N %t" | sort -u | tr "\n" " "); echo "sinfo: $nodes"; [ "$nodes" = "n1 idle n2 idle " ]'
for p in debug regular booster gpu gputest; do
  sinfo -h -p "$p" -o %P | grep -q . || fail "partition '$p' missing from the test cluster"
done

cat >"$test_tmp/job.sh" <<'JOB'
#!/bin/bash
echo "batch $SLURM_JOB_NODELIST $SLURM_JOB_NUM_NODES"
srun bash -c 'echo "task $SLURM_PROCID $SLURMD_NODENAME $SLURM_LOCALID $CUDA_VISIBLE_DEVICES"'
JOB
sbatch_wait "$test_tmp/job.out" -N 2 --ntasks-per-node=2 --gpus-per-node=4 -C gpu -q regular -A m1234_g "$test_tmp/job.sh"

assert_eq "n[1-2] 2" "$(lines_with "$test_tmp/job.out" 'batch ')" "batch node list"
expected="0 n1 0 0,1,2,3
1 n1 1 0,1,2,3
2 n2 0 0,1,2,3
3 n2 1 0,1,2,3"
assert_eq "$expected" "$(lines_with "$test_tmp/job.out" 'task ')" "tasks (rank node localid CUDA_VISIBLE_DEVICES)"
