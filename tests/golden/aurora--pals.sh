#!/bin/bash
#PBS -l walltime=01:00:00,select=2:ncpus=208:mpiprocs=12
#PBS -A MyProject
#PBS -N train
#PBS -q capacity
#PBS -j oe
#PBS -o /home/user/project/hpclaunch-jobs/train/
#PBS -l place=scatter
#PBS -l filesystems=home:flare
#PBS -k doe
#
# Rendered by hpclaunch 0.1.0 for site aurora (ALCF Aurora (Intel Max 1550, 12 tiles per node, PBS Pro)).
# Launch: pals; 2 node(s) x 12 worker(s) = world size 24;
# 24 MPI rank(s), 12 per node.

# A PBS job starts in $HOME, not where it was submitted.
cd "$PBS_O_WORKDIR" || exit 1
module load frameworks
# aurora's network settings, as the site documents them (`hpclaunch sites show aurora` names the source of each), unless already set:
[ -n "${FI_MR_CACHE_MONITOR+set}" ] || export FI_MR_CACHE_MONITOR=userfaultfd
export HPCLAUNCH_MASTER_ADDR_RULE=batch-host
export HPCLAUNCH_MASTER_ADDR_SUFFIX=.hsn.cm.aurora.alcf.anl.gov
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_MASTER_PORT=2345
export HPCLAUNCH_GPU_BIND=local-rank
export HPCLAUNCH_ACCELERATOR=intel
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export ZE_FLAT_DEVICE_HIERARCHY=FLAT
export CCL_PROCESS_LAUNCHER=pmix
export CCL_ATL_TRANSPORT=mpi
export CCL_KVS_MODE=mpi
export OMP_NUM_THREADS=8
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# mpirun/mpiexec start rank 0 on this host, the first of $PBS_NODEFILE.
export MASTER_ADDR="$(hostname -s).hsn.cm.aurora.alcf.anl.gov"

# Cray PALS: one rank per GPU, 12 per node, each bound to its CPU set of the site's list (the ranks of a
# node in order); PALS passes this environment on, and `hpclaunch exec` reads PALS_RANKID.
mpiexec -n 24 --ppn 12 --cpu-bind=list:4-7:8-11:12-15:16-19:20-23:24-27:56-59:60-63:64-67:68-71:72-75:76-79 \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

