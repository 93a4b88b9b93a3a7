#!/usr/bin/env bash
# A node's link goes down mid-training, and the job may go on without it. Three hosts n1-n3 (own network
# namespaces), an agent on each with --nnodes 2:3, hpclaunch-train checkpointing every 5 steps. At step 10 or
# later n3's cable is pulled (`ip link set eth0 down` in its namespace; no process is told):
# - the store (n1) hears nothing from n3 for the heartbeat timeout (3 s here), declares it lost, and n1 and n2
#   re-form the job without it: their workers, stuck in an allreduce with n3's, are stopped (SIGTERM, SIGKILL after
#   --grace), and start again as a world of 2 from the last checkpoint, without using a restart;
# - n3's agent hears nothing from the store for its heartbeat timeout, stops its worker, and exits 1 naming the
#   store it lost;
# - the link comes back after the job re-formed: nothing changes; n1 and n2 finish the training, exit 0;
# - every step is in the metrics once; the checkpoint is the last step's; no process is left.
# The timeout is 3 s, the shortest that gets its three heartbeats (t0481 says why).
source "$(dirname "$0")/lib.sh"
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-netfault.sh"

nf_hosts n1 n2 n3
ck=$test_tmp/ckpt
steps=60
for i in 0 1 2; do nf_agent $i --nnodes 2:3 --heartbeat-timeout 3 -v -- $(nf_train "$ck" $steps); done
nf_wait_for "step 10" '[ "$(nf_step "$ck/metrics.jsonl")" -ge 10 ]'
netns_link "$nf_pfx" n3 down
nf_wait_for "n3's agent to exit" '[ "$(nf_rc 2)" != running ]'
nf_wait_for "the job to re-form with 2 nodes" 'grep -q "2 nodes, world size 2, restart 0" "$test_tmp/a0.out"'
netns_link "$nf_pfx" n3 up  # late: the job has re-formed without it
nf_wait_for "n1 and n2 to finish" '[ "$(nf_rc 0)" != running ] && [ "$(nf_rc 1)" != running ]'
wait
out=$(nf_all_out)
assert_eq "0 0 1" "$(nf_rc 0) $(nf_rc 1) $(nf_rc 2)" "exit codes of n1 n2 n3 ($out)"
assert_contains "$(nf_out 2)" "lost the rendezvous store at n1:$nf_port" "n3's agent"
assert_contains "$(nf_out 0)" "lost the agent on n3 (node 2): no heartbeat for 3000 ms" "n1's agent"
assert_contains "$(nf_out 0)" "3 nodes, world size 3, restart 0" "n1's agent"
nf_check_steps "$ck/metrics.jsonl" $steps
nf_no_leftovers "link down, elastic"
