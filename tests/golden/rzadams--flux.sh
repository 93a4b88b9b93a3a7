#!/bin/bash
# flux: -N 2
# flux: -n 2
# flux: -c 84
# flux: -g 4
# flux: --queue=pbatch
# flux: -t 60m
# flux: --job-name=train
# flux: --cwd=/home/user/project
# flux: --output=/home/user/project/hpclaunch-jobs/train/output.log
# flux: --exclusive
# flux: --setattr=rdzv_get_en=0
# flux: -ofastload=on
#
# Rendered by hpclaunch 0.1.0 for site rzadams (LLNL RZAdams (AMD MI300A APU, 4 per node, Flux; El Capitan's RZ sibling)).
# Launch: flux; 2 node(s) x 4 worker(s) = world size 8;
# 8 Flux task(s), 4 per node, in one slot per node of the batch job.

module load rocm/6.4.1
export LD_LIBRARY_PATH="/collab/usr/global/tools/rccl/${SYS_TYPE:-toss_4_x86_64_ib_cray}/rocm-6.4.1/install/lib:${CRAY_LD_LIBRARY_PATH:+$CRAY_LD_LIBRARY_PATH:}${LD_LIBRARY_PATH-}"
export MIOPEN_USER_DB_PATH="/tmp/${USER}-miopen-cache-${FLUX_ENCLOSING_ID:-${FLUX_JOB_ID:-0}}"
export MIOPEN_CUSTOM_CACHE_DIR="$MIOPEN_USER_DB_PATH"
# rzadams's network settings, as the site documents them (`hpclaunch sites show rzadams` names the source of each), unless already set:
[ -n "${NCCL_NET_GDR_LEVEL+set}" ] || export NCCL_NET_GDR_LEVEL=3
[ -n "${NCCL_MIN_NCHANNELS+set}" ] || export NCCL_MIN_NCHANNELS=24
[ -n "${NCCL_CROSS_NIC+set}" ] || export NCCL_CROSS_NIC=1
[ -n "${NCCL_SOCKET_IFNAME+set}" ] || export NCCL_SOCKET_IFNAME=hsi0
[ -n "${NCCL_NET+set}" ] || export NCCL_NET='AWS Libfabric'
[ -n "${FI_CXI_RDZV_PROTO+set}" ] || export FI_CXI_RDZV_PROTO=alt_read
[ -n "${FI_CXI_RDZV_THRESHOLD+set}" ] || export FI_CXI_RDZV_THRESHOLD=0
[ -n "${FI_CXI_RDZV_GET_MIN+set}" ] || export FI_CXI_RDZV_GET_MIN=0
[ -n "${FI_CXI_RDZV_EAGER_SIZE+set}" ] || export FI_CXI_RDZV_EAGER_SIZE=0
[ -n "${FI_MR_CACHE_MONITOR+set}" ] || export FI_MR_CACHE_MONITOR=userfaultfd
[ -n "${FI_CXI_DEFAULT_TX_SIZE+set}" ] || export FI_CXI_DEFAULT_TX_SIZE=1024
[ -n "${FI_CXI_DISABLE_HOST_REGISTER+set}" ] || export FI_CXI_DISABLE_HOST_REGISTER=1
[ -n "${FI_CXI_DEFAULT_CQ_SIZE+set}" ] || export FI_CXI_DEFAULT_CQ_SIZE=131072
[ -n "${FI_CXI_RX_MATCH_MODE+set}" ] || export FI_CXI_RX_MATCH_MODE=hybrid
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=local-rank
export HPCLAUNCH_ACCELERATOR=amd
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export PYTORCH_MIOPEN_SUGGEST_NHWC=1
export PYTORCH_MIOPEN_SUGGEST_NHWC_BATCHNORM=1
export OMP_NUM_THREADS=21
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch
# `hpclaunch cancel --signal USR1` (flux job kill) is for the workers, which take it themselves: the script only
# outlives it (a handler, unlike ignoring it, is not inherited by the tasks).
trap : USR1 USR2

# A Flux batch script's environment names neither the job nor its nodes (flux-environment(7)): the instance says
# which is its first node, once, and every task of `flux run` inherits MASTER_ADDR with this environment.
MASTER_ADDR="$(flux hostlist --nth=0 local)" || exit 1
export MASTER_ADDR

# One task per worker, 4 per node, each with 21 core(s); `hpclaunch exec` reads its FLUX_TASK_RANK and
# sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and execs. -l prefixes every line with the task's
# rank (`hpclaunch logs --rank R` reads it); -o exit-on-error ends the step when one rank fails, instead of 30 s
# later (flux-shell-options(7), exit-timeout), as Slurm's --kill-on-bad-exit does. A task that asks no GPU (-g) sees
# none (Flux sets CUDA_VISIBLE_DEVICES=-1), so each asks its one.
flux run -N 2 -n 8 -c 21 -g 1 -l -o exit-on-error \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

