#!/usr/bin/env bash
# A spare node takes the place of a lost one, inside the same job: no requeue, no new allocation. Three hosts
# n1-n3 (own network namespaces), an agent on each with `--nnodes 2 --spares 1`: n1 and n2 train with
# hpclaunch-train (checkpoints every 5 steps), n3 waits in the rendezvous holding no workers. At step 10 or later
# node n2 is lost, twice over:
# - its agent is SIGKILLed (its worker dies with it, PR_SET_PDEATHSIG);
# - its cable is pulled (`ip link set eth0 down` in its namespace; no process is told): the store hears nothing
#   for the heartbeat timeout (3 s);
# and each time the store gives n2's place (group rank 1) to n3, n1 keeps rank 0, no restart is used, the world
# stays 2, and the run ends with weights bit-identical to an unfaulted run of n1 and n2 (`hpclaunch-train
# compare --tolerance 0`). The job directory's nodes.json and `hpclaunch status` name the replacement.
source "$(dirname "$0")/lib.sh"
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-netfault.sh"

nf_hosts n1 n2 n3
steps=40

# The unfaulted run: n1 and n2 alone, no spare.
ref=$test_tmp/ref
for i in 0 1; do nf_agent $i --nnodes 2 -- $(nf_train "$ref" $steps); done
nf_wait_for "the unfaulted run" '[ "$(nf_rc 0)" != running ] && [ "$(nf_rc 1)" != running ]'
assert_eq "0 0" "$(nf_rc 0) $(nf_rc 1)" "the unfaulted run's exit codes ($(nf_all_out))"

# spare_run NAME FAULT: the job with a spare, n2 lost by FAULT (kill or link) at step 10 or later.
spare_run() {
  local name=$1 fault=$2 ck=$test_tmp/$1 i out
  mkdir -p "$test_tmp/$name.job"
  for i in 0 1 2; do
    HPCLAUNCH_JOB_DIR=$test_tmp/$name.job nf_agent $i --nnodes 2 --spares 1 --heartbeat-timeout 3 -v -- \
      $(nf_train "$ck" $steps)
  done
  nf_wait_for "n3 to wait as a spare" 'grep -q "a spare: this node waits in the rendezvous" "$test_tmp/a2.out"'
  nf_wait_for "step 10 ($name)" '[ "$(nf_step "$ck/metrics.jsonl")" -ge 10 ]'
  case $fault in
    kill) kill -KILL "$(nf_agent_pid 1)" ;;
    link) netns_link "$nf_pfx" n2 down ;;
  esac
  nf_wait_for "the three agents to end ($name)" \
    '[ "$(nf_rc 0)" != running ] && [ "$(nf_rc 1)" != running ] && [ "$(nf_rc 2)" != running ]'
  [ "$fault" = link ] && netns_link "$nf_pfx" n2 up
  out=$(nf_all_out)
  assert_eq "0 0" "$(nf_rc 0) $(nf_rc 2)" "n1's and n3's exit codes ($name: $out)"
  if [ "$fault" = kill ]; then
    assert_eq 137 "$(nf_rc 1)" "n2's agent, SIGKILLed ($name)"
  else
    assert_eq 1 "$(nf_rc 1)" "n2's agent, cut off ($name: $out)"
    assert_contains "$(nf_out 1)" "lost the rendezvous store at n1:$nf_port" "n2's agent ($name)"
  fi
  assert_contains "$(nf_out 0)" \
    "spare: round 1: n3 (node 2) took the place of n2 (node 1) as group rank 1: its agent was lost" "the store ($name)"
  assert_contains "$(nf_out 0)" "round 1: 2 nodes, world size 2, restart 0" "the store ($name)"
  assert_contains "$(nf_out 2)" "taking a place in round 1 as group rank 1" "n3's agent ($name)"
  assert_contains "$(cat "$test_tmp/$name.job/nodes.json")" \
    '"round 1: n3 (node 2) took the place of n2 (node 1) as group rank 1: its agent was lost"' "nodes.json ($name)"
  nf_check_steps "$ck/metrics.jsonl" $steps
  assert_contains "$("$HPCLAUNCH_TRAIN" compare "$ref/latest.pt" "$ck/latest.pt" --tolerance 0)" ": same" \
    "the weights after n2 was lost ($name) against the unfaulted run's"
  nf_no_leftovers "$name"
}

spare_run killed kill
spare_run cut link

# What status shows of such a job (its record is the local runner's, with the agents' nodes.json).
job=$test_tmp/killed.job
printf '{"job_id": "local-spare-1", "scheduler": "local", "site": "local", "nodes": 3}\n' >"$job/job.json"
status=$("$HPCLAUNCH" status "$job" 2>&1 || true)
assert_contains "$status" \
  "replaced: round 1: n3 (node 2) took the place of n2 (node 1) as group rank 1: its agent was lost" "status"
