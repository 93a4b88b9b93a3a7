#!/bin/bash
# Rendered by hpclaunch 0.1.0 for site local: runs on this machine, 2 emulated node(s).
# Launch: agent; 2 node(s) x 8 worker(s) = world size 16;
# 2 task(s), 1 per node.

cd /home/user/project || exit 1

export HPCLAUNCH_MASTER_ADDR_RULE=fixed
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_MASTER_ADDR_FIXED=127.0.0.1
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# The agents trust only peers that know this job's secret; it lives in the job's environment, never in a file.
export HPCLAUNCH_RDZV_SECRET="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"

# `hpclaunch local-srun` plays srun: one task per emulated node, each an agent with 8 worker(s).
# --no-kill: as the Slurm script's agent step (no --kill-on-bad-exit), an agent that ends does not end the others;
# the agents stop the job themselves, and the last word is the root cause, not a SIGTERM from the launcher.
"$HPCLAUNCH" local-srun --no-kill --nodes 2 --ntasks-per-node 1 --gpus-per-node 8 -- \
  "$HPCLAUNCH" agent --nnodes 2 --nproc-per-node 8 -- python train.py --epochs 2

