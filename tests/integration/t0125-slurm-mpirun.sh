#!/usr/bin/env bash
# mpirun inside a Slurm job (the Alliance seed's form: `mpirun -np 8 ... python main.py` in an sbatch script):
# Open MPI starts its daemons with srun, the ranks' numbers are MPI's, the job id, node list and so the
# MASTER_ADDR/PORT are Slurm's, the same on both nodes. With LibTorch, the ranks also form a gloo group.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
need_cmd mpirun
tool=${HPCLAUNCH_ALLREDUCE_CHECK:-$HPCLAUNCH_BUILD_DIR/tests/allreduce_check}
[ -x "$tool" ] || tool=""

cat >"$test_tmp/job.sh" <<JOB
#!/bin/bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset MASTER_ADDR MASTER_PORT HPCLAUNCH_MASTER_PORT
echo "job \$SLURM_JOB_ID"
mpirun -np 4 -x PATH -bind-to none "$HPCLAUNCH" exec --gpu-bind local-rank -- sh -c \\
  'echo "task \$RANK \${HPCLAUNCH_NODE_LOCAL_RANK-\$LOCAL_RANK} \$WORLD_SIZE \$LOCAL_WORLD_SIZE \$GROUP_RANK \$GROUP_WORLD_SIZE \$MASTER_ADDR \$MASTER_PORT \$CUDA_VISIBLE_DEVICES \$SLURMD_NODENAME"'
if [ -n "$tool" ]; then mpirun -np 4 -x PATH -bind-to none "$HPCLAUNCH" exec -- "$tool"; fi
JOB
sbatch_wait "$test_tmp/job.out" -N 2 --ntasks-per-node=2 --gpus-per-node=4 "$test_tmp/job.sh"
job=$(lines_with "$test_tmp/job.out" 'job ')
port=$((20000 + job % 10000))
assert_eq "0 0 4 2 0 2 n1 $port 0 n1
1 1 4 2 0 2 n1 $port 1 n1
2 0 4 2 1 2 n1 $port 0 n2
3 1 4 2 1 2 n1 $port 1 n2" "$(lines_with "$test_tmp/job.out" 'task ')" "mpirun ranks in a Slurm job"
if [ -n "$tool" ]; then
  assert_eq "rank=0 ok
rank=1 ok
rank=2 ok
rank=3 ok" "$(lines_with "$test_tmp/job.out" 'allreduce ' | awk '{print $1, $NF}')" "allreduce under mpirun in a Slurm job"
else
  skip_part "LibTorch not found at build time: no gloo allreduce under mpirun"
fi
