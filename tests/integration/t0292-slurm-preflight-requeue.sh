#!/usr/bin/env bash
# `submit --preflight` on the test cluster (2 nodes, agent, gloo): a healthy preflight lets the command run; a node
# that fails it (a test hook makes n2 report 3 of its 4 GPUs: no real fault can be put on one emulated node here, a
# fake, said so) stops the job before the command starts and is recorded in excluded-nodes.json; with --requeue the
# job goes back to the queue with n2 in its ExcNodeList, so the next run cannot land on it (here, with one node
# left for a 2-node job, it waits: the test reads the exclusion and cancels it).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "built without LibTorch: no hpclaunch-probe"
cd "$test_tmp"
submit() {  # JOBDIR ARG...: prints the job id
  local dir=$1
  shift
  # A large slow factor: other tests share these 2 cores, and this test is about GPUs, not speed (t0270 is).
  submit_test_site test-shaped "$dir" --nodes 2 --time 10 --preflight --env HPCLAUNCH_CHECK_MAX_BYTES=4096 \
    --env HPCLAUNCH_CHECK_SLOW_FACTOR=100 "$@" \
    -- touch "$dir/command-ran" 2>/dev/null
}

id=$(submit "$test_tmp/ok") || fail "submit failed"
assert_eq COMPLETED "$(wait_job "$id" 180)" "healthy preflight (output: $(cat "$test_tmp/ok/slurm-$id.out" 2>/dev/null))"
assert_contains "$(cat "$test_tmp/ok/slurm-$id.out")" "busbw(GB/s)"
assert_file "$test_tmp/ok/command-ran"
[ ! -e "$test_tmp/ok/excluded-nodes.json" ] || fail "a healthy preflight excluded nodes"

id=$(submit "$test_tmp/bad" --env HPCLAUNCH_PROBE_TEST_GPUS=n2=3) || fail "submit failed"
assert_eq FAILED "$(wait_job "$id" 180)" "preflight with a node missing a GPU"
out=$(cat "$test_tmp/bad/slurm-$id.out")
assert_contains "$out" "hpclaunch: leaving out n2 (preflight: 3 GPU(s), expected 4, run 0)"
assert_contains "$out" "the command was not started"
[ ! -e "$test_tmp/bad/command-ran" ] || fail "the command ran after a failed preflight"
assert_contains "$("$HPCLAUNCH" status "$test_tmp/bad")" "excluded: n2 (preflight: 3 GPU(s), expected 4; run 0)"

id=$(submit "$test_tmp/requeue" --requeue --env HPCLAUNCH_PROBE_TEST_GPUS=n2=3) || fail "submit failed"
# Requeued, the job shows its exclusion while its first run is still COMPLETING (seen under load):
# wait until it is PENDING as well, which it stays, as the two nodes it asks for are not there without n2.
wait_until --every 0.5 --on-timeout "scancel $id" 180 "the requeued job to be PENDING without n2" \
  'job=$(scontrol show job "$id" 2>&1); echo "$job"; [[ $job == *ExcNodeList=n2* && $job == *JobState=PENDING* ]]'
job=$(scontrol show job "$id")
scancel "$id"
assert_contains "$job" "ExcNodeList=n2" "the requeued job leaves n2 out (output: $(cat "$test_tmp/requeue/slurm-$id.out" 2>/dev/null))"
assert_contains "$job" "Restarts=1"
assert_contains "$job" "JobState=PENDING"
assert_contains "$(cat "$test_tmp/requeue/slurm-$id.out")" "requeued job $id; its next run leaves out n2"
[ ! -e "$test_tmp/requeue/command-ran" ] || fail "the command ran after a failed preflight"
assert_eq "['n2']" "$(python3 -c 'import json, sys; print([n["node"] for n in json.load(open(sys.argv[1]))["nodes"]])' "$test_tmp/requeue/excluded-nodes.json")"
echo ok
