#!/usr/bin/env bash
# No progress, no requeue, on the real test cluster (docs/agent.md, "No progress, no requeue"): a 2-node agent job
# with --requeue whose workers (torch 2.15's Python, lib-hang-client.py's "requeue" mode) report step 1 and exit
# 99 ("saved, requeue me") in every run. Run 1 progressed (step 1 is new) and is requeued; run 2 gets no further
# and is requeued; run 3 is the second run in a row without progress (--no-progress-limit 2 through
# HPCLAUNCH_NO_PROGRESS_LIMIT): the agents end with 93, the script does not requeue it although requeues remain,
# and `hpclaunch status` says why.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
py=$(peer_python)
cd "$test_tmp"
cp "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-hang-client.py" client.py
d=$test_tmp/job
id=$(submit_test_site test-perlmutter "$d" --account m1234_g --nodes 2 --gpus-per-node 1 --launcher agent \
  --requeue --max-requeues 5 --env HPCLAUNCH_NO_PROGRESS_LIMIT=2 --env PYTHONPATH="$HPCLAUNCH_SOURCE_DIR/python" \
  -- "$py" "$test_tmp/client.py" requeue)
state=$(wait_job "$id" 300)
out=$(cat "$d/slurm-$id.out")
assert_eq FAILED "$state" "the job that never progressed (output: $out)"
assert_contains "$out" "hpclaunch: requeueing job $id (requeue 1 of 5) after exit 99"
assert_contains "$out" "hpclaunch: requeueing job $id (requeue 2 of 5) after exit 99"
assert_not_contains "$out" "(requeue 3 of 5)"
assert_contains "$out" "made no progress in its last attempts (exit 93): not requeueing"
assert_contains "$out" "no progress in 2 attempts in a row: stopped, not requeued"
assert_eq 2 "$(scontrol show job "$id" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')" "requeues of job $id"
assert_eq 93 "$(scontrol show job "$id" | sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p')" "job $id's exit code"
status=$("$HPCLAUNCH" status "$d")
assert_contains "$status" "failure: rank " "status names the root cause"
assert_contains "$status" "no progress in 2 attempts in a row: stopped, not requeued" "status says why"
assert_contains "$("$HPCLAUNCH" status --json "$d")" '"failure":"rank ' "status --json"
assert_contains "$(cat "$d/progress.json")" '"attempts_without_progress":2'
echo ok
