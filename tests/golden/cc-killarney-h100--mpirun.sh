#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks=16
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=6
#SBATCH --gpus-per-node=h100:8
#SBATCH --mem=0
#SBATCH --account=aip-someprof
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/slurm-%j.out
#
# Rendered by hpclaunch 0.1.0 for site cc-killarney-h100 (Alliance PAICE - Killarney (H100)).
# Launch: mpirun; 2 node(s) x 8 worker(s) = world size 16;
# 16 Slurm task(s), 8 per node, 6 CPU(s) each.

# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export NCCL_BLOCKING_WAIT=1
export OMP_NUM_THREADS=6
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# One rank per GPU started by mpirun from this node, which hosts rank 0.

export MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"

export LD_LIBRARY_PATH="${LD_LIBRARY_PATH-}"  # for -x: mpirun warns about an unset one (the loader ignores it empty)
mpirun -np 16 --tag-output --oversubscribe -map-by :OVERSUBSCRIBE -bind-to none -mca pml ob1 -mca btl ^openib \
  -x MASTER_ADDR -x SLURM_JOB_ID -x PATH -x LD_LIBRARY_PATH -x HPCLAUNCH_MASTER_ADDR_RULE -x HPCLAUNCH_MASTER_ADDR_RESOLVE -x HPCLAUNCH_GPU_BIND -x HPCLAUNCH_JOB_DIR -x NCCL_BLOCKING_WAIT -x OMP_NUM_THREADS \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

