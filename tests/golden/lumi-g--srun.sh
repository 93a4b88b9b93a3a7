#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks=16
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=7
#SBATCH --gpus-per-node=8
#SBATCH --mem-per-gpu=60G
#SBATCH --partition=standard-g
#SBATCH --account=project_462000229
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/slurm-%j.out
#
# Rendered by hpclaunch 0.1.0 for site lumi-g (LUMI-G (AMD MI250X, 8 GCDs per node)).
# Launch: srun; 2 node(s) x 8 worker(s) = world size 16;
# 16 Slurm task(s), 8 per node, 7 CPU(s) each.

module use /appl/local/laifs/modules
module load lumi-aif-singularity-bindings
export MIOPEN_USER_DB_PATH="/tmp/${USER}-miopen-cache-${SLURM_JOB_ID}"
export MIOPEN_CUSTOM_CACHE_DIR="$MIOPEN_USER_DB_PATH"
# lumi-g's network settings, as the site documents them (`hpclaunch sites show lumi-g` names the source of each), unless already set:
[ -n "${NCCL_SOCKET_IFNAME+set}" ] || export NCCL_SOCKET_IFNAME=hsn0,hsn1,hsn2,hsn3
[ -n "${NCCL_NET_GDR_LEVEL+set}" ] || export NCCL_NET_GDR_LEVEL=3
[ -n "${CXI_FORK_SAFE+set}" ] || export CXI_FORK_SAFE=1
[ -n "${CXI_FORK_SAFE_HP+set}" ] || export CXI_FORK_SAFE_HP=1
[ -n "${FI_CXI_DISABLE_CQ_HUGETLB+set}" ] || export FI_CXI_DISABLE_CQ_HUGETLB=1
[ -n "${FI_CXI_DEFAULT_CQ_SIZE+set}" ] || export FI_CXI_DEFAULT_CQ_SIZE=131072
# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=local-rank
export HPCLAUNCH_ACCELERATOR=amd
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMP_NUM_THREADS=7
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# One task per GPU; `hpclaunch exec` sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and execs.
# --label prefixes every line with the task's rank (`hpclaunch logs --rank R` reads it); --kill-on-bad-exit
# ends the step when one rank fails, instead of leaving the others waiting for it until the time limit.
srun --label --kill-on-bad-exit=1 --nodes=2 --ntasks=16 --ntasks-per-node=8 --cpus-per-task=7 --cpu-bind=verbose,mask_cpu:0x00fe000000000000,0xfe00000000000000,0x0000000000fe0000,0x00000000fe000000,0x00000000000000fe,0x000000000000fe00,0x000000fe00000000,0x0000fe0000000000 \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

