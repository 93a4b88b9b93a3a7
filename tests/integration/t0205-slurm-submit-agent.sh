#!/usr/bin/env bash
# `hpclaunch submit --launcher agent` on the real test cluster (Perlmutter's shape): one agent task per node
# with all of the node's CPUs, whose workers are the world's 8 ranks.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
submit() { submit_test_site test-perlmutter "$1" --account m1234_g "${@:2}"; }  # JOBDIR ARG...: prints the id

cd "$test_tmp"
report='echo "task $RANK $LOCAL_RANK $WORLD_SIZE $SLURM_CPUS_PER_TASK $SLURM_NTASKS_PER_NODE $MASTER_ADDR $OMP_NUM_THREADS"'

# The agent: one task per node with all 64 CPUs; the agent's workers are the 8 ranks.
id=$(submit "$test_tmp/agent" --nodes 2 --launcher agent -- bash -c "$report")
assert_eq COMPLETED "$(wait_job "$id" 120)" "agent job state (output: $(cat "$test_tmp/agent/slurm-$id.out" 2>/dev/null))"
out=$(cat "$test_tmp/agent/slurm-$id.out")
assert_eq "0 1 2 3 4 5 6 7" "$(echo "$out" | grep -o 'task [0-9]* ' | awk '{ print $2 }' | sort -n | xargs)" "agent ranks"
assert_contains "$(cat "$test_tmp/agent/job.sh")" '#SBATCH --cpus-per-task=64'

