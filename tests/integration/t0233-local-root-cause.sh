#!/usr/bin/env bash
# The local site names the right last error (issue 53): a torch 2.15 script whose rank 2, on emulated node 1,
# raises under @record, run with `submit --site local --nodes 2 --gpus-per-node 2`. The agents' own rules end the
# job (node 1's agent reports, the store aborts, every agent exits 1); `local-srun` plays srun without
# --kill-on-bad-exit, as the Slurm script's agent step does, so it no longer sends node 0's agent a SIGTERM while
# that agent is stopping. The root cause is the job's last word, in output and in failure.json.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=$(peer_python)
cp "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-torch-client.py" "$test_tmp/client.py"
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT
cd "$test_tmp"
for run in 1 2; do
  rc=0
  HPCLAUNCH_PYTHON=$py timeout 180 "$HPCLAUNCH" submit --site local --nodes 2 --gpus-per-node 2 \
    --job-dir "$test_tmp/job$run" -- "$py" "$test_tmp/client.py" crash 2 \
    >"$test_tmp/out" 2>&1 || rc=$?
  out=$(cat "$test_tmp/out")
  assert_eq 1 "$rc" "exit code of the job whose rank 2 raised (run $run: $out)"
  assert_not_contains "$out" "got SIGTERM" "run $run"
  last=$(grep "hpclaunch: error: " "$test_tmp/out" | tail -n 1)
  assert_contains "$last" "root cause: rank 2 (local rank 0) on node1" "the last error line (run $run)"
  assert_contains "$(cat "$test_tmp/job$run/failure.json")" '"rank": 2' "failure.json (run $run)"
done
