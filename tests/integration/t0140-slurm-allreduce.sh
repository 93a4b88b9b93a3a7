#!/usr/bin/env bash
# The proof under srun: 2 nodes x 2 tasks on the test cluster, each `hpclaunch exec`s the LibTorch tool, which
# forms a gloo process group through TCPStore(MASTER_ADDR, MASTER_PORT) and checks an allreduce sum. Each
# task's gloo binds to its emulated node's own address (n1 127.0.1.1, n2 127.0.1.2). Skipped (77) only when
# LibTorch was not found at build time.
source "$(dirname "$0")/lib.sh"
tool=${HPCLAUNCH_ALLREDUCE_CHECK:-$HPCLAUNCH_BUILD_DIR/tests/allreduce_check}
[ -x "$tool" ] || skip "LibTorch not found at build time: no allreduce_check"
need_hpclaunch
need_cluster

cat >"$test_tmp/job.sh" <<JOB
#!/bin/bash
unset MASTER_ADDR MASTER_PORT HPCLAUNCH_MASTER_PORT
echo "job \$SLURM_JOB_ID"
srun --kill-on-bad-exit=1 "$HPCLAUNCH" exec --gpu-bind local-rank -- \
  sh -c 'ALLREDUCE_CHECK_HOST=\$SLURMD_NODENAME exec "\$0"' "$tool"
JOB
SBATCH_TIMEOUT=240 sbatch_wait "$test_tmp/job.out" -N 2 --ntasks-per-node=2 --gpus-per-node=4 "$test_tmp/job.sh"
job=$(lines_with "$test_tmp/job.out" 'job ')
port=$((20000 + job % 10000))
# Bound to one GPU each (--gpu-bind local-rank), every task sees it as device 0 and LOCAL_RANK=0.
assert_eq "rank=0 local_rank=0 world=4 master=n1:$port sum=10 expected=10 ok
rank=1 local_rank=0 world=4 master=n1:$port sum=10 expected=10 ok
rank=2 local_rank=0 world=4 master=n1:$port sum=10 expected=10 ok
rank=3 local_rank=0 world=4 master=n1:$port sum=10 expected=10 ok" \
  "$(lines_with "$test_tmp/job.out" 'allreduce ')" "allreduce under srun"
