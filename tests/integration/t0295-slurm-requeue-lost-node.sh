#!/usr/bin/env bash
# A requeueing agent job (`submit --requeue`, 2 nodes) loses the agent on n2 (SIGKILL: as if the node died; no real
# node can die here, so its agent does). The node-0 agent names n2 in failure.json; the script's `hpclaunch exclude
# --from-failure --requeue` records it and requeues the job with n2 in its ExcNodeList, so the next run cannot
# land there (with one node left for a 2-node job it waits: the test reads the exclusion and cancels it). A run
# that fails by the program's own exit code is not requeued.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
cd "$test_tmp"
submit() {  # JOBDIR CMD...: prints the job id
  local dir=$1
  shift
  submit_test_site test-shaped "$dir" --nodes 2 --gpus-per-node 1 --time 10 --launcher agent --requeue -- "$@" 2>/dev/null
}

id=$(submit "$test_tmp/lost" bash -c 'touch "'"$test_tmp"'/started.$RANK"; exec sleep 120') || fail "submit failed"
wait_until --every 0.5 --on-timeout "scancel $id" 120 "both workers to start" \
  'cat "$test_tmp/lost/slurm-$id.out"; [ -e "$test_tmp/started.0" ] && [ -e "$test_tmp/started.1" ]'
victim=""
for pid in $(pgrep -f "hpclaunch agent" || true); do
  env=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null || true)
  # The agent itself (slurmstepd's child), not srun nor the agent's orphan guard (a child with its command line).
  [ "$(ps -o comm= -p "$(ps -o ppid= -p "$pid" | tr -d ' ')")" = slurmstepd ] || continue
  if grep -qx "SLURM_JOB_ID=$id" <<<"$env" && grep -qx "SLURMD_NODENAME=n2" <<<"$env"; then victim=$pid; fi
done
[ -n "$victim" ] || { scancel "$id"; fail "no agent of job $id on n2"; }
kill -9 "$victim"
wait_until --every 0.5 --on-timeout "scancel $id" 60 "the job requeued without n2" \
  'scontrol show job "$id" | grep ExcNodeList=n2'
job=$(scontrol show job "$id")
scancel "$id"
out=$(cat "$test_tmp/lost/slurm-$id.out")
assert_contains "$job" "ExcNodeList=n2" "the requeued job leaves n2 out (output: $out)"
assert_contains "$job" "Restarts=1"
assert_contains "$out" "leaving out n2 (the run died: the agent on n2 (node 1) was lost"
assert_contains "$out" "requeued job $id; its next run leaves out n2"
assert_contains "$("$HPCLAUNCH" status "$test_tmp/lost")" "excluded: n2 (the run died"

id=$(submit "$test_tmp/bug" bash -c 'exit 7') || fail "submit failed"
assert_eq FAILED "$(wait_job "$id" 120)" "a run that fails by its own exit code"
assert_contains "$(cat "$test_tmp/bug/slurm-$id.out")" "names no node to leave out"
assert_not_contains "$(scontrol show job "$id")" "Restarts=1"
[ ! -e "$test_tmp/bug/excluded-nodes.json" ] || fail "a program's failure excluded a node"
echo ok
