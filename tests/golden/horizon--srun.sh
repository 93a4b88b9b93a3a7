#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=36
#SBATCH --partition=gb
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/slurm-%j.out
#
# Rendered by hpclaunch 0.1.0 for site horizon (TACC Horizon (GB200 NVL4, two Blackwell GPUs per node)).
# Launch: srun; 2 node(s) x 2 worker(s) = world size 4;
# 4 Slurm task(s), 2 per node, 36 CPU(s) each.

# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMP_NUM_THREADS=36
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# One task per GPU; `hpclaunch exec` sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and execs.
# --label prefixes every line with the task's rank (`hpclaunch logs --rank R` reads it); --kill-on-bad-exit
# ends the step when one rank fails, instead of leaving the others waiting for it until the time limit.
srun --label --kill-on-bad-exit=1 --nodes=2 --ntasks=4 --ntasks-per-node=2 --cpus-per-task=36 \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

