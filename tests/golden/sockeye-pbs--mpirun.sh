#!/bin/bash
#PBS -l walltime=01:00:00,select=2:ncpus=8:ngpus=4:mem=64gb:gpu_mem=32gb
#PBS -A st-someprof-1-gpu
#PBS -N train
#PBS -j oe
#PBS -o /home/user/project/hpclaunch-jobs/train/
#
# Rendered by hpclaunch 0.1.0 for site sockeye-pbs (UBC ARC Sockeye (PBS Pro, as in seed 002; retired)).
# Launch: mpirun; 2 node(s) x 4 worker(s) = world size 8;
# 8 MPI rank(s), 4 per node.

# WARNING: this site is retired 2024; successors: sockeye.

# A PBS job starts in $HOME, not where it was submitted.
cd "$PBS_O_WORKDIR" || exit 1
module load gcc/9.4.0 python/3.8.10 cuda/11.3.1 nccl/2.9.9-1-cuda11-3 openmpi

export HPCLAUNCH_MASTER_ADDR_RULE=batch-host
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=2
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# mpirun/mpiexec start rank 0 on this host, the first of $PBS_NODEFILE.
export MASTER_ADDR="$(hostname -s)"

# --map-by ppr:4:node: 4 rank(s) on each node, however $PBS_NODEFILE counts slots: once per chunk
# (Sockeye: fewer slots than ranks, hence --oversubscribe) or once per CPU (NCI Gadi: by slots, every rank would
# land on the first node).
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH-}"  # for -x: mpirun warns about an unset one (the loader ignores it empty)
mpirun -np 8 --tag-output --hostfile "$PBS_NODEFILE" --map-by ppr:4:node --oversubscribe -bind-to none \
  -mca pml ob1 -mca btl ^openib \
  -x MASTER_ADDR -x PBS_JOBID -x PATH -x LD_LIBRARY_PATH -x HPCLAUNCH_MASTER_ADDR_RULE -x HPCLAUNCH_MASTER_ADDR_RESOLVE -x HPCLAUNCH_GPU_BIND -x HPCLAUNCH_JOB_DIR -x CUDA_VISIBLE_DEVICES -x OMP_NUM_THREADS \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

