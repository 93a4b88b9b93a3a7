#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=288
#SBATCH --gpus-per-node=4
#SBATCH --partition=workq
#SBATCH --account=brics.b6ar
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/slurm-%j.out
#
# Rendered by hpclaunch 0.1.0 for site isambard-ai (Isambard-AI (GH200, aarch64)).
# Launch: agent; 2 node(s) x 4 worker(s) = world size 8;
# 2 Slurm task(s), 1 per node, 288 CPU(s) each.

module load brics/nccl
# isambard-ai's network settings, as the site documents them (`hpclaunch sites show isambard-ai` names the source of each), unless already set:
[ -n "${NCCL_NET+set}" ] || export NCCL_NET='AWS Libfabric'
[ -n "${NCCL_SOCKET_IFNAME+set}" ] || export NCCL_SOCKET_IFNAME=hsn
[ -n "${NCCL_NET_GDR_LEVEL+set}" ] || export NCCL_NET_GDR_LEVEL=PHB
[ -n "${NCCL_CROSS_NIC+set}" ] || export NCCL_CROSS_NIC=1
[ -n "${FI_CXI_DEFAULT_CQ_SIZE+set}" ] || export FI_CXI_DEFAULT_CQ_SIZE=131072
[ -n "${FI_CXI_DEFAULT_TX_SIZE+set}" ] || export FI_CXI_DEFAULT_TX_SIZE=2048
[ -n "${FI_CXI_DISABLE_HOST_REGISTER+set}" ] || export FI_CXI_DISABLE_HOST_REGISTER=1
[ -n "${FI_MR_CACHE_MONITOR+set}" ] || export FI_MR_CACHE_MONITOR=userfaultfd
[ -n "${FI_CXI_RDZV_PROTO+set}" ] || export FI_CXI_RDZV_PROTO=alt_read
[ -n "${FI_CXI_RX_MATCH_MODE+set}" ] || export FI_CXI_RX_MATCH_MODE=hybrid
# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMP_NUM_THREADS=72
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# The agents trust only peers that know this job's secret; it lives in the job's environment, never in a file.
export HPCLAUNCH_RDZV_SECRET="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"

# One hpclaunch agent per node; each starts 4 worker(s) and sets RANK, LOCAL_RANK, WORLD_SIZE,
# MASTER_ADDR and MASTER_PORT for them (torchrun's variables).
srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=288 \
  "$HPCLAUNCH" agent --nnodes 2 --nproc-per-node 4 -- python train.py --epochs 2

