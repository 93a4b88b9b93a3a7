#!/usr/bin/env bash
# A node that is slow but alive is not declared dead. This kernel has no netem qdisc (`tc qdisc add ... netem`
# answers "Specified qdisc kind is unknown"), and a rate limit (tbf) delays sparse heartbeats only when a bulk
# flow fills its queue, where it also drops them: too erratic for a test. So the test hook is the node itself:
# n2's agent is stopped (SIGSTOP) for 2 s of every 3 s, as on a node starved of CPU or swapping, while its
# connections stay open; its heartbeats come up to 3 s apart.
# 1. With the default heartbeat timeout (5 s) no agent is declared lost: the training finishes, both exit 0,
#    no "lost" in their output, every step once.
# 2. The control: with --heartbeat-timeout 1.5 the same slowness is taken for death: n1's agent exits 1 naming n2.
#    Either side's timeout may see it first: n1's store, missing n2's heartbeats while n2 is stopped, or n2 itself,
#    which on waking has heard nothing from the store for 2 s and leaves (then n1 sees n2's connection close). On a
#    quiet machine n1's comes first; with n1 short of CPU too (a run with one core's worth for four tests at once),
#    n2's did.
source "$(dirname "$0")/lib.sh"
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-netfault.sh"

nf_hosts n1 n2
# slow PID: stop PID for 2 s of every 3 s until it exits.
slow() { while kill -STOP "$1" 2>/dev/null; do sleep 2; kill -CONT "$1" 2>/dev/null || break; sleep 1; done; }
# run_slowed CKPT AGENT_ARG...: the 2-node training, n2's agent slowed from step 1 (the round runs) until both
# agents exit.
run_slowed() {
  local ck=$1 pulses i
  shift
  for i in 0 1; do nf_agent $i --nnodes 2 "$@" -- $(nf_train "$ck" $steps); done
  nf_wait_for "step 1" '[ "$(nf_step "$ck/metrics.jsonl")" -ge 1 ]'
  slow "$(nf_agent_pid 1)" &
  pulses=$!
  nf_wait_for "both agents to exit" '[ "$(nf_rc 0)" != running ] && [ "$(nf_rc 1)" != running ]'
  kill "$pulses" 2>/dev/null || true
  wait
}

steps=30
nf_step_ms=300  # about 10 s of training: several pauses
run_slowed "$test_tmp/ckpt"
out=$(nf_all_out)
assert_eq "0 0" "$(nf_rc 0) $(nf_rc 1)" "exit codes of a job with a slow node ($out)"
assert_not_contains "$out" "lost" "output of a job with a slow node"
nf_check_steps "$test_tmp/ckpt/metrics.jsonl" $steps
nf_no_leftovers "slow node"

run_slowed "$test_tmp/ckpt-control" --heartbeat-timeout 1.5
assert_eq 1 "$(nf_rc 0)" "exit code of n1 with a 1.5 s heartbeat timeout ($(nf_all_out))"
assert_contains "$(nf_out 0)" "root cause: the agent on n2 (node 1) was lost" "n1's agent, 1.5 s heartbeat timeout"
control=$(nf_all_out)
grep -qE "no heartbeat for 1500 ms|no heartbeat from the store for 1500 ms" <<<"$control" ||
  fail "neither agent's 1.5 s heartbeat timeout ended the job: $control"
nf_no_leftovers "slow node, 1.5 s heartbeat timeout"
