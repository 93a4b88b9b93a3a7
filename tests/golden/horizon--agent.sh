#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=72
#SBATCH --partition=gb
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/slurm-%j.out
#
# Rendered by hpclaunch 0.1.0 for site horizon (TACC Horizon (GB200 NVL4, two Blackwell GPUs per node)).
# Launch: agent; 2 node(s) x 2 worker(s) = world size 4;
# 2 Slurm task(s), 1 per node, 72 CPU(s) each.

# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMP_NUM_THREADS=36
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# The agents trust only peers that know this job's secret; it lives in the job's environment, never in a file.
export HPCLAUNCH_RDZV_SECRET="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"

# One hpclaunch agent per node; each starts 2 worker(s) and sets RANK, LOCAL_RANK, WORLD_SIZE,
# MASTER_ADDR and MASTER_PORT for them (torchrun's variables).
srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=72 \
  "$HPCLAUNCH" agent --nnodes 2 --nproc-per-node 2 -- python train.py --epochs 2

