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
# Launch: mpirun; 2 node(s) x 2 worker(s) = world size 4;
# 4 Slurm task(s), 2 per node, 36 CPU(s) each.

# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMP_NUM_THREADS=36
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# One rank per GPU started by mpirun from this node, which hosts rank 0.

export MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"

export LD_LIBRARY_PATH="${LD_LIBRARY_PATH-}"  # for -x: mpirun warns about an unset one (the loader ignores it empty)
mpirun -np 4 --tag-output --oversubscribe -map-by :OVERSUBSCRIBE -bind-to none -mca pml ob1 -mca btl ^openib \
  -x MASTER_ADDR -x SLURM_JOB_ID -x PATH -x LD_LIBRARY_PATH -x HPCLAUNCH_MASTER_ADDR_RULE -x HPCLAUNCH_MASTER_ADDR_RESOLVE -x HPCLAUNCH_GPU_BIND -x HPCLAUNCH_JOB_DIR -x OMP_NUM_THREADS \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

