#!/usr/bin/env bash
# Fault injection for hpclaunch agent on loopback (two agents as emulated nodes, two workers each): worker exit 1
# with and without restarts left, worker kill -9, agent kill -9, node-0 agent kill -9, SIGTERM to the agents
# (scancel), also before the rendezvous, a peer with a wrong secret. Each checks the exit codes, the root-cause
# summary, that no process of the job is left, and (where restarts remain) that the job finished. No timing
# assertions: every wait is bounded by `timeout` and by files the workers write.
source "$(dirname "$0")/lib.sh"
need_hpclaunch

export HPCLAUNCH_RDZV_SECRET=feedfacefeedface
node_env() {
  echo HPCLAUNCH_LOCAL_JOB=1 HPCLAUNCH_JOB_ID=local-t0410 "HPCLAUNCH_NODELIST=node[0-1]" HPCLAUNCH_NNODES=2 \
    HPCLAUNCH_NODE_RANK="$1" HPCLAUNCH_NODENAME="node$1" HPCLAUNCH_MASTER_ADDR_RULE=fixed \
    HPCLAUNCH_MASTER_ADDR_FIXED=127.0.0.1 HPCLAUNCH_MASTER_PORT="$port"
}
# start_agent I ARGS...: agent of node I in the background; its pid in $test_tmp/aI.pid, exit code in aI.rc.
start_agent() {
  local i=$1
  shift
  rm -f "$test_tmp/a$i.rc"
  ( rc=0; exec 3>&-; env $(node_env "$i") timeout 60 "$HPCLAUNCH" agent --grace 5 --nproc-per-node 2 "$@" \
      >"$test_tmp/a$i.out" 2>&1 & echo $! >"$test_tmp/a$i.tpid"; wait $! || rc=$?; echo $rc >"$test_tmp/a$i.rc" ) &
}
agent_pid() { pgrep -P "$(cat "$test_tmp/a$1.tpid")" -f "hpclaunch agent"; }
wait_agents() { wait; }
rc_of() { cat "$test_tmp/a$1.rc"; }
out_of() { cat "$test_tmp/a$1.out"; }
# wait_for FILE: until the workers wrote it (bounded).
wait_for() {
  local file=$1
  wait_until --every 0.05 --on-timeout 'echo "agent output: $(out_of 0) /// $(out_of 1)" >&2' 30 "$file" '[ -e "$file" ]'
}
# After kill -9 of an agent its orphan guard kills the workers' groups a moment later: bounded wait.
no_leftovers() { wait_until --every 0.05 10 "no process of the job left ($1)" '! pgrep -af "$test_tmp" | grep -v "^$$ "'; }
new_case() { port=$(free_port); rm -rf "$test_tmp/w"; mkdir -p "$test_tmp/w"; }
# start_both ARGS...: the agents of node 0 and node 1, with the same arguments.
start_both() { start_agent 0 "$@"; start_agent 1 "$@"; }
# all_started: until the four workers of the first attempt run.
all_started() { for r in 0 1 2 3; do wait_for "$test_tmp/w/started.$r.0"; done; }

# The worker: marks itself started, then does what its rank is told in $test_tmp/w/do.RANK (on the first
# attempt only), else sleeps until told to finish (file w/finish) or a bounded while.
cat >"$test_tmp/worker.sh" <<'EOF2'
#!/bin/bash
w=$(dirname "$0")/w
echo $$ >"$w/started.$RANK.$TORCHELASTIC_RESTART_COUNT"
"$w/../grandchild.sh" &  # what a worker starts must go with it too
touch "$w/world.$WORLD_SIZE.$RANK"
trap 'echo "rank $RANK got TERM"; echo term >"$w/term.$RANK"; exit 143' TERM
trap 'echo usr1 >"$w/usr1.$RANK"' USR1
echo "rank $RANK attempt $TORCHELASTIC_RESTART_COUNT"
if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ -f "$w/do.$RANK" ]; then
  case $(cat "$w/do.$RANK") in
    exit1) echo '{"message": {"message": "ValueError: rank broke", "extraInfo": {"py_callstack": "Traceback: x"}}}' \
             >"$TORCHELASTIC_ERROR_FILE"; exit 1 ;;
    kill9) kill -9 $$ ;;
  esac
fi
for _ in $(seq 1 400); do [ -f "$w/finish" ] && { echo "rank $RANK done"; exit 0; }; sleep 0.05; done
exit 0
EOF2
chmod +x "$test_tmp/worker.sh"
printf '#!/bin/sh\nwhile :; do sleep 1; done\n' >"$test_tmp/grandchild.sh"
chmod +x "$test_tmp/grandchild.sh"

# 1. Worker exits 1, one restart left: everyone restarts and the job finishes.
new_case
echo exit1 >"$test_tmp/w/do.3"
start_both --max-restarts 1 -- "$test_tmp/worker.sh"
for r in 0 1 2 3; do wait_for "$test_tmp/w/started.$r.1"; done
touch "$test_tmp/w/finish"
wait_agents
assert_eq "0 0" "$(rc_of 0) $(rc_of 1)" "exit codes after a restart ($(out_of 0) /// $(out_of 1))"
assert_contains "$(out_of 1)" "worker failed: rank 3 (local rank 1) on node1 exited with code 1"
for r in 0 1 2 3; do grep -q "rank $r done" "$test_tmp"/a[01].out || fail "rank $r did not finish after the restart"; done
no_leftovers "restart"

# 2. Worker exits 1, no restarts: every agent exits 1 with the root cause and the error file's message.
new_case
echo exit1 >"$test_tmp/w/do.2"
start_both -- "$test_tmp/worker.sh"
wait_agents
assert_eq "1 1" "$(rc_of 0) $(rc_of 1)" "exit codes after a failure"
for i in 0 1; do
  assert_contains "$(out_of $i)" "root cause: rank 2 (local rank 0) on node1 exited with code 1"
  assert_contains "$(out_of $i)" "ValueError: rank broke"
done
no_leftovers "exit 1"

# 3. Worker killed with SIGKILL: the summary names the signal.
new_case
echo kill9 >"$test_tmp/w/do.1"
start_both -- "$test_tmp/worker.sh"
wait_agents
assert_eq "1 1" "$(rc_of 0) $(rc_of 1)" "exit codes after kill -9 of a worker"
assert_contains "$(out_of 1)" "root cause: rank 1 (local rank 1) on node0 was killed by SIGKILL"
no_leftovers "worker kill -9"

# 4. Agent of node 1 killed with SIGKILL: its workers die with it, node 0 notices, stops its own, exits 1.
new_case
start_both -- "$test_tmp/worker.sh"
all_started
kill -9 "$(agent_pid 1)"
wait_agents
assert_eq "1 137" "$(rc_of 0) $(rc_of 1)" "exit codes after kill -9 of node 1's agent"
assert_contains "$(out_of 0)" "root cause: the agent on node1 (node 1) was lost"
no_leftovers "agent kill -9"

# 5. Node 0's agent (the store) killed with SIGKILL: node 1 exits non-zero, never hangs.
new_case
start_both --max-restarts 3 -- "$test_tmp/worker.sh"
all_started
kill -9 "$(agent_pid 0)"
wait_agents
assert_eq "137 1" "$(rc_of 0) $(rc_of 1)" "exit codes after kill -9 of node 0's agent"
assert_contains "$(out_of 1)" "lost the rendezvous store at 127.0.0.1:$port"
no_leftovers "node-0 agent kill -9"

# 6. SIGTERM to both agents (what scancel does): forwarded to the workers, no restart, exit 128+15.
new_case
start_both --max-restarts 3 -- "$test_tmp/worker.sh"
all_started
pids="$(agent_pid 0) $(agent_pid 1)"
kill -TERM $pids 2>/dev/null || true  # node 1 may be gone already: node 0's stop reached it first
wait_agents
assert_eq 143 "$(rc_of 0)" "exit code of node 0 after SIGTERM"
case $(rc_of 1) in
  143) ;;
  1) assert_contains "$(out_of 1)" "root cause: the agent on node0 (node 0) got SIGTERM" ;;
  *) fail "exit code of node 1 after SIGTERM: $(rc_of 1) ($(out_of 1))" ;;
esac
for r in 0 1 2 3; do assert_file "$test_tmp/w/term.$r"; done
[ -e "$test_tmp/w/started.0.1" ] && fail "the job restarted after SIGTERM"
assert_contains "$(out_of 0)" "got SIGTERM"
no_leftovers "SIGTERM"

# 7. A peer with the wrong secret is refused and logged; the real node 1 still joins and the job finishes.
new_case
start_agent 0 -- "$test_tmp/worker.sh"
rc=0
bad=$(env $(node_env 1) HPCLAUNCH_RDZV_SECRET=wrong timeout 60 "$HPCLAUNCH" agent --nproc-per-node 2 -- \
      "$test_tmp/worker.sh" 2>&1) || rc=$?
assert_eq 1 "$rc" "exit code of the agent with the wrong secret ($bad)"
assert_contains "$bad" "is HPCLAUNCH_RDZV_SECRET the same on every node?"
[ -e "$test_tmp/w/started.2.0" ] && fail "a worker started for the agent with the wrong secret"
start_agent 1 -- "$test_tmp/worker.sh"
all_started
touch "$test_tmp/w/finish"
wait_agents
assert_eq "0 0" "$(rc_of 0) $(rc_of 1)" "exit codes after the refused peer"
assert_contains "$(out_of 0)" "refused a peer from 127.0.0.1"
assert_contains "$(out_of 0)" "wrong or missing HPCLAUNCH_RDZV_SECRET"
no_leftovers "wrong secret"

# 8. A frozen agent (SIGSTOP: connection open, no heartbeats, as on a hung node) is noticed by its heartbeat
#    timeout: node 0 stops its workers and exits 1; the frozen agent's workers die with it once it is killed.
new_case
start_both --heartbeat-timeout 2 -- "$test_tmp/worker.sh"
all_started
frozen=$(agent_pid 1)
kill -STOP "$frozen"
wait_until --every 0.05 --on-timeout 'kill -9 "$frozen"' 30 "node 0's agent to give node 1 up" '[ -e "$test_tmp/a0.rc" ]'
kill -9 "$frozen"
wait_agents
assert_eq 1 "$(rc_of 0)" "exit code of node 0 when node 1 froze ($(out_of 0))"
assert_contains "$(out_of 0)" "root cause: the agent on node1 (node 1) was lost"
assert_contains "$(out_of 0)" "no heartbeat for 2000 ms"
no_leftovers "frozen agent"

# 9. Elastic: --nnodes 1:2, node 1's agent killed: node 0 is still at least MIN, so it re-forms the job alone
#    (world size 2, no restart used) and finishes with exit 0.
new_case
start_both --nnodes 1:2 -- "$test_tmp/worker.sh"
for r in 0 1 2 3; do wait_for "$test_tmp/w/world.4.$r"; done
kill -9 "$(agent_pid 1)"
wait_for "$test_tmp/w/world.2.0"
wait_for "$test_tmp/w/world.2.1"
touch "$test_tmp/w/finish"
wait_agents
assert_eq "0 137" "$(rc_of 0) $(rc_of 1)" "exit codes of the elastic job after losing node 1 ($(out_of 0))"
assert_contains "$(out_of 0)" "rank 1 done"
no_leftovers "elastic"

# 10. SIGUSR1 (a checkpoint notice, Slurm's --signal) is forwarded to every worker, which keep running: exit 0.
new_case
start_both -- "$test_tmp/worker.sh"
all_started
kill -USR1 "$(agent_pid 0)" "$(agent_pid 1)"
for r in 0 1 2 3; do wait_for "$test_tmp/w/usr1.$r"; done
touch "$test_tmp/w/finish"
wait_agents
assert_eq "0 0" "$(rc_of 0) $(rc_of 1)" "exit codes after SIGUSR1 ($(out_of 0) /// $(out_of 1))"
no_leftovers "SIGUSR1"

# 11. Elastic scale-up: --nnodes 1:2, node 0 starts alone after the last call; node 1 comes later and the job
#     re-forms with both (world size 4) and finishes.
new_case
start_agent 0 --nnodes 1:2 --rdzv-last-call 0.2 -- "$test_tmp/worker.sh"
wait_for "$test_tmp/w/world.2.1"
start_agent 1 --nnodes 1:2 --rdzv-last-call 0.2 -- "$test_tmp/worker.sh"
for r in 0 1 2 3; do wait_for "$test_tmp/w/world.4.$r"; done
touch "$test_tmp/w/finish"
wait_agents
assert_eq "0 0" "$(rc_of 0) $(rc_of 1)" "exit codes of the job that grew ($(out_of 0) /// $(out_of 1))"
no_leftovers "scale-up"

# 12. SIGTERM (scancel) while node 0 still waits for its peers, no worker started: it exits 143 at once (it used
#     to wait again on its signals after clearing them and hung until its time limit). Bounded by `timeout 60`:
#     a hang shows as 124.
new_case
start_agent 0 -- "$test_tmp/worker.sh"
wait_until --every 0.05 30 "node 0's store to listen on port $port" 'ss -ltn | grep ":$port "'
kill -TERM "$(agent_pid 0)"
wait_agents
assert_eq 143 "$(rc_of 0)" "exit code of node 0 stopped while waiting for its peers ($(out_of 0))"
no_leftovers "SIGTERM before the rendezvous"
