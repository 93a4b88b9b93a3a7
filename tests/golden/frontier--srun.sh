#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks=16
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=7
#SBATCH --partition=batch
#SBATCH --account=ABC123
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/slurm-%j.out
#SBATCH --network=disable_rdzv_get
#
# Rendered by hpclaunch 0.1.0 for site frontier (OLCF Frontier (AMD MI250X, 8 GCDs per node)).
# Launch: srun; 2 node(s) x 8 worker(s) = world size 16;
# 16 Slurm task(s), 8 per node, 7 CPU(s) each.

module load PrgEnv-gnu/8.7.0 cpe/26.03 miniforge3/23.11.0-0 rocm/7.1.1 rccl-net-plugin craype-accel-amd-gfx90a
export LD_LIBRARY_PATH="$CRAY_LD_LIBRARY_PATH:${LD_LIBRARY_PATH-}"
export MIOPEN_USER_DB_PATH="/tmp/${USER}-miopen-cache-${SLURM_JOB_ID}"
export MIOPEN_CUSTOM_CACHE_DIR="$MIOPEN_USER_DB_PATH"
# frontier's network settings, as the site documents them (`hpclaunch sites show frontier` names the source of each), unless already set:
[ -n "${NCCL_SOCKET_IFNAME+set}" ] || export NCCL_SOCKET_IFNAME=hsn0,hsn1,hsn2,hsn3
# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=1
export HPCLAUNCH_MASTER_PORT=3442
export HPCLAUNCH_GPU_BIND=local-rank
export HPCLAUNCH_ACCELERATOR=amd
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMP_NUM_THREADS=7
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# One task per GPU; `hpclaunch exec` sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and execs.
# --label prefixes every line with the task's rank (`hpclaunch logs --rank R` reads it); --kill-on-bad-exit
# ends the step when one rank fails, instead of leaving the others waiting for it until the time limit.
srun --label --kill-on-bad-exit=1 --nodes=2 --ntasks=16 --ntasks-per-node=8 --cpus-per-task=7 --gpus-per-task=1 --gpu-bind=closest \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

