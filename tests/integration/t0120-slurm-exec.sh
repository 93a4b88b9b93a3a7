#!/usr/bin/env bash
# `hpclaunch exec` and `hpclaunch env` under a real srun on the test cluster (2 nodes x 2 tasks, 4 fake GPUs
# per node): unique ranks 0..3, local ranks per node, one MASTER_ADDR (the first node), the port derived from
# the job id, each task its own GPU; the job's place in hpclaunch's own names (HPCLAUNCH_JOB_ID, ...); the
# profile's rules (resolve, suffix) and the batch-script error.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster

cat >"$test_tmp/job.sh" <<'JOB'
#!/bin/bash
echo "job $SLURM_JOB_ID"
unset MASTER_ADDR MASTER_PORT HPCLAUNCH_MASTER_PORT HPCLAUNCH_MASTER_ADDR_RULE HPCLAUNCH_MASTER_ADDR_SUFFIX
unset HPCLAUNCH_MASTER_ADDR_RESOLVE HPCLAUNCH_GPU_BIND
srun "$HPCLAUNCH" exec --gpu-bind local-rank -- sh -c \
  'echo "exec $RANK ${HPCLAUNCH_NODE_LOCAL_RANK-$LOCAL_RANK} $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $GROUP_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $CUDA_VISIBLE_DEVICES $SLURMD_NODENAME"'
srun "$HPCLAUNCH" env --format json | sed 's/^/json /'
# The job's place in hpclaunch's own names (what the Python package reads), from Slurm's.
srun "$HPCLAUNCH" exec -- sh -c \
  'echo "neutral $RANK $HPCLAUNCH_JOB_ID $HPCLAUNCH_NODE_RANK $HPCLAUNCH_NODENAME ${HPCLAUNCH_ARRAY_TASK_ID-none}"'
# The profile's rules, as the rendered script exports them. n1's address as the nodes see it (127.0.1.1 on the
# loopback cluster, its own namespace's on the netns one: t0471).
echo "n1addr $(getent ahostsv4 n1 | head -n 1 | cut -d' ' -f1)"
HPCLAUNCH_MASTER_ADDR_RESOLVE=1 HPCLAUNCH_MASTER_PORT=29400 srun "$HPCLAUNCH" exec -- \
  sh -c 'echo "resolved $RANK $MASTER_ADDR $MASTER_PORT"'
HPCLAUNCH_MASTER_ADDR_SUFFIX=i srun -N1 -n1 "$HPCLAUNCH" exec -- true 2>&1 | sed 's/^/suffix /'
MASTER_ADDR=10.0.0.9 srun "$HPCLAUNCH" exec --master-addr 10.0.0.1 -- sh -c 'echo "user $RANK $MASTER_ADDR"' 2>/dev/null
# --gpus-per-task: Slurm binds each task itself; local-rank keeps its list.
srun --gpus-per-task=1 "$HPCLAUNCH" exec --gpu-bind local-rank -- \
  sh -c 'echo "pertask $RANK $CUDA_VISIBLE_DEVICES"' 2>/dev/null
# The command's exit status comes back through exec and srun.
srun -N2 -n2 "$HPCLAUNCH" exec -- sh -c 'exit 3'
echo "status $?"
# The batch script is not a task of this 4-task job: no silent world of one.
"$HPCLAUNCH" env >/dev/null 2>"$SLURM_SUBMIT_DIR/batch.err"
echo "batch $?"
sed 's/^/batcherr /' "$SLURM_SUBMIT_DIR/batch.err"
JOB
cd "$test_tmp"
sbatch_wait "$test_tmp/job.out" -N 2 --ntasks-per-node=2 --gpus-per-node=4 "$test_tmp/job.sh"
out=$test_tmp/job.out

job=$(lines_with "$out" 'job ')
port=$((20000 + job % 10000))
expected="0 0 4 2 0 2 n1 $port 0 n1
1 1 4 2 0 2 n1 $port 1 n1
2 0 4 2 1 2 n1 $port 0 n2
3 1 4 2 1 2 n1 $port 1 n2"
assert_eq "$expected" "$(lines_with "$out" 'exec ')" \
  "tasks (RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE GROUP_RANK GROUP_WORLD_SIZE MASTER_ADDR MASTER_PORT CUDA_VISIBLE_DEVICES node)"

assert_eq "0 $job 0 n1 none
1 $job 0 n1 none
2 $job 1 n2 none
3 $job 1 n2 none" "$(lines_with "$out" 'neutral ')" \
  "HPCLAUNCH_JOB_ID, HPCLAUNCH_NODE_RANK, HPCLAUNCH_NODENAME and no HPCLAUNCH_ARRAY_TASK_ID in each task"

json=$(lines_with "$out" 'json ')
assert_eq 4 "$(echo "$json" | grep -c '"MASTER_ADDR":"n1","MASTER_PORT":"'"$port"'"')" "json lines with one master"
for r in 0 1 2 3; do assert_contains "$json" "{\"RANK\":\"$r\"," "json of rank $r"; done

n1addr=$(lines_with "$out" 'n1addr ')
[ -n "$n1addr" ] || fail "n1 does not resolve in the job: $(cat "$out")"
assert_eq "0 $n1addr 29400
1 $n1addr 29400
2 $n1addr 29400
3 $n1addr 29400" "$(lines_with "$out" 'resolved ')" "HPCLAUNCH_MASTER_ADDR_RESOLVE=1 and HPCLAUNCH_MASTER_PORT"
assert_contains "$(lines_with "$out" 'suffix ')" \
  "hpclaunch: error: MASTER_ADDR: 'n1i' (the first-node rule's host 'n1' + suffix 'i') does not resolve"
assert_eq "0 10.0.0.9
1 10.0.0.9
2 10.0.0.9
3 10.0.0.9" "$(lines_with "$out" 'user ')" "an existing MASTER_ADDR wins"
assert_eq "0 0
1 1
2 0
3 1" "$(lines_with "$out" 'pertask ')" "--gpus-per-task with --gpu-bind local-rank"
assert_eq 3 "$(lines_with "$out" 'status ')" "exit status through srun + exec"
assert_eq 2 "$(lines_with "$out" 'batch ')" "hpclaunch env in the batch script"
assert_contains "$(lines_with "$out" 'batcherr ')" \
  "SLURM_STEP_ID: not set: this is the batch script of Slurm job $job (4 tasks on 2 nodes), not one of its tasks"
