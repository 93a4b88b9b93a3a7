#!/usr/bin/env bash
# A link that comes back before the heartbeat timeout: n2's cable is pulled for 2 s mid-training and put back.
# With the default heartbeat timeout (5 s) no agent is declared lost; TCP retransmits what was sent meanwhile
# (heartbeats and the workers' allreduces), the training goes on in the same round and finishes: both agents
# exit 0, no "lost" in their output, every step once.
source "$(dirname "$0")/lib.sh"
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-netfault.sh"

nf_hosts n1 n2
steps=40
ck=$test_tmp/ckpt
for i in 0 1; do nf_agent $i --nnodes 2 -- $(nf_train "$ck" $steps); done
nf_wait_for "step 10" '[ "$(nf_step "$ck/metrics.jsonl")" -ge 10 ]'
netns_link "$nf_pfx" n2 down
sleep 2
netns_link "$nf_pfx" n2 up
nf_wait_for "both agents to exit" '[ "$(nf_rc 0)" != running ] && [ "$(nf_rc 1)" != running ]'
wait
out=$(nf_all_out)
assert_eq "0 0" "$(nf_rc 0) $(nf_rc 1)" "exit codes after a 2 s link blip ($out)"
assert_not_contains "$out" "lost" "output after a 2 s link blip"
nf_check_steps "$ck/metrics.jsonl" $steps
nf_no_leftovers "link blip"
