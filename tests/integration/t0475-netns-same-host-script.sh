#!/usr/bin/env bash
# A script that works only when every node is the same host now fails. It hard-codes MASTER_ADDR=127.0.0.1: on the
# loopback cluster both "nodes" share one loopback, so its ranks met (its 2-node job run there by hand: "srun
# exited 0"); on the netns cluster 127.0.0.1 is each host's own, and the rank on n2 cannot reach rank 0's store on
# n1. The same script on one node (both ranks on n1) still trains: the address is the only fault.
source "$(dirname "$0")/lib.sh"
[ -x "${HPCLAUNCH_TRAIN:-}" ] || skip "hpclaunch-train was not built (no LibTorch)"
need_hpclaunch
need_netns_cluster

cat >"$test_tmp/job.sh" <<JOB
#!/bin/bash
export MASTER_ADDR=127.0.0.1 HPCLAUNCH_TRAIN_TIMEOUT_S=15
srun --kill-on-bad-exit=1 "$HPCLAUNCH" exec -- "$HPCLAUNCH_TRAIN" --synthetic --synthetic-samples 1024 \
  --global-batch-size 32 --steps 2 --threads 1 --no-validation --checkpoint-dir "\$PWD/ckpt.\$SLURM_JOB_ID"
echo "srun exited \$?"
JOB
cd "$test_tmp"
sbatch_wait "$test_tmp/one.out" -N 1 --ntasks-per-node=2 "$test_tmp/job.sh"
assert_contains "$(cat "$test_tmp/one.out")" "srun exited 0" "the script on one node"

sbatch_wait "$test_tmp/two.out" -N 2 --ntasks-per-node=1 "$test_tmp/job.sh"
out=$(cat "$test_tmp/two.out")
assert_not_contains "$out" "srun exited 0" "the script on two hosts"
assert_contains "$out" "cannot form the process group at 127.0.0.1" "the script on two hosts"
