#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=72
#SBATCH --partition=gh
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/slurm-%j.out
#
# Rendered by hpclaunch 0.1.0 for site vista (TACC Vista (GH200, one GPU per node)).
# Launch: srun; 2 node(s) x 1 worker(s) = world size 2;
# 2 Slurm task(s), 1 per node, 72 CPU(s) each.

module load gcc cuda python3

# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMP_NUM_THREADS=72
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# One task per GPU; `hpclaunch exec` sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and execs.
# --label prefixes every line with the task's rank (`hpclaunch logs --rank R` reads it); --kill-on-bad-exit
# ends the step when one rank fails, instead of leaving the others waiting for it until the time limit.
srun --label --kill-on-bad-exit=1 --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=72 \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

