#!/bin/bash
#PBS -l walltime=01:00:00,select=2:ncpus=64:ngpus=4:mpiprocs=4
#PBS -A NCAR0001
#PBS -N train
#PBS -q main
#PBS -j oe
#PBS -o /home/user/project/hpclaunch-jobs/train/
#
# Rendered by hpclaunch 0.1.0 for site derecho (NCAR Derecho (A100, PBS Pro)).
# Launch: pals; 2 node(s) x 4 worker(s) = world size 8;
# 8 MPI rank(s), 4 per node.

# A PBS job starts in $HOME, not where it was submitted.
cd "$PBS_O_WORKDIR" || exit 1
module load conda cuda
# PyTorch: the conda environment pt220gpu_conda, made once on a login node with NCAR's
# pytorch/setup_conda_pytorch.sh (github.com/NCAR/aiml_gpu_ncar_envs, choice 4: PyTorch 2.2.0);
# CISL's npl environment has no GPU or machine-learning packages.
conda activate pt220gpu_conda || { echo 'hpclaunch: no conda environment pt220gpu_conda: see the job script' >&2; exit 1; }
export HPCLAUNCH_MASTER_ADDR_RULE=batch-host
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export HPCLAUNCH_JOB_DIR=/home/user/project/hpclaunch-jobs/train
export OMP_NUM_THREADS=16
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# mpirun/mpiexec start rank 0 on this host, the first of $PBS_NODEFILE.
export MASTER_ADDR="$(hostname -s)"

# Cray PALS (ALCF Polaris): one rank per GPU, 4 per node, each bound to 16 cores in a row
# (--depth with --cpu-bind depth counts CPUs from 0, the first thread of each core); PALS passes this environment
# on, and `hpclaunch exec` reads PALS_RANKID.
mpiexec -n 8 --ppn 4 --depth 16 --cpu-bind depth \
  "$HPCLAUNCH" exec -- python train.py --epochs 2

