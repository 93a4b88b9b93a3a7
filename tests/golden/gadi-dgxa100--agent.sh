#!/bin/bash
#PBS -l walltime=01:00:00,ncpus=256,ngpus=16
#PBS -P ab01
#PBS -N train
#PBS -q dgxa100
#PBS -j oe
#PBS -o /home/user/project/hpclaunch-jobs/train/
#PBS -l storage=scratch/ab01+gdata/ab01+gdata/dk92
#
# Rendered by hpclaunch 0.1.0 for site gadi-dgxa100 (NCI Gadi (DGX A100, dgxa100)).
# Launch: agent; 2 node(s) x 8 worker(s) = world size 16;
# 2 MPI rank(s), 1 per node.
# '-l storage=scratch/ab01+gdata/ab01+gdata/dk92' is made from the account ab01: to change it, put your own '-l storage=...' in the `directives:` of a site file (--site-file) that extends gadi-dgxa100.

# A PBS job starts in $HOME, not where it was submitted.
cd "$PBS_O_WORKDIR" || exit 1
module load openmpi
module use /g/data/dk92/apps/Modules/modulefiles
module load NCI-ai-ml
export HPCLAUNCH_MASTER_ADDR_RULE=batch-host
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMP_NUM_THREADS=16
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# mpirun/mpiexec start rank 0 on this host, the first of $PBS_NODEFILE.
export MASTER_ADDR="$(hostname -s)"

# The agents trust only peers that know this job's secret; it lives in the job's environment, never in a file.
export HPCLAUNCH_RDZV_SECRET="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"

# One hpclaunch agent per node, started by mpirun; each starts 8 worker(s).
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH-}"  # for -x: mpirun warns about an unset one (the loader ignores it empty)
mpirun -np 2 --hostfile "$PBS_NODEFILE" --map-by ppr:1:node --oversubscribe -bind-to none \
  -x MASTER_ADDR -x PBS_JOBID -x PATH -x LD_LIBRARY_PATH -x HPCLAUNCH_RDZV_SECRET -x HPCLAUNCH_MASTER_ADDR_RULE -x HPCLAUNCH_MASTER_ADDR_RESOLVE -x HPCLAUNCH_GPU_BIND -x HPCLAUNCH_JOB_DIR -x OMP_NUM_THREADS \
  "$HPCLAUNCH" agent --nnodes 2 --nproc-per-node 8 -- python train.py --epochs 2

