#!/usr/bin/env bash
# The torchrun face: with a `torchrun` link to hpclaunch first on PATH, the seeds' torchrun lines run unchanged in
# a 2-node job on the test cluster: the CC seed's `srun --ntasks-per-node=1 --ntasks=2 torchrun --nnodes=2
# --nproc_per_node=... --rdzv_id=$SLURM_JOB_ID --rdzv_backend=c10d --rdzv_endpoint=$(hostname):$MASTER_PORT
# main.py --batch_size=6144 --ddp` and the JSC course's `--rdzv_conf=is_host=...` with `--nproc_per_node=gpu`.
# Each forms one gloo world across both nodes (torch 2.15 from the peers' venv) and allreduces; the script's own
# arguments reach it, a `--` among them included. No HPCLAUNCH_RDZV_SECRET is set, as in the seeds.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
py=$(peer_python)
mkdir -p "$test_tmp/shim"
ln -s "$HPCLAUNCH" "$test_tmp/shim/torchrun"
cat >"$test_tmp/main.py" <<'PY'
import os, sys
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank())])
dist.all_reduce(t)
print(f"rank={dist.get_rank()} world={dist.get_world_size()} local_rank={os.environ['LOCAL_RANK']} "
      f"sum={int(t.item())} args={' '.join(sys.argv[1:])}", flush=True)
dist.destroy_process_group()
PY
port=$(free_port)
cat >"$test_tmp/job.sh" <<JOB
#!/bin/bash
export PATH="$test_tmp/shim:/usr/bin:\$PATH"   # our torchrun first
export HPCLAUNCH_PYTHON=$py  # the workers' python: torch 2.15
export MASTER_PORT=$port
cd "$test_tmp"
echo "torchrun is \$(command -v torchrun)"
# CC seed (002), unchanged but for 2 workers per node.
srun --ntasks-per-node=1 --ntasks=2 torchrun --nnodes=2 --nproc_per_node=2 \\
--rdzv_id=\$SLURM_JOB_ID --rdzv_backend=c10d --rdzv_endpoint=\$(hostname):\$MASTER_PORT \\
main.py --batch_size=6144 --ddp -- tail
echo "cc exited \$?"
# JSC course's line: one worker per GPU of the node, is_host set on node 0.
export MASTER_ADDR="\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | head -n 1)"
export MASTER_PORT=$((port + 1))
srun torchrun --nnodes=2 --rdzv_id=\$SLURM_JOB_ID --rdzv_endpoint=\$MASTER_ADDR:\$MASTER_PORT --rdzv_backend=c10d \\
  --nproc_per_node=gpu --rdzv_conf=is_host=\$(if ((SLURM_NODEID)); then echo 0; else echo 1; fi) main.py --jsc
echo "jsc exited \$?"
JOB
SBATCH_TIMEOUT=240 sbatch_wait "$test_tmp/job.out" -N 2 --ntasks-per-node=1 --gpus-per-node=2 "$test_tmp/job.sh"
out=$(cat "$test_tmp/job.out")
assert_contains "$out" "torchrun is $test_tmp/shim/torchrun"
assert_contains "$out" "cc exited 0"
assert_contains "$out" "jsc exited 0"
for r in 0 1 2 3; do
  assert_contains "$out" "rank=$r world=4 local_rank=$((r % 2)) sum=6 args=--batch_size=6144 --ddp -- tail" "CC line, rank $r"
  assert_contains "$out" "rank=$r world=4 local_rank=$((r % 2)) sum=6 args=--jsc" "JSC line, rank $r"
done
echo ok
