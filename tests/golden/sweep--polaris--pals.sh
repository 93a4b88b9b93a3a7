#!/bin/bash
#PBS -l walltime=01:00:00,select=1:ncpus=64:ngpus=4:mpiprocs=4:system=polaris
#PBS -A MyProject
#PBS -N hpclaunch-train
#PBS -q debug
#PBS -j oe
#PBS -o /home/user/project/hpclaunch-jobs/train/tasks/^array_index^/output.log
#PBS -J 0-3%2
#PBS -l place=scatter
#PBS -l filesystems=home:eagle
#
# Rendered by hpclaunch 0.1.0 for site polaris (ALCF Polaris (A100, PBS Pro)).
# Launch: pals; 1 node(s) x 4 worker(s) = world size 4;
# 4 MPI rank(s), 4 per node.

# A PBS job starts in $HOME, not where it was submitted.
cd "$PBS_O_WORKDIR" || exit 1

module use /soft/modulefiles
module load conda
conda activate
export HPCLAUNCH_MASTER_ADDR_RULE=batch-host
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export CUDA_VISIBLE_DEVICES=3,2,1,0
export OMP_NUM_THREADS=8
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# An array of 4 task(s) (0-3): each runs its own command in its own directory, tasks/I.
export HPCLAUNCH_ARRAY_TASK="$PBS_ARRAY_INDEX"
export HPCLAUNCH_ARRAY_TASKS=4
export HPCLAUNCH_ARRAY_DIR=/home/user/project/hpclaunch-jobs/train
export HPCLAUNCH_JOB_DIR="$HPCLAUNCH_ARRAY_DIR/tasks/$HPCLAUNCH_ARRAY_TASK"
case "$HPCLAUNCH_ARRAY_TASK" in
  0) export HPCLAUNCH_SWEEP_LR=1e-3 HPCLAUNCH_SWEEP_NOTE='it'\''s'; hpclaunch_command=(hpclaunch-train --lr 1e-3 --metrics /home/user/project/hpclaunch-jobs/train/tasks/0/metrics.jsonl --note 'it'\''s') ;;
  1) export HPCLAUNCH_SWEEP_LR=1e-3 HPCLAUNCH_SWEEP_NOTE='a b'; hpclaunch_command=(hpclaunch-train --lr 1e-3 --metrics /home/user/project/hpclaunch-jobs/train/tasks/1/metrics.jsonl --note 'a b') ;;
  2) export HPCLAUNCH_SWEEP_LR=3e-3 HPCLAUNCH_SWEEP_NOTE='it'\''s'; hpclaunch_command=(hpclaunch-train --lr 3e-3 --metrics /home/user/project/hpclaunch-jobs/train/tasks/2/metrics.jsonl --note 'it'\''s') ;;
  3) export HPCLAUNCH_SWEEP_LR=3e-3 HPCLAUNCH_SWEEP_NOTE='a b'; hpclaunch_command=(hpclaunch-train --lr 3e-3 --metrics /home/user/project/hpclaunch-jobs/train/tasks/3/metrics.jsonl --note 'a b') ;;
  *) echo "hpclaunch: task '$HPCLAUNCH_ARRAY_TASK' is not one of this array's (0-3)" >&2; exit 1 ;;
esac

# mpirun/mpiexec start rank 0 on this host, the first of $PBS_NODEFILE.
export MASTER_ADDR="$(hostname -s)"

# Cray PALS (ALCF Polaris): one rank per GPU, 4 per node, each bound to 8 cores in a row
# (--depth with --cpu-bind depth counts CPUs from 0, the first thread of each core); PALS passes this environment
# on, and `hpclaunch exec` reads PALS_RANKID.
mpiexec -n 4 --ppn 4 --depth 8 --cpu-bind depth \
  "$HPCLAUNCH" exec -- "${hpclaunch_command[@]}"

