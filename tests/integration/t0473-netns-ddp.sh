#!/usr/bin/env bash
# The trainer's DDP across 2 hosts: `hpclaunch submit --launcher agent` on the netns cluster, one worker on n1
# and one on n2, each in its own network namespace; their gradients' allreduces cross the link. DDP stays exact
# there: the two ranks end identical, and equal (within 1e-6) to one process on the whole batch.
source "$(dirname "$0")/lib.sh"
[ -x "${HPCLAUNCH_TRAIN:-}" ] || skip "hpclaunch-train was not built (no LibTorch)"
need_hpclaunch
need_netns_cluster
export PATH=$(dirname "$HPCLAUNCH_TRAIN"):$(dirname "$HPCLAUNCH"):$PATH
cd "$test_tmp"

train=(hpclaunch-train --synthetic --synthetic-samples 4096 --global-batch-size 64 --steps 6 --threads 1
       --no-validation --bucket-cap-mb 0.2 --log-every 1)
d=$test_tmp/two
id=$(submit_test_site test-perlmutter "$d" --account m1234_g --nodes 2 --gpus-per-node 1 --launcher agent \
     -- "${train[@]}" --checkpoint-dir "$d/ckpt")
state=$(wait_job "$id" 300)
out=$(cat "$d/slurm-$id.out")
assert_eq COMPLETED "$state" "state of the 2-node DDP job (output: $out)"
# Rank 0 prints, on n1; rank 1, silent, is the other node's one worker (1 GPU per node, 2 ranks).
grep -q '^\[n1:0\] .* 2 rank(s), backend gloo' <<<"$out" || fail "no 2-rank start line of rank 0 on n1: $out"
assert_contains "$(scontrol show job "$id")" "NodeList=n[1-2]" "the job's nodes"
assert_contains "$out" "replicas: max parameter deviation between ranks 0 (identical)"
"$HPCLAUNCH_TRAIN" "${train[@]:1}" --checkpoint-dir "$test_tmp/one" >"$test_tmp/one.log" 2>&1 \
  || fail "one process failed: $(cat "$test_tmp/one.log")"
"$HPCLAUNCH_TRAIN" compare "$test_tmp/one/latest.pt" "$d/ckpt/latest.pt" --tolerance 1e-6 \
  || fail "2 ranks on 2 hosts differ from 1 process on the whole batch"
