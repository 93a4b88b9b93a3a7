#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=56
#SBATCH --partition=batch
#SBATCH --account=ABC123
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/slurm-%j.out
#SBATCH --network=disable_rdzv_get
#
# Rendered by hpclaunch 0.1.0 for site frontier (OLCF Frontier (AMD MI250X, 8 GCDs per node)).
# Launch: agent; 2 node(s) x 8 worker(s) = world size 16;
# 2 Slurm task(s), 1 per node, 56 CPU(s) each.

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

# The agents trust only peers that know this job's secret; it lives in the job's environment, never in a file.
export HPCLAUNCH_RDZV_SECRET="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"

# One hpclaunch agent per node; each starts 8 worker(s) and sets RANK, LOCAL_RANK, WORLD_SIZE,
# MASTER_ADDR and MASTER_PORT for them (torchrun's variables).
srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=56 \
  "$HPCLAUNCH" agent --nnodes 2 --nproc-per-node 8 -- python train.py --epochs 2

