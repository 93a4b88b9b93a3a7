#!/bin/bash
# Rendered by hpclaunch 0.1.0 for site local: runs on this machine, 1 emulated node(s).
# Launch: agent; 1 node(s) x 8 worker(s) = world size 8;
# 1 task(s), 1 per node.

cd /home/user/project || exit 1

export HPCLAUNCH_MASTER_ADDR_RULE=fixed
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_MASTER_ADDR_FIXED=127.0.0.1
export HPCLAUNCH_GPU_BIND=none
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# An array of 4 task(s) (0-3): each runs its own command in its own directory, tasks/I.
export HPCLAUNCH_ARRAY_TASKS=4
export HPCLAUNCH_ARRAY_DIR=/home/user/project/hpclaunch-jobs/train
export HPCLAUNCH_JOB_DIR="$HPCLAUNCH_ARRAY_DIR/tasks/$HPCLAUNCH_ARRAY_TASK"
case "$HPCLAUNCH_ARRAY_TASK" in
  0) export HPCLAUNCH_SWEEP_LR=1e-3 HPCLAUNCH_SWEEP_NOTE='it'\''s'; hpclaunch_command=(hpclaunch-train --lr 1e-3 --metrics /home/user/project/hpclaunch-jobs/train/tasks/0/metrics.jsonl --note 'it'\''s') ;;
  1) export HPCLAUNCH_SWEEP_LR=1e-3 HPCLAUNCH_SWEEP_NOTE='a b'; hpclaunch_command=(hpclaunch-train --lr 1e-3 --metrics /home/user/project/hpclaunch-jobs/train/tasks/1/metrics.jsonl --note 'a b') ;;
  2) export HPCLAUNCH_SWEEP_LR=3e-3 HPCLAUNCH_SWEEP_NOTE='it'\''s'; hpclaunch_command=(hpclaunch-train --lr 3e-3 --metrics /home/user/project/hpclaunch-jobs/train/tasks/2/metrics.jsonl --note 'it'\''s') ;;
  3) export HPCLAUNCH_SWEEP_LR=3e-3 HPCLAUNCH_SWEEP_NOTE='a b'; hpclaunch_command=(hpclaunch-train --lr 3e-3 --metrics /home/user/project/hpclaunch-jobs/train/tasks/3/metrics.jsonl --note 'a b') ;;
  *) echo "hpclaunch: task '$HPCLAUNCH_ARRAY_TASK' is not one of this array's (0-3)" >&2; exit 1 ;;
esac

# The agents trust only peers that know this job's secret; it lives in the job's environment, never in a file.
export HPCLAUNCH_RDZV_SECRET="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"

# `hpclaunch local-srun` plays srun: one task per emulated node, each an agent with 8 worker(s).
# --no-kill: as the Slurm script's agent step (no --kill-on-bad-exit), an agent that ends does not end the others;
# the agents stop the job themselves, and the last word is the root cause, not a SIGTERM from the launcher.
"$HPCLAUNCH" local-srun --no-kill --nodes 1 --ntasks-per-node 1 --gpus-per-node 8 -- \
  "$HPCLAUNCH" agent --nnodes 1 --nproc-per-node 8 -- "${hpclaunch_command[@]}"

