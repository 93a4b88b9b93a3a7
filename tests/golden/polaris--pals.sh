#!/bin/bash
#PBS -l walltime=01:00:00,select=2:ncpus=64:ngpus=4:mpiprocs=4:system=polaris
#PBS -A MyProject
#PBS -N train
#PBS -q debug
#PBS -j oe
#PBS -o /home/user/project/hpclaunch-jobs/train/
#PBS -l place=scatter
#PBS -l filesystems=home:eagle
#
# Rendered by hpclaunch 0.1.0 for site polaris (ALCF Polaris (A100, PBS Pro)).
# Launch: pals; 2 node(s) x 4 worker(s) = world size 8;
# 8 MPI rank(s), 4 per node.

# A PBS job starts in $HOME, not where it was submitted.
cd "$PBS_O_WORKDIR" || exit 1

module use /soft/modulefiles
module load conda
conda activate
export HPCLAUNCH_MASTER_ADDR_RULE=batch-host
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export CUDA_VISIBLE_DEVICES=3,2,1,0
export OMP_NUM_THREADS=8
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# mpirun/mpiexec start rank 0 on this host, the first of $PBS_NODEFILE.
export MASTER_ADDR="$(hostname -s)"

# Cray PALS (ALCF Polaris): one rank per GPU, 4 per node, each bound to 8 cores in a row
# (--depth with --cpu-bind depth counts CPUs from 0, the first thread of each core); PALS passes this environment
# on, and `hpclaunch exec` reads PALS_RANKID.
mpiexec -n 8 --ppn 4 --depth 8 --cpu-bind depth \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

