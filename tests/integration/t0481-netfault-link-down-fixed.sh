#!/usr/bin/env bash
# A node's link goes down mid-training and the job cannot go on without it: two hosts, --nnodes 2.
# 1. n2's cable is pulled at step 10 or later. Within the heartbeat timeout (3 s here) n1's agent declares n2
#    lost, stops its worker (stuck in an allreduce with n2's: SIGTERM, then SIGKILL after --grace 3 s; it does
#    not wait for gloo's 30-minute timeout) and exits 1 with a root cause naming n2; n2's agent, cut off, exits 1
#    naming the store it lost. The checkpoint is intact: a new run resumes from it and finishes the training.
# 2. The same with n1's cable (the node of the store): n2's agent exits 1 naming the store at n1, n1's agent exits
#    1 naming n2, lost from its side.
# 3 s, not 2: heartbeats go at most every max(1 s, timeout / 3) (agent/heartbeat.h), so 2 s allows two and a 1 s
# stall of either agent is taken for a lost link. A run with one core's worth of CPU for four tests at once lost n2
# so at startup, before any cable was pulled; 3 s is the shortest timeout that gets its three heartbeats.
source "$(dirname "$0")/lib.sh"
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-netfault.sh"

nf_hosts n1 n2
steps=40
for cut in n2 n1; do
  ck=$test_tmp/ckpt-$cut
  for i in 0 1; do nf_agent $i --nnodes 2 --heartbeat-timeout 3 -- $(nf_train "$ck" $steps); done
  nf_wait_for "step 10" '[ "$(nf_step "$ck/metrics.jsonl")" -ge 10 ]'
  netns_link "$nf_pfx" $cut down
  nf_wait_for "both agents to exit" '[ "$(nf_rc 0)" != running ] && [ "$(nf_rc 1)" != running ]'
  wait
  netns_link "$nf_pfx" $cut up
  out=$(nf_all_out)
  assert_eq "1 1" "$(nf_rc 0) $(nf_rc 1)" "exit codes of n1 n2, $cut cut off ($out)"
  assert_contains "$(nf_out 0)" "root cause: the agent on n2 (node 1) was lost" "n1's agent, $cut cut off"
  assert_contains "$(nf_out 0)" "no heartbeat for 3000 ms" "n1's agent, $cut cut off"
  assert_contains "$(nf_out 1)" "lost the rendezvous store at n1:$nf_port (the node-0 agent)" "n2's agent, $cut cut off"
  nf_no_leftovers "$cut cut off"
  # The checkpoint is intact: one process resumes from it and trains to the end.
  at=$(nf_step "$ck/metrics.jsonl")
  resumed=$($(nf_train "$ck" $steps) 2>&1) || fail "resuming after $cut was cut off failed: $resumed"
  assert_contains "$resumed" "resumed from" "the run after $cut was cut off"
  nf_check_steps "$ck/metrics.jsonl" $steps
  note "$cut cut off at step $at or later: both agents exited 1, the training resumed and finished"
done
