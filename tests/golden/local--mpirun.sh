#!/bin/bash
# Rendered by hpclaunch 0.1.0 for site local: runs on this machine, 2 emulated node(s).
# Launch: mpirun; 2 node(s) x 8 worker(s) = world size 16;
# 16 task(s), 8 per node.

cd /home/user/project || exit 1

export HPCLAUNCH_MASTER_ADDR_RULE=fixed
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_MASTER_ADDR_FIXED=127.0.0.1
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

export MASTER_ADDR=127.0.0.1
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH-}"  # for -x: mpirun warns about an unset one (the loader ignores it empty)
mpirun -np 16 --tag-output --host localhost:16 --oversubscribe -bind-to none -mca pml ob1 -mca btl ^openib \
  -x MASTER_ADDR -x HPCLAUNCH_JOB_ID -x PATH -x LD_LIBRARY_PATH -x HPCLAUNCH_MASTER_ADDR_RULE -x HPCLAUNCH_MASTER_ADDR_RESOLVE -x HPCLAUNCH_MASTER_ADDR_FIXED -x HPCLAUNCH_GPU_BIND -x HPCLAUNCH_JOB_DIR -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM -x OMP_NUM_THREADS \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

