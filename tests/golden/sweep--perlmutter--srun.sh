#!/bin/bash
#SBATCH --job-name=hpclaunch-train
#SBATCH --nodes=1
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=32
#SBATCH --gpus-per-node=4
#SBATCH --mem=0
#SBATCH --constraint=gpu
#SBATCH --qos=regular
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/tasks/%a/slurm-%A_%a.out
#SBATCH --array=0-3%2
#
# Rendered by hpclaunch 0.1.0 for site perlmutter (NERSC Perlmutter (GPU)).
# Launch: srun; 1 node(s) x 4 worker(s) = world size 4;
# 4 Slurm task(s), 4 per node, 32 CPU(s) each.

module load pytorch

# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export NCCL_NET_GDR_LEVEL=PHB
export OMP_NUM_THREADS=16
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# An array of 4 task(s) (0-3): each runs its own command in its own directory, tasks/I.
export HPCLAUNCH_ARRAY_TASK="$SLURM_ARRAY_TASK_ID"
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

# One task per GPU; `hpclaunch exec` sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and execs.
# --label prefixes every line with the task's rank (`hpclaunch logs --rank R` reads it); --kill-on-bad-exit
# ends the step when one rank fails, instead of leaving the others waiting for it until the time limit.
srun --label --kill-on-bad-exit=1 --nodes=1 --ntasks=4 --ntasks-per-node=4 --cpus-per-task=32 \
  "$HPCLAUNCH" exec -- "${hpclaunch_command[@]}"

