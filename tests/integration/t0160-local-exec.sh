#!/usr/bin/env bash
# The local emulation's contract (docs/CONTRACTS.md) from the runtime's side: tasks started by
# `hpclaunch local-srun` get their ranks from HPCLAUNCH_* variables, MASTER_ADDR 127.0.0.1 (emulated node names
# do not resolve), the port derived from HPCLAUNCH_JOB_ID, a GPU of the node's list each, and form a real gloo
# group. The allreduce part is skipped when LibTorch is absent.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
for v in $(env | grep -oE '^(SLURM|PBS|PMI|PALS|OMPI_COMM|HPCLAUNCH_MASTER|HPCLAUNCH_GPU)[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT CUDA_VISIBLE_DEVICES

timeout 120 "$HPCLAUNCH" local-srun --nodes 2 --ntasks-per-node 2 --gpus-per-node 2 -- \
  "$HPCLAUNCH" exec --gpu-bind local-rank -- sh -c \
  'echo "task $RANK ${HPCLAUNCH_NODE_LOCAL_RANK-$LOCAL_RANK} $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $GROUP_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $CUDA_VISIBLE_DEVICES $HPCLAUNCH_NODENAME $HPCLAUNCH_JOB_ID"' \
  >"$test_tmp/tasks.out" 2>"$test_tmp/tasks.err" || fail "local-srun + exec failed: $(cat "$test_tmp/tasks.err")"
tasks=$(lines_with "$test_tmp/tasks.out" 'task ')
job=$(echo "$tasks" | awk '{print $11}' | sort -u)
[ "$(echo "$job" | wc -l)" = 1 ] && [ -n "$job" ] || fail "tasks disagree on HPCLAUNCH_JOB_ID: $job"
port=$(echo "$tasks" | awk '{print $8}' | sort -u)
[ "$(echo "$port" | wc -l)" = 1 ] && [ "$port" -ge 20000 ] && [ "$port" -le 29999 ] \
  || fail "tasks disagree on MASTER_PORT or it is outside 20000-29999: $port"
gpus=$(echo "$tasks" | awk '{print $9}' | tr '\n' ' ')
echo "$tasks" | awk '{print $1, $2, $3, $4, $5, $6, $7, $10}' >"$test_tmp/got"
assert_eq "0 0 4 2 0 2 127.0.0.1 node0
1 1 4 2 0 2 127.0.0.1 node0
2 0 4 2 1 2 127.0.0.1 node1
3 1 4 2 1 2 127.0.0.1 node1" "$(cat "$test_tmp/got")" "local tasks (RANK LOCAL_RANK WORLD LOCAL_WORLD GROUP GROUPS ADDR node)"
# A task bound to one GPU sees it as device 0 with LOCAL_RANK=0, so `torch.cuda.set_device(local_rank)` works;
# its rank on the node is HPCLAUNCH_NODE_LOCAL_RANK (the column above).
timeout 120 "$HPCLAUNCH" local-srun --nodes 1 --ntasks-per-node 2 --gpus-per-node 2 -- \
  "$HPCLAUNCH" exec --gpu-bind local-rank -- sh -c 'echo "bound $LOCAL_RANK $HPCLAUNCH_NODE_LOCAL_RANK"' >"$test_tmp/bound.out" 2>&1 \
  || fail "bound tasks failed: $(cat "$test_tmp/bound.out")"
assert_eq "bound 0 0
bound 0 1" "$(lines_with "$test_tmp/bound.out" 'bound ' | sed 's/^/bound /')" "LOCAL_RANK and HPCLAUNCH_NODE_LOCAL_RANK of bound tasks"
# Each task one GPU, and the two tasks of a node different ones.
echo "$tasks" | awk '{print $10, $9}' | sort | uniq -d | grep -q . && fail "two tasks of a node share a GPU: $gpus"
echo "$tasks" | awk '$9 !~ /^[0-9]+$/ {exit 1}' || fail "CUDA_VISIBLE_DEVICES is not one GPU per task: $gpus"

tool=${HPCLAUNCH_ALLREDUCE_CHECK:-$HPCLAUNCH_BUILD_DIR/tests/allreduce_check}
[ -x "$tool" ] || skip "LibTorch not found at build time: the variables are right, the allreduce is not run"
timeout 180 "$HPCLAUNCH" local-srun --nodes 2 --ntasks-per-node 2 -- "$HPCLAUNCH" exec -- "$tool" \
  >"$test_tmp/ar.out" 2>"$test_tmp/ar.err" || fail "allreduce under local-srun failed: $(cat "$test_tmp/ar.out" "$test_tmp/ar.err")"
assert_eq "rank=0 ok
rank=1 ok
rank=2 ok
rank=3 ok" "$(lines_with "$test_tmp/ar.out" 'allreduce ' | awk '{print $1, $NF}')" "allreduce under local-srun"
