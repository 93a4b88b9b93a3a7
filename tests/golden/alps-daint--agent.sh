#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=288
#SBATCH --partition=normal
#SBATCH --account=g123
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/slurm-%j.out
#
# Rendered by hpclaunch 0.1.0 for site alps-daint (CSCS Alps Daint (GH200, HPC platform)).
# Launch: agent; 2 node(s) x 4 worker(s) = world size 8;
# 2 Slurm task(s), 1 per node, 288 CPU(s) each.

# alps-daint's network settings, as the site documents them (`hpclaunch sites show alps-daint` names the source of each), unless already set:
[ -n "${NCCL_NET+set}" ] || export NCCL_NET='AWS Libfabric'
[ -n "${NCCL_NET_GDR_LEVEL+set}" ] || export NCCL_NET_GDR_LEVEL=PHB
[ -n "${NCCL_CROSS_NIC+set}" ] || export NCCL_CROSS_NIC=1
[ -n "${NCCL_PROTO+set}" ] || export NCCL_PROTO='^LL128'
[ -n "${FI_CXI_DEFAULT_CQ_SIZE+set}" ] || export FI_CXI_DEFAULT_CQ_SIZE=131072
[ -n "${FI_CXI_DEFAULT_TX_SIZE+set}" ] || export FI_CXI_DEFAULT_TX_SIZE=16384
[ -n "${FI_CXI_DISABLE_HOST_REGISTER+set}" ] || export FI_CXI_DISABLE_HOST_REGISTER=1
[ -n "${FI_CXI_RX_MATCH_MODE+set}" ] || export FI_CXI_RX_MATCH_MODE=software
[ -n "${FI_MR_CACHE_MONITOR+set}" ] || export FI_MR_CACHE_MONITOR=userfaultfd
# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=local-rank
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export MPICH_GPU_SUPPORT_ENABLED=0
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_CACHE_DISABLE=1
export OMP_NUM_THREADS=72
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# The agents trust only peers that know this job's secret; it lives in the job's environment, never in a file.
export HPCLAUNCH_RDZV_SECRET="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"

# One hpclaunch agent per node; each starts 4 worker(s) and sets RANK, LOCAL_RANK, WORLD_SIZE,
# MASTER_ADDR and MASTER_PORT for them (torchrun's variables).
srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=288 \
  "$HPCLAUNCH" agent --nnodes 2 --nproc-per-node 4 -- python train.py --epochs 2

