#!/usr/bin/env bash
# A client written for torch 2.15 (the peers' venv) on the test cluster, 2 nodes x 2 ranks, under each of our
# launches: direct launch (`srun hpclaunch exec` and `mpirun hpclaunch exec` in the job) and `srun hpclaunch agent`.
# Each forms its gloo group from the environment (init_process_group("gloo"), env://) and allreduces; then its
# rank 3 raises under @record. The failure is named with its rank: by the agent's root cause (with the exception,
# from the error file), by srun ("task 3") and mpirun (its rank 3) under direct launch, where no agent reads an
# error file and the exception is the rank's own traceback in the job's output.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
need_cmd mpirun
py=$(peer_python)

cp "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-torch-client.py" "$test_tmp/client.py"
port=$(free_port)
cat >"$test_tmp/job.sh" <<JOB
#!/bin/bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HPCLAUNCH_PYTHON=$py
export HPCLAUNCH_RDZV_SECRET=\$(openssl rand -hex 16)
cd "$test_tmp"
export MASTER_PORT=$port
srun --kill-on-bad-exit=0 "$HPCLAUNCH" exec -- $py -u client.py srun
echo "srun exited \$?"
export MASTER_PORT=$((port + 1))
srun --kill-on-bad-exit=0 "$HPCLAUNCH" exec -- $py -u client.py srun-crash 3
echo "srun-crash exited \$?"
export MASTER_PORT=$((port + 2))
mpirun -np 4 -x PATH -x MASTER_PORT -bind-to none "$HPCLAUNCH" exec -- $py -u client.py mpirun
echo "mpirun exited \$?"
export MASTER_PORT=$((port + 3))
mpirun -np 4 -x PATH -x MASTER_PORT -bind-to none "$HPCLAUNCH" exec -- $py -u client.py mpirun-crash 3
echo "mpirun-crash exited \$?"
export MASTER_PORT=$((port + 4))
srun --ntasks=2 --ntasks-per-node=1 "$HPCLAUNCH" agent --nproc-per-node 2 -- client.py agent
echo "agent exited \$?"
export MASTER_PORT=$((port + 5))
srun --ntasks=2 --ntasks-per-node=1 "$HPCLAUNCH" agent --nproc-per-node 2 -- client.py agent-crash 3
echo "agent-crash exited \$?"
JOB
SBATCH_TIMEOUT=400 sbatch_wait "$test_tmp/job.out" -N 2 --ntasks-per-node=2 "$test_tmp/job.sh"
out=$(cat "$test_tmp/job.out")
for how in srun mpirun agent; do
  assert_contains "$out" "$how exited 0"
  for r in 0 1 2 3; do
    assert_contains "$out" "$how rank=$r world=4 sum=6" "$how, rank $r"
    assert_contains "$out" "$how-crash rank=$r world=4 sum=6" "$how-crash, rank $r"
  done
  assert_not_contains "$out" "$how-crash exited 0" "$how: the job whose rank 3 raised fails"
  assert_contains "$out" "RuntimeError: $how-crash: checkpoint directory /ckpt is not writable"
done
# The raising rank exits 1, or is aborted on its way out: torch 2.15's gloo group, never destroyed, can end the
# process with "terminate called without an active exception" once its peers are gone (a race, seen in a cold run
# and in one of four runs here). Either way each launcher must name rank 3, and the agent its exception.
case $out in
  *"root cause: rank 3 (local rank 1) on n2 exited with code 1"* | *"root cause: rank 3 (local rank 1) on n2 was killed by SIGABRT"*) ;;
  *) fail "the agent's root cause does not name rank 3 on n2: $out" ;;
esac
assert_contains "$out" "error file of rank 3:"$'\n'"  RuntimeError: agent-crash: checkpoint directory /ckpt is not writable" \
  "the agent's root cause quotes rank 3's error file"
case $out in
  *"task 3: Exited with exit code 1"* | *"task 3: Aborted"*) ;;
  *) fail "srun does not name task 3: $out" ;;
esac
mpirun_says=$(grep -A6 "exited on signal\|non-zero status" <<<"$out" || true)
case $mpirun_says in
  *"Process name: [["*",3]"* | *"process rank 3 with PID"*) ;;
  *) fail "mpirun does not name rank 3 as the one that failed: $mpirun_says" ;;
esac
echo ok
