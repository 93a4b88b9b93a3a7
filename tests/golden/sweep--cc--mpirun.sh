#!/bin/bash
#SBATCH --job-name=hpclaunch-train
#SBATCH --nodes=1
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=12
#SBATCH --gpus-per-node=h100:4
#SBATCH --mem=0
#SBATCH --account=def-someprof
#SBATCH --time=01:00:00
#SBATCH --chdir=/home/user/project
#SBATCH --output=/home/user/project/hpclaunch-jobs/train/tasks/%a/slurm-%A_%a.out
#SBATCH --array=0-3%2
#
# Rendered by hpclaunch 0.1.0 for site cc (Alliance Canada - Fir (default cluster)).
# Launch: mpirun; 1 node(s) x 4 worker(s) = world size 4;
# 4 Slurm task(s), 4 per node, 12 CPU(s) each.

# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the allocation.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
export HPCLAUNCH_MASTER_ADDR_RULE=first-node
export HPCLAUNCH_MASTER_ADDR_RESOLVE=0
export HPCLAUNCH_GPU_BIND=none
export NCCL_BLOCKING_WAIT=1
export OMP_NUM_THREADS=12
HPCLAUNCH=/opt/hpclaunch/bin/hpclaunch

# An array of 4 task(s) (0-3): each runs its own command in its own directory, tasks/I.
export HPCLAUNCH_ARRAY_TASK="$SLURM_ARRAY_TASK_ID"
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

# One rank per GPU started by mpirun from this node, which hosts rank 0.

export MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"

export LD_LIBRARY_PATH="${LD_LIBRARY_PATH-}"  # for -x: mpirun warns about an unset one (the loader ignores it empty)
mpirun -np 4 --tag-output --oversubscribe -map-by :OVERSUBSCRIBE -bind-to none -mca pml ob1 -mca btl ^openib \
  -x MASTER_ADDR -x SLURM_JOB_ID -x PATH -x LD_LIBRARY_PATH -x HPCLAUNCH_MASTER_ADDR_RULE -x HPCLAUNCH_MASTER_ADDR_RESOLVE -x HPCLAUNCH_GPU_BIND -x NCCL_BLOCKING_WAIT -x OMP_NUM_THREADS -x HPCLAUNCH_ARRAY_TASK -x HPCLAUNCH_ARRAY_TASKS -x HPCLAUNCH_ARRAY_DIR -x HPCLAUNCH_JOB_DIR -x HPCLAUNCH_SWEEP_LR -x HPCLAUNCH_SWEEP_NOTE \
  "$HPCLAUNCH" exec -- "${hpclaunch_command[@]}"

